import type { SqlEntityManager } from '@mikro-orm/sql';

/** Chains of pending team changes per organization, in this process. */
const chains = new Map<string, Promise<void>>();

/**
 * Runs `fn` while no other team change of `organizationId` runs, so that checks such as "the last owner cannot
 * be demoted or removed" cannot be raced by two concurrent requests (each seeing two owners, leaving none).
 *
 * In this process the changes queue one after the other. On PostgreSQL, where several instances may share
 * the database, `fn` also runs in a transaction holding `pg_advisory_xact_lock` on a key derived from the
 * organization (released at commit or rollback); `fn` gets that transaction's EntityManager. On the embedded
 * PGlite database (one process per data directory) the in-process queue is enough, and no transaction is held
 * while the identity provider, which shares PGlite's single connection, is called.
 */
export async function withOrganizationLock<T>(
  em: SqlEntityManager,
  databaseKind: 'postgresql' | 'pglite',
  organizationId: string,
  fn: (em: SqlEntityManager) => Promise<T>,
): Promise<T> {
  const previous = chains.get(organizationId) ?? Promise.resolve();
  let release = (): void => {};
  const turn = new Promise<void>((resolve) => {
    release = resolve;
  });
  const chain = previous.then(() => turn);
  chains.set(organizationId, chain);
  await previous;
  try {
    if (databaseKind === 'pglite') return await fn(em);
    return await em.transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `notary:team:${organizationId}`,
      ]);
      return fn(tx);
    });
  } finally {
    release();
    if (chains.get(organizationId) === chain) chains.delete(organizationId);
  }
}
