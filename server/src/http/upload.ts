import { randomUUID } from 'node:crypto';
import { bearerFrom } from '@notary/platform/trpc/context';
import { AppError, can, type DocumentDto, LIMITS } from '@notary/shared';
import busboy from 'busboy';
import type { Request, RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { type IngestResult, ingestStream } from '../domain/documents/ingest';
import { detectMimeType } from '../domain/documents/mime';
import { toDocumentDto } from '../domain/documents/projection';
import { assertStorageRoom } from '../domain/documents/quota';
import { recordUploadedDocument } from '../domain/documents/service';
import { authenticate } from '../domain/tenancy/authenticate';
import { sendError } from './errors';

/** Multipart framing allowance on top of the file itself when judging a declared Content-Length. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/**
 * A file name safe to keep and show: the last path segment, without control characters, at most 255
 * characters (any script is kept as is).
 */
export function cleanFileName(name: string | undefined): string {
  const last = (name ?? '').split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
  const cleaned = last.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return [...cleaned].slice(0, 255).join('') || 'unnamed';
}

/**
 * `POST /api/documents/upload` (multipart: `file`, `consent=true`), DESIGN.md "The main job":
 * the file streams through busboy into object storage while SHA-256 is computed; over 250 MB the upload is
 * aborted and nothing remains; then the Document row and its serial are created in one transaction.
 * Statuses: 201 Document; 400 missing file or consent; 401; 403 role below editor in an organization;
 * 413 over 250 MB or over the tenant's storage quota. A client that disconnects mid-upload leaves nothing behind.
 */
export function uploadRoute(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    try {
      const em = deps.db.fork();
      const actor = await authenticate(em, deps, bearerFrom(req.headers.authorization), req.ip ?? null);
      if (!can(actor.role, 'upload')) {
        throw new AppError(
          'FORBIDDEN',
          `Uploading needs the editor role or higher in this organization (you are ${actor.role})`,
        );
      }
      if (!req.is('multipart/form-data')) {
        throw new AppError('BAD_REQUEST', 'Expected multipart/form-data with fields `file` and `consent`');
      }
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > LIMITS.maxUploadBytes + MULTIPART_OVERHEAD) {
        throw new AppError('PAYLOAD_TOO_LARGE', 'The file exceeds the 250 MB limit');
      }
      const quotaBytes = deps.config.tenantStorageQuotaBytes;
      // Early 413 when the quota is already full or the declared body cannot fit; the exact check runs again
      // under a lock when the row is written (concurrent uploads).
      const declaredFile = Number.isFinite(declared) ? Math.max(0, declared - MULTIPART_OVERHEAD) : 0;
      const room = await assertStorageRoom(em, actor.tenant.id, quotaBytes, Math.max(1, declaredFile));
      const key = `${actor.tenant.id}/${randomUUID()}`;
      const parsed = await receive(deps, req, key, room);
      if (!parsed.file)
        throw new AppError('BAD_REQUEST', 'Missing file: send it in the multipart field `file`');
      const stored = parsed.file;
      try {
        if (parsed.consent !== 'true') {
          throw new AppError(
            'BAD_REQUEST',
            'Consent is required (LGPD Art. 7 I): send the field `consent=true`',
          );
        }
        const mimeType = await detectMimeType(stored.result.head, stored.declaredType, stored.fileName);
        const doc = await recordUploadedDocument(
          em,
          actor,
          {
            storageKey: key,
            fileName: stored.fileName,
            fileSize: stored.result.size,
            mimeType,
            sha256Hash: stored.result.sha256Hash,
            consentTimestamp: parsed.consentAt ?? new Date(),
          },
          { quotaBytes },
        );
        const body: DocumentDto = toDocumentDto(doc);
        res.status(201).setHeader('Cache-Control', 'private, no-store').json(body);
      } catch (e) {
        // No object without its row.
        await deps.storage.delete(key).catch((err) => console.error('[upload] could not remove', key, err));
        throw e;
      }
    } catch (e) {
      // A client that hung up gets no answer (its socket is gone); everyone else gets the error body.
      if (res.socket?.destroyed) return;
      // Answering before the body is read (bad token, role, declared size): keep reading and discarding it
      // for a while, so the client sees the answer instead of a broken pipe; then cut it off.
      if (!req.complete) lingerThenClose(req);
      sendError(res, e);
    }
  };
}

