import { LIMITS, type VerifyByHashDto } from '@notary/shared';
import { LRUCache } from 'lru-cache';

/**
 * In-process cache of positive public verifications (spec, Limits: public verification cached 60 s).
 * Only `found: true` answers are kept, so a file notarized a moment ago is never reported as unknown.
 */
export class PublicVerifyCache {
  private readonly cache = new LRUCache<string, VerifyByHashDto>({
    max: 10_000,
    ttl: LIMITS.publicVerifyCacheSeconds * 1000,
  });

  async get(sha256Hash: string, load: (hash: string) => Promise<VerifyByHashDto>): Promise<VerifyByHashDto> {
    const hit = this.cache.get(sha256Hash);
    if (hit) return hit;
    const result = await load(sha256Hash);
    if (result.found) this.cache.set(sha256Hash, result);
    return result;
  }
}
