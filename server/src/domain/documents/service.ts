import { performance } from 'node:perf_hooks';
import type { EntityManager } from '@mikro-orm/core';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { type StageTimes, timed } from '@notary/platform/stage-times';
import {
  AppError,
  type DocumentDto,
  type DownloadDto,
  type HashComparisonDto,
  INLINE_MIME_TYPES,
  LIMITS,
  type PublicDocumentDto,
  UUID_PATTERN,
  type VerifyByHashDto,
  type ViewDto,
} from '@notary/shared';
import { Document, type DocumentEntity } from '../../db/entities';
import type { AnchoringQueue } from '../../ports/anchoring-queue';
import type { IpfsGateways } from '../../ports/ipfs';
import type { ObjectStorage } from '../../ports/storage';
import type { LogAppender } from '../log/transparency-log';
import type { Actor } from '../tenancy/actor';
import { TENANT_FILTER } from '../tenancy/scope';
import { screenshotUrl, toDocumentDto, toPublicDto } from './projection';
import { chargeStorage } from './quota';
import { newSerialNumber } from './serial';
import type { PublicVerifyCache } from './verify-cache';

/**
 * A file whose bytes were read and hashed (and, unless the record is reference-only, stored), ready to be recorded: the
 * Document row and its anchoring job, in one transaction.
 */
export interface StoredFile {
  /** Object key of the bytes; null for a reference-only record (IPFS import: hashed, not kept). */
  storageKey: string | null;
  fileName: string;
  /** Bytes. */
  fileSize: number;
  mimeType: string;
  /** Lower-case hex SHA-256 of exactly the bytes read. */
  sha256Hash: string;
  consentTimestamp: Date;
  /** How the bytes came in (spec, Document: `sourceType`); `upload` when absent. */
  sourceType?: DocumentEntity['sourceType'];
  /** Where they came from (an `ipfs://` URI, a captured page's URL); null when absent. */
  sourceUri?: string | null;
  /** Web capture: object key of the page's screenshot; null when absent. */
  screenshotKey?: string | null;
}

/**
 * Creates the Document row in one transaction with the request of its anchoring (`anchoring`: the job commits
 * or rolls back with the row), with a fresh serial number; status `pending` on both chains
 * (spec, States and transitions). Retries the serial on the (rare) collision. The caller deletes the object
 * if this throws, so no object outlives a failed insert (`notarize.ts` does).
 * A record with stored bytes adds its size to the tenant's used-bytes counter in the same transaction, last
 * (`chargeStorage`: its row lock is held only until the commit), refused there when `quotaBytes` (0 or absent:
 * none) would be passed; a reference-only record stores nothing, counts nothing and is never refused by it.
 * The record's transparency-log entry (`log`) is written pending in the same transaction, and the log's sequencer
 * woken after the commit (`domain/log/transparency-log.ts`).
 * @throws AppError('PAYLOAD_TOO_LARGE') when the file does not fit in the quota.
 */
export async function recordUploadedDocument(
  em: EntityManager,
  actor: Actor,
  file: StoredFile,
  options: {
    anchoring: AnchoringQueue;
    quotaBytes?: number;
    log?: LogAppender | undefined;
    /** Measures `tlog`, `anchoring-enqueue`, `quota-charge` and `commit` when given (`Server-Timing`). */
    stages?: StageTimes | undefined;
  },
): Promise<DocumentEntity> {
  const { stages } = options;
  for (let attempt = 0; ; attempt++) {
    try {
      let bodyDoneAt = 0;
      const recorded = await em.transactional(async (tx) => {
        const doc = tx.create(Document, {
          id: crypto.randomUUID(),
          tenant: actor.tenant.id,
          serialNumber: newSerialNumber(actor.tenant.serialPrefix),
          fileName: file.fileName,
          fileSize: file.fileSize,
          mimeType: file.mimeType,
          sha256Hash: file.sha256Hash,
          sourceType: file.sourceType ?? 'upload',
          sourceUri: file.sourceUri ?? null,
          storageKey: file.storageKey,
          screenshotKey: file.screenshotKey ?? null,
          consentGiven: true,
          consentTimestamp: file.consentTimestamp,
          uploaderUserId: actor.userId,
          uploaderIp: actor.ip,
        });
        await timed(stages, 'insert', () => tx.flush());
        await timed(stages, 'tlog', async () => options.log?.append(tx, doc));
        await timed(stages, 'anchoring-enqueue', () => options.anchoring.enqueueAnchoring(tx));
        if (file.storageKey !== null) {
          await timed(stages, 'quota-charge', () =>
            chargeStorage(tx, actor.tenant.id, options.quotaBytes ?? 0, file.fileSize),
          );
        }
        if (stages) bodyDoneAt = performance.now();
        return doc;
      });
      if (stages) stages.since('commit', bodyDoneAt);
      options.log?.appended();
      return recorded;
    } catch (e) {
      if (e instanceof UniqueConstraintViolationException && attempt < 4) continue;
      throw e;
    }
  }
}

