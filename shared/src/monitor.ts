import { z } from 'zod';

/**
 * Monitoring of one URL over a period (the certidão de permanência, docs/cartorios.md): repeated captures, each
 * an ordinary notarized web capture whose record names the previous one's WACZ SHA-256, and the chain the
 * certidão carries as `monitor-chain.json` so that `notary-verify` can tell a run removed or reordered.
 */

const IsoDate = z.iso.datetime({ offset: true });

/** Longest ISO 8601 duration text accepted (`P90DT23H59M59S` is 14). */
const DURATION_MAX = 32;

/**
 * Seconds in the ISO 8601 duration `text` (ISO 8601-1:2019 4.4.3.2, the designator form): `P[nW]` or
 * `P[nD][T[nH][nM][nS]]`, whole numbers, seconds may have a fraction. Years and months are refused: their
 * length depends on the calendar, and a monitoring's bounds are in days. Case-sensitive as the standard.
 * @returns whole seconds (fractions rounded down), or undefined when `text` is not such a duration or is zero.
 */
export function isoDurationSeconds(text: string): number | undefined {
  if (text.length > DURATION_MAX) return undefined;
  const weeks = /^P(\d+)W$/.exec(text);
  if (weeks) {
    const s = Number(weeks[1]) * 7 * 86_400;
    return s > 0 ? s : undefined;
  }
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return undefined;
  const [, d, h, min, s] = m;
  const total =
    Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Math.floor(Number(s ?? 0));
  return Number.isSafeInteger(total) && total > 0 ? total : undefined;
}

const Duration = (what: string) =>
  z
    .string()
    .trim()
    .max(DURATION_MAX)
    .refine((v) => isoDurationSeconds(v) !== undefined, {
      message: `${what} must be an ISO 8601 duration such as PT6H or P30D (days, hours, minutes, seconds)`,
    });

/** `POST /api/monitors`: the URL, the time between captures and how long to keep capturing. */
export const MonitorInputSchema = z.object({
  url: z.string().trim().min(1).max(2048),
  interval: Duration('interval').meta({ example: 'PT6H' }),
  period: Duration('period').meta({ example: 'P30D' }),
});
export type MonitorInput = z.infer<typeof MonitorInputSchema>;

/** `active` (runs scheduled), `finished` (the period ended), `cancelled` (a member stopped it), `failed`. */
export const MONITOR_STATES = ['active', 'finished', 'cancelled', 'failed'] as const;
export type MonitorState = (typeof MONITOR_STATES)[number];

/**
 * Why a run saw no page: `dns` (the name did not resolve), `tls` (the TLS handshake or certificate failed),
 * `http-status` (the server answered an error status, 4xx or 5xx), `timeout` (no answer within the bound),
 * `unreachable` (refused or reset connection), `refused` (the service refused the run: a quota or limit of the
 * workspace, a destination not allowed), `error` (anything else).
 */
export const RUN_CAUSES = [
  'dns',
  'tls',
  'http-status',
  'timeout',
  'unreachable',
  'refused',
  'error',
] as const;
export type RunCause = (typeof RUN_CAUSES)[number];

/** One run of a monitoring: the page seen (a notarized capture) or an observation of unavailability. */
export const MonitorRunSchema = z
  .object({
    /** 1, 2, … in schedule order. */
    run: z.number().int().positive(),
    /** When the run was due and when it was observed (ISO 8601, UTC). */
    dueAt: IsoDate,
    observedAt: IsoDate,
    outcome: z.enum(['seen', 'unavailable']),
    /** `unavailable` only: the cause and the detail (HTTP status, resolver or browser error). */
    cause: z.enum(RUN_CAUSES).nullable(),
    detail: z.string().nullable(),
    /** HTTP status of the main document when one came (also for a 404 page). */
    httpStatus: z.number().int().nullable(),
    /**
     * The capture's document, its serial and its WACZ SHA-256: always for `seen`; for `unavailable` when the
     * server answered an error page (`http-status`), which is archived and notarized like any page.
     */
    documentId: z.string().nullable(),
    serialNumber: z.string().nullable(),
    waczSha256: z.string().nullable(),
    /** The WACZ SHA-256 of the last run before this one that made an archive; null for the first. */
    previousWaczSha256: z.string().nullable(),
  })
  .meta({ id: 'MonitorRun' });
export type MonitorRunDto = z.infer<typeof MonitorRunSchema>;

