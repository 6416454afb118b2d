/**
 * `npm run bench -- anchor-cost`: what one anchoring batch costs on a real network, measured on the devnets with
 * the service's own adapters (results printed; `results.json` is left as it is). The figures feed
 * docs/anchoring.md, "Real networks".
 *
 * EVM (the in-process Hardhat node running the real EAS 1.9.0 contracts):
 * - the one-time schema registration (`SchemaRegistry.register("bytes32 merkleRoot", 0x0, false)` by
 *   `EvmEasChain.ensureSchema`): gas used, from its receipt;
 * - one anchoring transaction (`EAS.attest` of a Merkle root, signed by `EvmEasChain.signAnchor`) for batches of
 *   `BATCH_SIZES` random document hashes: gas used (receipt), the gas limit the adapter signed with (first
 *   estimate + 30 %), the signed transaction's size in bytes (what an OP Stack L2 such as Base charges its L1
 *   data fee on) and its calldata size. A batch is one transaction whatever its size: only the 32-byte root is
 *   sent, so the gas differs only by the root's zero bytes (4 gas instead of 16 per calldata byte).
 *
 * Stacks (the Clarity VM devnet, manual mining, its own record of the requests it answered):
 * - one `anchor` contract call signed by `StacksNotaryChain.signAnchor`: serialized size in bytes (the fee is
 *   µSTX per byte: stacks-core's minimum relay rate is 1 µSTX/byte), and the fee the adapter offers
 *   (`suggestFees` against the devnet's `/v2/fees/transfer`, which answers stacks-core's minimum rate);
 * - the requests each step of one anchor makes (the start-up check, nonce, fee, broadcast, a poll while
 *   pending, a poll at 1 confirmation, a poll at 3), against a Hiro API (detected) and a bare stacks-node
 *   (`STACKS_API_KIND=node`), so the request budget of an anchor in flight can be worked out;
 * - the one-time deployment of `server/contracts/notary.clar` (`makeContractDeploy`, Clarity 3, signed offline
 *   with the same key, never sent): serialized size in bytes.
 *
 * Every server is on 127.0.0.1 and stopped at the end (also on failure, through `addCleanup`).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  NOTARY_CONTRACT_PATH,
  startStacksDevnet,
} from '@notary/server/adapters/chains/devnets/stacks-devnet';
import { EvmEasChain } from '@notary/server/adapters/chains/evm-eas';
import { startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { StacksNotaryChain } from '@notary/server/adapters/chains/stacks';
import { buildMerkleTree } from '@notary/server/domain/anchoring/merkle';
import {
  ClarityVersion,
  makeContractDeploy,
  PostConditionMode,
  randomPrivateKey,
} from '@stacks/transactions';
import { getBytes, Transaction } from 'ethers';

const BATCH_SIZES = [1, 1000, 10_000];
/** Gas prices (gwei) the EVM cost is given at. */
export const GAS_PRICES_GWEI = [0.01, 1, 20];
/** Stacks fee rates (µSTX per byte) the anchor fee is given at: stacks-core's minimum and two busier ones. */
export const STACKS_RATES = [1, 10, 100];

export interface EvmAnchorCost {
  documents: number;
  gasUsed: number;
  gasLimit: number;
  /** The signed EIP-1559 transaction, bytes. */
  txBytes: number;
  calldataBytes: number;
}

export interface StacksStep {
  step: string;
  /** `METHOD path` (txids, addresses and contract names replaced by placeholders) → count. */
  requests: Record<string, number>;
}

/** One kind of Stacks endpoint: the anchor signed there and the requests of each step. */
export interface StacksMode {
  label: string;
  anchorTxBytes: number;
  /** The fee the adapter offered (µSTX). */
  feeMicroStx: number;
  steps: StacksStep[];
}

export interface AnchorCostResults {
  evm: { schemaRegistrationGas: number; anchors: EvmAnchorCost[] };
  stacks: {
    anchorTxBytes: number;
    /** Fee the adapter offered against a node answering the minimum rate (1 µSTX/byte), µSTX. */
    adapterFeeMicroStx: number;
    deployTxBytes: number;
    contractSourceBytes: number;
    modes: StacksMode[];
  };
}

interface Deps {
  /** Registers a cleanup step (run in reverse order at the end, also on failure). */
  addCleanup(label: string, run: () => Promise<void>): void;
}

const hashes = (n: number) => Array.from({ length: n }, () => new Uint8Array(randomBytes(32)));

