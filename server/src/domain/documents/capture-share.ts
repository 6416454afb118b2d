import { FairQueue } from '@notary/platform/fair-queue';
import { AppError } from '@notary/shared';

/** The limits of the capture queue (`CAPTURE_CONCURRENCY`, the waiting places, `CAPTURE_TENANT_MAX`). */
export interface CaptureQueueLimits {
  /** Browsers at once (`CAPTURE_CONCURRENCY`). */
  concurrency: number;
  /** Captures that may wait for a browser, all tenants together. */
  queueMax: number;
  /** Captures one tenant may have running or waiting (`CAPTURE_TENANT_MAX`); undefined: the default share. */
  tenantMax: number | undefined;
  /** The wait a refusal suggests, seconds (one capture's bound, `CAPTURE_TIMEOUT_MS`). */
  retryAfterSeconds: number;
}

/**
 * The capture queue every tenant of this instance shares, keyed by tenant id: at most `concurrency` browsers,
 * `queueMax` captures waiting, each tenant holding at most its share (running and waiting); a browser that
 * frees goes to the tenant whose turn it is (one with no capture running first, then in rotation), and when
 * every place is taken a tenant holding none takes the place of the newest waiting capture of the tenant
 * holding the most. So a few accounts keeping pages that never finish delay only themselves.
 * Refusals are AppError RATE_LIMITED (429) with `retryAfterSeconds`: "The capture queue is full: try again
 * shortly" (also for a waiting capture that gave its place away), or the tenant's share in full.
 */
export function createCaptureQueue(limits: CaptureQueueLimits): FairQueue {
  const retry = { retryAfterSeconds: limits.retryAfterSeconds };
  return new FairQueue({
    concurrency: limits.concurrency,
    maxWaiting: limits.queueMax,
    maxPerKey: limits.tenantMax ?? defaultCaptureTenantMax(limits.concurrency, limits.queueMax),
    full: () => new AppError('RATE_LIMITED', 'The capture queue is full: try again shortly', retry),
    keyFull: (n) =>
      new AppError(
        'RATE_LIMITED',
        `Your workspace already has ${n} web ${n === 1 ? 'capture' : 'captures'} in progress, ` +
          `the most it may have at once: wait for ${n === 1 ? 'it' : 'one'} to finish and try again`,
        retry,
      ),
  });
}

/**
 * The default share (`CAPTURE_TENANT_MAX` unset): half of the slots, browsers (`concurrency`) and waiting
 * places (`queueMax`) together, rounded down, at least 1; so at least two tenants always find room.
 */
export function defaultCaptureTenantMax(concurrency: number, queueMax: number): number {
  return Math.max(1, Math.floor((concurrency + queueMax) / 2));
}
