import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Administrative connection to the machine's PostgreSQL (trust auth on 127.0.0.1). */
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A throwaway database: its URL, and `drop()`. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates a throwaway database on the local PostgreSQL server, empty or as a copy of `template` (a database's
 * name, or its promise); `drop()` removes it (forcing connections closed). Fails loudly when PostgreSQL is not
 * reachable: CI must have it running.
 */
export async function createTestDatabase(
  options: { template?: string | Promise<string> } = {},
): Promise<TestDatabase> {
  const name = `notary_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect().catch((e: Error) => {
    throw new Error(`PostgreSQL is not reachable at ${PG_ADMIN_URL}: ${e.message}`);
  });
  const template = await options.template;
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
