import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from '@notary/platform/log';
import { type Service, startService } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { runOperatorCommand } from '@notary/server/domain/operator/commands';
import { createMigratedTestDatabase, seedPglite, testTempRoot } from './db-templates';

export type DatabaseKind = 'pglite' | 'postgresql';
export const DATABASE_KINDS: DatabaseKind[] = ['pglite', 'postgresql'];

export interface TestService {
  service: Service;
  url: string;
  dataDir: string;
  /** Creates the user if needed and returns a session JWT (with `org` slug active when given). */
  token(email: string, org?: string): Promise<string>;
  /** Runs an operator command (as the CLI would) and returns its output. */
  operator(command: Parameters<typeof runOperatorCommand>[1]): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the real service on 127.0.0.1 and a free port, with a fresh data directory and either the
 * embedded PGlite database or a throwaway PostgreSQL database. Extra environment (S3, mail...) in `env`.
 * Anchoring is off (`ANCHORING=off`: no devnet, no background chain work) unless `env` asks for it, e.g.
 * `{ ANCHORING: 'devnet' }` for the in-process Hardhat and Stacks devnets. Rate limits are off
 * (`RATE_LIMITS=off`) unless `env` sets `RATE_LIMITS: 'on'`. `log` replaces the service's root logger (tests that
 * read its lines).
 */
export async function startTestService(
  kind: DatabaseKind,
  env: Record<string, string> = {},
  options: { log?: Logger } = {},
): Promise<TestService> {
  const dataDir = await mkdtemp(path.join(testTempRoot(), 'notary-test-'));
  // A `DATABASE_URL` in `env` is a database the caller owns (several instances on one database).
  const database =
    kind === 'postgresql' && !env.DATABASE_URL ? await createMigratedTestDatabase() : undefined;
  // A migrated copy, not initdb and every migration again (db-templates.ts).
  if (kind === 'pglite' && !env.DATABASE_URL) await seedPglite(dataDir);
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ANCHORING: 'off',
    // Suites share one client IP and make many calls a minute; the suites that test limits set 'on'.
    RATE_LIMITS: 'off',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  // The production timeouts (`applyHttpTimeouts`): tests see what clients see.
  const service = await startService(config, options.log ? { log: options.log } : {});
  const operator = (command: Parameters<typeof runOperatorCommand>[1]) =>
    runOperatorCommand(
      {
        em: service.deps.db.fork(),
        identity: service.identity.admin,
        directory: service.identity.directory,
        storage: service.deps.storage,
      },
      command,
    );
  return {
    service,
    // Where it listens (PUBLIC_URL may name a host only a proxy would answer at).
    url: `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`,
    dataDir,
    operator,
    token: async (email, org) => {
      await operator({ command: 'user:create', email });
      return operator({ command: 'token', email, org });
    },
    close: async () => {
      await service.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every object key in the service's storage. */
export async function storedKeys(t: TestService): Promise<string[]> {
  const keys: string[] = [];
  for await (const k of t.service.deps.storage.list()) keys.push(k);
  return keys;
}
