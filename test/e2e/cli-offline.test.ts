import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startService } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { afterAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';

/**
 * The operator CLI with no server running, on the embedded database: it opens PGlite itself, and a server
 * started afterwards on the same DATA_DIR and PUBLIC_URL accepts the token it printed.
 */
describe('operator CLI without a running server (PGlite)', () => {
  let dataDir: string;
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('creates a user, an organization and a member, and prints a token the server accepts', {
    timeout: 240_000,
  }, async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-cli-'));
    const publicUrl = 'http://127.0.0.1:45999';
    const env = { ...process.env, DATA_DIR: dataDir, PUBLIC_URL: publicUrl, LOG_LEVEL: 'warn' };
    const cli = async (...args: string[]) =>
      (
        await promisify(execFile)(
          path.resolve('node_modules/.bin/node'),
          ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), ...args],
          { env },
        )
      ).stdout.trim();

    await cli('user:create', '--email', 'owner@offline.example');
    await cli('user:create', '--email', 'editor@offline.example');
    const [orgId, slug] = (
      await cli('org:create', '--name', 'Offline Org', '--owner', 'owner@offline.example')
    ).split(' ');
    expect(slug).toBe('offline-org');
    expect(
      await cli(
        'member:add',
        '--org',
        'offline-org',
        '--email',
        'editor@offline.example',
        '--role',
        'editor',
      ),
    ).toMatch(/editor/);
    const token = await cli('token', '--email', 'editor@offline.example', '--org', 'offline-org');
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const service = await startService(
      loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        PUBLIC_URL: publicUrl,
      }),
    );
    try {
      // PUBLIC_URL names the service in tokens; the test reaches it on its real port.
      const port = (service.server.address() as { port: number }).port;
      const me = await api<{ result: { data: { orgId: string; role: string } } }>(
        `http://127.0.0.1:${port}`,
        '/trpc/session.me',
        { token },
      );
      expect(me.status).toBe(200);
      expect(me.body.result.data).toMatchObject({ orgId, role: 'editor' });
    } finally {
      await service.close();
    }
  });
});
