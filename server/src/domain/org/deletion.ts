import { type EntityManager, LockMode } from '@mikro-orm/core';
import { AppError, type MailLanguage } from '@notary/shared';
import { Document, OrgDeletion, Tenant, TenantMember } from '../../db/entities';
import type { OrganizationDirectory } from '../../ports/directory';
import { isPlaceholderEmail, type Mailer } from '../../ports/mail';
import type { ObjectStorage } from '../../ports/storage';
import { deleteDocumentRows } from '../documents/quota';
import { deletionCodeMail, deletionNoticeMail } from '../mail/org-deletion';
import type { Actor, OrganizationActor } from '../tenancy/actor';
import {
  DELETION_CODE_PATTERN,
  DELETION_CODE_RULES,
  deletionCodeMatches,
  hashDeletionCode,
  newDeletionCode,
} from './deletion-code';
import { atProvider, requireOrganizationManager } from './guard';

/**
 * Two-step deletion of an organization (spec, Organization: `POST /api/org/delete/request` and
 * `POST /api/org/delete/confirm`; README, Organization). State lives in one `org_deletion` row per tenant.
 *
 * Rules:
 * - Admin or owner, in the active organization.
 * - The code is 6 digits, uniform, valid 10 minutes, stored only as an HMAC (`deletion-code.ts`), bound to the
 *   member who requested it: only they can confirm (another admin must request their own code, which
 *   replaces the pending one). A new request always replaces the pending code.
 * - 5 wrong attempts burn the code; 5 requests per organization per hour (429 beyond).
 * - A correct code starts the deletion and is then consumed for it: it is no longer checked for expiry or
 *   attempts, and confirming again with it resumes an interrupted deletion (there is only ever one deletion).
 *   A code requested after the deletion started replaces the consumed one and, once accepted, resumes the
 *   deletion too: if the requester is gone or lost the code, another admin or owner can still finish it.
 *
 * The deletion runs in this order, each step recorded in the row so that a retry continues where a failure
 * stopped: collect the members' e-mail addresses at the identity provider (before anything is removed);
 * delete every stored object of every document (file and screenshot) then the document rows, batch by batch,
 * then every remaining object under the tenant's storage prefix `<tenantId>/`; e-mail each member the notice;
 * remove the organization at the provider; remove the service's tenant rows (tenant, role table, this row).
 * On-chain records stay: nothing is written to or removed from a chain. Anchoring is a later issue; when it
 * lands, its records (chain transactions, Merkle proofs) must outlive the documents deleted here.
 */

/** Ports the deletion uses. */
export interface OrgDeletionPorts {
  storage: ObjectStorage;
  mailer: Mailer;
  directory: OrganizationDirectory;
  /** Key of the code hashes: `deletionCodeKey(secret)`. */
  codeKey: Uint8Array;
  /** Receives one warning line per noteworthy event (the service's logger; default: nowhere). */
  log?: (line: string) => void;
}

/** Documents handled per batch: bounds memory and the size of one `DELETE ... WHERE id IN (...)`. */
const DOCUMENT_BATCH = 200;
/** Objects listed and deleted per round of the prefix sweep (one S3 list page). */
const SWEEP_BATCH = 1000;
/** Object deletions in flight at once: S3 round trips dominate, a few in parallel cut the wall time. */
const DELETE_CONCURRENCY = 8;
/**
 * How long a confirmation owns a running deletion, in milliseconds, renewed after each batch. Two confirms
 * at once (a double click) would otherwise both run the steps and mail every member twice; a crashed run
 * frees the deletion when its lease runs out.
 */
const LEASE_MS = 5 * 60 * 1000;

/**
 * `POST /api/org/delete/request`: e-mails a fresh 6-digit code to the requester, replacing any pending code.
 * @param options.lang language of the mail and, later, of the members' notice (default Portuguese).
 * @param options.now the current time (tests inject it).
 * @returns `{ok:true}` once the mail is handed to the mailer.
 * @throws AppError BAD_REQUEST (`No active organization`; the requester has no real e-mail address, e.g. a
 *   wallet account), FORBIDDEN (below admin), SERVICE_UNAVAILABLE (mail not configured: `Mailer.configured`),
 *   RATE_LIMITED (5 requests per organization per hour), BAD_GATEWAY (the mail server refused the code mail).
 */
