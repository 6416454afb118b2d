import type { SqlEntityManager } from '@mikro-orm/sql';

/** Extracts the bearer token of an `Authorization` header (RFC 6750 section 2.1); null without one. */
export function bearerFrom(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}

/**
 * A request's own EntityManager, forked from `db` on first use (MikroORM's unit of work is per request), so
 * that requests answered without the database never pay for a fork.
 */
export function lazyEntityManager(db: { fork(): SqlEntityManager }): () => SqlEntityManager {
  let em: SqlEntityManager | undefined;
  return () => {
    em ??= db.fork();
    return em;
  };
}
