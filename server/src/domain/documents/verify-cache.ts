import { LIMITS, type VerifyByHashDto } from '@notary/shared';
import { LRUCache } from 'lru-cache';
import { type InvalidationBus, localInvalidationBus } from '../../ports/cache-bus';

/** Hashes whose answer each cache keeps at most (about 2 MB each when full). */
const MAX_ENTRIES = 10_000;

/**
 * How long an unknown hash is answered from memory, ms. Short on purpose: an answer an instance missed the
 * invalidation of (a message lost while Redis was away, or several instances without `REDIS_URL`) says
 * "unknown" for a file notarized since for at most this long; repeated asks for the same unknown hash (a page
 * polling, a client retrying) still cost one database read per period instead of one each.
 */
export const UNKNOWN_HASH_TTL_MS = 10_000;

/** The answer for every unknown hash: one object, so its JSON text is written once (`public-verify.ts`). */
const UNKNOWN: VerifyByHashDto = Object.freeze({ found: false });

/** A database read in flight for a hash; `stale` once the hash was invalidated while it ran. */
interface Load {
  promise: Promise<VerifyByHashDto>;
  stale: boolean;
}

/**
 * In-process cache of public verifications (spec, Limits: public verification cached 60 s), bounded in entries
 * whatever the archive's size. A found document is kept 60 s; an unknown hash `UNKNOWN_HASH_TTL_MS`. A new
 * document and an LGPD deletion call `invalidate`, which drops the hash here and, through the bus (Redis
 * pub/sub with `REDIS_URL`), on every other instance, so a file notarized a moment ago is not reported
 * unknown; an anchoring status change is served at most 60 s late, as the spec's cache allows.
 * Concurrent misses of one hash share one database read; a read that was running when its hash was
 * invalidated answers its callers but is not kept (it may predate the change), and later callers read again.
 */
export class PublicVerifyCache {
  private readonly found = new LRUCache<string, VerifyByHashDto>({
    max: MAX_ENTRIES,
    ttl: LIMITS.publicVerifyCacheSeconds * 1000,
  });
  private readonly unknown = new LRUCache<string, VerifyByHashDto>({
    max: MAX_ENTRIES,
    ttl: UNKNOWN_HASH_TTL_MS,
  });
  private readonly loading = new Map<string, Load>();

  constructor(private readonly bus: InvalidationBus = localInvalidationBus) {
    bus.subscribe((message) => {
      if (message.kind === 'verify') this.drop(message.sha256Hash);
    });
  }

  /**
   * The public answer for `sha256Hash` changed (a document with it was recorded, or LGPD-deleted): drop it
   * here and on every instance. Call it once the change is committed.
   */
  invalidate(sha256Hash: string): void {
    this.drop(sha256Hash);
    this.bus.publish({ kind: 'verify', sha256Hash });
  }

  /**
   * The answer for `sha256Hash` (lower-case hex), from memory or from `load` (the database read; its
   * rejection reaches every caller sharing it, and nothing is kept).
   */
  get(sha256Hash: string, load: (hash: string) => Promise<VerifyByHashDto>): Promise<VerifyByHashDto> {
    const hit = this.cached(sha256Hash);
    if (hit) return Promise.resolve(hit);
    const running = this.loading.get(sha256Hash);
    if (running) return running.promise;
    const entry: Load = { promise: Promise.resolve(UNKNOWN), stale: false };
    entry.promise = (async () => {
      try {
        const answer = await load(sha256Hash);
        if (!answer.found) {
          if (!entry.stale) this.unknown.set(sha256Hash, UNKNOWN);
          return UNKNOWN;
        }
        if (!entry.stale) this.found.set(sha256Hash, answer);
        return answer;
      } finally {
        // `load` always settles after this function returns (an await), so the entry below is in the map.
        if (this.loading.get(sha256Hash) === entry) this.loading.delete(sha256Hash);
      }
    })();
    this.loading.set(sha256Hash, entry);
    return entry.promise;
  }

  /**
   * The answer for `sha256Hash` (lower-case hex) when memory holds one (what `get` answers without reading),
   * else undefined: a caller that can answer at once does so without waiting on a promise.
   */
  cached(sha256Hash: string): VerifyByHashDto | undefined {
    return this.found.get(sha256Hash) ?? this.unknown.get(sha256Hash);
  }

  private drop(sha256Hash: string): void {
    this.found.delete(sha256Hash);
    this.unknown.delete(sha256Hash);
    const running = this.loading.get(sha256Hash);
    if (running) {
      running.stale = true;
      this.loading.delete(sha256Hash);
    }
  }
}