/** `GET /api/monitors/{id}`: the monitoring, its state and its runs in order. */
export const MonitorSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    interval: z.string(),
    period: z.string(),
    intervalSeconds: z.number().int().positive(),
    periodSeconds: z.number().int().positive(),
    state: z.enum(MONITOR_STATES),
    /** Why a monitoring failed; null otherwise. */
    failure: z.string().nullable(),
    createdAt: IsoDate,
    /** When the last run is due (start plus the period). */
    endsAt: IsoDate,
    /** The next run's due time while active; null otherwise. */
    nextRunAt: IsoDate.nullable(),
    /** Runs planned in all (the period over the interval, plus the first). */
    plannedRuns: z.number().int().positive(),
    /** The certidão's document once issued (serial); null before. */
    certidaoSerialNumber: z.string().nullable(),
    runs: z.array(MonitorRunSchema),
  })
  .meta({ id: 'Monitor' });
export type MonitorDto = z.infer<typeof MonitorSchema>;

/** Most monitorings `GET /api/monitors` lists (the newest). */
export const MONITOR_LIST_MAX = 100;

/** A monitoring in the list: its state without its runs, and how far it got (its last run). */
export const MonitorSummarySchema = MonitorSchema.omit({ runs: true })
  .extend({
    /** Runs recorded so far (they are numbered 1, 2, … without gap). */
    runsDone: z.number().int().nonnegative(),
    /** The last run recorded; null before the first. */
    lastRun: MonitorRunSchema.nullable(),
  })
  .meta({ id: 'MonitorSummary' });
export type MonitorSummaryDto = z.infer<typeof MonitorSummarySchema>;

/** `GET /api/monitors`: the workspace's monitorings, newest first, at most `MONITOR_LIST_MAX`. */
export const MonitorListSchema = z
  .object({ monitors: z.array(MonitorSummarySchema) })
  .meta({ id: 'MonitorList' });
export type MonitorListDto = z.infer<typeof MonitorListSchema>;

/** Format name of the run chain attached to a certidão de permanência. */
export const MONITOR_CHAIN_FORMAT = 'notary-monitor-chain/1';

/** One link of the chain: what the certidão states of a run. */
export const MonitorChainRunSchema = z.object({
  run: z.number().int().positive(),
  observedAt: z.string(),
  outcome: z.enum(['seen', 'unavailable']),
  cause: z.enum(RUN_CAUSES).nullable(),
  serialNumber: z.string().nullable(),
  waczSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  previousWaczSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
});
export type MonitorChainRun = z.infer<typeof MonitorChainRunSchema>;

/** `monitor-chain.json`, the certidão's associated file: the monitoring and every run in order. */
export const MonitorChainSchema = z.object({
  format: z.literal(MONITOR_CHAIN_FORMAT),
  monitorId: z.string(),
  url: z.string(),
  issuedAt: z.string(),
  runs: z.array(MonitorChainRunSchema).max(100_000),
});
export type MonitorChain = z.infer<typeof MonitorChainSchema>;

/** A place where the chain does not hold, with the run it concerns. */
export interface ChainBreak {
  run: number;
  /** `numbering` (a run number missing or out of order), `link` (the previous hash names another run). */
  kind: 'numbering' | 'link';
  message: string;
  /** `numbering`: the place (1-based) the run stands at. */
  place?: number;
  /** `link`: the previous archive hash the run names and the one the chain has (null: none); absent for a seen run without its own hash. */
  named?: string | null;
  expected?: string | null;
}

/**
 * Checks the chain's links: runs numbered 1, 2, … without gap, each run's recorded `previousWaczSha256` equal
 * to the WACZ hash of the last run before it that made an archive (null before the first), each `seen` run with
 * its hash (an `unavailable` run has one when the server answered an error page, which was archived). A run removed or two runs swapped break a link or the numbering. Pure, browser-safe.
 * @returns the breaks found, empty when the chain holds.
 */
export function checkMonitorChain(runs: readonly MonitorChainRun[]): ChainBreak[] {
  const breaks: ChainBreak[] = [];
  let previous: string | null = null;
  for (const [i, r] of runs.entries()) {
    if (r.run !== i + 1) {
      breaks.push({
        run: r.run,
        kind: 'numbering',
        message: `run ${r.run} stands at place ${i + 1}`,
        place: i + 1,
      });
    }
    if (r.previousWaczSha256 !== previous) {
      breaks.push({
        run: r.run,
        kind: 'link',
        message: `run ${r.run} names ${r.previousWaczSha256 ?? 'no'} previous archive, the chain has ${previous ?? 'none'}`,
        named: r.previousWaczSha256,
        expected: previous,
      });
    }
    if (r.outcome === 'seen' && !r.waczSha256) {
      breaks.push({ run: r.run, kind: 'link', message: `run ${r.run} has no archive hash` });
    }
    if (r.waczSha256) previous = r.waczSha256;
  }
  return breaks;
}
