/**
 * Anchoring part of `npm run bench`, called at the end of `run.ts`:
 *
 * 1. Cost per batch, adapters only (no service). On the in-process Hardhat devnet with EAS
 *    (`startHardhatDevnet` + `EvmEasChain`), batches of 1, 100 and 1,000 random document hashes are turned into a
 *    Merkle tree (`buildMerkleTree`) and its root is attested with one `EAS.attest` transaction each; the gas
 *    used comes from the receipt. Gas per document = gas / batch size; the ratio compares it with one
 *    attestation of a single document (the batch of 1), i.e. with anchoring each document on its own (goal
 *    < 1% at 1,000). On the Stacks devnet (`startStacksDevnet`, manual mining) the same roots are anchored with
 *    one `(anchor root)` call each; fee per document = the fee paid (µSTX) / batch size.
 * 2. Latency through the service. The server is started as its own process with `ANCHORING=devnet`
 *    (`ANCHOR_BATCH_SECONDS` default 2). `SINGLE_RUNS` single 256-byte documents are uploaded one after the other,
 *    each timed from the start of its upload to the poll of `GET /api/documents` (every `POLL_MS`) that shows it
 *    `registered` on both chains (p50 and max). Then, once per rate in `BULK_CONCURRENCY`, `BULK_COUNT` 256-byte
 *    documents are uploaded with that many parallel requests; reported are the upload time and the time from
 *    the first upload to all registered on both chains, with the chain transactions this used (confirmed
 *    `anchor_tx` counts from `notary anchors:status`, after minus before). Goal (a burst is cut by count): at most
 *    `txPerChainFor1000` per chain at every rate (a batch closes when `ANCHOR_BATCH_MAX` documents are pending).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startStacksDevnet } from '@notary/server/adapters/chains/devnets/stacks-devnet';
import { EvmEasChain } from '@notary/server/adapters/chains/evm-eas';
import { startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { StacksNotaryChain } from '@notary/server/adapters/chains/stacks';
import { buildMerkleTree } from '@notary/server/domain/anchoring/merkle';
import { freePort, startChild } from './lib';

const BATCH_SIZES = [1, 100, 1000];
const SINGLE_RUNS = 5;
const BULK_COUNT = 1000;
/** Parallel uploads of the bulk runs, one run each: the rate must not change the transaction count. */
const BULK_CONCURRENCY = [8, 32];
const DOC_BYTES = 256;
const POLL_MS = 100;
const REGISTER_TIMEOUT_MS = 180_000;
export const ANCHOR_GOALS = { gasPerDocRatioPct: 1, txPerChainFor1000: 2 };

export interface BatchCost {
  documents: number;
  evm: { transactions: number; gasUsed: number; gasPerDocument: number; ratioToSingleAttestationPct: number };
  stacks: { transactions: number; feeMicroStx: number; feePerDocumentMicroStx: number };
}

/** One bulk run: `documents` uploads, `concurrency` at a time. */
export interface BulkRun {
  documents: number;
  concurrency: number;
  uploadS: number;
  allRegisteredS: number;
  evmTransactions: number;
  stacksTransactions: number;
}

export interface AnchoringResults {
  batches: BatchCost[];
  latency: {
    batchSeconds: number;
    batchMax: number;
    serverStartS: number;
    singleRunsS: number[];
    singleP50S: number;
    singleMaxS: number;
    /** One per rate of `BULK_CONCURRENCY`, in that order. */
    bulk: BulkRun[];
  };
  summary: { gasGoalMet: boolean; txGoalMet: boolean };
}

interface Deps {
  root: string;
  node: string;
  /** Registers a cleanup step (run in reverse order at the end, also on failure). */
  addCleanup(label: string, run: () => Promise<void>): void;
  /** Runs the operator CLI with `env`, returns its whole stdout when `all`, else its last line. */
  operator(env: NodeJS.ProcessEnv, args: string[], all?: boolean): Promise<string>;
  childEnv(extra: Record<string, string>): NodeJS.ProcessEnv;
}

const hashes = (n: number) => Array.from({ length: n }, () => new Uint8Array(randomBytes(32)));