export async function requestOrganizationDeletion(
  em: EntityManager,
  ports: Pick<OrgDeletionPorts, 'mailer' | 'codeKey'>,
  actor: Actor,
  options: { lang?: MailLanguage; now?: Date } = {},
): Promise<{ ok: true }> {
  const org = requireOrganizationManager(actor, 'delete the organization');
  if (!ports.mailer.configured) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'E-mail is not configured on this server: no deletion code can be sent',
    );
  }
  const to = org.email;
  if (!to || isPlaceholderEmail(to)) {
    throw new AppError(
      'BAD_REQUEST',
      'Your account has no e-mail address to receive the deletion code: an admin or owner with one must request it',
    );
  }
  const now = options.now ?? new Date();
  const lang = options.lang ?? 'pt';
  await ensureDeletionRow(em, org);
  const outcome = await em.transactional(async (tx) => {
    // Row lock: concurrent requests and confirmations of this organization run one after the other; `refresh`
    // because a row already in this EntityManager's identity map would otherwise keep its stale values.
    const row = await tx.findOneOrFail(
      OrgDeletion,
      { tenant: org.tenant.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const windowStart = row.requestWindowStart;
    const windowMs = DELETION_CODE_RULES.windowSeconds * 1000;
    if (!windowStart || now.getTime() - windowStart.getTime() >= windowMs) {
      row.requestWindowStart = now;
      row.requestsInWindow = 0;
    } else if (row.requestsInWindow >= DELETION_CODE_RULES.requestsPerWindow) {
      const retryAfterSeconds = Math.ceil((windowStart.getTime() + windowMs - now.getTime()) / 1000);
      return { kind: 'limited' as const, retryAfterSeconds };
    }
    row.requestsInWindow += 1;
    const code = newDeletionCode();
    const expiresAt = new Date(now.getTime() + DELETION_CODE_RULES.validSeconds * 1000);
    row.requestedBy = org.userId;
    row.lang = lang;
    row.codeIssuedAt = now;
    row.codeExpiresAt = expiresAt;
    row.failedAttempts = 0;
    row.codeConsumedAt = null;
    row.codeHash = hashDeletionCode(
      ports.codeKey,
      { tenantId: org.tenant.id, userId: org.userId, issuedAt: now },
      code,
    );
    await tx.flush();
    return { kind: 'issued' as const, code, expiresAt };
  });
  if (outcome.kind === 'limited') {
    throw new AppError(
      'RATE_LIMITED',
      `Too many deletion codes requested for this organization: try again in ${Math.ceil(outcome.retryAfterSeconds / 60)} minutes`,
    );
  }
  try {
    await ports.mailer.send(
      deletionCodeMail({
        lang,
        to,
        organizationName: org.tenant.name,
        code: outcome.code,
        expiresAt: outcome.expiresAt,
        validMinutes: DELETION_CODE_RULES.validSeconds / 60,
      }),
    );
  } catch (e) {
    // The stored code is unusable without the mail, and harmless: the next request replaces it.
    throw new AppError('BAD_GATEWAY', 'The mail server did not accept the deletion code mail; try again', {
      cause: e,
    });
  }
  return { ok: true };
}

/** Creates the organization's state row when missing (race-safe: insert-if-absent). */
async function ensureDeletionRow(em: EntityManager, org: OrganizationActor): Promise<void> {
  await em.upsert(
    OrgDeletion,
    { id: crypto.randomUUID(), tenant: org.tenant.id },
    { onConflictFields: ['tenant'], onConflictAction: 'ignore' },
  );
}

/** Why a confirmation was refused (all answer 400; the message tells them apart). */
const REFUSALS = {
  none: 'No deletion code is pending for this organization: request one first',
  notYours:
    'No deletion code is pending for you: the pending code was requested by another member and only they can confirm it (or request your own code)',
  burnt: 'This deletion code is burnt after too many wrong attempts: request a new one',
  expired: 'The deletion code has expired: request a new one',
} as const;

type Verdict = { ok: true; deletionId: string } | { ok: false; message: string };

/**
 * `POST /api/org/delete/confirm`: checks the code, then deletes the organization (see the module comment for
 * the steps and their order). Confirming again with the code of a deletion that stopped midway finishes it.
 * @param code 6 digits.
 * @param options.now the current time for the code's expiry (tests inject it).
 * @returns `{ok:true}` once everything is gone.
 * @throws AppError BAD_REQUEST (`No active organization`; no code pending, or pending for another member;
 *   wrong, expired or burnt code), FORBIDDEN (below admin), CONFLICT (another confirmation is running this
 *   deletion right now), BAD_GATEWAY (the identity provider or the mail server failed midway: the message says
 *   what is already gone; confirm again with the same code to finish).
 */
export async function confirmOrganizationDeletion(
  em: EntityManager,
  ports: OrgDeletionPorts,
  actor: Actor,
  code: string,
  options: { now?: Date } = {},
): Promise<{ ok: true }> {
  const org = requireOrganizationManager(actor, 'delete the organization');
  if (!DELETION_CODE_PATTERN.test(code)) throw new AppError('BAD_REQUEST', 'The code must be 6 digits');
  const now = options.now ?? new Date();
  // The verdict is returned, not thrown, from the transaction: a counted wrong attempt must be committed.
  const verdict = await em.transactional(async (tx): Promise<Verdict> => {
    const row = await tx.findOne(
      OrgDeletion,
      { tenant: org.tenant.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!row?.codeHash || !row.codeIssuedAt || !row.requestedBy) return { ok: false, message: REFUSALS.none };
    if (row.requestedBy !== org.userId) return { ok: false, message: REFUSALS.notYours };
    const binding = { tenantId: org.tenant.id, userId: row.requestedBy, issuedAt: row.codeIssuedAt };
    const matches = deletionCodeMatches(ports.codeKey, binding, code, row.codeHash);
    if (row.codeConsumedAt) {
      // Consumed for this deletion: the code only resumes it. Guessing it gains nothing the requester has not
      // already authorized, so wrong guesses are refused without burning the code (which would strand it).
      return matches ? { ok: true, deletionId: row.id } : { ok: false, message: 'Wrong code' };
    }
    if (row.failedAttempts >= DELETION_CODE_RULES.maxAttempts) return { ok: false, message: REFUSALS.burnt };
    if (!row.codeExpiresAt || row.codeExpiresAt.getTime() <= now.getTime()) {
      return { ok: false, message: REFUSALS.expired };
    }
    if (!matches) {
      row.failedAttempts += 1;
      await tx.flush();
      const left = DELETION_CODE_RULES.maxAttempts - row.failedAttempts;
      return {
        ok: false,
        message:
          left > 0
            ? `Wrong code: ${left} attempt${left === 1 ? '' : 's'} left`
            : 'Wrong code: no attempts left, this code is burnt; request a new one',
      };
    }
    row.codeConsumedAt = now;
    // A code requested after the deletion started resumes it; the first accepted code dates it.
    row.startedAt ??= now;
    await tx.flush();
    return { ok: true, deletionId: row.id };
  });
  if (!verdict.ok) throw new AppError('BAD_REQUEST', verdict.message);
  await runDeletion(em, ports, org, verdict.deletionId);
  return { ok: true };
}

/** Runs (or resumes) the steps of a started deletion under a lease. */
async function runDeletion(
  em: EntityManager,
  ports: OrgDeletionPorts,
  org: OrganizationActor,
  deletionId: string,
): Promise<void> {
  const log = ports.log ?? (() => {});
  const claimed = await em.nativeUpdate(
    OrgDeletion,
    { id: deletionId, $or: [{ leaseUntil: null }, { leaseUntil: { $lt: new Date() } }] },
    { leaseUntil: new Date(Date.now() + LEASE_MS) },
  );
  if (claimed === 0) {
    throw new AppError(
      'CONFLICT',
      'This deletion is running in another request right now: wait a moment, then confirm again with the same code',
    );
  }
  const renewLease = () =>
    em.nativeUpdate(OrgDeletion, { id: deletionId }, { leaseUntil: new Date(Date.now() + LEASE_MS) });
  let finished = false;
  try {
    const state = await em.findOneOrFail(OrgDeletion, { id: deletionId }, { disableIdentityMap: true });
    const tenantId = org.tenant.id;

    // 1. Who to notify, asked before anything is removed: once the organization is gone at the provider,
    //    its member list is gone too.
    let recipients = state.noticeRecipients;
    if (!recipients) {
      const members = await atProvider(
        () => ports.directory.listMembers(org.organizationId),
        'The identity provider failed to list the members; nothing was deleted yet: confirm again with the same code',
      ).catch((e: unknown) => {
        // Removed at the provider already (by someone else): nobody left to list, the rest still applies.
        if (e instanceof AppError && e.code === 'NOT_FOUND') return [];
        throw e;
      });
      recipients = noticeRecipients(members.map((m) => m.email));
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticeRecipients: recipients });
    }

    // 2. Stored objects, then document rows; then whatever else the tenant's prefix still holds.
    if (!state.filesDeletedAt) {
      await deleteDocuments(em, ports.storage, tenantId, renewLease);
      await sweepPrefix(ports.storage, tenantId, renewLease);
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { filesDeletedAt: new Date() });
    }

    // 3. The notice, one member at a time; each address is removed from the row once its mail is accepted,
    //    so a retry after a mail failure does not notify anyone twice.
    if (!state.noticesSentAt) {
      const pending = [...recipients];
      while (pending.length > 0) {
        const to = pending[0] as string;
        try {
          await ports.mailer.send(
            deletionNoticeMail({
              lang: state.lang,
              to,
              organizationName: org.tenant.name,
              deletedAt: state.startedAt ?? new Date(),
            }),
          );
        } catch (e) {
          if (!isPermanentMailRefusal(e)) {
            throw new AppError(
              'BAD_GATEWAY',
              "The organization's documents and files are deleted, but e-mailing the members failed: confirm again with the same code to finish",
              { cause: e },
            );
          }
          // An address the mail server refuses for good would block the deletion forever: log and go on.
          log(`[org-deletion] notice to ${to} refused permanently, skipped: ${String(e)}`);
        }
        pending.shift();
        await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticeRecipients: pending });
      }
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticesSentAt: new Date() });
    }

    // 4. The organization at the identity provider, with its memberships and invitations.
    if (!state.providerDeletedAt) {
      await atProvider(
        () => ports.directory.deleteOrganization(org.organizationId),
        "The organization's documents and files are deleted, but removing the organization at the identity provider failed: confirm again with the same code to finish",
      ).catch((e: unknown) => {
        // Gone already (removed at the provider by someone else): that is the goal of this step.
        if (e instanceof AppError && e.code === 'NOT_FOUND') return;
        throw e;
      });
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { providerDeletedAt: new Date() });
    }

    // 5. The service's rows. An upload that slipped in while the steps above ran (its token was still valid)
    //    stored its object before inserting its row: sweep again, then remove the tenant, whose foreign keys
    //    cascade to documents, the role table and this row.
    await sweepPrefix(ports.storage, tenantId, renewLease);
    await em.transactional(async (tx) => {
      await tx.nativeDelete(Document, { tenant: tenantId });
      await tx.nativeDelete(TenantMember, { tenant: tenantId });
      await tx.nativeDelete(Tenant, { id: tenantId });
    });
    finished = true;
    // An upload whose row insert raced the removal above fails on the foreign key and deletes its own
    // object; one whose object was stored after the sweep but whose row was cascaded away is caught here.
    // Best effort: the tenant is gone, so a failure can no longer be retried by the user, only logged.
    await sweepPrefix(ports.storage, tenantId, async () => 0).catch((e: unknown) =>
      log(`[org-deletion] final sweep of ${tenantId}/ failed: ${String(e)}`),
    );
  } finally {
    // Free the deletion at once for a retry (the row is gone when the deletion finished).
    if (!finished) {
      await em
        .nativeUpdate(OrgDeletion, { id: deletionId }, { leaseUntil: null })
        .catch((e: unknown) =>
          log(`[org-deletion] could not release the lease of ${deletionId}: ${String(e)}`),
        );
    }
  }
}

