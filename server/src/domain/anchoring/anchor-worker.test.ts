import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { recordingLog } from '@notary/platform/log.testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvmEasChain } from '../../adapters/chains/evm-eas';
import type { HardhatDevnet } from '../../adapters/chains/hardhat-devnet';
import { AnchorBatch, AnchorTx, Document, DocumentAnchor } from '../../db/entities';
import { type EvmPipelineFixture, quietWorker, startEvmPipeline } from '../../jobs/evm-pipeline.testing';
import { recordingActivity } from '../../ports/activity.testing';
import type { AnchorChain } from '../../ports/chains';
import type { AnchorWorker, WorkerOptions } from './anchor-worker';
import { collectBatch } from './batch-cut';
import { hashFromHex, type MerkleProof, verifyMerkleProof } from './merkle';

/** Pipeline against the real Hardhat devnet with the EAS contracts (EVM chain only here). */

const log = recordingLog();

let fx: EvmPipelineFixture;
let orm: PgliteORM;
let devnet: HardhatDevnet;
let chain: EvmEasChain;

beforeAll(async () => {
  fx = await startEvmPipeline('TT');
  ({ orm, devnet, chain } = fx);
}, 60_000);

afterAll(() => fx?.stop());

const addDocuments = (n: number) => fx.addDocuments(n);

function worker(c: AnchorChain, extra: Partial<WorkerOptions> = {}): AnchorWorker {
  return quietWorker({ chain: c, fork: () => orm.em.fork(), log, ...extra });
}

/** Ticks until no row of the chain is left to drive (or `max` ticks). */
async function drain(w: AnchorWorker, max = 20): Promise<void> {
  for (let i = 0; i < max; i++) {
    const open = await orm.em.fork().count(AnchorTx, { state: { $nin: ['confirmed', 'failed'] } });
    if (open === 0) return;
    await w.tick();
  }
}

describe('anchoring pipeline on Hardhat + EAS', () => {
  it('batches pending documents, anchors the root, registers every document; proofs recompute the root', async () => {
    const ids = await addDocuments(5);
    const r = await collectBatch(orm.em.fork(), { chains: ['evm'], maxBatchSize: 1000 });
    expect(r).toMatchObject({ leafCount: 5, more: false });
    expect(await collectBatch(orm.em.fork(), { chains: ['evm'], maxBatchSize: 1000 })).toMatchObject({
      leafCount: 0,
    });
    const counted = recordingActivity();
    await drain(worker(chain, { activity: counted.activity }));
    const em = orm.em.fork();
    const tx = await em.findOneOrFail(AnchorTx, { batch: r.batchId as string });
    expect(tx.state).toBe('confirmed');
    // One batch confirmed, counted once, its lag measured from the cut.
    expect(counted.lines).toEqual(['confirmed evm']);
    expect(counted.lags[0]).toBeGreaterThanOrEqual(0);
    expect(counted.lags[0]).toBeLessThan(60);
    const batch = await em.findOneOrFail(AnchorBatch, { id: r.batchId as string });
    expect(batch.status).toBe('anchored');
    const status = await chain.getStatus(tx.txHash as string);
    expect(status).toMatchObject({ state: 'included', anchoredRoot: `0x${batch.root}` });
    for (const id of ids) {
      const d = await em.findOneOrFail(Document, { id });
      expect(d).toMatchObject({
        onchainStatus: 'registered',
        onchainTxHash: tx.txHash,
        onchainAttestationUid: tx.attestationUid,
      });
      const a = await em.findOneOrFail(DocumentAnchor, { document: id });
      expect(
        verifyMerkleProof(hashFromHex(d.sha256Hash), a.proof as MerkleProof, hashFromHex(batch.root)),
      ).toBe(true);
    }
  }, 60_000);

  it('crash between sign and broadcast: the same bytes are re-sent, anchored once', async () => {
    await addDocuments(2);
    const r = await collectBatch(orm.em.fork(), { chains: ['evm'], maxBatchSize: 1000 });
    const nonceBefore = await chain.chainNonce();
    const crashing = worker(chain, {
      afterSignedCommit: () => {
        throw new Error('crash');
      },
    });
    await crashing.tick();
    const em = orm.em.fork();
    const signed = await em.findOneOrFail(AnchorTx, { batch: r.batchId as string });
    expect(signed.state).toBe('signed');
    const raw = Buffer.from(signed.raw as Buffer).toString('hex');
    const hash = signed.txHash;
    await drain(worker(chain));
    const done = await orm.em.fork().findOneOrFail(AnchorTx, { batch: r.batchId as string });
    expect(done).toMatchObject({ state: 'confirmed', txHash: hash });
    expect(Buffer.from(done.raw as Buffer).toString('hex')).toBe(raw);
    expect(await chain.chainNonce()).toBe(nonceBefore + 1n);
  }, 60_000);

  it('a reorg (snapshot and revert) re-anchors the batch', async () => {
    const ids = await addDocuments(1);
    const snap = await devnet.snapshot();
    const r = await collectBatch(orm.em.fork(), { chains: ['evm'], maxBatchSize: 1000 });
    const w = worker(chain, { confirmations: 3 });
    await w.tick();
    let row = await orm.em.fork().findOneOrFail(AnchorTx, { batch: r.batchId as string });
    if (row.state === 'broadcast') await w.tick();
    row = await orm.em.fork().findOneOrFail(AnchorTx, { batch: r.batchId as string });
    expect(row.state).toBe('included');
    expect((await orm.em.fork().findOneOrFail(Document, { id: ids[0] as string })).onchainStatus).toBe(
      'registered',
    );
    expect(await devnet.revert(snap)).toBe(true);
    await w.tick(); // receipt gone → documents pending, row back to signed
    expect((await orm.em.fork().findOneOrFail(Document, { id: ids[0] as string })).onchainStatus).toBe(
      'pending',
    );
    for (let i = 0; i < 10; i++) {
      await w.tick();
      const cur = await orm.em.fork().findOneOrFail(AnchorTx, { batch: r.batchId as string });
      if (cur.state === 'confirmed') break;
      await devnet.mine(1);
    }
    const final = await orm.em.fork().findOneOrFail(AnchorTx, { batch: r.batchId as string });
    expect(final.state).toBe('confirmed');
    expect((await orm.em.fork().findOneOrFail(Document, { id: ids[0] as string })).onchainStatus).toBe(
      'registered',
    );
  }, 60_000);
});
