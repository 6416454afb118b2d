import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import {
  AppError,
  type NotarialActDto,
  type NotarialActType,
  type PublicDocumentDto,
  parseMne,
  type Selo,
  type Uf,
} from '@notary/shared';
import {
  type DocumentEntity,
  NotarialAct,
  type NotarialActEntity,
  NotarialActHistory,
  type NotarialActSnapshot,
} from '../../db/entities';
import { assertNotDeleted, findBySerial, findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { TENANT_FILTER } from '../tenancy/scope';

/**
 * A document's notarial act (`@notary/shared` notarial-act.ts; docs/api.md, Notarial acts): the service proves,
 * the tabelião acts, so the act is its own row beside the document, so that recording, changing or removing it never touches the
 * document's hash, serial or anchors; each change leaves a `notarial_act_history` row in its transaction.
 */

/** What `PUT /api/documents/{id}/act` carries once its schema has read it (`NotarialActInputSchema`). */
export interface ActRequest {
  type: NotarialActType;
  /** As typed, dotted or bare; checked here (`parseMne`). Absent, null or blank: none. */
  mne?: string | null | undefined;
  selo?: Selo | null | undefined;
  /** Trimmed by the schema; blank: none. */
  book?: string | null | undefined;
  page?: string | null | undefined;
}

/** Clock of the record (tests inject one); default `new Date()`. */
export interface ActClock {
  now?: () => Date;
}

const WHAT = "record this organization's notarial acts";
const MNE_TAKEN = 'This MNE is already recorded for another document';

/** The canonical MNE of `text`, null when absent or blank. @throws AppError BAD_REQUEST naming the problem. */
function canonicalMne(text: string | null | undefined): string | null {
  if (text === undefined || text === null || text.trim() === '') return null;
  const parsed = parseMne(text);
  if (!parsed.ok) throw new AppError('BAD_REQUEST', `mne: ${parsed.problem}`, { fields: ['mne'] });
  return parsed.mne;
}

/** What a history row keeps of `act`. */
export function actSnapshot(act: NotarialActEntity): NotarialActSnapshot {
  return {
    type: act.type,
    mne: act.mne ?? null,
    selo: act.seloState && act.seloCode ? { state: act.seloState, code: act.seloCode } : null,
    book: act.book ?? null,
    page: act.page ?? null,
  };
}

/** The act as its tenant's members read it. */
export function toActDto(act: NotarialActEntity, documentId: string): NotarialActDto {
  const { type, mne, selo, book, page } = actSnapshot(act);
  return {
    documentId,
    type,
    mne,
    // The state was checked against the 27 UFs when written.
    selo: selo ? { state: selo.state as Uf, code: selo.code } : null,
    book,
    page,
    recordedBy: act.recordedBy,
    recordedAt: act.recordedAt.toISOString(),
    updatedAt: act.updatedAt.toISOString(),
  };
}

/** The act of document `documentId`, or null (through `em`'s scope). */
export function findActOf(em: EntityManager, documentId: string): Promise<NotarialActEntity | null> {
  return em.findOne(NotarialAct, { document: documentId });
}

/**
 * Locks the document's row against other act changes and an LGPD deletion until the transaction ends (`for no
 * key update`: anchoring's key-share locks are not blocked), and reads whether it was deleted meanwhile.
 * @throws AppError GONE when the document was deleted under the LGPD, NOT_FOUND when its row is gone.
 */
async function lockLiveDocument(tx: EntityManager, doc: DocumentEntity): Promise<void> {
  const rows: { deleted: boolean }[] = await (tx as SqlEntityManager).execute(
    'select deleted_at is not null as deleted from document where id = ?::uuid for no key update',
    [doc.id],
  );
  const row = rows[0];
  if (!row) throw new AppError('NOT_FOUND', 'Document not found');
  if (row.deleted) {
    throw new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');
  }
}

/** Writes one history row of `doc`'s act. */
function writeHistory(
  tx: EntityManager,
  actor: Actor,
  doc: DocumentEntity,
  action: 'recorded' | 'changed' | 'removed',
  change: { before: NotarialActSnapshot | null; after: NotarialActSnapshot | null; at: Date },
): void {
  tx.create(NotarialActHistory, {
    id: crypto.randomUUID(),
    document: doc.id,
    tenant: doc.tenant.id,
    action,
    before: change.before,
    after: change.after,
    actorUserId: actor.userId,
    actorEmail: actor.email,
    role: actor.role,
    ip: actor.ip,
    at: change.at,
  });
}

/**
 * `PUT /api/documents/{id}/act`: records the document's notarial act, or replaces it whole (what the request
 * leaves out becomes null). Editor or higher in the document's tenant (`recordActs`). In one transaction, with
 * the document's row locked: the MNE must be held by no other document of the service, the act is written and a
 * history row (who, role, IP, when, before, after) with it; a request that changes nothing writes nothing.
 * @throws AppError NOT_FOUND / FORBIDDEN (another tenant's document, or below editor), GONE (LGPD-deleted),
 *   BAD_REQUEST (`mne: <what is wrong>`, `fields: ['mne']`), CONFLICT (the MNE is another document's).
 */
export async function recordAct(
  em: EntityManager,
  actor: Actor,
  documentId: string,
  request: ActRequest,
  clock: ActClock = {},
): Promise<NotarialActDto> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  requirePermission(actor, 'recordActs', WHAT);
  assertNotDeleted(doc);
  const mne = canonicalMne(request.mne);
  const wanted: NotarialActSnapshot = {
    type: request.type,
    mne,
    selo: request.selo ? { state: request.selo.state, code: request.selo.code } : null,
    book: request.book || null,
    page: request.page || null,
  };
  try {
    const act = await em.transactional(async (tx) => {
      await lockLiveDocument(tx, doc);
      if (mne !== null) {
        const holder = await tx.findOne(
          NotarialAct,
          { mne, document: { $ne: doc.id } },
          { filters: { [TENANT_FILTER]: false } },
        );
        if (holder) throw new AppError('CONFLICT', MNE_TAKEN, { fields: ['mne'] });
      }
      const at = clock.now?.() ?? new Date();
      const existing = await tx.findOne(NotarialAct, { document: doc.id }, { refresh: true });
      const before = existing ? actSnapshot(existing) : null;
      if (before && JSON.stringify(before) === JSON.stringify(wanted)) return existing as NotarialActEntity;
      const fields = {
        type: wanted.type,
        mne: wanted.mne,
        seloState: wanted.selo?.state ?? null,
        seloCode: wanted.selo?.code ?? null,
        book: wanted.book,
        page: wanted.page,
        updatedAt: at,
      };
      const row = existing
        ? tx.assign(existing, fields)
        : tx.create(NotarialAct, {
            id: crypto.randomUUID(),
            document: doc.id,
            tenant: doc.tenant.id,
            recordedBy: actor.userId,
            recordedAt: at,
            ...fields,
          });
      writeHistory(tx, actor, doc, existing ? 'changed' : 'recorded', { before, after: wanted, at });
      await tx.flush();
      return row;
    });
    return toActDto(act, doc.id);
  } catch (e) {
    // Two requests recording the same MNE at once: the unique index lets one through.
    if (e instanceof UniqueConstraintViolationException) {
      throw new AppError('CONFLICT', MNE_TAKEN, { fields: ['mne'], cause: e });
    }
    throw e;
  }
}