/** The members' addresses worth mailing: placeholder addresses (wallet accounts) out, duplicates out. */
export function noticeRecipients(emails: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const raw of emails) {
    const email = raw.trim().toLowerCase();
    if (email && !isPlaceholderEmail(email)) seen.add(email);
  }
  return [...seen];
}

/**
 * Whether a mailer error is the SMTP server refusing this message for good (reply code 5xx, RFC 5321
 * section 4.2.1, e.g. 550 mailbox unavailable), as opposed to a transient failure worth retrying (4xx,
 * connection refused, timeout). nodemailer exposes the reply code as `responseCode`.
 */
function isPermanentMailRefusal(e: unknown): boolean {
  const responseCode = (e as { responseCode?: unknown } | null)?.responseCode;
  return typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600;
}

/**
 * Deletes the tenant's documents batch by batch: first each document's stored objects (file and
 * screenshot), then the rows. A crash between the two leaves rows whose objects are already gone, which the
 * retry deletes again harmlessly (`ObjectStorage.delete` succeeds on a missing key).
 */
async function deleteDocuments(
  em: EntityManager,
  storage: ObjectStorage,
  tenantId: string,
  renewLease: () => Promise<number>,
): Promise<void> {
  for (;;) {
    const docs = await em.find(
      Document,
      { tenant: tenantId },
      {
        fields: ['id', 'storageKey', 'screenshotKey'],
        orderBy: { id: 'asc' },
        limit: DOCUMENT_BATCH,
        disableIdentityMap: true,
      },
    );
    if (docs.length === 0) return;
    const keys = docs.flatMap((d) => [d.storageKey, d.screenshotKey]).filter((k): k is string => !!k);
    await deleteKeys(storage, keys);
    // With their bytes taken off the storage quota's counter in the same statement.
    await deleteDocumentRows(
      em,
      tenantId,
      docs.map((d) => d.id),
    );
    await renewLease();
  }
}

