import { AppError } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import type { WebCapturer } from '../../ports/capture';
import type { RevocationSource } from '../../ports/revocation';
import type { TimestampAuthority } from '../../ports/tsa';
import { instrumentCapturer, instrumentRevocation, instrumentTsa } from './instrument';
import { createServiceMetrics } from './registry';

/** The value of the series `name{labels}` in the exposition of `text`, or undefined when it has none. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the counted ports', () => {
  it('counts TSA calls by outcome and passes their answers and errors through unchanged', async () => {
    const metrics = createServiceMetrics();
    let fail = false;
    const token = { response: new Uint8Array([1]), token: new Uint8Array([2]) };
    const tsa: TimestampAuthority = {
      trustAnchors: [new Uint8Array([3])],
      timestamp: async () => {
        if (fail) throw new AppError('BAD_GATEWAY', 'TSA unreachable');
        return { ...token, genTime: new Date(0), serialNumber: '01', chain: [] };
      },
    };
    const counted = instrumentTsa(tsa, metrics);
    expect(counted.trustAnchors).toBe(tsa.trustAnchors);
    expect((await counted.timestamp(new Uint8Array(32))).serialNumber).toBe('01');
    fail = true;
    await expect(counted.timestamp(new Uint8Array(32))).rejects.toThrow('TSA unreachable');
    await expect(counted.timestamp(new Uint8Array(32))).rejects.toBeInstanceOf(AppError);
    const text = await metrics.registry.metrics();
    expect(seriesValue(text, 'notary_dependency_requests_total{dependency="tsa",outcome="ok"}')).toBe(1);
    expect(
      seriesValue(text, 'notary_dependency_requests_total{dependency="tsa",outcome="bad_gateway"}'),
    ).toBe(2);
    expect(seriesValue(text, 'notary_dependency_request_duration_seconds_count{dependency="tsa"}')).toBe(3);
    // Counted from zero before any call, so that a first failure shows in a rate.
    expect(seriesValue(text, 'notary_dependency_requests_total{dependency="revocation",outcome="ok"}')).toBe(
      0,
    );
  });

  it('names a revocation gathering short of some certificate incomplete', async () => {
    const metrics = createServiceMetrics();
    const material = { certs: [], ocsps: [], crls: [] };
    let missing: { subject: string; reason: string }[] = [];
    const source: RevocationSource = {
      gather: async () => ({ material, missing }),
      withIssuers: async (chain) => [...chain],
    };
    const counted = instrumentRevocation(source, metrics);
    await counted.gather([]);
    missing = [{ subject: 'CN=TSA', reason: 'OCSP responder unreachable' }];
    expect((await counted.gather([])).missing).toBe(missing);
    const text = await metrics.registry.metrics();
    expect(seriesValue(text, 'notary_dependency_requests_total{dependency="revocation",outcome="ok"}')).toBe(
      1,
    );
    expect(
      seriesValue(text, 'notary_dependency_requests_total{dependency="revocation",outcome="incomplete"}'),
    ).toBe(1);
  });

  it('counts captures by outcome, a thrown non-AppError as error', async () => {
    const metrics = createServiceMetrics();
    const errors = [new AppError('GATEWAY_TIMEOUT', 'too slow'), new Error('child died')];
    const capturer: WebCapturer = {
      capture: async () => {
        throw errors.shift();
      },
    };
    const counted = instrumentCapturer(capturer, metrics);
    await expect(counted.capture(new URL('https://example.org/'))).rejects.toThrow('too slow');
    await expect(counted.capture(new URL('https://example.org/'))).rejects.toThrow('child died');
    const text = await metrics.registry.metrics();
    expect(seriesValue(text, 'notary_captures_total{outcome="gateway_timeout"}')).toBe(1);
    expect(seriesValue(text, 'notary_captures_total{outcome="error"}')).toBe(1);
    expect(seriesValue(text, 'notary_captures_total{outcome="ok"}')).toBe(0);
    expect(seriesValue(text, 'notary_capture_duration_seconds_count')).toBe(2);
  });

  it('reports the free space of each volume against the floor, leaving out a volume nothing writes to', async () => {
    const metrics = createServiceMetrics();
    metrics.watchDisk(
      async () => [
        { volume: 'data', freeBytes: Number.POSITIVE_INFINITY },
        { volume: 'temp', freeBytes: 5_000_000 },
      ],
      1_000_000,
    );
    const text = await metrics.registry.metrics();
    expect(seriesValue(text, 'notary_disk_floor_bytes')).toBe(1_000_000);
    expect(seriesValue(text, 'notary_disk_free_bytes{volume="temp"}')).toBe(5_000_000);
    expect(text).not.toContain('notary_disk_free_bytes{volume="data"}');
  });
});