/**
 * The one place where documents are scoped to the caller's tenant.
 * @throws AppError NOT_FOUND when no document has this id, FORBIDDEN when it belongs to another tenant.
 */
export async function findDocumentInTenant(
  em: EntityManager,
  actor: Actor,
  id: string,
): Promise<DocumentEntity> {
  // Past the request's tenant scope on purpose: another tenant's document is 403, a missing one 404 (spec, Errors).
  const doc = UUID_PATTERN.test(id)
    ? await em.findOne(Document, { id }, { filters: { [TENANT_FILTER]: false } })
    : null;
  if (!doc) throw new AppError('NOT_FOUND', 'Document not found');
  if (doc.tenant.id !== actor.tenant.id)
    throw new AppError('FORBIDDEN', 'This document belongs to another tenant');
  return doc;
}

/** `GET /api/documents/:id` (a web capture with its screenshot's presigned URL). */
export async function getDocument(
  em: EntityManager,
  storage: ObjectStorage,
  actor: Actor,
  id: string,
): Promise<DocumentDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  return toDocumentDto(doc, await screenshotUrl(storage, doc));
}

/** @throws AppError GONE when the document was deleted under the LGPD (spec, States and transitions). */
export function assertNotDeleted(doc: DocumentEntity): void {
  if (doc.deletedAt)
    throw new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');
}

function storageKeyOf(doc: DocumentEntity): string {
  if (!doc.storageKey) throw new AppError('NOT_FOUND', 'This record has no stored file');
  return doc.storageKey;
}

/**
 * A presigned URL to a document's stored file, valid `expiresInSeconds`. `download`: an attachment with the
 * neutral type `application/octet-stream`. `view`: PDF, PNG, JPEG, GIF, WebP and plain text inline with their
 * real type, anything else (SVG and HTML included) as an attachment (spec, Documents: rules 3 and 4). Used by
 * the owner's routes and by share accesses alike.
 * @throws AppError GONE when LGPD-deleted, NOT_FOUND for a reference-only record (no stored file).
 */
export async function presignDocumentFile(
  storage: ObjectStorage,
  doc: DocumentEntity,
  mode: 'download' | 'view',
  expiresInSeconds: number,
): Promise<{ url: string; inline: boolean }> {
  assertNotDeleted(doc);
  const inline = mode === 'view' && INLINE_MIME_TYPES.has(doc.mimeType);
  const url = await storage.presignGet(storageKeyOf(doc), {
    expiresInSeconds,
    contentType: inline
      ? doc.mimeType === 'text/plain'
        ? 'text/plain; charset=utf-8'
        : doc.mimeType
      : 'application/octet-stream',
    disposition: inline ? 'inline' : 'attachment',
    fileName: doc.fileName,
  });
  return { url, inline };
}

/** The CID of an IPFS import (`sourceUri` `ipfs://<cid>`), else undefined. */
export function ipfsCidOf(doc: DocumentEntity): string | undefined {
  const prefix = 'ipfs://';
  return doc.sourceType === 'ipfs' && doc.sourceUri?.startsWith(prefix)
    ? doc.sourceUri.slice(prefix.length)
    : undefined;
}

/** Where documents' bytes are: object storage, or IPFS for reference-only imports. */
export interface DocumentFiles {
  storage: ObjectStorage;
  ipfs: Pick<IpfsGateways, 'publicUrl'>;
}

/**
 * As `presignDocumentFile`, and for an IPFS import (no stored file) the public gateway URL of its CID
 * (spec, Documents: rule 3, "IPFS imports resolve to a gateway URL"), for the owner's routes and share accesses
 * alike: `<IPFS_PUBLIC_GATEWAY>/ipfs/<cid>?filename=`,
 * with `&download=true` for a download and for a view of a type not served inline (the gateway then answers
 * as an attachment; it chooses the Content-Type itself). Such a URL does not expire.
 * @throws AppError GONE when LGPD-deleted (the bytes stay on IPFS, but the service no longer links them).
 */
