import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '@notary/platform/log';
import { type HardhatDevnet, startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { restore } from '@notary/server/cli/backup';
import { loadConfig } from '@notary/server/config';
import { AnchorBatch, Document, DocumentAnchor } from '@notary/server/db/entities';
import type { DocumentDto } from '@notary/shared';
import { id as eventTopic, JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../bench/lib';
import { uploadBytes } from '../harness/anchored';
import { api } from '../harness/http';
import { ROOT } from '../harness/npm-start';
import { createTestDatabase } from '../harness/postgres';
import { type RadosgwServer, radosgwAvailable, startRadosgw } from '../harness/radosgw';
import { startTestService, type TestService } from '../harness/service';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** `npm run notary -- <args>` as the operator runs it, with the service's environment `env`. */
function notary(env: Record<string, string>, ...args: string[]) {
  return runCommand(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['server/src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
    timeoutMs: 120_000,
  });
}

/**
 * The operator's drill: `backup` (the CLI) of a service on PostgreSQL, radosgw and an EVM chain of its own taken
 * while uploads go on, `restore` into a fresh database and bucket, the restored service started on them: every
 * document acknowledged before the backup is there with its serial and intact bytes, a new upload takes a serial no
 * backed-up document has, and anchoring resumes without a second attestation for what was anchored at the dump.
 * The embedded default: backup-restore-embedded.test.ts.
 */
describe.skipIf(!radosgwAvailable())(
  'backup during uploads, restore into a fresh database and bucket',
  () => {
    let rgw: RadosgwServer;
    let chain: HardhatDevnet;
    let source: TestService;
    let restored: TestService | undefined;
    let tmp: string;
    let env: (bucket: string, databaseUrl: string) => Record<string, string>;

    beforeAll(async () => {
      [rgw, chain] = await Promise.all([startRadosgw(), startHardhatDevnet()]);
      tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-backup-'));
      const secret = randomBytes(32).toString('hex');
      env = (bucket, databaseUrl) => ({
        DATABASE_URL: databaseUrl,
        SECRET: secret,
        S3_ENDPOINT: rgw.endpoint,
        S3_BUCKET: bucket,
        S3_REGION: rgw.region,
        S3_ACCESS_KEY_ID: rgw.accessKeyId,
        S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
        RATE_LIMITS: 'off',
        // One EVM chain outside both services, as a public chain is: what the source anchored stays anchored.
        ANCHORING: 'configured',
        ANCHOR_BATCH_SECONDS: '1',
        EVM_RPC_URL: chain.rpcUrl,
        EVM_PRIVATE_KEY: chain.funderPrivateKey,
        EVM_CHAIN_ID: String(chain.chainId),
        EVM_NETWORK: 'shared-testnet',
        EAS_ADDRESS: chain.easAddress,
        EAS_SCHEMA_REGISTRY_ADDRESS: chain.schemaRegistryAddress,
        EVM_CONFIRMATIONS: '1',
      });
      const database = await createTestDatabase();
      // startTestService drops a database it made itself only; this one is dropped with the source's data dir.
      source = await startTestService(
        'postgresql',
        env(`notary-src-${randomBytes(4).toString('hex')}`, database.url),
      );
      const close = source.close;
      let closed = false;
      source.close = async () => {
        if (closed) return;
        closed = true;
        await close();
        await database.drop();
      };
    }, 180_000);
    afterAll(async () => {
      await restored?.close();
      await source?.close();
      await chain?.stop();
      await rgw?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it('restores every acknowledged document intact, continues the serials, and anchors nothing twice', async () => {
      const email = 'backup@example.com';
      const token = await source.token(email);
      const before: { doc: DocumentDto; hash: string }[] = [];
      for (let i = 0; i < 6; i++) {
        const bytes = randomBytes(64 * 1024 + i);
        before.push({ doc: await uploadBytes(source, token, bytes, `before-${i}.bin`), hash: sha256(bytes) });
      }
      await allRegistered(source, before.length);
      // Uploads keep coming while the backup runs: each is in the backup whole, or not at all.
      const backupDir = path.join(tmp, 'backup');
      const sourceEnv = env(bucketOf(source), source.service.deps.config.databaseUrl ?? '');
      let stop = false;
      const during = (async () => {
        const acked: { doc: DocumentDto; hash: string }[] = [];
        for (let i = 0; !stop; i++) {
          const bytes = randomBytes(32 * 1024 + i);
          acked.push({
            doc: await uploadBytes(source, token, bytes, `during-${i}.bin`),
            hash: sha256(bytes),
          });
        }
        return acked;
      })();
      const backedUp = await notary(
        { ...sourceEnv, DATA_DIR: source.dataDir },
        'backup',
        '--to',
        backupDir,
      ).finally(() => {
        stop = true;
      });
      const duringAcked = await during;
      expect(backedUp.code, backedUp.stderr).toBe(0);
      expect(backedUp.stdout).toMatch(/^database\tpostgresql$/m);
      expect(backedUp.stdout).toMatch(/^keep-apart\tsecret\tSECRET$/m);
      const manifest = JSON.parse(await readFile(path.join(backupDir, 'manifest.json'), 'utf8')) as {
        objects: number;
      };
      expect(manifest.objects).toBeGreaterThanOrEqual(before.length);

      // The source stops (its anchoring with it): the chain's later attestations are the restored service's.
      await source.close();
      const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { cacheTimeout: -1 });
      const restoreBlock = await provider.getBlockNumber();
      const restoreStart = new Date();
      // A fresh database and bucket, the same secret: restore refuses nothing, then the service starts on them.
      const fresh = await createTestDatabase();
      const restoredEnv = env(`notary-dst-${randomBytes(4).toString('hex')}`, fresh.url);
      const restoreDir = await mkdtemp(path.join(tmp, 'restored-'));
      // In this process (the CLI's `restore` is this function): one child's start less in the suite.
      const target = loadConfig({ NODE_ENV: 'test', ...restoredEnv, DATA_DIR: restoreDir });
      const restoredOut = await restore(target, backupDir, silentLogger);
      expect(restoredOut).toContain(`objects\t${manifest.objects}\t`);
      // A second restore into the same (no longer fresh) database is refused before it writes anything.
      await expect(restore(target, backupDir, silentLogger)).rejects.toThrow('not empty');

      restored = await startTestService('postgresql', restoredEnv);
      const restoredClose = restored.close;
      restored.close = async () => {
        await restoredClose();
        await fresh.drop();
      };
      const restoredToken = await restored.operator({ command: 'token', email });
      const present = new Map<string, string>();
      for (const { doc, hash } of [...before, ...duringAcked]) {
        const res = await api<{ document: DocumentDto }>(restored.url, `/api/documents/${doc.id}`, {
          token: restoredToken,
        });
        if (res.status === 404) continue;
        expect(res.status).toBe(200);
        expect(res.body.document.serialNumber).toBe(doc.serialNumber);
        const verified = await api<{ hashMatches: boolean }>(
          restored.url,
          `/api/documents/${doc.id}/verify?hash=${hash}`,
          { token: restoredToken },
        );
        expect(verified.body.hashMatches).toBe(true);
        // The restored bucket serves the very bytes that were uploaded.
        const download = await api<{ downloadUrl: string }>(
          restored.url,
          `/api/documents/${doc.id}/download`,
          {
            token: restoredToken,
          },
        );
        expect(download.status).toBe(200);
        const file = await fetch(download.body.downloadUrl);
        present.set(doc.serialNumber, sha256(new Uint8Array(await file.arrayBuffer())));
        expect(present.get(doc.serialNumber)).toBe(hash);
      }
      // Everything acknowledged before the backup started is there.
      for (const { doc } of before) expect(present.has(doc.serialNumber)).toBe(true);
      const next = await uploadBytes(restored, restoredToken, randomBytes(1000), 'after.bin');
      const serials = new Set([...before, ...duringAcked].map((d) => d.doc.serialNumber));
      expect(serials.has(next.serialNumber)).toBe(false);

      // Anchoring resumes: what was pending at the dump (and the new upload) is anchored by the restored service,
      // in batches of its own; a document anchored at the dump keeps its batch and gets no second attestation.
      const em = restored.service.deps.db.fork();
      // What was pending at the dump is collected now, not at the next safety sweep (30 s): the wait below is for
      // the anchoring itself.
      await restored.service.anchoring?.triggerCollection();
      await allRegistered(restored, await em.count(Document, {}));
      const anchors = await em.find(
        DocumentAnchor,
        { document: { $in: before.map((b) => b.doc.id) } },
        { populate: ['batch'] },
      );
      expect(anchors).toHaveLength(before.length);
      for (const a of anchors) expect(a.batch.createdAt.getTime()).toBeLessThan(restoreStart.getTime());
      const newBatches = await em.count(AnchorBatch, { createdAt: { $gte: restoreStart } });
      const logs = await provider.getLogs({
        address: chain.easAddress,
        topics: [eventTopic('Attested(address,address,bytes32,bytes32)')],
        fromBlock: restoreBlock + 1,
      });
      expect(newBatches).toBeGreaterThanOrEqual(1);
      expect(logs).toHaveLength(newBatches);
      provider.destroy();
    }, 240_000);
  },
);

/** Waits until `count` documents of `t`'s database are registered on the EVM chain (a deadline, not a pause). */
async function allRegistered(t: TestService, count: number): Promise<void> {
  await expect
    .poll(() => t.service.deps.db.fork().count(Document, { onchainStatus: 'registered' }), {
      timeout: 120_000,
      interval: 200,
    })
    .toBeGreaterThanOrEqual(count);
}

/** The bucket a test service stores its files in. */
function bucketOf(t: TestService): string {
  const storage = t.service.deps.config.storage;
  return storage.kind === 's3' ? storage.bucket : '';
}
