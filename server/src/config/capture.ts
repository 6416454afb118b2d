import path from 'node:path';
import { type AllowEntry, parseAllowList } from '@notary/platform/net/address-policy';
import { z } from 'zod';
import { allowListVariable, optionalString } from './env';

/** Web capture (README, Configuration; docs/api.md, Web capture). */
export const CaptureEnv = z.object({
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  CAPTURE_TIMEOUT_MS: z.coerce.number().int().min(2_000).max(600_000).default(30_000),
  CAPTURE_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  CAPTURE_ALLOW_HOSTS: allowListVariable,
  CAPTURE_CA_CERTS: optionalString,
  CAPTURE_EGRESS_IP: optionalString.pipe(z.union([z.ipv4(), z.ipv6()]).optional()),
  CAPTURE_USER: z
    .string()
    .regex(/^[a-z_][a-z0-9_-]{0,31}\$?$/i, 'a user name')
    .refine((v) => v !== 'root', 'not root: the capture browser must run unprivileged')
    .default('nobody'),
  CAPTURE_TENANT_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  CAPTURE_BWRAP: z.string().default('/usr/bin/bwrap'),
  ATA_ATTACH_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(64 * 1024 * 1024)
    .default(20 * 1024 * 1024),
  MONITOR_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(31_536_000).default(3600),
  MONITOR_MAX_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
});
export type CaptureEnv = z.infer<typeof CaptureEnv>;

/**
 * Web capture (a web page archived as a WACZ and notarized like an upload): the browser, the bounds, and the
 * exceptions to the public-addresses-only rule.
 */
export interface CaptureSettings {
  /** The Chromium executable (`CHROMIUM_PATH`); when missing the capture route answers 503. */
  chromiumPath: string;
  /** The whole capture's bound, ms (`CAPTURE_TIMEOUT_MS`, default 30 000). */
  timeoutMs: number;
  /** Browsers at once (`CAPTURE_CONCURRENCY`, default 1); a short queue waits behind them. */
  concurrency: number;
  /** `CAPTURE_ALLOW_HOSTS`, parsed: hosts and ranges a capture may reach although not public (default none). */
  allowHosts: AllowEntry[];
  /** PEM file of private CAs the capture browser trusts as anchors (`CAPTURE_CA_CERTS`); unset: none. */
  caCertsPath: string | undefined;
  /**
   * The public address captures leave from, as the operator declares it (`CAPTURE_EGRESS_IP`): stated in each
   * capture's record and provenance summary, never looked up from outside. Unset: not stated.
   */
  egressIp: string | undefined;
  /**
   * The account capture processes run as when the service runs as root (`CAPTURE_USER`, default `nobody`;
   * a dedicated system account is better, see docs/api.md, Web capture). Not root: see `bwrapPath`.
   */
  user: string;
  /**
   * The bubblewrap executable that sandboxes capture processes when the service is not root (`CAPTURE_BWRAP`,
   * default `/usr/bin/bwrap`, Debian package `bubblewrap`; docs/api.md, Web capture).
   */
  bwrapPath: string;
  /**
   * Captures one tenant may have running or waiting at once on this instance (`CAPTURE_TENANT_MAX`); undefined:
   * half of the browsers and the waiting queue together, at least 1 (resolved where the capture queue is built).
   */
  tenantMax: number | undefined;
  /**
   * Largest WACZ attached to an ata notarial draft as an associated file (`ATA_ATTACH_MAX_BYTES`, default 20 MiB,
   * at most 64 MiB, 0: never): a larger one is named on the draft by its SHA-256 and serial number only.
   */
  ataAttachMaxBytes: number;
  /**
   * Monitorings (the certidão de permanência, docs/api.md, Monitoring): the shortest interval between two runs
   * in seconds (`MONITOR_MIN_INTERVAL_SECONDS`, default 3600) and the longest period in days
   * (`MONITOR_MAX_DAYS`, default 90).
   */
  monitor: { minIntervalSeconds: number; maxDays: number };
}

/** The capture settings of `e`; file paths resolved against the working directory. */
export function captureSettings(e: CaptureEnv): CaptureSettings {
  return {
    chromiumPath: e.CHROMIUM_PATH,
    timeoutMs: e.CAPTURE_TIMEOUT_MS,
    concurrency: e.CAPTURE_CONCURRENCY,
    allowHosts: parseAllowList(e.CAPTURE_ALLOW_HOSTS),
    caCertsPath: e.CAPTURE_CA_CERTS === undefined ? undefined : path.resolve(e.CAPTURE_CA_CERTS),
    egressIp: e.CAPTURE_EGRESS_IP,
    user: e.CAPTURE_USER,
    bwrapPath: e.CAPTURE_BWRAP,
    tenantMax: e.CAPTURE_TENANT_MAX,
    ataAttachMaxBytes: e.ATA_ATTACH_MAX_BYTES,
    monitor: { minIntervalSeconds: e.MONITOR_MIN_INTERVAL_SECONDS, maxDays: e.MONITOR_MAX_DAYS },
  };
}