export async function documentFileUrl(
  files: DocumentFiles,
  doc: DocumentEntity,
  mode: 'download' | 'view',
  expiresInSeconds: number,
): Promise<{ url: string; inline: boolean }> {
  const cid = ipfsCidOf(doc);
  if (cid === undefined || doc.storageKey) {
    return presignDocumentFile(files.storage, doc, mode, expiresInSeconds);
  }
  assertNotDeleted(doc);
  const inline = mode === 'view' && INLINE_MIME_TYPES.has(doc.mimeType);
  return { url: files.ipfs.publicUrl(cid, { fileName: doc.fileName, download: !inline }), inline };
}

/**
 * `GET /api/documents/:id/download` (spec, Documents: rule 3): a URL valid 300 s serving the bytes as an
 * attachment with the neutral type `application/octet-stream`; for an IPFS import the public gateway's URL
 * (`documentFileUrl`).
 * @throws AppError GONE when LGPD-deleted.
 */
export async function presignDownload(
  em: EntityManager,
  files: DocumentFiles,
  actor: Actor,
  id: string,
): Promise<DownloadDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  const { url } = await documentFileUrl(files, doc, 'download', LIMITS.downloadUrlSeconds);
  return { downloadUrl: url, sha256: doc.sha256Hash, expiresInSeconds: LIMITS.downloadUrlSeconds };
}

/**
 * `GET /api/documents/:id/view` (spec, Documents: rule 4): valid 300 s; PDF, PNG, JPEG, GIF, WebP and plain
 * text inline with their real type, anything else (SVG and HTML included) as an attachment; for an IPFS
 * import the public gateway's URL (`documentFileUrl`).
 * @throws AppError GONE when LGPD-deleted.
 */
export async function presignView(
  em: EntityManager,
  files: DocumentFiles,
  actor: Actor,
  id: string,
): Promise<ViewDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  const { url, inline } = await documentFileUrl(files, doc, 'view', LIMITS.viewUrlSeconds);
  return { viewUrl: url, inline, expiresInSeconds: LIMITS.viewUrlSeconds };
}

/** `GET /api/documents/:id/verify?hash=`: compares a hash with the stored one (case-insensitive hex). */
export async function compareHash(
  em: EntityManager,
  actor: Actor,
  id: string,
  providedHash: string,
): Promise<HashComparisonDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  return {
    documentId: doc.id,
    serialNumber: doc.serialNumber,
    hashMatches: doc.sha256Hash === providedHash.toLowerCase(),
    storedHash: doc.sha256Hash,
    providedHash,
  };
}

/**
 * `GET /api/public/verify?hash=`: the earliest record of this hash in any tenant (LGPD-deleted records
 * included: their hash stays on record, spec item 8).
 */
export async function verifyByHash(em: EntityManager, sha256Hash: string): Promise<VerifyByHashDto> {
  const doc = await em.findOne(Document, { sha256Hash }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return doc ? { found: true, document: toPublicDto(doc) } : { found: false };
}

/**
 * `verifyByHash` through the public verify cache: a positive answer from memory for up to 60 s (spec, Limits:
 * dropped on every instance when its document is LGPD-deleted), a negative one always from the database, so a
 * fresh upload is never hidden. What both faces of `GET /api/public/verify` answer: the `public.verify`
 * procedure (tRPC, REST binder) and the HTTP fast route (`http/public-verify.ts`). `em` is called on a miss only.
 */
export function verifyByHashCached(
  cache: PublicVerifyCache,
  em: () => EntityManager,
  sha256Hash: string,
): Promise<VerifyByHashDto> {
  return cache.get(sha256Hash, (hash) => verifyByHash(em(), hash));
}

/** `GET /api/public/documents/:serial`. @throws AppError NOT_FOUND for an unknown serial. */
export async function findBySerial(em: EntityManager, serialNumber: string): Promise<PublicDocumentDto> {
  const doc = await em.findOne(Document, { serialNumber });
  if (!doc) throw new AppError('NOT_FOUND', 'Serial number not found');
  return toPublicDto(doc);
}