async function evmCosts(deps: Deps): Promise<AnchorCostResults['evm']> {
  const net = await startHardhatDevnet();
  deps.addCleanup('hardhat devnet', () => net.stop());
  const evm = new EvmEasChain({
    rpcUrl: net.rpcUrl,
    privateKey: net.funderPrivateKey,
    easAddress: net.easAddress,
    schemaRegistryAddress: net.schemaRegistryAddress,
    network: 'hardhat',
    chainId: net.chainId,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
  });
  deps.addCleanup('evm provider', async () => evm.close());
  const schema = await evm.ensureSchema();
  if (!schema.registered || !schema.txHash) throw new Error('the fresh devnet already had the schema');
  const schemaReceipt = await evm.provider.getTransactionReceipt(schema.txHash);
  if (!schemaReceipt) throw new Error(`no receipt for the schema registration ${schema.txHash}`);

  const anchors: EvmAnchorCost[] = [];
  for (const documents of BATCH_SIZES) {
    const root = buildMerkleTree(hashes(documents)).root;
    const signed = await evm.signAnchor(root, await evm.chainNonce(), await evm.suggestFees());
    const sent = await evm.broadcast(signed.raw);
    if (!sent.ok) throw new Error(`EVM broadcast refused: ${sent.reason}`);
    const receipt = await evm.provider.waitForTransaction(signed.txHash, 1, 30_000);
    if (receipt?.status !== 1) throw new Error(`EVM attestation ${signed.txHash} failed`);
    const tx = Transaction.from(`0x${Buffer.from(signed.raw).toString('hex')}`);
    anchors.push({
      documents,
      gasUsed: Number(receipt.gasUsed),
      gasLimit: Number(tx.gasLimit),
      txBytes: signed.raw.length,
      calldataBytes: getBytes(tx.data).length,
    });
  }
  evm.close();
  await net.stop();
  return { schemaRegistrationGas: Number(schemaReceipt.gasUsed), anchors };
}

/** `METHOD path` with txids, addresses and the query left out, so that requests of one kind count together. */
function route(method: string, path: string): string {
  const bare = path
    .replace(/\?.*$/, '')
    .replace(/0x[0-9a-f]{64}/gi, '<txid>')
    .replace(/\/[0-9a-f]{64}(?=\/|$)/gi, '/<txid>')
    .replace(/S[TPMN][0-9A-Z]{28,40}/g, '<address>');
  return `${method} ${bare}`;
}

/** Where the Stacks adapter is pointed: the kind of endpoint the devnet plays and `STACKS_API_KIND`. */
const STACKS_MODES: { label: string; kind: 'hiro' | 'node'; apiKind: 'auto' | 'node' }[] = [
  { label: 'Hiro API (STACKS_API_KIND=auto, detected: hiro-v3)', kind: 'hiro', apiKind: 'auto' },
  { label: 'bare stacks-node (STACKS_API_KIND=node)', kind: 'node', apiKind: 'node' },
];

/** The requests each step of one anchor makes against one kind of endpoint (see the file's comment). */
async function stacksRequests(mode: (typeof STACKS_MODES)[number], deps: Deps): Promise<StacksMode> {
  const net = await startStacksDevnet({ blockTimeMs: 0, switches: { kind: mode.kind } });
  deps.addCleanup(`stacks devnet (${mode.kind})`, () => net.stop());
  const stx = new StacksNotaryChain({
    apiUrl: net.url,
    privateKey: net.senderKey,
    contractId: net.contractId,
    network: 'devnet',
    explorerTxPrefix: '',
    apiKind: mode.apiKind,
  });
  let seen = net.requests().length;
  const steps: StacksStep[] = [];
  const step = (name: string) => {
    const all = net.requests();
    const requests: Record<string, number> = {};
    for (const r of all.slice(seen)) {
      const key = route(r.method, r.path);
      requests[key] = (requests[key] ?? 0) + 1;
    }
    seen = all.length;
    steps.push({ step: name, requests });
  };

  await stx.probe();
  step('start-up check (kind and network)');
  const nonce = await stx.chainNonce();
  step('next nonce');
  const fee = await stx.suggestFees();
  step('fee');
  const signed = await stx.signAnchor(buildMerkleTree(hashes(1000)).root, nonce, fee);
  const sent = await stx.broadcast(signed.raw);
  if (!sent.ok) throw new Error(`Stacks broadcast refused: ${sent.reason}`);
  step('broadcast');
  const pending = await stx.getStatus(signed.txHash);
  if (pending.state !== 'pending') throw new Error(`expected pending, got ${JSON.stringify(pending)}`);
  step('poll while pending');
  net.mine();
  const first = await stx.getStatus(signed.txHash);
  if (first.state !== 'included' || first.confirmations !== 1) {
    throw new Error(`expected included at 1 confirmation, got ${JSON.stringify(first)}`);
  }
  step('poll once included (1 confirmation)');
  net.mine(2);
  const third = await stx.getStatus(signed.txHash);
  if (third.state !== 'included' || third.confirmations !== 3) {
    throw new Error(`expected included at 3 confirmations, got ${JSON.stringify(third)}`);
  }
  step('poll at 3 confirmations');
  await net.stop();
  return { label: mode.label, anchorTxBytes: signed.raw.length, feeMicroStx: Number(fee.maxFee), steps };
}

