import { type EntityManager, LockMode } from '@mikro-orm/core';
import { AppError, type MailLanguage } from '@notary/shared';
import { OrgDeletion } from '../../../db/entities';
import { isPlaceholderEmail } from '../../../ports/mail';
import { deletionCodeMail } from '../../mail/org-deletion';
import type { Actor, OrganizationActor } from '../../tenancy/actor';
import {
  DELETION_CODE_PATTERN,
  DELETION_CODE_RULES,
  deletionCodeMatches,
  hashDeletionCode,
  newDeletionCode,
} from '../deletion-code';
import { requireOrganizationManager } from '../guard';
import { refuseWhileHeld } from './hold';
import type { OrgDeletionPorts } from './ports';
import { runDeletion } from './run';

/**
 * The two-step handshake of an organization's deletion (spec, Organization: `POST /api/org/delete/request`
 * and `POST /api/org/delete/confirm`; docs/team.md, Organization). State lives in one `org_deletion` row per tenant.
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
 */

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
  const outcome = await issueCode(em, org, ports.codeKey, lang, now);
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

/** A request's outcome: a fresh code (stored as its hash) or the rate limit's wait, in seconds. */
type Issued =
  | { kind: 'issued'; code: string; expiresAt: Date }
  | { kind: 'limited'; retryAfterSeconds: number };

/**
 * Counts the request in the organization's hourly window and, within the limit, stores the hash of a fresh
 * code bound to the requester (`hashDeletionCode`), replacing the pending one and resetting its attempts.
 */
async function issueCode(
  em: EntityManager,
  org: OrganizationActor,
  codeKey: Uint8Array,
  lang: MailLanguage,
  now: Date,
): Promise<Issued> {
  return em.transactional(async (tx): Promise<Issued> => {
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
      return { kind: 'limited', retryAfterSeconds };
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
      codeKey,
      { tenantId: org.tenant.id, userId: org.userId, issuedAt: now },
      code,
    );
    await tx.flush();
    return { kind: 'issued', code, expiresAt };
  });
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
 * `POST /api/org/delete/confirm`: checks the code, then deletes the organization (`run.ts` gives the steps
 * and their order). Confirming again with the code of a deletion that stopped midway finishes it.
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
  const verdict = await checkCode(em, org, ports.codeKey, code, now);
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

/**
 * Checks `code` against the pending one under the row's lock: a wrong one counts an attempt, a right one is
 * consumed and starts the deletion (dated by the first accepted code).
 */
async function checkCode(
  em: EntityManager,
  org: OrganizationActor,
  codeKey: Uint8Array,
  code: string,
  now: Date,
): Promise<Verdict> {
  // The verdict is returned, not thrown, from the transaction: a counted wrong attempt must be committed.
  return em.transactional(async (tx): Promise<Verdict> => {
    const row = await tx.findOne(
      OrgDeletion,
      { tenant: org.tenant.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!row?.codeHash || !row.codeIssuedAt || !row.requestedBy) return { ok: false, message: REFUSALS.none };
    if (row.requestedBy !== org.userId) return { ok: false, message: REFUSALS.notYours };
    const binding = { tenantId: org.tenant.id, userId: row.requestedBy, issuedAt: row.codeIssuedAt };
    const matches = deletionCodeMatches(codeKey, binding, code, row.codeHash);
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
}
