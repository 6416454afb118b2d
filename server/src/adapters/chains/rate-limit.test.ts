import { parseRetryAfter } from '@notary/trust/http';
import { describe, expect, it } from 'vitest';
import { isRateLimitRpcError, RateLimitGate, rpcBackoffHint } from './rate-limit';

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0); // in the past: now
  });
  it('ignores what it cannot read', () => {
    for (const v of [undefined, null, '', '-1', '1.5', 'soon', '12345678901']) {
      expect(parseRetryAfter(v, now)).toBeUndefined();
    }
  });
});

describe('rate-limit answers in JSON-RPC', () => {
  it('recognizes EIP-1474 -32005, code 429 and the providers wordings', () => {
    expect(isRateLimitRpcError({ code: -32005, message: 'limit exceeded' })).toBe(true);
    expect(isRateLimitRpcError({ code: 429, message: 'x' })).toBe(true);
    expect(
      isRateLimitRpcError({
        code: -32000,
        message: 'Your app has exceeded its compute units per second capacity',
      }),
    ).toBe(true);
    expect(isRateLimitRpcError({ code: -32000, message: 'rate limit reached' })).toBe(true);
    expect(isRateLimitRpcError({ code: -32000, message: 'nonce too low' })).toBe(false);
    expect(isRateLimitRpcError({ code: -32000, message: 'insufficient funds for gas * price + value' })).toBe(
      false,
    );
    expect(isRateLimitRpcError(undefined)).toBe(false);
  });
  it("reads Infura's backoff_seconds", () => {
    expect(rpcBackoffHint({ code: -32005, data: { backoff_seconds: 1.5 } })).toBe(1_500);
    expect(rpcBackoffHint({ code: -32005, data: { backoff_seconds: 'x' } })).toBeUndefined();
    expect(rpcBackoffHint({ code: -32005 })).toBeUndefined();
  });
});

describe('RateLimitGate', () => {
  it('without a hint: 1 s doubling up to the cap; a success starts over', () => {
    let clock = 0;
    const gate = new RateLimitGate({ now: () => clock, firstBackoffMs: 1_000, maxBackoffMs: 5_000 });
    expect(gate.waitMs()).toBe(0);
    expect(gate.limited(undefined)).toBe(1_000);
    expect(gate.waitMs()).toBe(1_000);
    clock += 400;
    expect(gate.waitMs()).toBe(600);
    clock += 600;
    expect(gate.waitMs()).toBe(0);
    expect(gate.limited(undefined)).toBe(2_000);
    expect(gate.limited(undefined)).toBe(4_000);
    expect(gate.limited(undefined)).toBe(5_000);
    expect(gate.limits).toBe(4);
    gate.succeeded();
    clock += 10_000;
    expect(gate.limited(undefined)).toBe(1_000);
  });
  it("a provider's hint is honoured, capped; a shorter hint never reopens a longer wait", () => {
    let clock = 0;
    const gate = new RateLimitGate({ now: () => clock, maxRetryAfterMs: 60_000 });
    expect(gate.limited(3_000)).toBe(3_000);
    expect(gate.limited(10 * 86_400_000)).toBe(60_000);
    expect(gate.limited(1_000)).toBe(1_000);
    expect(gate.waitMs()).toBe(60_000);
    clock += 60_000;
    expect(gate.waitMs()).toBe(0);
  });
});
