import type { SqlEntityManager } from '@mikro-orm/sql';
import { bearerFrom, lazyEntityManager } from '@notary/platform/trpc/context';
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
  /** Sets a header of the response (rate limit headers); a no-op where there is no response (tests' callers). */
  setHeader: (name: string, value: string) => void;
}

export function createContext(
  deps: AppDeps,
  req: {
    headers: { authorization?: string | undefined; 'accept-language'?: string | undefined };
    ip?: string | undefined;
  },
  res?: { setHeader(name: string, value: string): unknown; headersSent: boolean },
): Context {
  return {
    deps,
    em: lazyEntityManager(deps.db),
    bearer: bearerFrom(req.headers.authorization),
    ip: req.ip ?? null,
    acceptLanguage: req.headers['accept-language'] ?? null,
    setHeader: (name, value) => {
      if (res && !res.headersSent) res.setHeader(name, value);
    },
  };
}