async function stacksCosts(deps: Deps): Promise<AnchorCostResults['stacks']> {
  const modes: StacksMode[] = [];
  for (const mode of STACKS_MODES) modes.push(await stacksRequests(mode, deps));
  const first = modes[0];
  if (!first) throw new Error('no Stacks mode measured');

  // The one-time deployment, signed offline exactly as docs/anchoring.md shows (never sent).
  const source = await readFile(NOTARY_CONTRACT_PATH, 'utf8');
  const deploy = await makeContractDeploy({
    contractName: 'notary',
    codeBody: source,
    clarityVersion: ClarityVersion.Clarity3,
    senderKey: randomPrivateKey(),
    network: 'testnet',
    nonce: 0n,
    fee: 0n,
    postConditionMode: PostConditionMode.Deny,
  });
  return {
    anchorTxBytes: first.anchorTxBytes,
    adapterFeeMicroStx: first.feeMicroStx,
    deployTxBytes: deploy.serializeBytes().length,
    contractSourceBytes: Buffer.byteLength(source),
    modes,
  };
}

/** Runs both parts (see the file's comment). */
export async function benchAnchorCost(deps: Deps): Promise<AnchorCostResults> {
  console.log('[bench] anchor-cost: EVM on the Hardhat devnet (EAS 1.9.0)');
  const evm = await evmCosts(deps);
  console.log('[bench] anchor-cost: Stacks on the Clarity VM devnet (as a Hiro API, then as a bare node)');
  const stacks = await stacksCosts(deps);
  return { evm, stacks };
}

/** ETH for `gas` at `gwei` per gas, as a decimal string. */
function eth(gas: number, gwei: number): string {
  return ((gas * gwei) / 1e9).toPrecision(3);
}

/** The results as markdown tables. */
export function reportAnchorCost(r: AnchorCostResults): string {
  const gasHead = GAS_PRICES_GWEI.map((g) => `ETH at ${g} gwei`).join(' | ');
  const stxHead = STACKS_RATES.map((rate) => `at ${rate} µSTX/byte`).join(' | ');
  const s = r.stacks;
  const stx = (bytes: number) =>
    STACKS_RATES.map((rate) => `${bytes * rate} µSTX = ${(bytes * rate) / 1e6} STX`).join(' | ');
  return [
    `| EVM transaction | documents | gas used | gas limit signed | tx bytes | calldata bytes | ${gasHead} |`,
    `| --- | --- | --- | --- | --- | --- | ${GAS_PRICES_GWEI.map(() => '---').join(' | ')} |`,
    `| schema registration (once) | | ${r.evm.schemaRegistrationGas} | | | | ${GAS_PRICES_GWEI.map((g) => eth(r.evm.schemaRegistrationGas, g)).join(' | ')} |`,
    ...r.evm.anchors.map(
      (a) =>
        `| EAS.attest (one batch) | ${a.documents} | ${a.gasUsed} | ${a.gasLimit} | ${a.txBytes} | ${a.calldataBytes} | ` +
        `${GAS_PRICES_GWEI.map((g) => eth(a.gasUsed, g)).join(' | ')} |`,
    ),
    '',
    `| Stacks transaction | bytes | ${stxHead} |`,
    `| --- | --- | ${STACKS_RATES.map(() => '---').join(' | ')} |`,
    `| anchor call (one batch) | ${s.anchorTxBytes} | ${stx(s.anchorTxBytes)} |`,
    `| notary.clar deployment (once; ${s.contractSourceBytes}-byte source) | ${s.deployTxBytes} | ${stx(s.deployTxBytes)} |`,
    '',
    `Fee the Stacks adapter offers when the node answers the minimum rate (1 µSTX/byte): ${s.adapterFeeMicroStx} µSTX.`,
    ...s.modes.flatMap((m) => [
      '',
      `| Stacks step of one anchor, ${m.label} | requests |`,
      '| --- | --- |',
      ...m.steps.map(
        (st) =>
          `| ${st.step} | ${
            Object.entries(st.requests)
              .map(([r, n]) => `${n} × \`${r}\``)
              .join(', ') || 'none'
          } |`,
      ),
    ]),
  ].join('\n');
}
