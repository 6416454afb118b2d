import type { MonitorInput, MonitorRunDto, MonitorState, RunCause } from '@notary/shared';
import { type CaptureUrlCheck, checkCaptureUrl } from '../common/capture-url';
import { type ClientError, isClientError } from '../common/errors';
import type { MessageKey, Translate } from './i18n';

/**
 * Logic of the monitoring screen (the certidão de permanência), kept out of React so it can be tested: the
 * form's durations in human units sent as ISO 8601 durations, the server's refusals of its limits as sentences,
 * and the words of states and runs.
 */

/** The units the form offers for an interval or a period. */
export type DurationUnit = 'minutes' | 'hours' | 'days' | 'weeks';

const UNIT_SECONDS: Record<DurationUnit, number> = { minutes: 60, hours: 3600, days: 86_400, weeks: 604_800 };

/** Most runs one monitoring may plan (the server's bound too: a longer interval is needed past it). */
export const MONITOR_FORM_MAX_RUNS = 10_000;

/**
 * The ISO 8601 duration (ISO 8601-1:2019 4.4.3.2, designator form) of `amount` `unit`s: `PT30M`, `PT6H`,
 * `P30D`, `P2W`; undefined unless `amount` is a whole number from 1.
 */
export function isoDuration(amount: number, unit: DurationUnit): string | undefined {
  if (!Number.isSafeInteger(amount) || amount < 1) return undefined;
  switch (unit) {
    case 'minutes':
      return `PT${amount}M`;
    case 'hours':
      return `PT${amount}H`;
    case 'days':
      return `P${amount}D`;
    default:
      return `P${amount}W`;
  }
}

/** What the form holds, as typed. */
export interface MonitorForm {
  url: string;
  intervalAmount: string;
  intervalUnit: DurationUnit;
  periodAmount: string;
  periodUnit: DurationUnit;
  /** The LGPD consent for every capture of the monitoring. */
  consent: boolean;
}

export type MonitorFormCheck =
  | { ok: true; request: MonitorInput; runs: number }
  | {
      ok: false;
      url: CaptureUrlCheck;
      interval: 'invalid' | null;
      period: 'invalid' | 'shorter' | 'too-many-runs' | null;
      needsConsent: boolean;
    };

/** The form's amount as a whole number, or NaN. */
function amountOf(typed: string): number {
  return /^\s*\d{1,6}\s*$/.test(typed) ? Number(typed) : Number.NaN;
}

/**
 * The request of a filled form (the URL checked as for a capture, the durations as ISO 8601, the period at least
 * one interval and at most `MONITOR_FORM_MAX_RUNS` runs), or what is wrong. The operator's own minimum interval
 * and maximum period are the server's to tell (`limitRefusal`).
 */
export function monitorRequest(form: MonitorForm): MonitorFormCheck {
  const url = checkCaptureUrl(form.url);
  const intervalAmount = amountOf(form.intervalAmount);
  const periodAmount = amountOf(form.periodAmount);
  const interval = isoDuration(intervalAmount, form.intervalUnit);
  const period = isoDuration(periodAmount, form.periodUnit);
  const intervalSeconds = intervalAmount * UNIT_SECONDS[form.intervalUnit];
  const periodSeconds = periodAmount * UNIT_SECONDS[form.periodUnit];
  const runs = Math.floor(periodSeconds / intervalSeconds) + 1;
  const periodProblem = !period
    ? 'invalid'
    : interval && periodSeconds < intervalSeconds
      ? 'shorter'
      : interval && runs > MONITOR_FORM_MAX_RUNS
        ? 'too-many-runs'
        : null;
  if (!url.ok || !interval || !period || periodProblem || !form.consent) {
    return {
      ok: false,
      url,
      interval: interval ? null : 'invalid',
      period: periodProblem,
      needsConsent: !form.consent,
    };
  }
  return { ok: true, request: { url: url.url, interval, period }, runs };
}

/** A refusal of the server the screen words itself (the rest go through the generic error sentences). */
export type LimitRefusal =
  | { kind: 'min-interval'; seconds: number }
  | { kind: 'max-period'; days: number }
  | { kind: 'quota' }
  | { kind: 'too-many-active' };

/**
 * The service's refusal of a monitoring's limits, read from its answer: 400 naming
 * `MONITOR_MIN_INTERVAL_SECONDS` (with the minimum in seconds) or `MONITOR_MAX_DAYS` (with the maximum in
 * days), 413 the workspace's storage quota, 429 its most active monitorings. Undefined for anything else.
 */
export function limitRefusal(error: unknown): LimitRefusal | undefined {
  if (!isClientError(error)) return undefined;
  const e: ClientError = error;
  if (e.kind === 'bad-request') {
    const min = /minimum of (\d+) s \(MONITOR_MIN_INTERVAL_SECONDS\)/.exec(e.message);
    if (min) return { kind: 'min-interval', seconds: Number(min[1]) };
    const max = /maximum of (\d+) days \(MONITOR_MAX_DAYS\)/.exec(e.message);
    if (max) return { kind: 'max-period', days: Number(max[1]) };
  }
  if (e.kind === 'too-large') return { kind: 'quota' };
  if (e.kind === 'rate-limited' && /active monitorings/.test(e.message)) return { kind: 'too-many-active' };
  return undefined;
}

/** `seconds` in the largest whole unit that divides it ("2 horas", "90 days", "45 s"). */
export function humanDuration(t: Translate, seconds: number): string {
  const units: [number, MessageKey, MessageKey][] = [
    [604_800, 'monitor.unit.week', 'monitor.unit.weeks'],
    [86_400, 'monitor.unit.day', 'monitor.unit.days'],
    [3600, 'monitor.unit.hour', 'monitor.unit.hours'],
    [60, 'monitor.unit.minute', 'monitor.unit.minutes'],
  ];
  for (const [size, one, many] of units) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return t(n === 1 ? one : many, { n });
    }
  }
  return t('monitor.unit.seconds', { n: seconds });
}

/** The sentence of a refusal of the service's limits. */
export function limitRefusalText(t: Translate, refusal: LimitRefusal): string {
  switch (refusal.kind) {
    case 'min-interval':
      return t('monitor.err.minInterval', { min: humanDuration(t, refusal.seconds) });
    case 'max-period':
      return t('monitor.err.maxPeriod', { max: humanDuration(t, refusal.days * 86_400) });
    case 'quota':
      return t('monitor.err.quota');
    default:
      return t('monitor.err.tooManyActive');
  }
}

/** The word of a monitoring's state. */
export const STATE_TEXT: Record<MonitorState, MessageKey> = {
  active: 'monitor.state.active',
  finished: 'monitor.state.finished',
  cancelled: 'monitor.state.cancelled',
  failed: 'monitor.state.failed',
};

const CAUSE_TEXT: Record<RunCause, MessageKey> = {
  dns: 'monitor.cause.dns',
  tls: 'monitor.cause.tls',
  'http-status': 'monitor.cause.httpStatus',
  timeout: 'monitor.cause.timeout',
  unreachable: 'monitor.cause.unreachable',
  refused: 'monitor.cause.refused',
  error: 'monitor.cause.error',
};

/** What a run observed: "available", or the gap's cause ("the server answered HTTP 404"). */
export function runOutcomeText(
  t: Translate,
  run: Pick<MonitorRunDto, 'outcome' | 'cause' | 'httpStatus'>,
): string {
  if (run.outcome === 'seen') return t('monitor.run.seen');
  const cause = t(CAUSE_TEXT[run.cause ?? 'error'], { status: run.httpStatus ?? '' });
  return t('monitor.run.unavailable', { cause });
}
