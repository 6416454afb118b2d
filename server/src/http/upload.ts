import { StageTimes, timed } from '@notary/platform/stage-times';
import { bearerFrom } from '@notary/platform/trpc/context';
import { AppError, type DocumentDto, errorMessage } from '@notary/shared';
import busboy from 'busboy';
import type { Request, RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import {
  type IntakeFields,
  type IntakeFile,
  type IntakeSource,
  notarize,
} from '../domain/documents/notarize';
import { toDocumentDto } from '../domain/documents/projection';
import { authenticate } from '../domain/tenancy/authenticate';
import { sendError } from '../trpc/errors';
import { answerEarly } from './early-answer';

/** Multipart framing allowance on top of the file itself when judging a declared Content-Length. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/**
 * `POST /api/documents/upload` (multipart: `file`, `consent=true`; spec, Endpoints, Documents): authenticates,
 * then hands the multipart body to `notarize` (role, quota, store-while-hashing, consent, media type, the
 * Document row and its anchoring job, no object without its row).
 * Statuses: 201 Document; 400 missing file or consent, not multipart; 401; 403 role below editor in an
 * organization; 413 over 250 MB or over the tenant's storage quota. Answers given before the body is read
 * (401, 403, 413 by Content-Length or a full quota) reach the client and close the connection (`answerEarly`).
 * A client that disconnects mid-upload leaves nothing behind. With `SERVER_TIMING=on` a 201 carries
 * `Server-Timing` (W3C Server Timing, ms): `auth`, then `notarize`'s stages (see `NotarizeDeps.stages`).
 */
export function uploadRoute(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    try {
      const stages = deps.config.serverTiming ? new StageTimes() : undefined;
      const em = deps.db.fork();
      const actor = await timed(stages, 'auth', () =>
        authenticate(em, deps, bearerFrom(req.headers.authorization), req.ip ?? null),
      );
      // The request's logger: a failed removal is logged with the request id.
      const doc = await notarize(em, { ...deps, log: req.log, stages }, actor, {
        kind: 'stored',
        origin: { sourceType: 'upload' },
        source: multipartSource(req),
      });
      const body: DocumentDto = toDocumentDto(doc);
      if (stages) res.setHeader('Server-Timing', stages.header());
      res.status(201).setHeader('Cache-Control', 'private, no-store').json(body);
    } catch (e) {
      // A client that hung up gets no answer (its socket is gone); everyone else gets the error body.
      if (res.socket?.destroyed) return;
      if (req.complete) sendError(res, e);
      else answerEarly(req, res, e);
    }
  };
}

/** The request as an intake: the size its Content-Length announces, and its multipart body read with busboy. */
function multipartSource(req: Request): IntakeSource {
  return {
    announce: () => {
      if (!req.is('multipart/form-data')) {
        throw new AppError('BAD_REQUEST', 'Expected multipart/form-data with fields `file` and `consent`');
      }
      const declared = Number(req.headers['content-length']);
      return Number.isFinite(declared) ? Math.max(0, declared - MULTIPART_OVERHEAD) : undefined;
    },
    read: (onFile) => readMultipart(req, onFile),
  };
}

/**
 * Parses the multipart body: the first part named `file` goes to `onFile` as it starts (any other file part
 * is discarded), `consent=true` (case-insensitive, the last `consent` field counts) records the time consent
 * was given. Resolves once the whole request is read. Rejects with AppError BAD_REQUEST for a malformed body
 * and with an Error when the client disconnects before the end.
 */
function readMultipart(req: Request, onFile: (file: IntakeFile) => void): Promise<IntakeFields> {
  return new Promise<IntakeFields>((resolve, reject) => {
    const fields: IntakeFields = { consentAt: undefined };
    let fileSeen = false;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      if (error === undefined) resolve(fields);
      else reject(error);
    };

    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        // Larger parts mean fewer pushes through the hashing and storage streams (busboy defaults to 16 KiB).
        highWaterMark: 1024 * 1024,
        fileHwm: 1024 * 1024,
        // The file's size is bounded by `notarize` (250 MB, the tenant's quota) as it streams.
        limits: { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 30 },
      });
    } catch (e) {
      reject(new AppError('BAD_REQUEST', `Malformed multipart request: ${errorMessage(e)}`));
      return;
    }
    req.on('close', () => {
      if (!req.complete) settle(new Error('Client disconnected during upload'));
    });
    bb.on('field', (name, value) => {
      if (name === 'consent')
        fields.consentAt = value.trim().toLowerCase() === 'true' ? new Date() : undefined;
    });
    bb.on('file', (name, stream, info) => {
      if (name !== 'file' || fileSeen) {
        stream.resume();
        return;
      }
      fileSeen = true;
      onFile({ stream, fileName: info.filename, declaredType: info.mimeType });
    });
    bb.on('error', (e) =>
      settle(new AppError('BAD_REQUEST', `Malformed multipart request: ${errorMessage(e)}`)),
    );
    bb.on('close', () => settle());
    req.pipe(bb);
  });
}
