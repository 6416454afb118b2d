import { type EntityManager, type FilterQuery, raw } from '@mikro-orm/core';
import {
  AppError,
  DOCUMENT_HASH_PREFIX_MIN_LENGTH,
  DOCUMENT_LIST_DEFAULT_LIMIT,
  type DocumentListDto,
  UUID_PATTERN,
} from '@notary/shared';
import { Document, type DocumentEntity } from '../../db/entities';
import type { ObjectStorage } from '../../ports/storage';
import type { Actor } from '../tenancy/actor';
import { screenshotUrl, toDocumentDto } from './projection';

/** What `GET /api/documents` was asked (docs/api.md, Documents list); each part optional. */
export interface DocumentListRequest {
  /** Page size, 1 to 100 (validated by the procedure); `DOCUMENT_LIST_DEFAULT_LIMIT` when absent. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  /** Search text, trimmed, at least 3 characters (validated by the procedure). */
  q?: string;
}

const CURSOR_VERSION = 'd1:';

/**
 * The opaque cursor after `doc`: base64url of `d1:<id>`. The keyset is `(createdAt desc, id desc)`; the cursor
 * names the last row and the next page's query reads that row's `(created_at, id)` in SQL, so the position
 * keeps the database's microseconds (a JavaScript `Date` holds milliseconds and would skip or repeat rows).
 */
export function encodeDocumentCursor(doc: Pick<DocumentEntity, 'id'>): string {
  return Buffer.from(`${CURSOR_VERSION}${doc.id}`).toString('base64url');
}

/**
 * The document id a cursor of `encodeDocumentCursor` names.
 * @throws AppError BAD_REQUEST (`fields: ['cursor']`) for anything else.
 */
export function decodeDocumentCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = text.startsWith(CURSOR_VERSION) ? text.slice(CURSOR_VERSION.length) : '';
  if (!UUID_PATTERN.test(id)) {
    throw new AppError('BAD_REQUEST', 'cursor is not a nextCursor of this list', { fields: ['cursor'] });
  }
  return id.toLowerCase();
}

/** `s` with LIKE's wildcards (`%`, `_`) and its escape (`\`) taken literally. */
function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A serial number or its beginning: the tenant prefix, the hyphen, then up to the 10 code characters. */
const SERIAL_PREFIX = /^[A-Z0-9]{2,12}-[0-9A-Z]{0,10}$/;
const HEX = new RegExp(`^[0-9a-f]{${DOCUMENT_HASH_PREFIX_MIN_LENGTH},64}$`);
/** What an IPFS CID can start with: v0 is base58btc (`Qm…`), v1 base32 (`bafy…`) among others. */
const CID_PREFIX = /^[A-Za-z0-9]{8,100}$/;

/** Where the MNE's separators stand among its 24 digits: `CCCCCC.AAAA.MM.DD.NNNNNNNN-DD`. */
const MNE_SEPARATORS: Readonly<Record<number, string>> = { 6: '.', 10: '.', 12: '.', 14: '.', 22: '-' };

/**
 * The beginning of a canonical MNE that `q` names, or null: digits with or without the MNE's separators, at
 * least the serventia's CNS (6 digits), at most the 24 (`104067`, `104067.2025.10`, `10406720251013000060`).
 */
export function mneSearchPrefix(q: string): string | null {
  if (!/^[0-9.-]+$/.test(q)) return null;
  const digits = q.replace(/[.-]/g, '');
  if (digits.length < 6 || digits.length > 24) return null;
  let prefix = '';
  for (const [i, digit] of [...digits].entries()) prefix += `${MNE_SEPARATORS[i] ?? ''}${digit}`;
  return prefix;
}

/** A selo code or its beginning: the characters selo codes are written with (`SELO_CODE_PATTERN`). */
const SELO_PREFIX = /^[A-Za-z0-9./ -]{3,64}$/;

/**
 * The arm of the documents whose notarial act matches `q`: its MNE begins with `mneSearchPrefix(q)`, or its
 * selo code with `q` as typed or in upper case. The matching acts are read first through their own indexes
 * (`notarial_act_mne_pattern_index`, `notarial_act_selo_code_pattern_index`, Migration20261129080000) into an
 * array, which the document query then probes through its primary key, so this arm joins the others' BitmapOr.
 */
