import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/core';
import { type Log, silentLog } from '@notary/platform/log';
import { type StageTimes, timed } from '@notary/platform/stage-times';
import { AppError, LIMITS } from '@notary/shared';
import type { DocumentEntity } from '../../db/entities';
import type { ServiceActivity } from '../../ports/activity';
import type { AnchoringQueue } from '../../ports/anchoring-queue';
import type { FreeSpace } from '../../ports/free-space';
import type { ObjectStorage } from '../../ports/storage';
import type { LogAppender } from '../log/transparency-log';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { assertDiskRoom, diskFloorGate } from './disk-floor';
import { cleanFileName } from './file-name';
import { hashStream, type IngestResult, ingestStream } from './ingest';
import { detectMimeType } from './mime';
import { assertStorageRoom } from './quota';
import { recordUploadedDocument } from './service';
import type { PublicVerifyCache } from './verify-cache';

/** The file of an intake, handed over by the face as its bytes start. */
export interface IntakeFile {
  /** The file's bytes; consumed from the moment it is handed over. */
  stream: Readable;
  /** The name the client gave, as sent (cleaned here: last path segment, no control characters). */
  fileName: string | undefined;
  /** The media type the client declared; never trusted (the bytes decide), kept as a hint for text. */
  declaredType: string | undefined;
  /**
   * The file's size in bytes as the source knows it before reading (an IPFS file's UnixFS root), when it
   * does: past the limit the stream is destroyed unread (413 as soon as known).
   */
  size?: number;
}

/** What came with the file. */
export interface IntakeFields {
  /** When the person consented to the processing (LGPD Art. 7 I); undefined when they did not. */
  consentAt: Date | undefined;
}

/**
 * How a face hands an intake over (a multipart upload, a fetched IPFS file, a capture's WACZ), so that
 * `notarize` decides when bytes may be read without knowing the transport.
 */
export interface IntakeSource {
  /**
   * Called once the actor may notarize, before any byte is read: checks the framing the face expects
   * (@throws AppError BAD_REQUEST) and returns the file size announced up front in bytes (e.g. Content-Length
   * less the multipart framing), or undefined when nothing was announced.
   */
  announce(): number | undefined;
  /**
   * Reads the whole intake. Calls `onFile` at most once, as the file's bytes start (`onFile` consumes the
   * stream at once). Resolves once everything was read, with the fields. Rejects with AppError BAD_REQUEST
   * for malformed input, with the source's own AppError when it cannot deliver the file (an IPFS gateway
   * failure: BAD_GATEWAY), with another error when the client went away.
   */
  read(onFile: (file: IntakeFile) => void): Promise<IntakeFields>;
}

/**
 * One way in. `stored`: the bytes are kept in object storage, an upload (and a web capture's WACZ, whose screenshot the
 * capture stored beforehand under `screenshotKey`). `reference`: the bytes are streamed and hashed but not kept (IPFS
 * import: the CID is the contract; `sourceUri` is `ipfs://<cid>`).
 */
export type Intake =
  | {
      kind: 'stored';
      source: IntakeSource;
      origin:
        | { sourceType: 'upload' }
        | { sourceType: 'web-capture'; sourceUri: string; screenshotKey: string };
    }
  | { kind: 'reference'; source: IntakeSource; sourceType: 'ipfs'; sourceUri: string };

