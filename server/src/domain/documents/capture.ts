import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/core';
import type { FairQueue } from '@notary/platform/fair-queue';
import { silentLog } from '@notary/platform/log';
import { AppError, type DocumentDto, type WebCaptureInput } from '@notary/shared';
import { type DocumentEntity, DocumentTimestamp } from '../../db/entities';
import type { CaptureMonitoring, CaptureRecord, WebCapture, WebCapturer } from '../../ports/capture';
import type { TimestampAuthority } from '../../ports/tsa';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { assertDiskRoom } from './disk-floor';
import { type IntakeSource, type NotarizeDeps, notarize } from './notarize';
import { screenshotUrl, toDocumentDto } from './projection';

/** What a web capture uses of the service (a subset of `AppDeps`). */
export interface CaptureDeps extends NotarizeDeps {
  capturer: WebCapturer;
  /** `TSA_URL`: the WACZ's hash is timestamped (RFC 3161) at capture time; undefined: not. */
  tsa: TimestampAuthority | undefined;
  /** The capture queue every tenant shares, keyed by tenant id (`createCaptureQueue`). */
  captureQueue: FairQueue;
}

/**
 * `POST /api/documents/capture`: captures `input.url` in an isolated browser (the `WebCapturer`: every connection
 * checked, public addresses only unless `CAPTURE_ALLOW_HOSTS` says otherwise), stores the screenshot on its own (the
 * `screenshot` preview), and notarizes the WACZ through the one notarization path (`notarize`, intake `stored` with
 * origin `web-capture`): `sha256Hash` is the WACZ's, `sourceUri` the URL as requested. Role, consent, the service's
 * free disk (its data volume and the temporary directory the browser works in) and the tenant's share of the capture
 * slots are checked before the browser starts.
 * @returns the Document as the owner sees it, with the screenshot's presigned URL (300 s).
 * @throws AppError FORBIDDEN below editor in an organization; BAD_REQUEST without consent, for an invalid URL,
 *   a scheme other than http(s), credentials in the URL, or a destination that is not allowed; RATE_LIMITED
 *   when the tenant already holds its share of the capture queue or the queue is full (a waiting capture may
 *   also lose its place to a tenant holding none); INSUFFICIENT_STORAGE (507) below the disk
 *   floor; and the capturer's errors (502 unreachable, 504 too slow, 503 without Chromium);
 *   those of `notarize` (413 over the quota).
 */
export async function captureWebPage(
  em: EntityManager,
  deps: CaptureDeps,
  actor: Actor,
  input: WebCaptureInput,
  signal?: AbortSignal,
): Promise<DocumentDto> {
  requirePermission(actor, 'upload', 'capture web pages into this organization');
  if (input.consent !== true) {
    throw new AppError('BAD_REQUEST', 'Consent is required (LGPD Art. 7 I): send `consent: true`');
  }
  const consentAt = new Date();
  const url = parseCaptureUrl(input.url);
  const { doc } = await captureAndNotarize(em, deps, actor, url, {
    consentAt,
    ...(input.fileName ? { fileName: input.fileName } : {}),
    ...(signal ? { signal } : {}),
  });
  return toDocumentDto(doc, await screenshotUrl(deps.storage, doc));
}

/** How `captureAndNotarize` is asked: consent, the archive's name, a monitoring's run, the caller's signal. */
export interface CaptureRequest {
  /** When the person consented (LGPD Art. 7 I): the request, or the creation of a monitoring. */
  consentAt: Date;
  /** The archive's name; default `<host>-<yyyymmddThhmmssZ>.wacz`. */
  fileName?: string;
  /** A monitoring's run: stated in the signed record (`CaptureRecord.monitoring`). */
  monitoring?: CaptureMonitoring;
  signal?: AbortSignal;
}

/**
 * The capture itself, for a caller whose role and URL are already checked (`captureWebPage`, a monitoring's
 * run): the disk floor, the tenant's share of the capture queue, the capture, the screenshot stored, the WACZ
 * notarized (`notarize`, which checks the role again and the storage quota), the RFC 3161 token when configured.
 * @returns the new Document and the capture's record as signed in its WACZ.
 * @throws AppError as `captureWebPage` documents.
 */
