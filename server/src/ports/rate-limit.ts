import type { RateLimitName } from '@notary/shared';

/*
 * Counting ports: the spec's per-minute rate limits of the faces (`RateLimiter`) and the longer quotas of the
 * domain (`QuotaCounter`, e.g. invitation mails per hour). Adapters: `adapters/rate-limit/` (in process, Redis).
 */

/**
 * The outcome of counting one call against its limits. `headers` are the standard rate limit fields
 * (draft-ietf-httpapi-ratelimit-headers-08, structured fields): `RateLimit-Policy` lists each limit that
 * applies (`"upload";q=10;w=60`), `RateLimit` its remaining budget and the seconds until it resets
 * (`"upload";r=3;t=42`).
 */
export interface RateLimitDecision {
  allowed: boolean;
  /** The limit that refused the call (the one that resets last when several did); undefined when allowed. */
  exceeded: RateLimitName | undefined;
  /** Seconds until the exceeding limit's window resets (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
  headers: { 'RateLimit-Policy': string; RateLimit: string } | undefined;
}

/**
 * Who a call is counted against: the session token's user when it verified, else the client's address (as
 * `TRUST_PROXY` resolves it; null when unknown). The limiter turns it into its own key.
 */
export interface RateLimitCaller {
  userId: string | null;
  ip: string | null;
}

/** Counts calls per caller against the spec's limits (`RATE_LIMITS`, a 60 s window each). */
export interface RateLimiter {
  /** False with `RATE_LIMITS=off`: `consume` allows everything and sends no headers. */
  readonly enabled: boolean;
  /** `memory` (this process) or `redis` (shared by every instance on the same `REDIS_URL`). */
  readonly kind: 'off' | 'memory' | 'redis';
  /**
   * Counts one call of `caller` (its user, else its address) against each of `limits` (each limit its own
   * counter) and says whether every one of them is still within its budget. A store failure (Redis down)
   * counts the call in this instance's memory instead, and is logged: the limits protect availability, they
   * must not take it away.
   */
  consume(limits: readonly RateLimitName[], caller: RateLimitCaller): Promise<RateLimitDecision>;
}

/** One budget to count an event against: `limit` events per window under `key`. */
export interface Quota {
  /** Names the budget, e.g. `invite:user:<id>`; also what `exceeded` reports. */
  key: string;
  limit: number;
}

/** The outcome of counting one event. */
export interface QuotaDecision {
  allowed: boolean;
  /** The key of the quota that refused the event (the one that resets last); undefined when allowed. */
  exceeded: string | undefined;
  /** Seconds until the refusing quota's window resets (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
}

/**
 * Counts events in fixed windows longer than the spec's one-minute rate limits (e.g. invitation mails per
 * hour), in this process or in Redis (one budget for every instance sharing `REDIS_URL`). Used by the domain
 * (`domain/team/service.ts`).
 */
export interface QuotaCounter {
  /** False with `RATE_LIMITS=off`: everything is allowed. */
  readonly enabled: boolean;
  /** The window of every quota of this counter, in seconds. */
  readonly windowSeconds: number;
  /**
   * Counts one event against each of `quotas` (each its own counter) and says whether all are still within
   * their limit. A refused event is taken back from every counter, so it uses up no budget (one member
   * hammering their own limit leaves the organization's intact). A store failure (Redis down) allows the event
   * and is logged.
   */
  consume(quotas: readonly Quota[]): Promise<QuotaDecision>;
}