async function batchCosts(deps: Deps): Promise<BatchCost[]> {
  console.log('[bench] anchoring: starting the Hardhat (EAS) and Stacks devnets in process');
  const evmNet = await startHardhatDevnet();
  deps.addCleanup('hardhat devnet', () => evmNet.stop());
  const evm = new EvmEasChain({
    rpcUrl: evmNet.rpcUrl,
    privateKey: evmNet.funderPrivateKey,
    easAddress: evmNet.easAddress,
    schemaRegistryAddress: evmNet.schemaRegistryAddress,
    network: 'hardhat',
    chainId: evmNet.chainId,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
  });
  deps.addCleanup('evm provider', async () => evm.close());
  await evm.ensureSchema();

  const stxNet = await startStacksDevnet({ blockTimeMs: 0 });
  deps.addCleanup('stacks devnet', () => stxNet.stop());
  const stx = new StacksNotaryChain({
    apiUrl: stxNet.url,
    privateKey: stxNet.senderKey,
    contractId: stxNet.contractId,
    network: 'devnet',
    explorerTxPrefix: '',
  });

  const out: BatchCost[] = [];
  let singleGas = 0;
  for (const n of BATCH_SIZES) {
    const root = buildMerkleTree(hashes(n)).root;

    const evmTx = await evm.signAnchor(root, await evm.chainNonce(), await evm.suggestFees());
    const sent = await evm.broadcast(evmTx.raw);
    if (!sent.ok) throw new Error(`EVM broadcast refused: ${sent.reason}`);
    const receipt = await evm.provider.waitForTransaction(evmTx.txHash, 1, 30_000);
    if (receipt?.status !== 1) throw new Error(`EVM attestation ${evmTx.txHash} failed`);
    const st = await evm.getStatus(evmTx.txHash);
    if (st.state !== 'included' || st.anchoredRoot !== `0x${Buffer.from(root).toString('hex')}`) {
      throw new Error(`EVM attestation ${evmTx.txHash} does not hold the root: ${JSON.stringify(st)}`);
    }
    const gasUsed = Number(receipt.gasUsed);
    if (n === 1) singleGas = gasUsed;

    const stxTx = await stx.signAnchor(root, await stx.chainNonce(), await stx.suggestFees());
    const stxSent = await stx.broadcast(stxTx.raw);
    if (!stxSent.ok) throw new Error(`Stacks broadcast refused: ${stxSent.reason}`);
    stxNet.mine();
    const stxStatus = await stx.getStatus(stxTx.txHash);
    if (stxStatus.state !== 'included')
      throw new Error(`Stacks anchor not included: ${JSON.stringify(stxStatus)}`);
    const fee = Number(stxTx.fee.maxFee);

    const cost: BatchCost = {
      documents: n,
      evm: {
        transactions: 1,
        gasUsed,
        gasPerDocument: gasUsed / n,
        ratioToSingleAttestationPct: (100 * gasUsed) / n / singleGas,
      },
      stacks: { transactions: 1, feeMicroStx: fee, feePerDocumentMicroStx: fee / n },
    };
    out.push(cost);
    console.log(
      `[bench] anchoring batch of ${n}: EVM 1 tx, ${gasUsed} gas (${cost.evm.gasPerDocument.toFixed(1)}/doc, ` +
        `${cost.evm.ratioToSingleAttestationPct.toFixed(2)}% of one attestation); Stacks 1 tx, fee ${fee} µSTX`,
    );
  }
  await stxNet.stop();
  evm.close();
  await evmNet.stop();
  return out;
}

interface DocRow {
  id: string;
  onchainStatus: string;
  stacksStatus: string;
}

