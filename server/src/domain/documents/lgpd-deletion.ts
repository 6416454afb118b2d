import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, type LgpdDeletionDto } from '@notary/shared';
import { AccessPolicy, AtaRequest, DocumentDeletion } from '../../db/entities';
import type { ObjectStorage } from '../../ports/storage';
import type { AcervoFeedCache } from '../acervo/cache';
import { recordRefusal } from '../retention/audit';
import { type DestructionHold, destructionHold, holdRefusal } from '../retention/hold';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { adjustUsedBytes } from './quota';
import { assertNotDeleted, findDocumentInTenant, ipfsCidOf } from './service';
import type { PublicVerifyCache } from './verify-cache';

/** Longest `reason` kept in the audit trail, in characters (the `document_deletion.reason` column). */
export const LGPD_REASON_MAX_CHARS = 500;

/** C0 and C1 controls except tab, line feed and carriage return; lone surrogates (`\p{Cs}` in `u` mode). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here.
const REFUSED_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\p{Cs}/u;

/**
 * The deletion's `reason` as the audit trail keeps it: trimmed, `null` when absent or blank.
 * @throws AppError BAD_REQUEST over `LGPD_REASON_MAX_CHARS` characters, with a control character other than
 *   tab and line breaks (NUL included: PostgreSQL text cannot hold it), or not well-formed UTF-16 (a lone
 *   surrogate cannot be stored as UTF-8).
 */
export function lgpdDeletionReason(reason: string | undefined): string | null {
  const text = reason?.trim() ?? '';
  if (text === '') return null;
  if (text.length > LGPD_REASON_MAX_CHARS) {
    throw new AppError('BAD_REQUEST', `reason: at most ${LGPD_REASON_MAX_CHARS} characters`);
  }
  if (REFUSED_CHARACTERS.test(text)) {
    throw new AppError('BAD_REQUEST', 'reason: control characters and malformed text are not accepted');
  }
  return text;
}

/** What an LGPD deletion touches besides the database. */
export interface LgpdDeletionPorts {
  storage: ObjectStorage;
  acervoCache: AcervoFeedCache;
  /** Public verification answers (60 s): the deleted document's is dropped on every instance. */
  verifyCache: PublicVerifyCache;
  /** The current time, for the retention rule and the record (tests inject it); default `new Date()`. */
  now?: () => Date;
}

/**
 * `DELETE /api/documents/:id`: the LGPD deletion of a document (spec, What the service does: item 8; see also
 * docs/sharing.md, LGPD deletion).
 * Who: its owner (`requirePermission` with `documentOwner`): the uploader while still editor or higher, or an
 * admin or owner of the organization; in a personal workspace its user. Steps, so that a refused or failing request deletes
 * nothing and a failure half-way can be retried:
 * 1. every check first: tenant, role, not deleted already, the `reason` text (`lgpdDeletionReason`);
 * 2. one transaction: the row is locked and the retention rule asked (`destructionHold`: a notarial act, or
 *    the serventia's retention, unless the operator lifted the hold); a held document is refused with 409,
 *    the refusal written to `retention_refusal` and committed, nothing else touched; otherwise the row is
 *    marked deleted only if it was not already (it stays locked until commit, so a concurrent deletion waits
 *    and then answers 410); its storage keys, publication, curator fields and
 *    uploader IP are cleared while its hash, serial number, file name, anchors and proofs stay on record;
 *    every access policy still in force is revoked; the audit trail row (who, role, IP, when, reason) is
 *    written and flushed, so every database constraint has passed before
 * 3. the stored objects (file, screenshot; on a versioned S3 bucket every version) are destroyed, still inside
 *    the transaction: if storage fails, the transaction rolls back and the document stays as it was (a retry
 *    deletes again; deleting a missing object succeeds); last, the file's size leaves the tenant's used-bytes
 *    counter (`quota.ts`), so the quota's room comes back exactly when the deletion commits;
 * 4. after commit the acervo feed pages of the tenant and the public verification answer of the hash are
 *    invalidated on every instance.
 * Afterwards the document leaves `GET /api/documents` and the acervo feed, download, view and publish answer
 * 410, every share answers 410, and public verification by hash or serial still finds it. An IPFS import
 * (reference-only) has no stored object: its answer's `note` says its bytes stay on IPFS, out of reach.
 * @throws AppError FORBIDDEN (other tenant; not the document's owner), NOT_FOUND, GONE (already deleted),
 *   BAD_REQUEST (`reason`), CONFLICT (held under a retention rule: the message names the rule and LGPD art.
 *   16 I, `details` carries `rule`, `until`, `cns`, `legalBasis`; nothing deleted), BAD_GATEWAY (object
 *   storage failed: nothing recorded).
 */