/** What `notarize` uses of the service (a subset of `AppDeps`). */
export interface NotarizeDeps {
  storage: ObjectStorage;
  anchoringQueue: AnchoringQueue;
  /**
   * `tenantStorageQuotaBytes`: bytes a tenant may keep in storage (`TENANT_STORAGE_QUOTA_BYTES`, 0: none);
   * `diskFreeFloorBytes`: free bytes the service's volumes keep (`DISK_FREE_FLOOR_BYTES`, 0: no guard).
   */
  config: { tenantStorageQuotaBytes: number; diskFreeFloorBytes: number };
  /** Free space of the volumes intakes write to (the disk guard, `disk-floor.ts`). */
  freeSpace: FreeSpace;
  /** Where a failed removal is reported (the upload's request logger; default: nowhere). */
  log?: Log;
  /** The public verify cache, told of each new document (an unknown-hash answer for it must go). */
  verifyCache?: PublicVerifyCache;
  /** The transparency log, which gets each record's leaf in its transaction; absent: no leaf (unit tests). */
  transparencyLog?: LogAppender;
  /**
   * Wall time per stage of a stored intake, for `Server-Timing` (absent: nothing measured): `disk-floor`,
   * `quota` (the early check), `body` (first byte read to last byte stored: parsing, hashing and writing at
   * the client's pace), within it `hash` (SHA-256 alone) and `store-tail` (last byte hashed to object stored:
   * flush, fsync, rename), then `media-type` and `record` (the row's transaction), within it `tlog`,
   * `anchoring-enqueue`, `quota-charge` and `commit`.
   */
  stages?: StageTimes | undefined;
  /** Where each committed record is counted for the operator (`/metrics`); absent: not counted. */
  activity?: Pick<ServiceActivity, 'documentNotarized'>;
}

/**
 * `doc` is committed: it is counted (`activity`), and the public verify caches drop what they said of its hash
 * (`PublicVerifyCache`).
 */
function published(deps: NotarizeDeps, doc: DocumentEntity): DocumentEntity {
  deps.activity?.documentNotarized(doc.sourceType);
  try {
    deps.verifyCache?.invalidate(doc.sha256Hash);
  } catch (e) {
    // The row is committed whatever the cache does: its unknown-hash answer expires within seconds.
    (deps.log ?? silentLog).error({ err: e }, 'verification cache invalidation failed');
  }
  return doc;
}

/**
 * The one notarization path every intake goes through (upload, IPFS import, web capture), so each rule is written once
 * and none is skipped: the role table (`upload`), the announced size, the service's free disk (`disk-floor.ts`) and the
 * tenant's storage quota before any byte is read, the bytes streamed into storage while SHA-256 is computed (memory
 * flat; past 250 MB or past what the quota has left the object is removed and 413 answered once the intake is read;
 * into file storage, a file that would take the volume below `DISK_FREE_FLOOR_BYTES` is removed and 507 answered),
 * consent, the real media type, then the Document row and its anchoring job in one transaction. No object outlives a
 * failure: whatever the intake brought is removed when no row results. A `reference` intake goes the same way without
 * storage: its bytes are hashed and dropped (Rule 1), its record has no storage key and costs no quota, and 413 comes
 * as soon as the source's declared size or the bytes pass 250 MB (the rest is never read).
 * @returns the new Document (status `pending` on both chains).
 * @throws AppError FORBIDDEN below editor in an organization; BAD_REQUEST malformed intake, missing file or
 *   consent; PAYLOAD_TOO_LARGE past 250 MB or the quota; INSUFFICIENT_STORAGE (507) below the disk floor; the
 *   source's error when it cannot deliver the file (BAD_GATEWAY from an IPFS gateway) or the client went away.
 */
