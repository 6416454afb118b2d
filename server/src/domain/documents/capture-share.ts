import { AppError } from '@notary/shared';

/**
 * Each tenant's share of this instance's capture slots (browsers running plus captures waiting for one): the
 * capturer's queue is shared by every tenant, so without a share one workspace could keep it full and every
 * other one would get "queue full". A tenant holds at most `maxPerTenant` captures at once; the next one is
 * refused at once, before it takes a place in the queue. Counted in this process, as the queue itself is.
 */
export class CaptureShare {
  private readonly held = new Map<string, number>();

  /**
   * @param maxPerTenant captures one tenant may have running or waiting at once (`CAPTURE_TENANT_MAX`), at least 1.
   * @param retryAfterSeconds the wait a refusal suggests (one capture's bound, `CAPTURE_TIMEOUT_MS`).
   */
  constructor(
    readonly maxPerTenant: number,
    private readonly retryAfterSeconds: number,
  ) {
    if (!Number.isInteger(maxPerTenant) || maxPerTenant < 1)
      throw new Error('maxPerTenant must be at least 1');
  }

  /**
   * Takes one of `tenantId`'s slots for the duration of `work` (the capture itself: waiting for a browser and
   * running it), and gives it back however `work` ends.
   * @throws AppError RATE_LIMITED (429, with `retryAfterSeconds`) when the tenant already holds all of its
   *   slots; `work`'s own error otherwise.
   */
  async run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    const held = this.held.get(tenantId) ?? 0;
    if (held >= this.maxPerTenant) {
      const n = this.maxPerTenant;
      throw new AppError(
        'RATE_LIMITED',
        `Your workspace already has ${n} web ${n === 1 ? 'capture' : 'captures'} in progress, ` +
          `the most it may have at once: wait for ${n === 1 ? 'it' : 'one'} to finish and try again`,
        { retryAfterSeconds: this.retryAfterSeconds },
      );
    }
    this.held.set(tenantId, held + 1);
    try {
      return await work();
    } finally {
      const left = (this.held.get(tenantId) ?? 1) - 1;
      if (left > 0) this.held.set(tenantId, left);
      else this.held.delete(tenantId);
    }
  }

  /** Captures `tenantId` holds now (running or waiting). */
  inProgress(tenantId: string): number {
    return this.held.get(tenantId) ?? 0;
  }
}

/**
 * The default share (`CAPTURE_TENANT_MAX` unset): half of the slots, browsers (`concurrency`) and waiting
 * places (`queueMax`) together, rounded down, at least 1; so at least two tenants always find room.
 */
export function defaultCaptureTenantMax(concurrency: number, queueMax: number): number {
  return Math.max(1, Math.floor((concurrency + queueMax) / 2));
}
