import { type EntityManager, LockMode } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, type MailLanguage } from '@notary/shared';
import { OrgDeletion, Tenant, TenantMember } from '../../db/entities';
import type { OrganizationDirectory } from '../../ports/directory';
import { isPlaceholderEmail, type Mailer } from '../../ports/mail';
import type { ObjectStorage } from '../../ports/storage';
import { deleteDocumentRows } from '../documents/quota';
import { deletionCodeMail, deletionNoticeMail } from '../mail/org-deletion';
import { recordRefusal } from '../retention/audit';
import { heldAmong, holdDetails, tenantHold } from '../retention/hold';
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
 * delete every stored object of every document (file and screenshot) then the document rows, batch by batch
 * in id order (the row keeps the cursor and the counts: memory holds one batch whatever the archive's size),
 * then every remaining object under the tenant's storage prefix `<tenantId>/`; e-mail each member the notice;
 * remove the organization at the provider; remove the service's tenant rows (tenant, role table, this row).
 * Retention (`domain/retention/hold.ts`): while any document of the organization is held (a notarial act, or
 * the retention of its declared serventia, not lifted by the operator), the request, the confirmation and a
 * run are refused with CONFLICT and the refusal is written to `retention_refusal`; a run that finds a held
 * document in a batch (an act recorded meanwhile) deletes nothing of that batch and cancels the deletion
 * (its code is consumed; the documents of earlier batches stay deleted), unless the organization is already
 * gone at the provider, where it stops and the resume job retries until the operator lifts the hold.
 * On-chain records stay: nothing is written to or removed from a chain (anchor batches and transactions are
 * not the tenant's rows; a document's Merkle proof goes with its row).
 *
 * A run holds a lease renewed after each batch. A run that stops (a failure, or its process killed) is
 * finished by the resume job (`resumeOrganizationDeletions`, run by `jobs/org-deletion.ts` at start-up and
 * every minute) once the lease ran out, or at once by confirming again with the same code.
 * `organizationDeletionStatus` (`npm run notary -- org:deletion-status`) shows the progress.
 */

/** Ports a run of the deletion's steps uses (the confirmation, the resume job, a script). */
export interface OrgDeletionRunPorts {
  storage: ObjectStorage;
  mailer: Mailer;
  directory: OrganizationDirectory;
  /** Receives one warning line per noteworthy event (the service's logger; default: nowhere). */
  log?: (line: string) => void;
  /**
   * Receives one line per step and per batch of documents (`batch <n> done, <d> documents deleted, <l> left`),
   * for the service's log at info level (default: nowhere).
   */
  progress?: (line: string) => void;
  /** Documents per batch, 1 to 10000 (default {@link DOCUMENT_BATCH}). */
  batchSize?: number;
  /** The current time (tests inject it); default `new Date()`. */
  now?: () => Date;
}

/** Ports the confirmation uses: a run's, plus the key of the code hashes. */
export interface OrgDeletionPorts extends OrgDeletionRunPorts {
  /** Key of the code hashes: `deletionCodeKey(secret)`. */
  codeKey: Uint8Array;
}

/**
 * Documents handled per batch by default: bounds memory, the size of one `DELETE ... WHERE id = ANY(...)`
 * and the work a crash repeats (one batch's object deletions).
 */
export const DOCUMENT_BATCH = 200;
/** The largest batch a caller may ask for. */
const MAX_DOCUMENT_BATCH = 10_000;
/** Objects listed and deleted per round of the prefix sweep (one S3 list page). */
const SWEEP_BATCH = 1000;
/** Object deletions in flight at once: S3 round trips dominate, a few in parallel cut the wall time. */
const DELETE_CONCURRENCY = 8;
/**
 * How long a run owns a deletion, in milliseconds, renewed after each batch. Two confirms at once (a double
 * click), or a confirm and the resume job, would otherwise both run the steps and mail every member twice; a
 * killed run frees the deletion when its lease runs out, and the resume job then finishes it.
 */
export const LEASE_MS = 2 * 60 * 1000;
/**
 * How long the resume job leaves a deletion whose run failed (and released its lease) to the user's own
 * retry ("confirm again with the same code") before finishing it itself, in milliseconds.
 */
export const RESUME_IDLE_MS = 60 * 1000;

/**
 * `POST /api/org/delete/request`: e-mails a fresh 6-digit code to the requester, replacing any pending code.
 * @param options.lang language of the mail and, later, of the members' notice (default Portuguese).
 * @param options.now the current time (tests inject it).
 * @returns `{ok:true}` once the mail is handed to the mailer.
 * @throws AppError BAD_REQUEST (`No active organization`; the requester has no real e-mail address, e.g. a
 *   wallet account), FORBIDDEN (below admin), CONFLICT (documents held under a retention rule: `details`
 *   carries `rule`, `heldDocuments`, `cns`, `legalBasis`; audited), SERVICE_UNAVAILABLE (mail not configured: `Mailer.configured`),
 *   RATE_LIMITED (5 requests per organization per hour), BAD_GATEWAY (the mail server refused the code mail).
 */
export async function requestOrganizationDeletion(
  em: EntityManager,
  ports: Pick<OrgDeletionPorts, 'mailer' | 'codeKey'>,
  actor: Actor,
  options: { lang?: MailLanguage; now?: Date } = {},
): Promise<{ ok: true }> {
  const org = requireOrganizationManager(actor, 'delete the organization');
  await refuseWhileHeld(em, org, options.now ?? new Date());
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

/**
 * Refuses the deletion of `org`'s tenant while any of its documents is held (`tenantHold`), writing the
 * refusal to `retention_refusal` first.
 * @throws AppError CONFLICT naming the rule and LGPD art. 16 I, the hold in `details`.
 */
async function refuseWhileHeld(em: EntityManager, org: OrganizationActor, now: Date): Promise<void> {
  const hold = await tenantHold(em, org.tenant.id, now);
  if (!hold) return;
  await recordRefusal(em.fork(), {
    tenantId: org.tenant.id,
    action: 'org_deletion',
    rule: hold.rule,
    heldCount: hold.held,
    actor: { userId: org.userId, role: org.role, ip: org.ip },
    at: now,
  });
  throw new AppError('CONFLICT', hold.message, { details: holdDetails(hold) });
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
 *   wrong, expired or burnt code), FORBIDDEN (below admin), CONFLICT (documents held under a retention rule,
 *   audited, see `requestOrganizationDeletion`; or another confirmation, or the resume job, is running this
 *   deletion right now), BAD_GATEWAY (the identity provider or the mail server failed
 *   midway: the message says what is already gone; the resume job finishes it, or confirm again with the
 *   same code to finish now).
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
  await refuseWhileHeld(em, org, now);
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
  const outcome = await runDeletion(em, ports, {
    deletionId: verdict.deletionId,
    tenantId: org.tenant.id,
    organizationId: org.organizationId,
    organizationName: org.tenant.name,
  });
  if (outcome === 'busy') {
    throw new AppError(
      'CONFLICT',
      'This deletion is running right now (another request or the service itself): wait a moment, then confirm again with the same code',
    );
  }
  return { ok: true };
}

/** What a run of the steps needs to know of the organization: read from its tenant row. */
interface DeletionTarget {
  deletionId: string;
  tenantId: string;
  /** The organization's id at the identity provider (the tenant's `externalId`). */
  organizationId: string;
  organizationName: string;
}

/** Outcome of one run of the steps, for the resume job's log. */
export type DeletionRunOutcome = 'finished' | 'busy';

/** The clock of the ports (tests and the resume test inject it). */
const clockOf = (ports: OrgDeletionRunPorts): Date => ports.now?.() ?? new Date();

/**
 * Runs (or resumes) the steps of a started deletion under a lease: resolves `finished` once the organization
 * is gone, `busy` when another run holds the lease (the caller decides whether that is an error).
 * @throws AppError BAD_GATEWAY (provider or mail failure midway; the row keeps what is done), or the storage's
 *   and the database's errors: the lease is released and the row says where to resume.
 */
async function runDeletion(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  target: DeletionTarget,
): Promise<DeletionRunOutcome> {
  const log = ports.log ?? (() => {});
  const progress = ports.progress ?? (() => {});
  const { deletionId, tenantId } = target;
  const batchSize = ports.batchSize ?? DOCUMENT_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_DOCUMENT_BATCH) {
    throw new AppError('BAD_REQUEST', `The deletion batch size must be 1 to ${MAX_DOCUMENT_BATCH} documents`);
  }
  const leaseFrom = (now: Date) => new Date(now.getTime() + LEASE_MS);
  const claimedAt = clockOf(ports);
  const claimed = await em.nativeUpdate(
    OrgDeletion,
    { id: deletionId, $or: [{ leaseUntil: null }, { leaseUntil: { $lt: claimedAt } }] },
    { leaseUntil: leaseFrom(claimedAt), progressAt: claimedAt },
  );
  if (claimed === 0) return 'busy';
  const renewLease = () => {
    const now = clockOf(ports);
    return em.nativeUpdate(OrgDeletion, { id: deletionId }, { leaseUntil: leaseFrom(now), progressAt: now });
  };
  let finished = false;
  try {
    const state = await em.findOneOrFail(OrgDeletion, { id: deletionId }, { disableIdentityMap: true });

    // 0. Retention: nothing is touched while a document is held (checked again batch by batch below).
    if (!state.filesDeletedAt) {
      const hold = await tenantHold(em, tenantId, clockOf(ports));
      if (hold) {
        await cancelHeldDeletion(em, deletionId, tenantId, hold.rule, hold.held, clockOf(ports));
        throw new AppError('CONFLICT', hold.message, { details: holdDetails(hold) });
      }
    }

    // 1. Who to notify, asked before anything is removed: once the organization is gone at the provider,
    //    its member list is gone too.
    let recipients = state.noticeRecipients;
    if (!recipients) {
      const members = await atProvider(
        () => ports.directory.listMembers(target.organizationId),
        'The identity provider failed to list the members; nothing was deleted yet: confirm again with the same code',
      ).catch((e: unknown) => {
        // Removed at the provider already (by someone else): nobody left to list, the rest still applies.
        if (e instanceof AppError && e.code === 'NOT_FOUND') return [];
        throw e;
      });
      recipients = noticeRecipients(members.map((m) => m.email));
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticeRecipients: recipients });
    }

    // 2. Stored objects, then document rows, batch by batch; then whatever else the tenant's prefix holds.
    if (!state.filesDeletedAt) {
      progress(`[org-deletion] ${tenantId}: deleting documents, ${batchSize} per batch`);
      const held = await deleteDocuments(em, ports, deletionId, tenantId, batchSize, progress);
      if (held) {
        await cancelHeldDeletion(em, deletionId, tenantId, held.rule, held.count, clockOf(ports));
        throw heldMidRun(held.count);
      }
      await sweepPrefix(ports.storage, tenantId, renewLease);
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { filesDeletedAt: clockOf(ports) });
      progress(`[org-deletion] ${tenantId}: documents and files deleted`);
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
              organizationName: target.organizationName,
              deletedAt: state.startedAt ?? clockOf(ports),
            }),
          );
        } catch (e) {
          if (!isPermanentMailRefusal(e)) {
            throw new AppError(
              'BAD_GATEWAY',
              "The organization's documents and files are deleted, but e-mailing the members failed: the service retries by itself; or confirm again with the same code to finish now",
              { cause: e },
            );
          }
          // An address the mail server refuses for good would block the deletion forever: log and go on.
          log(`[org-deletion] notice to ${to} refused permanently, skipped: ${String(e)}`);
        }
        pending.shift();
        await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticeRecipients: pending });
      }
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticesSentAt: clockOf(ports) });
      progress(`[org-deletion] ${tenantId}: members notified`);
    }

    // 4. The organization at the identity provider, with its memberships and invitations.
    if (!state.providerDeletedAt) {
      await atProvider(
        () => ports.directory.deleteOrganization(target.organizationId),
        "The organization's documents and files are deleted, but removing the organization at the identity provider failed: the service retries by itself; or confirm again with the same code to finish now",
      ).catch((e: unknown) => {
        // Gone already (removed at the provider by someone else): that is the goal of this step.
        if (e instanceof AppError && e.code === 'NOT_FOUND') return;
        throw e;
      });
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { providerDeletedAt: clockOf(ports) });
    }

    // 5. The service's rows. An upload that slipped in while the steps above ran (its token was still valid)
    //    stored its object before inserting its row: delete such rows with their objects, sweep again, then
    //    remove the tenant, whose foreign keys cascade to the role table, this row and anything left.
    await em.nativeUpdate(OrgDeletion, { id: deletionId }, { documentCursor: null });
    const late = await deleteDocuments(em, ports, deletionId, tenantId, batchSize, progress);
    // The organization is gone at the provider: no cancelling now; the resume job retries until the operator
    // lifts the hold (an act recorded on a document uploaded during the deletion).
    if (late) throw heldMidRun(late.count);
    await sweepPrefix(ports.storage, tenantId, renewLease);
    await em.transactional(async (tx) => {
      await tx.nativeDelete(TenantMember, { tenant: tenantId });
      await tx.nativeDelete(Tenant, { id: tenantId });
    });
    finished = true;
    progress(`[org-deletion] ${tenantId}: organization deleted`);
    // An upload whose row insert raced the removal above fails on the foreign key and deletes its own
    // object; one whose object was stored after the sweep but whose row was cascaded away is caught here
    // (and, should this fail, by the orphan sweep: its key has no live row).
    // Best effort: the tenant is gone, so a failure can no longer be retried by the user, only logged.
    await sweepPrefix(ports.storage, tenantId, async () => 0).catch((e: unknown) =>
      log(`[org-deletion] final sweep of ${tenantId}/ failed: ${String(e)}`),
    );
    return 'finished';
  } finally {
    // Free the deletion at once for a retry (the row is gone when the deletion finished); `progressAt` dates
    // the failure, so the resume job leaves the user's own retry a head start.
    if (!finished) {
      await em
        .nativeUpdate(OrgDeletion, { id: deletionId }, { leaseUntil: null, progressAt: clockOf(ports) })
        .catch((e: unknown) =>
          log(`[org-deletion] could not release the lease of ${deletionId}: ${String(e)}`),
        );
    }
  }
}

