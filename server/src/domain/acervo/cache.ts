import { type AcervoFeedDto, LIMITS } from '@notary/shared';
import { LRUCache } from 'lru-cache';
import { type InvalidationBus, localInvalidationBus } from '../../ports/cache-bus';

/**
 * In-process cache of acervo feed pages (spec, Limits: acervo response cache 5 minutes), keyed by tenant,
 * limit and offset. A publication change or an LGPD deletion in this process invalidates the tenant's pages
 * at once (a generation counter per tenant: a page loaded before the change is never served after it), and
 * the other instances as soon as the bus delivers it (Redis pub/sub with `REDIS_URL`; were a message lost,
 * an instance would serve its copy for at most the 5 minutes the spec allows). The token is checked on every request, before the
 * cache, so a rotated or deleted token stops working at once.
 */
export class AcervoFeedCache {
  private readonly pages = new LRUCache<string, AcervoFeedDto>({
    max: 5_000,
    ttl: LIMITS.acervoCacheSeconds * 1000,
  });
  private readonly generations = new Map<string, number>();

  constructor(private readonly bus: InvalidationBus = localInvalidationBus) {
    bus.subscribe((message) => {
      if (message.kind === 'acervo') this.bump(message.tenantId);
    });
  }

  async get(
    tenantId: string,
    page: { limit: number; offset: number },
    load: () => Promise<AcervoFeedDto>,
  ): Promise<AcervoFeedDto> {
    const generation = this.generations.get(tenantId) ?? 0;
    const key = `${tenantId}:${generation}:${page.limit}:${page.offset}`;
    const hit = this.pages.get(key);
    if (hit) return hit;
    const result = await load();
    this.pages.set(key, result);
    return result;
  }

  /** The tenant's feed changed (publish, unpublish, LGPD deletion): drop its cached pages. */
  invalidate(tenantId: string): void {
    this.bump(tenantId);
    this.bus.publish({ kind: 'acervo', tenantId });
  }

  private bump(tenantId: string): void {
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
  }
}
