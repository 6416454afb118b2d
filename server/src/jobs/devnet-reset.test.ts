import { createHash, randomUUID } from 'node:crypto';
import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { recordingLog } from '@notary/platform/log.testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnchorBatch, AnchorTx, Document, DocumentAnchor, Tenant } from '../db/entities';
import { openMemoryOrm } from '../db/memory-orm.testing';
import { forgetPreviousDevnet } from './anchoring';

let orm: PgliteORM;
let tenantId: string;

beforeAll(async () => {
  orm = await openMemoryOrm();
  const em = orm.em.fork();
  tenantId = randomUUID();
  em.create(Tenant, { id: tenantId, kind: 'personal', externalId: 'u1', name: 'T', serialPrefix: 'DV' });
  await em.flush();
}, 60_000);

afterAll(async () => {
  await orm?.close();
});

let serial = 0;
/** One registered document in its own batch, whose transactions were signed for `networks`. */
async function anchored(networks: { evm?: [string, number]; stacks?: [string, number] }): Promise<string> {
  const em = orm.em.fork();
  const id = randomUUID();
  const hash = createHash('sha256').update(id).digest('hex');
  const doc = em.create(Document, {
    id,
    tenant: tenantId,
    serialNumber: `DV-${++serial}`,
    fileName: 'f.txt',
    fileSize: 1,
    mimeType: 'text/plain',
    sha256Hash: hash,
    sourceType: 'upload',
    consentGiven: true,
    consentTimestamp: new Date(),
    uploaderUserId: 'u1',
    onchainStatus: 'registered',
    onchainTxHash: `0x${'a'.repeat(64)}`,
    stacksStatus: 'registered',
    stacksTxId: 'b'.repeat(64),
  });
  const batch = em.create(AnchorBatch, { id: randomUUID(), leafCount: 1, root: hash, status: 'anchored' });
  em.create(DocumentAnchor, { document: doc, batch, leafIndex: 0, proof: [] });
  for (const chain of ['evm', 'stacks'] as const) {
    const net = networks[chain];
    em.create(AnchorTx, {
      id: randomUUID(),
      batch,
      chain,
      state: 'confirmed',
      nextAttemptAt: new Date(),
      network: net?.[0] ?? null,
      chainId: net?.[1] ?? null,
    });
  }
  await em.flush();
  return id;
}

describe('devnet reset at start', () => {
  it('forgets only batches recorded on a devnet; anchors made on a real network stay as they are', async () => {
    const onDevnet = await anchored({ evm: ['hardhat', 31337], stacks: ['devnet', 2147483648] });
    const onSepolia = await anchored({ evm: ['sepolia', 11155111] });
    const onStacksTestnet = await anchored({ evm: ['hardhat', 31337], stacks: ['testnet', 2147483648] });
    const log = recordingLog();
    await forgetPreviousDevnet(orm.em.fork(), log);
    expect(log.texts('info')).toEqual([
      'devnet: batches of a previous devnet forgotten; their documents re-anchor {"batches":1}',
      'devnet: batches anchored on real networks kept as they are {"batches":2}',
    ]);
    const em = orm.em.fork();
    const status = async (id: string) => {
      const d = await em.findOneOrFail(Document, id, { refresh: true });
      return [d.onchainStatus, d.stacksStatus, d.onchainTxHash !== null];
    };
    expect(await status(onDevnet)).toEqual(['pending', 'pending', false]);
    expect(await status(onSepolia)).toEqual(['registered', 'registered', true]);
    expect(await status(onStacksTestnet)).toEqual(['registered', 'registered', true]);
    expect(await em.count(DocumentAnchor, { document: onDevnet })).toBe(0);
    expect(await em.count(DocumentAnchor, { document: { $in: [onSepolia, onStacksTestnet] } })).toBe(2);
    expect(await em.count(AnchorTx, {})).toBe(4);
  });
});
