import type { SqlEntityManager } from '@mikro-orm/sql';
import type { AppDeps } from '../deps';

/** Per-request context of every procedure, for both faces (tRPC at `/trpc`, REST at the spec's paths). */
export interface Context {
  deps: AppDeps;
  /**
   * This request's own EntityManager, forked on first use: public routes answered from cache never pay for it.
   */
  em: () => SqlEntityManager;
  /** Raw bearer token, verified lazily by `authedProcedure`. */
  bearer: string | null;
  ip: string | null;
  /** The request's `Accept-Language` header (language of mail the request triggers, e.g. invitations). */
  acceptLanguage: string | null;
}

/** Extracts the bearer token of an `Authorization` header (RFC 6750 section 2.1). */
export function bearerFrom(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}

export function createContext(
  deps: AppDeps,
  req: {
    headers: { authorization?: string | undefined; 'accept-language'?: string | undefined };
    ip?: string | undefined;
  },
): Context {
  let em: SqlEntityManager | undefined;
  return {
    deps,
    em: () => {
      em ??= deps.db.fork();
      return em;
    },
    bearer: bearerFrom(req.headers.authorization),
    ip: req.ip ?? null,
    acceptLanguage: req.headers['accept-language'] ?? null,
  };
}