export async function deleteDocumentUnderLgpd(
  em: EntityManager,
  deps: LgpdDeletionPorts,
  actor: Actor,
  id: string,
  reason: string | undefined,
): Promise<LgpdDeletionDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  requirePermission(actor, { documentOwner: doc }, 'delete this document under the LGPD');
  assertNotDeleted(doc);
  const reasonText = lgpdDeletionReason(reason);
  const keys = [doc.storageKey, doc.screenshotKey].filter((k): k is string => Boolean(k));
  const deletedAt = deps.now?.() ?? new Date();
  const held = await em.transactional(async (tx): Promise<DestructionHold | null> => {
    // The row lock first: an act being recorded holds a key-share lock on the row until it commits, so the
    // rule below sees it, and no act can be recorded on this row until the deletion commits.
    await (tx as SqlEntityManager).execute('select id from document where id = ?::uuid for update', [doc.id]);
    const hold = await destructionHold(tx, doc, deletedAt);
    if (hold) {
      // Committed with nothing else: the refusal stays on record.
      await recordRefusal(tx, {
        tenantId: doc.tenant.id,
        documentId: doc.id,
        action: 'lgpd_deletion',
        rule: hold.rule,
        actor: { userId: actor.userId, role: actor.role, ip: actor.ip },
        at: deletedAt,
      });
      return hold;
    }
    // `before` is the row as this transaction found it (locked, and read again once a concurrent deletion
    // commits: then it is deleted and nothing matches): whether its bytes counted towards the quota.
    const rows: { id: string; counted: boolean; file_size: string | number }[] = await (
      tx as SqlEntityManager
    ).execute(
      `with before as (
         select id, storage_key is not null as counted, file_size from document
          where id = ?::uuid and deleted_at is null
          for update
       )
       update document
          set deleted_at = ?::timestamptz, storage_key = null, screenshot_key = null, published = false,
              published_at = null, acervo_title = null, acervo_author = null, metadata = null, uploader_ip = null
         from before
        where document.id = before.id
       returning document.id, before.counted, before.file_size`,
      [doc.id, deletedAt],
    );
    const row = rows[0];
    if (!row) {
      throw new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');
    }
    await tx.nativeUpdate(AccessPolicy, { document: doc.id, revokedAt: null }, { revokedAt: deletedAt });
    // The ata draft's requester (name, CPF, qualification) is personal data kept for this document only.
    await tx.nativeDelete(AtaRequest, { document: doc.id });
    tx.create(DocumentDeletion, {
      id: crypto.randomUUID(),
      document: doc.id,
      tenant: doc.tenant.id,
      deletedBy: actor.userId,
      deletedByEmail: actor.email,
      role: actor.role,
      ip: actor.ip,
      reason: reasonText,
      deletedAt,
    });
    await tx.flush();
    for (const key of keys) await deps.storage.delete(key);
    // The room comes back with the commit, and only then; last, so the counter's row lock is held for the
    // commit alone, not for object storage.
    if (row.counted) await adjustUsedBytes(tx, doc.tenant.id, -Number(row.file_size));
    return null;
  });
  if (held) throw holdRefusal(held);
  deps.acervoCache.invalidate(doc.tenant.id);
  deps.verifyCache.invalidate(doc.sha256Hash);
  const cid = ipfsCidOf(doc);
  return {
    ok: true,
    documentId: doc.id,
    serialNumber: doc.serialNumber,
    sha256Hash: doc.sha256Hash,
    deletedAt: deletedAt.toISOString(),
    // A reference-only import never had its bytes here: the service stops linking them, IPFS keeps them.
    ...(cid === undefined
      ? {}
      : {
          note: `The file's bytes stay on IPFS (ipfs://${cid}), outside this service's control: the service only deleted its record of them. Ask whoever pins the CID to unpin it.`,
        }),
  };
}