export async function captureAndNotarize(
  em: EntityManager,
  deps: CaptureDeps,
  actor: Actor,
  url: URL,
  request: CaptureRequest,
): Promise<{ doc: DocumentEntity; record: CaptureRecord }> {
  await assertDiskRoom(deps, ['data', 'temp']);
  const options = {
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.monitoring ? { monitoring: request.monitoring } : {}),
  };
  // Served in turn across workspaces, each within its share: a few cannot hold the browsers for everyone.
  const capture = await deps.captureQueue.run(
    actor.tenant.id,
    () => deps.capturer.capture(url, options),
    request.signal,
  );
  try {
    const screenshotKey = `${actor.tenant.id}/${randomUUID()}`;
    await deps.storage.put(screenshotKey, Readable.from([capture.screenshot]), { contentType: 'image/png' });
    const doc = await notarize(em, deps, actor, {
      kind: 'stored',
      origin: { sourceType: 'web-capture', sourceUri: url.href, screenshotKey },
      source: waczSource(
        capture,
        request.fileName ?? defaultFileName(url, capture.record.startedAt),
        request.consentAt,
      ),
    });
    if (deps.tsa) await timestampCapture(em, deps, doc);
    return { doc, record: capture.record };
  } finally {
    await capture.dispose();
  }
}

/**
 * An RFC 3161 token over the WACZ's SHA-256 taken right after the capture (so the token dates the archive moments after
 * the page was seen), kept with the document like one of `POST /api/documents/:id/timestamp` (its receipt carries it).
 * The document is already recorded: a TSA failure is logged, not answered (the owner can ask for a timestamp later).
 */
async function timestampCapture(em: EntityManager, deps: CaptureDeps, doc: DocumentEntity): Promise<void> {
  if (!deps.tsa) return;
  try {
    const result = await deps.tsa.timestamp(Buffer.from(doc.sha256Hash, 'hex'));
    em.create(DocumentTimestamp, {
      id: randomUUID(),
      document: doc.id,
      token: result.token,
      genTime: result.genTime,
      serialNumber: result.serialNumber,
    });
    await em.flush();
  } catch (err) {
    (deps.log ?? silentLog).warn({ err, document: doc.id }, 'RFC 3161 timestamp of a web capture failed');
  }
}

/**
 * The URL to capture, normalised by the WHATWG URL parser (so `http://2130706433/` is `http://127.0.0.1/`).
 * @throws AppError BAD_REQUEST when it does not parse, is not http(s), or carries credentials.
 */
export function parseCaptureUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('BAD_REQUEST', 'Invalid URL: send an absolute http:// or https:// URL', {
      fields: ['url'],
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('BAD_REQUEST', `Only http and https pages can be captured (not ${url.protocol})`, {
      fields: ['url'],
    });
  }
  // Credentials would land in the archive and the record, both kept and shown.
  if (url.username || url.password) {
    throw new AppError('BAD_REQUEST', 'A URL with credentials (user:password@) cannot be captured', {
      fields: ['url'],
    });
  }
  url.hash = '';
  return url;
}

/** `<host>-<yyyymmddThhmmssZ>.wacz`, or the name asked for with `.wacz` added when missing. */
function defaultFileName(url: URL, startedAt: string): string {
  const stamp = startedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${url.hostname}-${stamp}.wacz`;
}

/** The capture's WACZ as an intake: its size announced, its bytes read once from the capture's archive. */
function waczSource(capture: WebCapture, fileName: string, consentAt: Date): IntakeSource {
  const name = /\.wacz$/i.test(fileName) ? fileName : `${fileName}.wacz`;
  return {
    announce: () => capture.waczBytes,
    read: (onFile) =>
      new Promise((resolve, reject) => {
        const stream = capture.openWacz();
        stream.once('error', reject);
        // Resolves once the file was consumed or its consumer stopped (a bound): `notarize` reports which.
        stream.once('close', () => resolve({ consentAt }));
        onFile({ stream, fileName: name, declaredType: 'application/wacz' });
      }),
  };
}
