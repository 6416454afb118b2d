import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import { Document } from '../../db/entities';
import type { ObjectStorage, StoredObjectInfo } from '../../ports/storage';

/** Keys checked against the database per query while sweeping (one query per page, never one per object). */
export const SWEEP_PAGE = 500;

/**
 * Default grace period: an object younger than this is never swept. An upload's object is complete only once
 * its bytes are stored, and its row commits right after; an hour covers any pause between the two.
 */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

/**
 * Default age after which an upload that never completed is removed (S3 multipart uploads, temp files): longer
 * than the slowest upload of 250 MB a client could still be sending.
 */
export const INCOMPLETE_UPLOAD_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export interface SweepOptions {
  /** The sweep's "now" (tests move it instead of waiting). Default `new Date()`. */
  now?: Date;
  /** Objects completed less than this many ms before `now` are kept. Default {@link ORPHAN_GRACE_MS}. */
  graceMs?: number;
  /** Incomplete uploads started more than this many ms before `now` are removed. Default 24 h. */
  incompleteMaxAgeMs?: number;
  /** Listed objects checked against the database per query, 1 to 5000. Default {@link SWEEP_PAGE}. */
  pageSize?: number;
}

/** Keys of removed objects a report names at most (the count is exact): bounds the report's memory. */
export const SWEEP_REPORT_KEYS = 1000;

export interface SweepReport {
  /** Objects looked at. */
  scanned: number;
  /** Objects removed: older than the grace period, referenced by no live document. */
  removedCount: number;
  /** The first {@link SWEEP_REPORT_KEYS} keys removed, in listing order. */
  removed: string[];
  /** Objects without a live document kept because they are younger than the grace period. */
  young: number;
  /** Incomplete uploads removed (S3 multipart uploads, temp files of crashed puts). */
  incompleteUploads: number;
  /** Database queries made: one per page of listed objects. */
  queries: number;
}

/** Object deletions in flight at once within a page (S3 round trips dominate the sweep's time). */
const DELETE_CONCURRENCY = 8;

/**
 * Removes stored objects that no live Document references: bytes stored by a process that died before its row
 * committed, or left by a deletion interrupted between the row and the storage (docs/deployment.md, Storage quota and
 * orphaned objects). A key is referenced when a Document row not yet deleted has it as `storageKey` or `screenshotKey`;
 * rows deleted under LGPD reference nothing, so a deletion cut short is completed here. Safe to run on several
 * instances at once (deletes are idempotent) and while uploads go on (the grace period; see {@link ORPHAN_GRACE_MS}).
 *
 * Cost stays flat as the store grows: objects are streamed from the storage (`listObjects`: S3 pages,
 * directories read in chunks), and each page of `pageSize` keys is checked in one query through the partial
 * indexes on `document.storage_key` and `screenshot_key` (one probe per key); memory holds one page.
 * @throws AppError('BAD_GATEWAY') when the object storage fails to list; already removed keys stay removed.
 */
export async function sweepOrphanedObjects(
  em: EntityManager,
  storage: ObjectStorage,
  options: SweepOptions = {},
): Promise<SweepReport> {
  const now = options.now ?? new Date();
  const cutoff = now.getTime() - (options.graceMs ?? ORPHAN_GRACE_MS);
  const pageSize = options.pageSize ?? SWEEP_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 5000) {
    throw new AppError('BAD_REQUEST', 'The sweep page size must be 1 to 5000 objects');
  }
  const report: SweepReport = {
    scanned: 0,
    removedCount: 0,
    removed: [],
    young: 0,
    incompleteUploads: 0,
    queries: 0,
  };
  let page: StoredObjectInfo[] = [];
  const flush = async () => {
    const keys = page.map((o) => o.key);
    report.queries++;
    const rows = await em
      .fork()
      .find(
        Document,
        { deletedAt: null, $or: [{ storageKey: { $in: keys } }, { screenshotKey: { $in: keys } }] },
        { fields: ['storageKey', 'screenshotKey'], disableIdentityMap: true },
      );
    const live = new Set(rows.flatMap((r) => [r.storageKey, r.screenshotKey]));
    const orphans: string[] = [];
    for (const o of page) {
      if (live.has(o.key)) continue;
      if (o.lastModified.getTime() > cutoff) report.young++;
      else orphans.push(o.key);
    }
    let next = 0;
    const worker = async () => {
      while (next < orphans.length) {
        const key = orphans[next++] as string;
        await storage.delete(key);
        report.removedCount++;
        if (report.removed.length < SWEEP_REPORT_KEYS) report.removed.push(key);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, orphans.length) }, worker));
    page = [];
  };
  for await (const o of storage.listObjects()) {
    report.scanned++;
    page.push(o);
    if (page.length >= pageSize) await flush();
  }
  if (page.length) await flush();
  report.incompleteUploads = await storage.removeIncompleteUploads(
    new Date(now.getTime() - (options.incompleteMaxAgeMs ?? INCOMPLETE_UPLOAD_MAX_AGE_MS)),
  );
  return report;
}
