import { ERROR_TABLE, type ErrorCode } from '@notary/shared';
import { z } from 'zod';
import type { CaptureRecord } from '../../ports/capture';
import { TLS_LIMITS } from './child/provenance';
import { DNS_MAX_ADDRESSES, DNS_MAX_ANSWERS } from './child/proxy';

/**
 * The messages between the service and a capture process (its setup, one request and one answer, over
 * `process-pipes.ts`). The capture process renders what a user names: the service treats whatever it sends as
 * untrusted and validates it here before using it.
 */

/**
 * The record and its parts, as the capture process writes them: the one door through which the capture
 * process's code reaches the service's types (types only: nothing of the service is loaded in that process).
 */
export type {
  BlockedRequest,
  CapturedTls,
  CaptureRecord,
  CaptureSettingsRecord,
  DnsAnswer,
  MissingBody,
  OriginTls,
  ServerContact,
} from '../../ports/capture';

/** Most characters of a page's visible text a capture record keeps (`CaptureRecord.visibleText`). */
export const CAPTURE_VISIBLE_TEXT_MAX = 100_000;

/**
 * The parts a capture leaves in its work directory, for the service to pack into the archive it signs: the
 * WARC (one gzip member per record), its CDXJ index, the screenshot as Chromium rendered it, the PDF
 * rendering (absent when Chromium made none) and every origin's TLS material (`capture/tls.json`). Here, not
 * beside the browser code, so the service reads them without loading playwright-core (a second of start-up).
 */
export const CAPTURE_FILES = {
  warc: 'data.warc.gz',
  index: 'index.cdxj',
  screenshot: 'screenshot.png',
  pdf: 'page.pdf',
  tls: 'tls.json',
} as const;

/** An allow entry as written (`CAPTURE_ALLOW_HOSTS`); the capture process parses it again. */
const allowEntry = z.string().max(512);

/**
 * Service to capture process, first, as soon as the process is started (possibly ahead of any capture): where
 * it works and with which settings, enough to start its browser before it is given a URL; no secret is ever
 * part of it.
 */
export const captureSetupSchema = z.object({
  workDir: z.string(),
  /** The product token the browser's user agent ends with (its page is opened ahead, with its user agent). */
  userAgentProduct: z.string(),
  config: z.object({
    chromiumPath: z.string(),
    timeoutMs: z.number().int().positive(),
    allowHosts: z.array(allowEntry),
    caCertsPem: z.string().optional(),
    egressIp: z.string().optional(),
  }),
});
export type CaptureSetup = z.infer<typeof captureSetupSchema>;

/** Service to capture process, second (after `captureSetupSchema`): what to capture, and how to name itself. */
export const captureRequestSchema = z.object({
  url: z.string().url(),
  options: z.object({
    software: z.string(),
    service: z.object({ name: z.string(), version: z.string() }).optional(),
    /** Report each stage's wall time in the answer (`stages`): a bench asks, the service does not. */
    timing: z.boolean().optional(),
  }),
});
export type CaptureRequest = z.infer<typeof captureRequestSchema>;

const text = z.string().max(64 * 1024);
const iso = z.string().max(64);
const short = z.string().max(512);
const address = z.string().max(64);
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

