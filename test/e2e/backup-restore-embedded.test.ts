import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '@notary/platform/log';
import { backup, restore } from '@notary/server/cli/backup';
import { loadConfig } from '@notary/server/config';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBytes } from '../harness/anchored';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/**
 * The embedded default (PGlite and files under `DATA_DIR`): the backup is taken during a short pause (the service
 * stopped; another process running it is refused by the database's lock, which a test process cannot show on
 * itself), then restored into a fresh `DATA_DIR`.
 */
describe('backup and restore of the embedded database and file storage', () => {
  let tmp: string;
  let restored: TestService | undefined;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-backup-embedded-'));
  });
  afterAll(async () => {
    await restored?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('restores every document with its serial and bytes; the next serial is new', async () => {
    const secret = randomBytes(32).toString('hex');
    const envOf = (dataDir: string) => ({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      SECRET: secret,
      ANCHORING: 'off',
    });
    const sourceDir = path.join(tmp, 'source');
    const source = await startTestService('pglite', envOf(sourceDir));
    const email = 'embedded-backup@example.com';
    const uploaded: { doc: DocumentDto; hash: string }[] = [];
    try {
      const token = await source.token(email);
      for (let i = 0; i < 4; i++) {
        const bytes = randomBytes(16 * 1024 + i);
        uploaded.push({
          doc: await uploadBytes(source, token, bytes, `embedded-${i}.bin`),
          hash: sha256(bytes),
        });
      }
    } finally {
      await source.close();
    }
    const backupDir = path.join(tmp, 'backup');
    const out = await backup(loadConfig(envOf(sourceDir)), backupDir, silentLogger);
    expect(out).toMatch(/^database\tpglite$/m);
    expect(out).toMatch(/^objects\t4\t/m);
    const targetDir = path.join(tmp, 'target');
    await restore(loadConfig(envOf(targetDir)), backupDir, silentLogger);

    restored = await startTestService('pglite', envOf(targetDir));
    const token = await restored.operator({ command: 'token', email });
    for (const { doc, hash } of uploaded) {
      const got = await api<{ document: DocumentDto }>(restored.url, `/api/documents/${doc.id}`, { token });
      expect(got.body.document.serialNumber).toBe(doc.serialNumber);
      const download = await api<{ downloadUrl: string }>(restored.url, `/api/documents/${doc.id}/download`, {
        token,
      });
      const file = await fetch(new URL(download.body.downloadUrl, restored.url));
      expect(sha256(new Uint8Array(await file.arrayBuffer()))).toBe(hash);
    }
    const next = await uploadBytes(restored, token, randomBytes(1000), 'after.bin');
    expect(uploaded.map((u) => u.doc.serialNumber)).not.toContain(next.serialNumber);
  }, 120_000);
});