async function listDocs(url: string, token: string): Promise<DocRow[]> {
  const res = await fetch(`${url}/api/documents`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`GET /api/documents answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { documents: DocRow[] }).documents;
}

async function uploadSmall(url: string, token: string, name: string): Promise<string> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([randomBytes(DOC_BYTES)]), name);
  const res = await fetch(`${url}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = await res.text();
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${body}`);
  return (JSON.parse(body) as { id: string }).id;
}

/** Polls the list until every id in `ids` is registered on both chains; returns when that poll answered. */
async function waitRegistered(url: string, token: string, ids: Set<string>): Promise<number> {
  const deadline = performance.now() + REGISTER_TIMEOUT_MS;
  for (;;) {
    const docs = await listDocs(url, token);
    const left = docs.filter(
      (d) => ids.has(d.id) && !(d.onchainStatus === 'registered' && d.stacksStatus === 'registered'),
    ).length;
    const seen = docs.filter((d) => ids.has(d.id)).length;
    if (seen === ids.size && left === 0) return performance.now();
    if (performance.now() > deadline)
      throw new Error(`${left} of ${ids.size} documents still not registered`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** `tx <chain> confirmed <n>` from `anchors:status`. */
function confirmedTx(status: string, chain: 'evm' | 'stacks'): number {
  const m = new RegExp(`^tx\\t${chain}\\tconfirmed\\t(\\d+)$`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}

async function latency(deps: Deps): Promise<AnchoringResults['latency']> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-bench-anchor-'));
  deps.addCleanup('anchoring temp dir', () => rm(tmp, { recursive: true, force: true }));
  const port = await freePort();
  const env = deps.childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: tmp,
    LOG_LEVEL: 'warn',
    ANCHORING: 'devnet',
    // The bench measures throughput, not the spec's limits (an operator's explicit switch).
    RATE_LIMITS: 'off',
  });
  const batchSeconds = Number(env.ANCHOR_BATCH_SECONDS ?? 2);
  const batchMax = Number(env.ANCHOR_BATCH_MAX ?? 1000);
  const startedAt = performance.now();
  const server = startChild('server-anchoring', deps.node, ['--import', 'tsx', 'server/src/main.ts'], {
    cwd: deps.root,
    env,
  });
  deps.addCleanup('anchoring server', () => server.stop());
  const url = (await server.waitForLine(/\[notary\] listening on (\S+)/, 120_000))[1] ?? '';
  const serverStartS = (performance.now() - startedAt) / 1000;
  console.log(
    `[bench] anchoring server (ANCHORING=devnet) pid ${server.pid} on ${url} after ${serverStartS.toFixed(1)} s`,
  );
  const email = 'anchor-bench@example.com';
  await deps.operator(env, ['user:create', '--email', email]);
  const token = await deps.operator(env, ['token', '--email', email]);

  const singleRunsS: number[] = [];
  for (let i = 0; i < SINGLE_RUNS; i++) {
    const t0 = performance.now();
    const id = await uploadSmall(url, token, `single-${i}.bin`);
    const t1 = await waitRegistered(url, token, new Set([id]));
    singleRunsS.push((t1 - t0) / 1000);
    console.log(
      `[bench] single upload ${i + 1}/${SINGLE_RUNS}: registered on both chains after ${((t1 - t0) / 1000).toFixed(2)} s`,
    );
  }

  const bulk: BulkRun[] = [];
  for (const concurrency of BULK_CONCURRENCY) {
    const before = await deps.operator(env, ['anchors:status'], true);
    const ids = new Set<string>();
    const queue = Array.from({ length: BULK_COUNT }, (_, i) => i);
    const b0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          ids.add(await uploadSmall(url, token, `bulk-${concurrency}-${i}.bin`));
        }
      }),
    );
    const b1 = performance.now();
    const b2 = await waitRegistered(url, token, ids);
    // The confirmed count may lag the `registered` status by a confirmation: wait for the workers to settle.
    let after = await deps.operator(env, ['anchors:status'], true);
    for (let i = 0; i < 50 && /\tincluded\t|\tbroadcast\t|\tsigned\t|\tqueued\t/.test(after); i++) {
      await new Promise((r) => setTimeout(r, 200));
      after = await deps.operator(env, ['anchors:status'], true);
    }
    const run: BulkRun = {
      documents: BULK_COUNT,
      concurrency,
      uploadS: (b1 - b0) / 1000,
      allRegisteredS: (b2 - b0) / 1000,
      evmTransactions: confirmedTx(after, 'evm') - confirmedTx(before, 'evm'),
      stacksTransactions: confirmedTx(after, 'stacks') - confirmedTx(before, 'stacks'),
    };
    bulk.push(run);
    console.log(
      `[bench] ${BULK_COUNT} uploads (${concurrency} parallel) in ${run.uploadS.toFixed(2)} s, all registered ` +
        `${run.allRegisteredS.toFixed(2)} s after the first; ${run.evmTransactions} EVM and ` +
        `${run.stacksTransactions} Stacks transactions`,
    );
  }
  await server.stop();
  const sorted = [...singleRunsS].sort((a, b) => a - b);
  return {
    batchSeconds,
    batchMax,
    serverStartS,
    singleRunsS,
    singleP50S: sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN,
    singleMaxS: sorted[sorted.length - 1] ?? Number.NaN,
    bulk,
  };
}

export async function benchAnchoring(deps: Deps): Promise<AnchoringResults> {
  const batches = await batchCosts(deps);
  const lat = await latency(deps);
  const at1000 = batches.find((b) => b.documents === 1000);
  return {
    batches,
    latency: lat,
    summary: {
      gasGoalMet:
        (at1000?.evm.ratioToSingleAttestationPct ?? Number.POSITIVE_INFINITY) <
        ANCHOR_GOALS.gasPerDocRatioPct,
      txGoalMet: lat.bulk.every(
        (b) =>
          b.evmTransactions <= ANCHOR_GOALS.txPerChainFor1000 &&
          b.stacksTransactions <= ANCHOR_GOALS.txPerChainFor1000,
      ),
    },
  };
}

export function reportAnchoring(r: AnchoringResults): string {
  const f = (n: number, d: number) => n.toFixed(d);
  const mark = (ok: boolean) => (ok ? '✅' : '❌');
  const l = r.latency;
  return [
    '| anchoring batch (documents) | EVM tx | EVM gas | gas / document | % of one attestation | Stacks tx | Stacks fee (µSTX) | fee / document (µSTX) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.batches.map(
      (b) =>
        `| ${b.documents} | ${b.evm.transactions} | ${b.evm.gasUsed} | ${f(b.evm.gasPerDocument, 1)} | ` +
        `${f(b.evm.ratioToSingleAttestationPct, 2)}${b.documents === 1000 ? ` (goal < ${ANCHOR_GOALS.gasPerDocRatioPct} ${mark(r.summary.gasGoalMet)})` : ''} | ` +
        `${b.stacks.transactions} | ${b.stacks.feeMicroStx} | ${f(b.stacks.feePerDocumentMicroStx, 2)} |`,
    ),
    '',
    '| anchoring through the service (ANCHORING=devnet) | value | goal |',
    '| --- | --- | --- |',
    `| 1 upload → registered on both chains (s), p50 / max of ${l.singleRunsS.length} | ${f(l.singleP50S, 2)} / ${f(l.singleMaxS, 2)} | |`,
    ...l.bulk.flatMap((b) => {
      const met =
        b.evmTransactions <= ANCHOR_GOALS.txPerChainFor1000 &&
        b.stacksTransactions <= ANCHOR_GOALS.txPerChainFor1000;
      return [
        `| ${b.documents} uploads (${b.concurrency} parallel): upload time (s) | ${f(b.uploadS, 2)} | |`,
        `| ${b.documents} uploads (${b.concurrency} parallel): first upload → all registered on both chains (s) | ${f(b.allRegisteredS, 2)} | |`,
        `| ${b.documents} uploads (${b.concurrency} parallel): transactions (EVM / Stacks) | ${b.evmTransactions} / ${b.stacksTransactions} | ≤ ${ANCHOR_GOALS.txPerChainFor1000} per chain ${mark(met)} |`,
      ];
    }),
    '',
    `Batch window ANCHOR_BATCH_SECONDS=${l.batchSeconds}, ANCHOR_BATCH_MAX=${l.batchMax} (a batch closes when full, else once uploads pause for the window or its oldest waited 5 windows); server cold start with devnets ${f(l.serverStartS, 1)} s.`,
  ].join('\n');
}
