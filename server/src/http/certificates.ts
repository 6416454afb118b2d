import type { CertificateLanguage } from '@notary/pdf/model';
import { BoundedQueue, QueueFullError } from '@notary/pdf/render-queue';
import { FairQueue } from '@notary/platform/fair-queue';
import { AppError, AtaRequestSchema } from '@notary/shared';
import type { Request, RequestHandler } from 'express';
import { contentDispositionHeader } from '../adapters/storage/validate';
import { type AppDeps, certificateContext } from '../deps';
import { type AtaContext, type AtaDraft, readAtaDraft, requestAtaDraft } from '../domain/certificates/ata';
import {
  notarySignedCertificate,
  type StoredNotarySignedCertificate,
} from '../domain/certificates/notary-signature';
import {
  issuePublicCertificate,
  PublicCertificates,
  publicNotarySignedCertificate,
} from '../domain/certificates/public-certificate';
import {
  type IssuedCertificate,
  issueCertificate,
  pdfaHeader,
  timestampDocument,
} from '../domain/certificates/service';
import { publicRoute, route } from './route';
import { ValidarQuery } from './validar';

/**
 * Certificates rendered at once by this process: each holds its source PDF in memory and runs a stamping
 * worker of up to 256 MB of heap (`@notary/pdf/bounds`).
 */
export const MAX_CONCURRENT_RENDERS = 2;

/** Certificate requests that may wait for a render slot; past this, 429 at once. */
export const MAX_WAITING_RENDERS = 8;

/**
 * `Retry-After` of a 429 for a full render queue, seconds: a render takes well under a second, and the
 * worst one is cut at the 10 s stamping deadline, so a few seconds usually find a slot.
 */
export const RENDER_QUEUE_RETRY_AFTER_SECONDS = 5;

/**
 * The owners' render queue of this process (memory and CPU are per process, whatever the number of apps in it),
 * shared fairly across tenants (`FairQueue`, keyed by tenant): served round-robin, and a tenant holding no place
 * still enters a full queue in the place of the newest waiter of the tenant holding the most. One tenant may hold
 * every place while nobody else asks. Exported so that tests can watch it (`running`, `waiting`, `onChange`).
 */
export const certificateRenders = new FairQueue({
  concurrency: MAX_CONCURRENT_RENDERS,
  maxWaiting: MAX_WAITING_RENDERS,
  maxPerKey: MAX_CONCURRENT_RENDERS + MAX_WAITING_RENDERS,
  full: renderQueueFull,
  keyFull: renderQueueFull,
});

/**
 * The public certificate route's own render queue: anonymous callers never take the owners' places. One signing at
 * a time, a few waiting (each a different document or state: callers of one share its signing).
 */
export const publicCertificateRenders = new BoundedQueue(1, 4);

/** Signed public certificates kept by state (`PublicCertificates`), per process as the queues are. */
export const publicCertificates = new PublicCertificates();

/**
 * `GET /api/documents/:id/certificate[?signed=1][&lang=pt|en]` (spec, Documents: rule 5): the certificate as an
 * `application/pdf` attachment with `X-Service-Signed: pades | none`, and when signed `X-Signature-Level` (the
 * PAdES level reached). Language: `lang`, else the best of Accept-Language among pt and en, else Portuguese.
 * Any member of the tenant may fetch it (reader included). With `signed=1`, once a tabelião has signed the
 * certificate (`notary-signature`), the newest file they signed is served as stored (`X-Notary-Signed: pades`).
 * Renders go through `certificateRenders`: `MAX_CONCURRENT_RENDERS` at once, `MAX_WAITING_RENDERS` waiting,
 * 429 beyond; a client that disconnects leaves the queue, or has its running render stopped.
 * Statuses: 200; 401; 403 other tenant; 404; 429 queue full (`Retry-After`); 502 when the TSA of a B-T or
 * higher signature fails.
 */
export function certificateRoute(deps: AppDeps): RequestHandler {
  return route(deps, async ({ req, res, signal: clientLeft, em, actor }) => {
    const signedParam = req.query.signed;
    if (signedParam !== undefined && signedParam !== '1' && signedParam !== '0') {
      throw new AppError('BAD_REQUEST', 'signed: use 1 to request a PAdES signature');
    }
    const lang = certificateLanguage(req);
    if (signedParam === '1') {
      // Signed by the tabelião too: the stored file, since a new issue would not carry their signature.
      const stored = await notarySignedCertificate(em, actor, { id: String(req.params.id), lang });
      if (stored) {
        sendNotarySigned(res, stored);
        return;
      }
    }
    const issued = await certificateRenders.run(
      actor.tenant.id,
      () =>
        issueCertificate(em, certificateContext(deps), actor, {
          id: String(req.params.id),
          signed: signedParam === '1',
          lang,
          ...(clientLeft ? { signal: clientLeft } : {}),
        }),
      clientLeft,
    );
    if (issued.fallbackReason) {
      req.log.debug(`certificate ${req.params.id}: separate certificate (${issued.fallbackReason})`);
    }
    logShortfall(req, issued);
    sendCertificate(res, issued, 'attachment');
  });
}

