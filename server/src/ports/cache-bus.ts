/**
 * A change that makes cached answers stale: the acervo feed pages of a tenant (publish, unpublish, LGPD
 * deletion), or the public verification of a hash (LGPD deletion).
 */
export type Invalidation = { kind: 'acervo'; tenantId: string } | { kind: 'verify'; sha256Hash: string };

/**
 * Carries invalidations between the instances of the service, so that a change made on one stops every
 * instance's cache from serving the old answer. In process alone it carries nothing (the cache that made the
 * change already dropped its own copy).
 */
export interface InvalidationBus {
  /** Tells the other instances. Best effort: a lost message leaves the cache's TTL as the bound. */
  publish(invalidation: Invalidation): void;
  /** `handler` receives the other instances' invalidations. */
  subscribe(handler: (invalidation: Invalidation) => void): void;
  close(): Promise<void>;
}

/** One instance: nothing to tell. */
export const localInvalidationBus: InvalidationBus = {
  publish: () => {},
  subscribe: () => {},
  close: async () => {},
};
