import type { ServiceActivity } from './activity';

/** What a `recordingActivity` heard: one line per report, e.g. `confirmed evm`, `certificate B-T shortfall`. */
export interface RecordedActivity {
  activity: ServiceActivity;
  /** The reports in order; a confirmation's lag (seconds) is in `lags` instead of its line. */
  lines: string[];
  /** The `lagSeconds` of each `anchorBatchConfirmed`, in order. */
  lags: number[];
}

/** A `ServiceActivity` that records what the domain reports (tests of the counting). */
export function recordingActivity(): RecordedActivity {
  const lines: string[] = [];
  const lags: number[] = [];
  return {
    lines,
    lags,
    activity: {
      documentNotarized: (source) => lines.push(`notarized ${source}`),
      certificateIssued: (level, ended) =>
        lines.push(`certificate ${level} ${typeof ended === 'string' ? ended : 'error'}`),
      anchorBatchConfirmed: (chain, lagSeconds) => {
        lines.push(`confirmed ${chain}`);
        lags.push(lagSeconds);
      },
      anchorBatchFailed: (chain) => lines.push(`failed ${chain}`),
      anchorAttemptFailed: (chain) => lines.push(`attempt ${chain}`),
    },
  };
}