/**
 * `GET /api/public/documents/:serial/certificate?_secretCode=<code>[&lang=pt|en]`: where ITI's VALIDAR downloads
 * the certificate the QR code's URL named (`http/validar.ts`): the certificate of that serial, PAdES-signed
 * when a signing certificate is configured (`X-Service-Signed: pades`, else `none`), `inline` as VALIDAR
 * fetches it. No session: the access code printed on the certificate is the credential. Served from
 * `publicCertificates` while the document's state is unchanged, signed through `publicCertificateRenders`
 * otherwise. Once a tabelião signed the certificate, their stored file instead (`X-Notary-Signed: pades`); limits: global and public verification (spec, Limits).
 * Statuses: 200; 400 malformed serial or lang; 401 wrong or missing code; 404 unknown serial; 429; 502 TSA.
 */
export function publicCertificateRoute(deps: AppDeps): RequestHandler {
  return publicRoute(async ({ req, res }) => {
    const input = ValidarQuery.parse({ serial: req.params.serial, _secretCode: req.query._secretCode });
    const lang = certificateLanguage(req);
    const em = deps.db.fork();
    const request = { serialNumber: input.serial, code: input._secretCode, lang };
    const signedByNotary = await publicNotarySignedCertificate(em, deps.secret, request);
    if (signedByNotary) {
      sendNotarySigned(res, signedByNotary, 'inline');
      return;
    }
    const issued = await issuePublicCertificate(
      em,
      certificateContext(deps),
      { ...request, caller: req.ip ?? 'unknown' },
      publicCertificates,
      (sign) => publicCertificateRenders.run(sign).catch(queueFull),
    );
    logShortfall(req, issued);
    sendCertificate(res, issued, 'inline');
  });
}

/** A signature below `SIGNING_LEVEL` (revocation data missing) is the operator's to know, not the client's. */
function logShortfall(req: Request, issued: IssuedCertificate): void {
  if (issued.levelShortfall.length === 0) return;
  req.log.warn(
    `certificate signed at PAdES ${issued.level ?? 'none'}, below SIGNING_LEVEL: ${issued.levelShortfall.join('; ')}`,
  );
}

/** A full render queue's answer: 429 with `Retry-After`. */
function renderQueueFull(): AppError {
  return new AppError('RATE_LIMITED', 'Too many certificates being rendered: try again shortly', {
    retryAfterSeconds: RENDER_QUEUE_RETRY_AFTER_SECONDS,
  });
}

/** A full render queue as 429 with `Retry-After`; anything else as it was thrown. */
function queueFull(e: unknown): never {
  throw e instanceof QueueFullError ? renderQueueFull() : e;
}

/**
 * The certificate as `application/pdf` with `X-Service-Signed: pades | none`, when signed
 * `X-Signature-Level: B-B | B-T | B-LT | B-LTA` (the PAdES level reached), and `X-Pdfa` (what the file declares
 * of PDF/A, `pdfaHeader`), never cached.
 */
function sendCertificate(
  res: Parameters<RequestHandler>[1],
  issued: IssuedCertificate,
  disposition: 'attachment' | 'inline',
): void {
  res.status(200);
  res.setHeader('Content-Type', 'application/pdf');
  res.setHeader('Content-Disposition', contentDispositionHeader(disposition, issued.fileName));
  res.setHeader('Content-Length', String(issued.pdf.byteLength));
  res.setHeader('X-Service-Signed', issued.signed ? 'pades' : 'none');
  if (issued.level) res.setHeader('X-Signature-Level', issued.level);
  res.setHeader('X-Pdfa', pdfaHeader(issued));
  res.setHeader('Cache-Control', 'private, no-store');
  res.end(issued.pdf);
}

/**
 * A certificate the tabelião signed, as stored when it was signed: `X-Service-Signed: pades`, `X-Notary-Signed:
 * pades`, `X-Signature-Level` the level its signatures reached; never cached.
 */