/**
 * Deletes every object under `<tenantId>/` (the upload route's keys: `<tenantId>/<uuid>`), so that nothing
 * of the tenant survives in storage even without a row pointing at it (a crashed upload, a future derived
 * file). Each round lists afresh from the start, since deleting while paging through a listing can skip keys.
 * The trailing slash matters: tenant ids are UUIDs of equal length, so no other tenant's key shares it.
 * @throws Error when a round lists the same keys again (deletes that do not take effect), instead of looping.
 */
async function sweepPrefix(
  storage: ObjectStorage,
  tenantId: string,
  renewLease: () => Promise<number>,
): Promise<void> {
  const prefix = `${tenantId}/`;
  let previousFirst: string | undefined;
  for (;;) {
    const batch: string[] = [];
    for await (const key of storage.list(prefix)) {
      batch.push(key);
      if (batch.length >= SWEEP_BATCH) break;
    }
    if (batch.length === 0) return;
    if (batch[0] === previousFirst) throw new Error(`objects under ${prefix} survive deletion (${batch[0]})`);
    previousFirst = batch[0];
    await deleteKeys(storage, batch);
    await renewLease();
    if (batch.length < SWEEP_BATCH) return;
  }
}

/** Deletes `keys` with at most `DELETE_CONCURRENCY` deletions in flight. */
async function deleteKeys(storage: ObjectStorage, keys: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++] as string;
      await storage.delete(key);
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, keys.length) }, worker));
}