export async function notarize(
  em: EntityManager,
  deps: NotarizeDeps,
  actor: Actor,
  intake: Intake,
): Promise<DocumentEntity> {
  // Objects the intake brought along (a capture's screenshot) go the way of the file.
  const brought =
    intake.kind === 'stored' && intake.origin.sourceType === 'web-capture'
      ? [intake.origin.screenshotKey]
      : [];
  // The key of the complete object once the bytes are in.
  let stored: string | undefined;
  try {
    requirePermission(actor, 'upload', 'upload documents to this organization');
    if (intake.kind === 'reference') return published(deps, await notarizeReference(em, deps, actor, intake));
    const announced = intake.source.announce();
    if (announced !== undefined && announced > LIMITS.maxUploadBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', 'The file exceeds the 250 MB limit');
    }
    // The disk as a whole, whatever the quota: below the floor nothing new comes in (507).
    const { stages } = deps;
    await timed(stages, 'disk-floor', () => assertDiskRoom(deps, ['data'], announced ?? 0));
    const quotaBytes = deps.config.tenantStorageQuotaBytes;
    // Early 413 when the quota is already full or the announced file cannot fit; the exact check runs again
    // under a lock when the row is written (concurrent uploads).
    const room = await timed(stages, 'quota', () =>
      assertStorageRoom(em, actor.tenant.id, quotaBytes, Math.max(1, announced ?? 0)),
    );
    const key = `${actor.tenant.id}/${randomUUID()}`;
    const received = await timed(stages, 'body', () =>
      receive(deps, intake.source, key, Math.min(LIMITS.maxUploadBytes, room)),
    );
    if (!received.file)
      throw new AppError('BAD_REQUEST', 'Missing file: send it in the multipart field `file`');
    stored = key;
    const { fileName, declaredType, result } = received.file;
    const consentAt = received.fields.consentAt;
    if (!consentAt) {
      throw new AppError('BAD_REQUEST', 'Consent is required (LGPD Art. 7 I): send the field `consent=true`');
    }
    const mimeType = await timed(stages, 'media-type', () =>
      detectMimeType(result.head, declaredType, fileName),
    );
    const origin = intake.origin;
    const record = () =>
      recordUploadedDocument(
        em,
        actor,
        {
          storageKey: key,
          fileName,
          fileSize: result.size,
          mimeType,
          sha256Hash: result.sha256Hash,
          consentTimestamp: consentAt,
          sourceType: origin.sourceType,
          ...(origin.sourceType === 'web-capture'
            ? { sourceUri: origin.sourceUri, screenshotKey: origin.screenshotKey }
            : {}),
        },
        { anchoring: deps.anchoringQueue, quotaBytes, log: deps.transparencyLog, stages },
      );
    const doc = await timed(stages, 'record', record);
    return published(deps, doc);
  } catch (e) {
    // No object without its row.
    for (const key of stored ? [stored, ...brought] : brought) {
      await removeQuietly(deps.storage, key, deps.log ?? silentLog);
    }
    throw e;
  }
}

/**
 * The `reference` intake of `notarize`, after the role check: framing, the announced size, the bytes hashed
 * and dropped (`hashIntake`), consent, the media type from the content's head, then the row (no storage
 * key, so no quota) and its anchoring job in one transaction. Nothing is recorded unless the source delivered
 * the whole file.
 */
async function notarizeReference(
  em: EntityManager,
  deps: NotarizeDeps,
  actor: Actor,
  intake: Extract<Intake, { kind: 'reference' }>,
): Promise<DocumentEntity> {
  const announced = intake.source.announce();
  if (announced !== undefined && announced > LIMITS.maxUploadBytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', 'The file exceeds the 250 MB limit');
  }
  // Only a row is written, but into the same database: below the floor nothing new comes in (507).
  await assertDiskRoom(deps, ['data']);
  const received = await hashIntake(intake.source, LIMITS.maxUploadBytes);
  if (!received.file) throw new AppError('BAD_REQUEST', 'Missing file: the source delivered none');
  const consentAt = received.fields.consentAt;
  if (!consentAt) {
    throw new AppError('BAD_REQUEST', 'Consent is required (LGPD Art. 7 I): send `consent: true`');
  }
  const { fileName, declaredType, result } = received.file;
  return recordUploadedDocument(
    em,
    actor,
    {
      storageKey: null,
      fileName,
      fileSize: result.size,
      mimeType: await detectMimeType(result.head, declaredType, fileName),
      sha256Hash: result.sha256Hash,
      consentTimestamp: consentAt,
      sourceType: intake.sourceType,
      sourceUri: intake.sourceUri,
    },
    { anchoring: deps.anchoringQueue, log: deps.transparencyLog },
  );
}

/**
 * Reads `source`, hashing its file without keeping it. Resolves once the source delivered the whole file.
 * Rejects with PAYLOAD_TOO_LARGE as soon as the file's declared size, or its bytes, pass `maxBytes` (the
 * stream is destroyed: the rest is never fetched), else with the source's error.
 */