/**
 * `DELETE /api/documents/{id}/act`: removes the document's act (its history stays, with a `removed` row saying
 * who and when). Editor or higher in the document's tenant.
 * @throws AppError NOT_FOUND (no such document, or it has no act), FORBIDDEN, GONE (LGPD-deleted).
 */
export async function removeAct(
  em: EntityManager,
  actor: Actor,
  documentId: string,
  clock: ActClock = {},
): Promise<{ ok: true }> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  requirePermission(actor, 'recordActs', WHAT);
  assertNotDeleted(doc);
  await em.transactional(async (tx) => {
    await lockLiveDocument(tx, doc);
    const existing = await tx.findOne(NotarialAct, { document: doc.id }, { refresh: true });
    if (!existing) throw new AppError('NOT_FOUND', 'This document has no notarial act');
    writeHistory(tx, actor, doc, 'removed', {
      before: actSnapshot(existing),
      after: null,
      at: clock.now?.() ?? new Date(),
    });
    tx.remove(existing);
    await tx.flush();
  });
  return { ok: true };
}

/**
 * `GET /api/documents/{id}/act`: the document's act, for any member of its tenant (an LGPD-deleted document's
 * too: the act stays on record with its hash).
 * @throws AppError NOT_FOUND (no such document, or it has no act), FORBIDDEN (another tenant's document).
 */
export async function getAct(em: EntityManager, actor: Actor, documentId: string): Promise<NotarialActDto> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  const act = await findActOf(em, doc.id);
  if (!act) throw new AppError('NOT_FOUND', 'This document has no notarial act');
  return toActDto(act, doc.id);
}

/**
 * `GET /api/public/acts/{mne}`: the public projection of the document an MNE was recorded for, exactly what
 * `GET /api/public/documents/{serial}` answers (`findBySerial`): nothing of the act beyond its existence, nothing
 * of its tenant.
 * @throws AppError BAD_REQUEST (`mne: <what is wrong>`), NOT_FOUND (no document holds it).
 */
export async function findByMne(em: EntityManager, text: string): Promise<PublicDocumentDto> {
  const mne = canonicalMne(text);
  if (mne === null) throw new AppError('BAD_REQUEST', 'mne: missing', { fields: ['mne'] });
  const act = await em.findOne(
    NotarialAct,
    { mne },
    { populate: ['document'], filters: { [TENANT_FILTER]: false } },
  );
  if (!act) throw new AppError('NOT_FOUND', 'MNE not found');
  return findBySerial(em, act.document.serialNumber);
}