/** `CaptureRecord` as the capture process may send it: shapes checked, strings and lists bounded. */
const captureRecordSchema: z.ZodType<CaptureRecord> = z.object({
  format: z.literal('notary-web-capture/1'),
  requestedUrl: text,
  finalUrl: text,
  status: z.number().int(),
  redirects: z.array(z.object({ url: text, status: z.number().int(), location: text })).max(64),
  serverIp: z.string().max(64).nullable(),
  tls: z
    .object({
      protocol: z.string().max(64).nullable(),
      subject: text,
      issuer: text,
      validFrom: iso,
      validTo: iso,
      sha256Fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    })
    .nullable(),
  responseHeaders: z.array(z.tuple([text, text])).max(1_000),
  servers: z.array(z.object({ host: text, port: z.number().int(), ip: z.string().max(64) })).max(10_000),
  blocked: z
    .array(
      z.object({
        url: text,
        ip: address.nullable(),
        reason: text,
        rule: z
          .enum(['private-range', 'metadata-address', 'scheme', 'port', 'download', 'local-resource'])
          .optional(),
      }),
    )
    .max(10_000),
  failed: z.array(z.object({ url: text, reason: text })).max(10_000),
  unfinished: z.array(text).max(10_000),
  missingBodies: z
    .array(
      z.object({
        url: text,
        status: z.number().int(),
        kind: z.enum(['missing', 'incomplete']),
        reason: text,
      }),
    )
    .max(10_000)
    .optional(),
  tlsOrigins: z
    .array(
      z.object({
        origin: short,
        protocol: short.nullable(),
        cipher: short.nullable(),
        keyExchange: short.nullable(),
        subject: text,
        issuer: text,
        validFrom: iso,
        validTo: iso,
        sha256Fingerprint: hex64.nullable(),
        chainLength: z.number().int().nonnegative(),
        scts: z.number().int().nonnegative(),
        ctCompliance: short.nullable(),
      }),
    )
    .max(TLS_LIMITS.origins)
    .optional(),
  tlsOriginsOmitted: z.number().int().nonnegative().optional(),
  dns: z
    .array(
      z.object({
        host: short,
        outcome: z.enum(['resolved', 'refused', 'failed']),
        addresses: z.array(address).max(DNS_MAX_ADDRESSES),
        connected: z.array(address).max(DNS_MAX_ADDRESSES),
        error: short.optional(),
        at: iso,
      }),
    )
    .max(DNS_MAX_ANSWERS)
    .optional(),
  dnsOmitted: z.number().int().nonnegative().optional(),
  egressIp: address.optional(),
  service: z.object({ name: short, version: short }).optional(),
  settings: z
    .object({
      timeoutMs: z.number().int(),
      scroll: z.object({ maxSteps: z.number().int(), maxMs: z.number().int() }),
      screenshotMaxHeight: z.number().int(),
      allowExceptions: z.number().int(),
      trustedCas: z.array(z.object({ subject: text, sha256Fingerprint: hex64 })).max(64),
    })
    .optional(),
  startedAt: iso,
  finishedAt: iso,
  browser: z.object({ name: text, version: text }),
  userAgent: text,
  locale: text,
  timezone: text,
  viewport: z.object({ width: z.number().int(), height: z.number().int() }),
  screenshot: z.object({ width: z.number().int(), height: z.number().int(), truncated: z.boolean() }),
  title: text,
  visibleText: z.string().max(CAPTURE_VISIBLE_TEXT_MAX).optional(),
  visibleTextTruncated: z.boolean().optional(),
});

/**
 * Destinations the capture's proxy refused by address, with what their names resolved to: for the operator's
 * log, never for the client (an internal DNS oracle otherwise).
 */
const refusals = z
  .array(
    z.object({
      url: text,
      host: text,
      port: z.number().int(),
      addresses: z.array(z.string().max(64)).max(64),
      address: z.string().max(64),
      reason: text,
    }),
  )
  .max(1_000);

const errorCodes = Object.keys(ERROR_TABLE) as [ErrorCode, ...ErrorCode[]];

const bytes = z.number().int().nonnegative();

/**
 * The manifest of a capture's parts: the size in bytes of each file of `CAPTURE_FILES` it wrote (`pdf` absent
 * when there is no PDF). The service opens exactly these names and checks each size against the file.
 */
const captureFilesSchema = z.object({
  warc: z.number().int().positive(),
  index: bytes,
  screenshot: z.number().int().positive(),
  pdf: z.number().int().positive().optional(),
  tls: z.number().int().positive(),
});
export type CaptureFileSizes = z.infer<typeof captureFilesSchema>;

/** Capture process to service: the capture's record and the manifest of its parts, or the error to answer with. */
export const captureAnswerSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('done'),
    record: captureRecordSchema,
    files: captureFilesSchema,
    refusals,
    /** Wall time of each stage of the capture process, ms, when the request asked for it (`timing`). */
    stages: z.record(z.string().max(64), z.number().nonnegative()).optional(),
  }),
  z.object({
    type: z.literal('failed'),
    code: z.enum(errorCodes),
    message: z.string().max(4_096),
    retryAfterSeconds: z.number().int().positive().optional(),
    refusals,
  }),
]);
export type CaptureAnswer = z.infer<typeof captureAnswerSchema>;