function sendNotarySigned(
  res: Parameters<RequestHandler>[1],
  stored: StoredNotarySignedCertificate,
  disposition: 'attachment' | 'inline' = 'attachment',
): void {
  res.status(200);
  res.setHeader('Content-Type', 'application/pdf');
  res.setHeader('Content-Disposition', contentDispositionHeader(disposition, stored.fileName));
  res.setHeader('Content-Length', String(stored.pdf.byteLength));
  res.setHeader('X-Service-Signed', 'pades');
  res.setHeader('X-Notary-Signed', 'pades');
  res.setHeader('X-Signature-Level', stored.level);
  res.setHeader('Cache-Control', 'private, no-store');
  res.end(stored.pdf);
}

/**
 * `POST /api/documents/:id/timestamp` (spec, Documents: rule 6): the DER `TimeStampResp` over the document's
 * SHA-256 as `application/timestamp-reply`, attachment `<serial>.tsr`. Rate limit (spec, Limits: timestamp 10
 * a minute per user) by the app-wide `rateLimited(['global', 'timestamp'])` mounted before this route.
 * Statuses: 200; 401; 403; 404; 429; 502 TSA failure or an answer that does not check out; 503 no TSA.
 */
export function timestampRoute(deps: AppDeps): RequestHandler {
  return route(deps, async ({ req, res, em, actor }) => {
    const { result, fileName } = await timestampDocument(em, deps.tsa, actor, String(req.params.id));
    res.status(200);
    res.setHeader('Content-Type', 'application/timestamp-reply');
    res.setHeader('Content-Disposition', contentDispositionHeader('attachment', fileName));
    res.setHeader('Content-Length', String(result.response.byteLength));
    res.setHeader('Cache-Control', 'private, no-store');
    res.end(result.response);
  });
}

/** `lang=pt|en` wins; else Accept-Language negotiated between pt and en; Portuguese by default. */
export function certificateLanguage(req: Request): CertificateLanguage {
  const lang = req.query.lang;
  if (lang === 'en' || lang === 'pt') return lang;
  if (lang !== undefined) throw new AppError('BAD_REQUEST', 'lang: use pt or en');
  if (!req.headers['accept-language']) return 'pt';
  return req.acceptsLanguages('pt', 'en') === 'en' ? 'en' : 'pt';
}

/** What the ata draft needs of the composition root. */
export function ataContext(deps: AppDeps): AtaContext {
  return {
    config: deps.config,
    publicUrl: deps.publicUrl,
    secret: deps.secret,
    storage: deps.storage,
    captureRecords: deps.captureRecords,
    attachMaxBytes: deps.config.capture.ataAttachMaxBytes,
  };
}

/**
 * `POST /api/documents/:id/ata` with `{requester: {name, cpf, qualification?, email?}}`: keeps the requester with
 * the web capture and answers its ata notarial draft (`application/pdf` attachment, PDF/A-3b, `X-Pdfa`). Editors
 * and up. Renders share the certificates' queue (`certificateRenders`).
 * Statuses: 200; 400 invalid body (a CPF whose check digits do not match) or not a web capture; 401; 403 other
 * tenant or below editor; 404; 410 LGPD-deleted; 429 render queue full.
 */
export function ataRequestRoute(deps: AppDeps): RequestHandler {
  return route(deps, async ({ req, res, signal, em, actor }) => {
    const input = AtaRequestSchema.parse(req.body ?? {});
    const draft = await certificateRenders.run(
      actor.tenant.id,
      () => requestAtaDraft(em, ataContext(deps), actor, String(req.params.id), input),
      signal,
    );
    sendDraft(res, draft);
  });
}

/**
 * `GET /api/documents/:id/ata`: the draft of the last request, rendered again from the kept requester. Any member.
 * Statuses: 200; 400 not a web capture; 401; 403 other tenant; 404 no such document or no draft requested; 410
 * LGPD-deleted; 429.
 */
export function ataReadRoute(deps: AppDeps): RequestHandler {
  return route(deps, async ({ req, res, signal, em, actor }) => {
    const draft = await certificateRenders.run(
      actor.tenant.id,
      () => readAtaDraft(em, ataContext(deps), actor, String(req.params.id)),
      signal,
    );
    sendDraft(res, draft);
  });
}

/** The draft as an `application/pdf` attachment, never cached. */
function sendDraft(res: Parameters<RequestHandler>[1], draft: AtaDraft): void {
  res.status(200);
  res.setHeader('Content-Type', 'application/pdf');
  res.setHeader('Content-Disposition', contentDispositionHeader('attachment', draft.fileName));
  res.setHeader('Content-Length', String(draft.pdf.byteLength));
  res.setHeader('X-Pdfa', 'PDF/A-3b');
  res.setHeader('Cache-Control', 'private, no-store');
  res.end(draft.pdf);
}