function actArm(q: string, tenantId: string): FilterQuery<DocumentEntity> | null {
  const conditions: string[] = [];
  const params: string[] = [tenantId];
  const mne = mneSearchPrefix(q);
  if (mne !== null) {
    conditions.push('a.mne like ?');
    params.push(`${escapeLike(mne)}%`);
  }
  if (SELO_PREFIX.test(q)) {
    for (const code of new Set([q, q.toUpperCase()])) {
      conditions.push('a.selo_code like ?');
      params.push(`${escapeLike(code)}%`);
    }
  }
  if (conditions.length === 0) return null;
  return {
    [raw(
      (alias) =>
        `${alias}.id = any(array(select a.document_id from notarial_act a where a.tenant_id = ? and (${conditions.join(' or ')})))`,
      params,
    )]: [],
  };
}

/**
 * The search forms `q` can take, each served by its own index (Migration20261126170100), joined by OR so
 * PostgreSQL combines the index scans (BitmapOr) and sorts only the matches:
 * - a serial number or its beginning, any case (`ACME-7K2`), when `q` has the tenant prefix and the hyphen;
 * - a SHA-256 prefix, 8 to 64 hex characters, any case;
 * - the beginning of an IPFS import's CID, 8 or more letters and digits (CIDs are case-sensitive);
 * - any part of the file name, any case (trigrams: why `q` has at least 3 characters);
 * - the document's notarial act: the beginning of its MNE (at least the CNS, dotted or bare) or of its selo
 *   code (`actArm`).
 */
function searchArms(q: string, tenantId: string): FilterQuery<DocumentEntity>[] {
  const arms: FilterQuery<DocumentEntity>[] = [{ fileName: { $ilike: `%${escapeLike(q)}%` } }];
  const upper = q.toUpperCase();
  if (SERIAL_PREFIX.test(upper)) arms.push({ serialNumber: { $like: `${upper}%` } });
  const lower = q.toLowerCase();
  if (HEX.test(lower)) arms.push({ sha256Hash: { $like: `${lower}%` } });
  if (CID_PREFIX.test(q)) arms.push({ sourceType: 'ipfs', sourceUri: { $like: `ipfs://${q}%` } });
  const act = actArm(q, tenantId);
  if (act) arms.push(act);
  return arms;
}

/**
 * `GET /api/documents` (spec, Documents: see also docs/api.md, Documents list): one page of the tenant's non-deleted
 * documents, newest first (`createdAt desc, id desc`), at most `limit` (default 100), after `cursor`, matching
 * `q` when given; `nextCursor` names the page's last document when more follow, else null. Reads `limit + 1`
 * rows through the `(tenant_id, created_at, id)` index (or the search indexes) and presigns only the page's
 * web capture screenshots, so a call costs the same whatever the archive's size. `em` must be scoped to the
 * actor's tenant (`scopeToTenant`); the tenant is also named here.
 * @throws AppError BAD_REQUEST for a malformed cursor.
 */
export async function listDocumentsPage(
  em: EntityManager,
  storage: ObjectStorage,
  actor: Actor,
  request: DocumentListRequest = {},
): Promise<DocumentListDto> {
  const limit = request.limit ?? DOCUMENT_LIST_DEFAULT_LIMIT;
  const tenantId = actor.tenant.id;
  const where: FilterQuery<DocumentEntity> = { tenant: tenantId, deletedAt: null };
  if (request.cursor !== undefined) {
    const after = decodeDocumentCursor(request.cursor);
    // Row comparison against the cursor row's own values: an index condition of the backward index scan. A
    // cursor naming a row outside the tenant (or none) compares with nulls: an empty page, nothing revealed.
    Object.assign(where, {
      [raw(
        (alias) =>
          `(${alias}.created_at, ${alias}.id) < (select c.created_at, c.id from document c where c.id = ? and c.tenant_id = ?)`,
        [after, tenantId],
      )]: [],
    });
  }
  if (request.q) where.$or = searchArms(request.q, tenantId);
  const rows = await em.find(Document, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    documents: await Promise.all(page.map(async (d) => toDocumentDto(d, await screenshotUrl(storage, d)))),
    nextCursor: rows.length > limit && last ? encodeDocumentCursor(last) : null,
  };
}