async function hashIntake(source: IntakeSource, maxBytes: number): Promise<Received> {
  const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'The file exceeds the 250 MB limit');
  let refused: AppError | undefined;
  let hashing: Promise<NonNullable<Received['file']>> | undefined;
  let fields: IntakeFields;
  try {
    fields = await source.read((file) => {
      if (hashing || refused) {
        file.stream.resume();
        return;
      }
      if (file.size !== undefined && file.size > maxBytes) {
        refused = tooLarge();
        file.stream.destroy(refused);
        return;
      }
      const fileName = cleanFileName(file.fileName);
      hashing = hashStream(file.stream, {
        maxBytes,
        tooLarge: () => {
          refused = tooLarge();
          return refused;
        },
      }).then((result) => ({ fileName, declaredType: file.declaredType, result }));
      hashing.catch(() => undefined);
    });
  } catch (e) {
    // The source fails with whatever stopped its stream; ours (413) is the reason when we stopped it.
    throw refused ?? e;
  }
  if (refused) throw refused;
  if (!hashing) return { fields, file: undefined };
  try {
    return { fields, file: await hashing };
  } catch (e) {
    throw refused ?? e;
  }
}

/** Removes `key`; a failure is logged (the orphan sweep removes what is left), never thrown over the cause. */
async function removeQuietly(storage: ObjectStorage, key: string, log: Log): Promise<void> {
  await storage
    .delete(key)
    .catch((err: unknown) => log.error({ key, err }, 'could not remove a stored object'));
}

interface Received {
  fields: IntakeFields;
  file: { fileName: string; declaredType: string | undefined; result: IngestResult } | undefined;
}

/**
 * Reads `source`, streaming its file into storage under `key` while hashing it. Resolves once the whole
 * intake is read and the object is stored. Rejects, with the object removed, with PAYLOAD_TOO_LARGE past
 * `maxBytes` and INSUFFICIENT_STORAGE when file storage's volume would fall below the disk floor (after the
 * intake was read to its end, so the client sees the answer), with the source's error when it fails
 * (malformed, client gone).
 */
async function receive(
  deps: NotarizeDeps,
  source: IntakeSource,
  key: string,
  maxBytes: number,
): Promise<Received> {
  const tooLargeError = () =>
    maxBytes < LIMITS.maxUploadBytes
      ? new AppError(
          'PAYLOAD_TOO_LARGE',
          `The file does not fit in this workspace's storage quota (${maxBytes} bytes left)`,
        )
      : new AppError('PAYLOAD_TOO_LARGE', 'The file exceeds the 250 MB limit');
  const { storage, log } = deps;
  // Files kept on this machine's disk are watched as they grow; S3 keeps them elsewhere.
  const gate = storage.kind === 'fs' ? diskFloorGate(deps, 'data') : undefined;
  const abort = new AbortController();
  let tooLarge = false;
  let ingest: Promise<NonNullable<Received['file']>> | undefined;
  let fields: IntakeFields;
  try {
    fields = await source.read((file) => {
      if (ingest) {
        file.stream.resume();
        return;
      }
      const fileName = cleanFileName(file.fileName);
      ingest = ingestStream(storage, key, file.stream, {
        signal: abort.signal,
        maxBytes,
        gate,
        stages: deps.stages,
        tooLarge: () => {
          tooLarge = true;
          return tooLargeError();
        },
      }).then((result) => ({ fileName, declaredType: file.declaredType, result }));
      ingest.catch(() => undefined);
    });
  } catch (e) {
    abort.abort(e);
    // Wait for the storage adapter to finish removing what it wrote before answering; an object stored in
    // full before the failure is removed here.
    const complete = await ingest?.then(
      () => true,
      () => false,
    );
    if (complete) await removeQuietly(storage, key, log ?? silentLog);
    throw e;
  }
  if (!ingest) return { fields, file: undefined };
  try {
    return { fields, file: await ingest };
  } catch (e) {
    throw tooLarge ? tooLargeError() : e;
  }
}