/** Seconds an early-answered upload may keep sending before the connection is cut (like nginx's lingering close). */
const LINGER_SECONDS = 15;

function lingerThenClose(req: Request): void {
  const timer = setTimeout(() => req.socket.destroy(), LINGER_SECONDS * 1000).unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

interface Received {
  consent: string | undefined;
  consentAt: Date | undefined;
  file: { fileName: string; declaredType: string; result: IngestResult } | undefined;
}

/**
 * Parses the multipart body, streaming the `file` part into storage under `key`. Resolves once the whole
 * request is read and the object is stored. Rejects with PAYLOAD_TOO_LARGE (object removed) past 250 MB or
 * past `roomBytes` (what the tenant's storage quota has left), and
 * with an error when the client disconnects (object removed).
 */
function receive(deps: AppDeps, req: Request, key: string, roomBytes: number): Promise<Received> {
  // The file may take what the tenant's quota has left, and never more than 250 MB.
  const maxBytes = Math.min(LIMITS.maxUploadBytes, roomBytes);
  const tooLargeError = () =>
    maxBytes < LIMITS.maxUploadBytes
      ? new AppError(
          'PAYLOAD_TOO_LARGE',
          `The file does not fit in this workspace's storage quota (${maxBytes} bytes left)`,
        )
      : new AppError('PAYLOAD_TOO_LARGE', 'The file exceeds the 250 MB limit');
  return new Promise<Received>((resolve, reject) => {
    const abort = new AbortController();
    const received: Received = { consent: undefined, consentAt: undefined, file: undefined };
    let ingest: Promise<void> | undefined;
    let tooLarge = false;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      abort.abort(error);
      // Wait for the storage adapter to finish removing what it wrote before answering.
      void (ingest ?? Promise.resolve()).catch(() => undefined).then(() => reject(error));
    };

    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        // Larger parts mean fewer pushes through the hashing and storage streams (busboy defaults to 16 KiB).
        highWaterMark: 1024 * 1024,
        fileHwm: 1024 * 1024,
        // busboy reports 'limit' on reaching fileSize: one byte more than allowed means "too large".
        limits: {
          files: 1,
          fileSize: maxBytes + 1,
          fields: 20,
          fieldSize: 64 * 1024,
          parts: 30,
        },
      });
    } catch (e) {
      reject(new AppError('BAD_REQUEST', `Malformed multipart request: ${(e as Error).message}`));
      return;
    }
    req.on('close', () => {
      if (!req.complete) fail(new Error('Client disconnected during upload'));
    });
    bb.on('field', (name, value) => {
      if (name === 'consent') {
        received.consent = value.trim().toLowerCase();
        received.consentAt = new Date();
      }
    });
    bb.on('file', (name, stream, info) => {
      if (name !== 'file' || ingest) {
        stream.resume();
        return;
      }
      stream.on('limit', () => {
        tooLarge = true;
        abort.abort(tooLargeError());
        // Keep draining the request so the client gets its 413 instead of a hung upload.
        stream.resume();
      });
      const fileName = cleanFileName(info.filename);
      ingest = ingestStream(deps.storage, key, stream, { signal: abort.signal }).then((result) => {
        received.file = { fileName, declaredType: info.mimeType, result };
      });
      ingest.catch(() => undefined);
    });
    bb.on('error', (e) =>
      fail(new AppError('BAD_REQUEST', `Malformed multipart request: ${(e as Error).message}`)),
    );
    bb.on('close', () => {
      if (settled) return;
      (ingest ?? Promise.resolve()).then(
        () => {
          if (tooLarge) return fail(tooLargeError());
          settled = true;
          resolve(received);
        },
        (e) => fail(tooLarge ? tooLargeError() : e),
      );
    });
    req.pipe(bb);
  });
}
