import type { ReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@notary/shared';
import { Router } from 'express';
import type { FsObjectStorage } from '../adapters/storage/fs';
import { contentDispositionHeader } from '../adapters/storage/validate';
import { publicRoute } from './route';

/**
 * `GET|HEAD /files/*key`: serves an object of the fs storage adapter to whoever holds a signed URL from
 * `FsObjectStorage.presignGet` (the embedded stand-in for S3 presigned URLs). Mount the returned router at
 * `/files` (`app.use('/files', createSignedFileRoute(storage))`), before any body parser; its own route is `/*key`.
 *
 * Responses: 200 with the signed `Content-Type`, `Content-Disposition` (RFC 6266 / RFC 8187 for Unicode
 * names), `Content-Length`, and headers that keep hostile content inert even when opened inline:
 * `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox; default-src 'none'` (no script, no
 * subresource, opaque origin for HTML/SVG), `Cache-Control: private, no-store` (the URL is a credential).
 * Errors: JSON `{message, code}`: 403 FORBIDDEN for a missing, tampered or expired signature ('URL expired'),
 * 404 NOT_FOUND when the object is gone. No authentication: the signature is the authorization.
 */
export function createSignedFileRoute(storage: FsObjectStorage): Router {
  const router = Router();
  // Express answers HEAD with the GET handler; the handler skips the body for it.
  router.get(
    '/*key',
    publicRoute(async ({ req, res }) => {
      const key = keyFromParams(req.params.key);
      const grant = await storage.verifySignedRequest(key, queryOf(req.originalUrl));
      // Open then fstat: the length sent is that of the exact file streamed, even if the key is replaced.
      const handle = await storage.openObject(key);
      let stream: ReadStream | undefined;
      try {
        const { size } = await handle.stat();
        res.status(200);
        // setHeader, not res.type/res.set: Express would append a charset to text types, changing what was signed.
        res.setHeader('Content-Type', grant.contentType);
        res.setHeader('Content-Disposition', contentDispositionHeader(grant.disposition, grant.fileName));
        res.setHeader('Content-Length', String(size));
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
        res.setHeader('Cache-Control', 'private, no-store');
        // The URL carries the signature: never leak it through Referer.
        res.setHeader('Referrer-Policy', 'no-referrer');
        if (req.method === 'HEAD') {
          res.end();
          return;
        }
        // The stream owns the handle from here and closes it when it ends or is destroyed.
        stream = handle.createReadStream();
        // A client hanging up mid-body is not a server error: the wrapper drops the response.
        await pipeline(stream, res);
      } finally {
        if (!stream) await handle.close().catch(() => undefined);
      }
    }),
  );
  return router;
}

/** Express 5 gives `*key` as decoded path segments. */
function keyFromParams(raw: unknown): string {
  if (Array.isArray(raw) && raw.every((s) => typeof s === 'string')) return raw.join('/');
  if (typeof raw === 'string') return raw;
  throw new AppError('FORBIDDEN', 'Invalid signature');
}

/** The raw query string as `URLSearchParams`, so repeated parameters stay visible (and are refused). */
function queryOf(originalUrl: string): URLSearchParams {
  const i = originalUrl.indexOf('?');
  return new URLSearchParams(i === -1 ? '' : originalUrl.slice(i + 1));
}
