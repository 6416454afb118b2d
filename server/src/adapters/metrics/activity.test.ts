import { AppError } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { createServiceMetrics } from './registry';

/** The value of the series `name{labels}` in the exposition of `text`, or undefined when it has none. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the activity counters', () => {
  it('count documents, certificates by level and outcome, and batches and their lag per chain', async () => {
    const { registry, activity } = createServiceMetrics();
    activity.anchorsOn(['evm', 'stacks']);
    let text = await registry.metrics();
    // Counted from zero before anything happens, so that the first of each shows in a rate.
    for (const series of [
      'notary_documents_notarized_total{source="upload"}',
      'notary_certificates_total{level="unsigned",outcome="ok"}',
      'notary_anchoring_batches_total{chain="evm",outcome="confirmed"}',
      'notary_anchoring_batches_total{chain="stacks",outcome="failed"}',
      'notary_anchoring_attempt_failures_total{chain="stacks"}',
      'notary_anchoring_confirmation_seconds_count{chain="evm"}',
    ]) {
      expect(seriesValue(text, series), series).toBe(0);
    }

    activity.documentNotarized('upload');
    activity.documentNotarized('upload');
    activity.documentNotarized('web-capture');
    activity.certificateIssued('B-LTA', 'ok');
    activity.certificateIssued('B-T', 'shortfall');
    activity.certificateIssued('B-LTA', { error: new AppError('BAD_GATEWAY', 'TSA down') });
    activity.certificateIssued('unsigned', { error: new Error('disk') });
    activity.certificateIssued('unsigned', 'aborted');
    activity.anchorBatchConfirmed('evm', 12);
    activity.anchorBatchConfirmed('evm', 700);
    activity.anchorBatchFailed('stacks');
    activity.anchorAttemptFailed('stacks');
    text = await registry.metrics();
    expect(seriesValue(text, 'notary_documents_notarized_total{source="upload"}')).toBe(2);
    expect(seriesValue(text, 'notary_documents_notarized_total{source="web-capture"}')).toBe(1);
    expect(seriesValue(text, 'notary_certificates_total{level="B-LTA",outcome="ok"}')).toBe(1);
    expect(seriesValue(text, 'notary_certificates_total{level="B-T",outcome="shortfall"}')).toBe(1);
    expect(seriesValue(text, 'notary_certificates_total{level="B-LTA",outcome="bad_gateway"}')).toBe(1);
    expect(seriesValue(text, 'notary_certificates_total{level="unsigned",outcome="error"}')).toBe(1);
    expect(seriesValue(text, 'notary_certificates_total{level="unsigned",outcome="aborted"}')).toBe(1);
    expect(seriesValue(text, 'notary_anchoring_batches_total{chain="evm",outcome="confirmed"}')).toBe(2);
    expect(seriesValue(text, 'notary_anchoring_batches_total{chain="stacks",outcome="failed"}')).toBe(1);
    expect(seriesValue(text, 'notary_anchoring_attempt_failures_total{chain="stacks"}')).toBe(1);
    expect(seriesValue(text, 'notary_anchoring_confirmation_seconds_count{chain="evm"}')).toBe(2);
    expect(seriesValue(text, 'notary_anchoring_confirmation_seconds_sum{chain="evm"}')).toBe(712);
    expect(seriesValue(text, 'notary_anchoring_confirmation_seconds_bucket{le="15",chain="evm"}')).toBe(1);
    // No label names a tenant, a user or a document: only these.
    const labels = new Set(
      [
        ...text.matchAll(
          /^notary_(?:documents|certificates|anchoring_(?:batches|attempt|confirmation))\w*\{([^}]*)\}/gm,
        ),
      ].flatMap((m) => (m[1] ?? '').split(',').map((pair) => pair.split('=')[0])),
    );
    expect([...labels].sort()).toEqual(['chain', 'le', 'level', 'outcome', 'source']);
  });
});
