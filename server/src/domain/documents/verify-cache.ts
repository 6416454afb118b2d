import { LIMITS, type VerifyByHashDto } from '@notary/shared';
import { LRUCache } from 'lru-cache';
import { type InvalidationBus, localInvalidationBus } from '../../ports/cache-bus';

/**
 * In-process cache of positive public verifications (spec, Limits: public verification cached 60 s).
 * Only `found: true` answers are kept, so a file notarized a moment ago is never reported as unknown. With
 * several instances, `invalidate` reaches them all through the bus (Redis pub/sub with `REDIS_URL`); an
 * anchoring status change is served at most 60 s late, as the spec's cache allows.
 */
export class PublicVerifyCache {
  private readonly cache = new LRUCache<string, VerifyByHashDto>({
    max: 10_000,
    ttl: LIMITS.publicVerifyCacheSeconds * 1000,
  });

  constructor(private readonly bus: InvalidationBus = localInvalidationBus) {
    bus.subscribe((message) => {
      if (message.kind === 'verify') this.cache.delete(message.sha256Hash);
    });
  }

  /** The document of `sha256Hash` changed (LGPD deletion): drop its answer here and on every instance. */
  invalidate(sha256Hash: string): void {
    this.cache.delete(sha256Hash);
    this.bus.publish({ kind: 'verify', sha256Hash });
  }

  async get(sha256Hash: string, load: (hash: string) => Promise<VerifyByHashDto>): Promise<VerifyByHashDto> {
    const hit = this.cache.get(sha256Hash);
    if (hit) return hit;
    const result = await load(sha256Hash);
    if (result.found) this.cache.set(sha256Hash, result);
    return result;
  }
}
