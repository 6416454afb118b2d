import { bearerFrom } from '@notary/platform/trpc/context';
import { AppError } from '@notary/shared';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import pLimit from 'p-limit';
import { contentDispositionHeader } from '../adapters/storage/validate';
import type { AppDeps } from '../deps';
import type { CertificateLanguage } from '../domain/certificates/model';
import { issueCertificate, timestampDocument } from '../domain/certificates/service';
import type { Actor } from '../domain/tenancy/actor';
import { authenticate } from '../domain/tenancy/authenticate';
import { sendError } from './errors';

/** Certificates rendered at once by this process: each holds its source PDF and pdf-lib's graph in memory. */
const MAX_CONCURRENT_RENDERS = 2;

/**
 * `GET /api/documents/:id/certificate[?signed=1][&lang=pt|en]` (spec, Documents rule 5): the certificate as an
 * `application/pdf` attachment with `X-Service-Signed: pades | none`. Language: `lang`, else the best of
 * Accept-Language among pt and en, else Portuguese. Any member of the tenant may fetch it (reader included).
 * Statuses: 200; 401; 403 other tenant; 404; 502 when the TSA of a B-T signature fails.
 */
export function certificateRoute(deps: AppDeps): RequestHandler {
  const renders = pLimit(MAX_CONCURRENT_RENDERS);
  return async (req, res) => {
    try {
      const em = deps.db.fork();
      const actor = await authenticate(em, deps, bearerFrom(req.headers.authorization), req.ip ?? null);
      const signedParam = req.query.signed;
      if (signedParam !== undefined && signedParam !== '1' && signedParam !== '0') {
        throw new AppError('BAD_REQUEST', 'signed: use 1 to request a PAdES signature');
      }
      const issued = await renders(() =>
        issueCertificate(
          em,
          {
            config: deps.config,
            publicUrl: deps.publicUrl,
            storage: deps.storage,
            signer: deps.signer,
            tsa: deps.tsa,
          },
          actor,
          { id: String(req.params.id), signed: signedParam === '1', lang: certificateLanguage(req) },
        ),
      );
      if (issued.fallbackReason && deps.config.logLevel === 'debug') {
        console.debug(`[certificate] ${req.params.id}: separate certificate (${issued.fallbackReason})`);
      }
      res.status(200);
      res.setHeader('Content-Type', 'application/pdf');
      res.setHeader('Content-Disposition', contentDispositionHeader('attachment', issued.fileName));
      res.setHeader('Content-Length', String(issued.pdf.byteLength));
      res.setHeader('X-Service-Signed', issued.signed ? 'pades' : 'none');
      res.setHeader('Cache-Control', 'private, no-store');
      res.end(issued.pdf);
    } catch (e) {
      sendError(res, e);
    }
  };
}

/**
 * `POST /api/documents/:id/timestamp` (spec, Documents rule 6): the DER `TimeStampResp` over the document's
 * SHA-256 as `application/timestamp-reply`, attachment `<serial>.tsr`. Rate limit: 10 per minute per user
 * (spec, Limits), counted after authentication so that nobody can spend another user's allowance.
 * Statuses: 200; 401; 403; 404; 429; 502 TSA failure or an answer that does not check out; 503 no TSA.
 */
export function timestampRoute(deps: AppDeps): RequestHandler[] {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: 10,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => `ts:${(res.locals.actor as Actor).userId}`,
    handler: (_req, res) =>
      sendError(res, new AppError('RATE_LIMITED', 'Too many timestamp requests: 10 per minute')),
  });
  return [
    authenticated(deps),
    limiter,
    async (req, res) => {
      try {
        const actor = res.locals.actor as Actor;
        const { result, fileName } = await timestampDocument(
          deps.db.fork(),
          deps.tsa,
          actor,
          String(req.params.id),
        );
        res.status(200);
        res.setHeader('Content-Type', 'application/timestamp-reply');
        res.setHeader('Content-Disposition', contentDispositionHeader('attachment', fileName));
        res.setHeader('Content-Length', String(result.response.byteLength));
        res.setHeader('Cache-Control', 'private, no-store');
        res.end(result.response);
      } catch (e) {
        sendError(res, e);
      }
    },
  ];
}

/** Verifies the bearer session and leaves the actor in `res.locals.actor`; REST errors otherwise. */
function authenticated(deps: AppDeps): RequestHandler {
  return async (req: Request, res: Response, next) => {
    try {
      res.locals.actor = await authenticate(
        deps.db.fork(),
        deps,
        bearerFrom(req.headers.authorization),
        req.ip ?? null,
      );
      next();
    } catch (e) {
      sendError(res, e);
    }
  };
}

/** `lang=pt|en` wins; else Accept-Language negotiated between pt and en; Portuguese by default. */
export function certificateLanguage(req: Request): CertificateLanguage {
  const lang = req.query.lang;
  if (lang === 'en' || lang === 'pt') return lang;
  if (lang !== undefined) throw new AppError('BAD_REQUEST', 'lang: use pt or en');
  if (!req.headers['accept-language']) return 'pt';
  return req.acceptsLanguages('pt', 'en') === 'en' ? 'en' : 'pt';
}
