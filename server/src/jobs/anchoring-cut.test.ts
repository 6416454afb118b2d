import { randomUUID } from 'node:crypto';
import { recordingLog } from '@notary/platform/log.testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../test/harness/db-templates';
import { type AnchoringChains, startChains } from '../adapters/chains';
import { type HardhatDevnet, startHardhatDevnet } from '../adapters/chains/hardhat-devnet';
import type { Database } from '../db';
import { AnchorBatch, AnchorTx, Document, Tenant } from '../db/entities';
import { addPendingDocument } from '../domain/anchoring/pending-documents.testing';
import { type AnchoringRunner, BATCH_MAX_WAIT_WINDOWS, startAnchoring } from './anchoring';

/**
 * The runner's own path (without pg-boss, on PGlite), its collections under the cut rule, on the Hardhat devnet with
 * EAS: with `ANCHOR_BATCH_MAX` 5 and a window of an hour (only the count can close a batch while the injected clock
 * stands still), 2 × max documents take exactly 2 batches and 2 transactions; 2 more stay pending past the sweep until
 * the clock passes the window.
 */

const MAX = 5;
const WINDOW_S = 3600;

let db: Database;
let devnet: HardhatDevnet;
let chains: AnchoringChains | undefined;
let runner: AnchoringRunner | undefined;
let tenantId: string;
let offsetMs = 0;
const log = recordingLog();

beforeAll(async () => {
  [db, devnet] = await Promise.all([openTestPglite(), startHardhatDevnet()]);
  const em = db.fork();
  tenantId = randomUUID();
  em.create(Tenant, { id: tenantId, kind: 'personal', externalId: 'u1', name: 'T', serialPrefix: 'RC' });
  await em.flush();
  const config = {
    mode: 'configured',
    batchSeconds: WINDOW_S,
    batchMax: MAX,
    evm: {
      rpcUrl: devnet.rpcUrl,
      privateKey: devnet.funderPrivateKey,
      network: 'runner-test',
      chainId: devnet.chainId,
      easAddress: devnet.easAddress,
      schemaRegistryAddress: devnet.schemaRegistryAddress,
      schemaUid: undefined,
      confirmations: 1,
      explorerTxPrefix: '',
      attestationScanPrefix: '',
    },
    stacks: undefined,
  } as const;
  chains = await startChains(config);
  runner = await startAnchoring({
    config,
    chains: chains.entries,
    fork: () => db.fork(),
    log,
    now: () => new Date(Date.now() + offsetMs),
  });
}, 120_000);

afterAll(async () => {
  await runner?.stop();
  await chains?.stop();
  await devnet?.stop();
  await db?.close();
});

let serial = 0;
/** `n` pending documents, one transaction each as uploads are, created at the injected clock's time. */
async function add(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const em = db.fork();
    const id = addPendingDocument(em, tenantId, `RC-${++serial}`, new Date(Date.now() + offsetMs));
    await em.flush();
    ids.push(id);
  }
  return ids;
}

/** Polls (generous bound, no timing asserted) until every document of `ids` is registered on the EVM chain. */
async function registered(ids: string[]): Promise<void> {
  const deadline = Date.now() + 90_000;
  while ((await db.fork().count(Document, { id: { $in: ids }, onchainStatus: 'registered' })) < ids.length) {
    if (Date.now() > deadline)
      throw new Error(
        `not registered in time; log: ${[...log.texts('info'), ...log.texts('error')].join('\n')}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

const counts = async () => {
  const em = db.fork();
  return { batches: await em.count(AnchorBatch, {}), txs: await em.count(AnchorTx, { chain: 'evm' }) };
};

describe('the runner cuts batches by count, partial ones by the window', () => {
  it('2 × max documents: 2 batches, 2 transactions, every document registered', async () => {
    const r = runner as AnchoringRunner;
    // The runner's first collection (at start) found nothing.
    expect(await r.triggerCollection()).toMatchObject({ batched: 0, pending: 0 });
    const ids = await add(2 * MAX);
    expect(await r.triggerCollection()).toMatchObject({ batched: 2 * MAX, pending: 0, dueAt: undefined });
    await registered(ids);
    expect(await counts()).toEqual({ batches: 2, txs: 2 });
  });

  it('2 × max + 2: 2 full batches; the 2 left stay pending through sweeps until the window has passed', async () => {
    const r = runner as AnchoringRunner;
    const ids = await add(2 * MAX + 2);
    const first = await r.triggerCollection();
    expect(first).toMatchObject({ batched: 2 * MAX, pending: 2 });
    // Due when the newest has waited the window (no sooner than an hour from the last document).
    expect(first.dueAt?.getTime()).toBeGreaterThan(Date.now() + offsetMs + (WINDOW_S - 60) * 1000);
    await registered(ids.slice(0, 2 * MAX));
    // A sweep before the window: the partial batch younger than the window is not cut.
    expect(await r.triggerCollection()).toMatchObject({ batched: 0, pending: 2 });
    expect(
      await db.fork().count(Document, { id: { $in: ids.slice(2 * MAX) }, onchainStatus: 'pending' }),
    ).toBe(2);
    expect(await counts()).toEqual({ batches: 4, txs: 4 });
    // The clock passes the window: the next collection cuts them.
    offsetMs += WINDOW_S * 1000;
    expect(await r.triggerCollection()).toMatchObject({ batched: 2, pending: 0 });
    await registered(ids);
    expect(await counts()).toEqual({ batches: 5, txs: 5 });
  });

  it('a burst that outlasts the window is not split: cut once the uploads pause for the window', async () => {
    const r = runner as AnchoringRunner;
    const ids: string[] = [];
    // Fewer than max, one every half window: the uploads never pause for a whole window.
    for (let i = 1; i < MAX; i++) {
      ids.push(...(await add(1)));
      expect(await r.triggerCollection()).toMatchObject({ batched: 0, pending: i });
      offsetMs += (WINDOW_S * 1000) / 2;
    }
    // The oldest has waited 2 windows, the newest half of one: still one batch in the making.
    expect(await r.triggerCollection()).toMatchObject({ batched: 0, pending: MAX - 1 });
    offsetMs += (WINDOW_S * 1000) / 2;
    expect(await r.triggerCollection()).toMatchObject({ batched: MAX - 1, pending: 0 });
    await registered(ids);
    expect(await counts()).toEqual({ batches: 6, txs: 6 });
    // The longest wait (5 windows) that bounds a stream never pausing is the domain test's (batch-cut.test.ts).
    expect(BATCH_MAX_WAIT_WINDOWS).toBe(5);
  });
});