/** Held documents a batch found: how many, and the rule of the first. */
interface HeldInBatch {
  count: number;
  rule: 'notarial_act' | 'retention_period';
}

/** A run's refusal when a batch found held documents. */
function heldMidRun(count: number): AppError {
  return new AppError(
    'CONFLICT',
    `The deletion stopped: ${count} document(s) of this batch became held under a retention rule meanwhile (LGPD art. 16 I); nothing of that batch was deleted. Only the service operator can lift the hold (retention:lift).`,
    { details: { heldDocuments: count, legalBasis: 'LGPD art. 16 I' } },
  );
}

/**
 * Cancels a started deletion that met a retention hold before the organization was removed at the provider:
 * the deletion is no longer started (the resume job leaves it), its code is spent, its progress reset; the
 * refusal is written to `retention_refusal`. The documents of batches already deleted stay deleted.
 */
async function cancelHeldDeletion(
  em: EntityManager,
  deletionId: string,
  tenantId: string,
  rule: 'notarial_act' | 'retention_period',
  held: number,
  now: Date,
): Promise<void> {
  await em.nativeUpdate(
    OrgDeletion,
    { id: deletionId },
    {
      startedAt: null,
      codeHash: null,
      codeIssuedAt: null,
      codeExpiresAt: null,
      codeConsumedAt: null,
      requestedBy: null,
      noticeRecipients: null,
      documentsTotal: null,
      documentsDeleted: 0,
      batchesDone: 0,
      documentCursor: null,
    },
  );
  await recordRefusal(em.fork(), { tenantId, action: 'org_deletion_run', rule, heldCount: held, at: now });
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

type Sql = SqlEntityManager;

/**
 * Deletes the tenant's documents batch by batch, in id order from the row's cursor: each batch's stored
 * objects (file and screenshot) first, then, in one transaction, its rows (with their bytes off the storage
 * quota's counter) and the progress (cursor, counts, lease). Memory holds one batch; each batch reads one
 * index range (`document (tenant_id, id)`) after the cursor, never the entries of the batches already deleted.
 *
 * After a crash anywhere, the row's cursor is that of the last committed batch: the next run reads the batch
 * again, deletes its objects again (`ObjectStorage.delete` succeeds on a missing key) and then its rows.
 * Objects are always deleted before their rows, so a crash never leaves rows without objects to be found by
 * a row; a row inserted behind the cursor meanwhile (an upload still under way) is found by one more pass
 * from the start, which runs only when rows remain after the last batch.
 *
 * Each batch locks its rows and asks the retention rule (`heldAmong`) before deleting anything of it: when a
 * document of the batch is held (an act recorded during the run), nothing of the batch is deleted and the
 * held documents are returned (null when every document was deleted).
 */
async function deleteDocuments(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  deletionId: string,
  tenantId: string,
  batchSize: number,
  progress: (line: string) => void,
): Promise<HeldInBatch | null> {
  const sql = em as Sql;
  const state: { documents_total: number | null; document_cursor: string | null }[] = await sql.execute(
    'select documents_total, document_cursor from org_deletion where id = ?',
    [deletionId],
  );
  let cursor = state[0]?.document_cursor ?? null;
  if (state[0]?.documents_total == null) {
    const counted: { n: string | number }[] = await sql.execute(
      'select count(*) as n from document where tenant_id = ?',
      [tenantId],
    );
    await sql.execute('update org_deletion set documents_total = ? where id = ?', [
      Number(counted[0]?.n ?? 0),
      deletionId,
    ]);
  }
  for (;;) {
    const docs: { id: string; storage_key: string | null; screenshot_key: string | null }[] =
      await sql.execute(
        cursor === null
          ? 'select id, storage_key, screenshot_key from document where tenant_id = ? order by id limit ?'
          : 'select id, storage_key, screenshot_key from document where tenant_id = ? and id > ? order by id limit ?',
        cursor === null ? [tenantId, batchSize] : [tenantId, cursor, batchSize],
      );
    if (docs.length > 0) {
      const last = (docs.at(-1) as { id: string }).id;
      const now = clockOf(ports);
      type BatchOutcome =
        | { held: HeldInBatch }
        | { progress: { deleted: number; batches: number; total: number | null } | undefined };
      const done = await em.transactional(async (tx): Promise<BatchOutcome> => {
        // Retention, asked again with the batch's rows locked (an act being recorded holds a key-share lock
        // on its document's row until it commits; none can be recorded until this batch commits); the
        // objects are deleted under the lock, before their rows, so a held document keeps its file too.
        const ids = docs.map((d) => d.id);
        await (tx as Sql).execute(
          'select id from document where id = any(?::uuid[]) order by id for update',
          [`{${ids.join(',')}}`],
        );
        const held = await heldAmong(tx, tenantId, ids, now);
        if (held.length > 0) {
          return { held: { count: held.length, rule: held[0]?.rule ?? 'notarial_act' } };
        }
        await deleteKeys(
          ports.storage,
          docs.flatMap((d) => [d.storage_key, d.screenshot_key]).filter((k): k is string => !!k),
        );
        const deleted = await deleteDocumentRows(
          tx,
          tenantId,
          docs.map((d) => d.id),
        );
        const rows: { deleted: number; batches: number; total: number | null }[] = await (tx as Sql).execute(
          `update org_deletion
              set document_cursor = ?, documents_deleted = documents_deleted + ?, batches_done = batches_done + 1,
                  progress_at = ?, lease_until = ?
            where id = ?
        returning documents_deleted as deleted, batches_done as batches, documents_total as total`,
          [last, deleted, now, new Date(now.getTime() + LEASE_MS), deletionId],
        );
        return { progress: rows[0] };
      });
      if ('held' in done) return done.held;
      cursor = last;
      if (done.progress) {
        const progressed = done.progress;
        const left = Math.max(0, (progressed.total ?? 0) - progressed.deleted);
        progress(
          `[org-deletion] ${tenantId}: batch ${progressed.batches} done, ${progressed.deleted} documents deleted, ${left} left`,
        );
      }
      if (docs.length === batchSize) continue;
    }
    // Past the last id: done, unless rows were inserted behind the cursor meanwhile.
    if (cursor === null) return null;
    const behind: unknown[] = await sql.execute('select 1 from document where tenant_id = ? limit 1', [
      tenantId,
    ]);
    if (behind.length === 0) return null;
    cursor = null;
    await sql.execute('update org_deletion set document_cursor = null where id = ?', [deletionId]);
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
    for await (const o of storage.listObjects(prefix)) {
      batch.push(o.key);
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

/** The target of a started deletion, from its row and its tenant; undefined when the tenant is gone. */
async function targetOf(em: EntityManager, deletionId: string): Promise<DeletionTarget | undefined> {
  const rows: { tenant_id: string; external_id: string; name: string; kind: string }[] = await (
    em as Sql
  ).execute(
    `select t.id as tenant_id, t.external_id, t.name, t.kind
       from org_deletion d join tenant t on t.id = d.tenant_id
      where d.id = ?`,
    [deletionId],
  );
  const row = rows[0];
  if (row?.kind !== 'organization') return undefined;
  return { deletionId, tenantId: row.tenant_id, organizationId: row.external_id, organizationName: row.name };
}

/** Started deletions read per query by the resume job (they are run one after the other). */
const RESUME_PAGE = 50;

/** What one pass of {@link resumeOrganizationDeletions} did. */
export interface ResumeReport {
  /** Deletions this pass ran to the end. */
  finished: number;
  /** Deletions whose run failed again (logged; the next pass retries). */
  failed: number;
  /** Deletions another run held meanwhile. */
  busy: number;
}

/**
 * The resume job's pass: runs to the end every started deletion (`started_at` set) that nobody runs — its lease
 * ran out (the process that ran it died: SIGKILL, a crash, a deploy) or was released after a failure at least
 * {@link RESUME_IDLE_MS} ago (so that the user's own "confirm again" goes first). Deletions are read by id, a
 * page at a time, and run one after the other; one that fails is logged through `ports.log` and left for the
 * next pass, the others go on.
 */
export async function resumeOrganizationDeletions(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
): Promise<ResumeReport> {
  const report: ResumeReport = { finished: 0, failed: 0, busy: 0 };
  const log = ports.log ?? (() => {});
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const now = clockOf(ports);
    const idleSince = new Date(now.getTime() - RESUME_IDLE_MS);
    const page: { id: string }[] = await (em as Sql).execute(
      `select id from org_deletion
        where id > ? and started_at is not null
          and (lease_until is null or lease_until < ?)
          and (progress_at is null or progress_at < ? or lease_until is not null)
        order by id limit ?`,
      [after, now, idleSince, RESUME_PAGE],
    );
    for (const { id } of page) {
      const target = await targetOf(em, id);
      if (!target) continue;
      ports.progress?.(`[org-deletion] ${target.tenantId}: resuming a deletion nobody runs`);
      try {
        if ((await runDeletion(em, ports, target)) === 'busy') report.busy++;
        else report.finished++;
      } catch (e) {
        report.failed++;
        log(`[org-deletion] ${target.tenantId}: resumed deletion failed, retrying later: ${String(e)}`);
      }
    }
    const last = page.at(-1);
    if (!last || page.length < RESUME_PAGE) return report;
    after = last.id;
  }
}

/**
 * Deletes the organization of tenant `tenantId` at once, without a code: marks its deletion started (as an
 * accepted code would) and runs it to the end in this process, in batches of `ports.batchSize` documents,
 * reporting each batch through `ports.progress`. For operators' scripts and the benchmark; a run cut short
 * (SIGKILL included) is finished by the service's resume job or by calling this again.
 * @returns `finished`, or `busy` when another run holds the deletion right now (it will finish it).
 * @throws AppError NOT_FOUND when the tenant is not an organization's, BAD_REQUEST for a batch size outside
 *   1..10000; the run's errors as {@link confirmOrganizationDeletion}'s.
 */
export async function deleteOrganizationNow(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  tenantId: string,
): Promise<DeletionRunOutcome> {
  const tenant = await em.findOne(
    Tenant,
    { id: tenantId, kind: 'organization' },
    { disableIdentityMap: true },
  );
  if (!tenant) throw new AppError('NOT_FOUND', `No organization tenant ${tenantId}`);
  await em.upsert(
    OrgDeletion,
    { id: crypto.randomUUID(), tenant: tenantId },
    { onConflictFields: ['tenant'], onConflictAction: 'ignore' },
  );
  await em.nativeUpdate(OrgDeletion, { tenant: tenantId, startedAt: null }, { startedAt: clockOf(ports) });
  const row = await em.findOneOrFail(OrgDeletion, { tenant: tenantId }, { disableIdentityMap: true });
  const target = await targetOf(em, row.id);
  if (!target) throw new AppError('NOT_FOUND', `No organization tenant ${tenantId}`);
  return runDeletion(em, ports, target);
}

/** One started deletion as `org:deletion-status` shows it. */
export interface DeletionStatus {
  tenantId: string;
  /** The organization's id at the identity provider. */
  organizationId: string;
  organizationName: string;
  startedAt: Date;
  /** The step it is at (or stopped at): `members`, `documents`, `notices`, `provider`, `rows`. */
  step: 'members' | 'documents' | 'notices' | 'provider' | 'rows';
  /** Documents when the deletion reached them (null before). */
  documentsTotal: number | null;
  documentsDeleted: number;
  /** `documentsTotal - documentsDeleted` (0 at least; uploads during the deletion are not in the total). */
  documentsLeft: number | null;
  batchesDone: number;
  /** When a run last moved it (a batch, a claim, a failure). */
  progressAt: Date | null;
  /** Whether a run holds it now (its lease has not run out). */
  running: boolean;
}

/**
 * Every started organization deletion with its progress, oldest first, read a page at a time (a handful in
 * practice: a finished deletion leaves no row). The source of `npm run notary -- org:deletion-status`.
 */
export async function organizationDeletionStatus(
  em: EntityManager,
  now = new Date(),
): Promise<DeletionStatus[]> {
  const out: DeletionStatus[] = [];
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows: {
      id: string;
      tenant_id: string;
      external_id: string;
      name: string;
      started_at: Date | string;
      notice_recipients: unknown;
      files_deleted_at: Date | string | null;
      notices_sent_at: Date | string | null;
      provider_deleted_at: Date | string | null;
      documents_total: number | null;
      documents_deleted: number;
      batches_done: number;
      progress_at: Date | string | null;
      lease_until: Date | string | null;
    }[] = await (em as Sql).execute(
      `select d.id, t.id as tenant_id, t.external_id, t.name, d.started_at, d.notice_recipients,
              d.files_deleted_at, d.notices_sent_at, d.provider_deleted_at, d.documents_total,
              d.documents_deleted, d.batches_done, d.progress_at, d.lease_until
         from org_deletion d join tenant t on t.id = d.tenant_id
        where d.started_at is not null and d.id > ?
        order by d.id limit ?`,
      [after, RESUME_PAGE],
    );
    for (const r of rows) {
      const step: DeletionStatus['step'] =
        r.notice_recipients === null
          ? 'members'
          : !r.files_deleted_at
            ? 'documents'
            : !r.notices_sent_at
              ? 'notices'
              : !r.provider_deleted_at
                ? 'provider'
                : 'rows';
      const total = r.documents_total === null ? null : Number(r.documents_total);
      out.push({
        tenantId: r.tenant_id,
        organizationId: r.external_id,
        organizationName: r.name,
        startedAt: new Date(r.started_at),
        step,
        documentsTotal: total,
        documentsDeleted: Number(r.documents_deleted),
        documentsLeft: total === null ? null : Math.max(0, total - Number(r.documents_deleted)),
        batchesDone: Number(r.batches_done),
        progressAt: r.progress_at === null ? null : new Date(r.progress_at),
        running: r.lease_until !== null && new Date(r.lease_until).getTime() > now.getTime(),
      });
    }
    const last = rows.at(-1);
    if (!last || rows.length < RESUME_PAGE) break;
    after = last.id;
  }
  return out.sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
}
