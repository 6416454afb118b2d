import { type AcervoFeedDto, LIMITS } from '@notary/shared';
import { LRUCache } from 'lru-cache';
import { type InvalidationBus, localInvalidationBus } from '../../ports/cache-bus';

/**
 * A value computed once per tenant and feed generation (`AcervoFeedCache.get`'s `memo`): the feed's total and
 * its position marks (`feed.ts`), shared by every page of that generation.
 */
export type FeedMemo = <T extends object | number>(name: string, compute: () => Promise<T>) => Promise<T>;

/**
 * In-process cache of acervo feed pages (spec, Limits: acervo response cache 5 minutes), keyed by tenant,
 * limit and offset, and of what the pages of one state of the feed share (`FeedMemo`: its total and the
 * position marks that let a deep page seek instead of skipping rows). A publication change or an LGPD
 * deletion in this process invalidates the tenant's pages and memos at once (a generation counter per tenant:
 * a page or mark computed before the change is never used after it), and the other instances as soon as the
 * bus delivers it (Redis pub/sub with `REDIS_URL`; were a message lost, an instance would serve its copy for at
 * most the 5 minutes the spec allows). The token is checked on every request, before the cache, so a rotated
 * or deleted token stops working at once.
 */
export class AcervoFeedCache {
  private readonly pages = new LRUCache<string, AcervoFeedDto>({
    max: 5_000,
    ttl: LIMITS.acervoCacheSeconds * 1000,
  });
  /** Memos by `tenant:generation:name`; a promise, so concurrent pages of a new generation compute once. */
  private readonly memos = new LRUCache<string, Promise<object | number>>({
    max: 1_000,
    ttl: LIMITS.acervoCacheSeconds * 1000,
  });
  private readonly generations = new Map<string, number>();

  constructor(private readonly bus: InvalidationBus = localInvalidationBus) {
    bus.subscribe((message) => {
      if (message.kind === 'acervo') this.bump(message.tenantId);
    });
  }

  /**
   * The cached page of `tenantId` at `page`, else `load`'s answer (then cached). `load` gets a `FeedMemo` bound
   * to the generation current when the call began, like the page's own key.
   */
  async get(
    tenantId: string,
    page: { limit: number; offset: number },
    load: (memo: FeedMemo) => Promise<AcervoFeedDto>,
  ): Promise<AcervoFeedDto> {
    const generation = this.generations.get(tenantId) ?? 0;
    const key = `${tenantId}:${generation}:${page.limit}:${page.offset}`;
    const hit = this.pages.get(key);
    if (hit) return hit;
    const memo: FeedMemo = <T extends object | number>(name: string, compute: () => Promise<T>) => {
      const memoKey = `${tenantId}:${generation}:${name}`;
      const known = this.memos.get(memoKey) as Promise<T> | undefined;
      if (known) return known;
      const computed = compute();
      this.memos.set(memoKey, computed);
      // A failed computation is not kept: the next request tries again.
      computed.catch(() => {
        if (this.memos.get(memoKey) === computed) this.memos.delete(memoKey);
      });
      return computed;
    };
    const result = await load(memo);
    this.pages.set(key, result);
    return result;
  }

  /** The tenant's feed changed (publish, unpublish, LGPD deletion): drop its cached pages and memos. */
  invalidate(tenantId: string): void {
    this.bump(tenantId);
    this.bus.publish({ kind: 'acervo', tenantId });
  }

  private bump(tenantId: string): void {
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
  }
}
