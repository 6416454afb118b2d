import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, isRole, ROLE_RANK, type Role, UUID_PATTERN } from '@notary/shared';
import { Tenant } from '../../db/entities';
import type { OrganizationDirectory } from '../../ports/directory';
import type { IdentityAdmin } from '../../ports/identity';
import type { ObjectStorage } from '../../ports/storage';
import { ORPHAN_GRACE_MS, sweepOrphanedObjects } from '../documents/orphans';
import { recountStorage } from '../documents/quota';
import { organizationDeletionStatus } from '../org/deletion';
import { liftRetentionHold } from '../retention/lift';
import { changeServentiaByOperator } from '../retention/serventia';
import { cancelInvitationsNoLongerGrantable } from '../team/grants';
import { ensureOrganizationTenant, ensurePersonalTenant, setTenantRole } from '../tenancy/resolve';

/**
 * Operator commands (`npm run notary -- <command>`), acting with direct access to the identity provider
 * and the database; never exposed over HTTP. Each returns what the CLI prints.
 */
export interface OperatorContext {
  em: EntityManager;
  identity: IdentityAdmin;
  /** Organizations and memberships at the provider; needed by `org:list`, `org:members`, `org:transfer`. */
  directory?: OrganizationDirectory | undefined;
  /** The service's object storage; needed by `storage:sweep`. */
  storage?: ObjectStorage | undefined;
}

export type OperatorCommand =
  | { command: 'user:create'; email: string }
  | { command: 'org:create'; name: string; owner: string }
  | { command: 'member:add'; org: string; email: string; role: string }
  | { command: 'token'; email: string; org?: string | undefined }
  | { command: 'org:list' }
  | { command: 'org:members'; org: string }
  | { command: 'org:transfer'; org: string; to: string }
  | { command: 'anchors:status' }
  | { command: 'org:deletion-status' }
  | { command: 'storage:sweep'; graceMinutes?: number | undefined }
  | { command: 'storage:recount'; tenant?: string | undefined }
  | {
      command: 'retention:lift';
      /** A document id or serial number; exactly one of `document` and `org`. */
      document?: string | undefined;
      /** An organization's slug, or a tenant id. */
      org?: string | undefined;
      reason: string;
      /** Who lifts it, for the record (the CLI gives the OS user when `--operator` is absent). */
      operator: string;
    }
  | {
      command: 'serventia:set';
      /** An organization's slug, or a tenant id. */
      org: string;
      /** Exactly one of `years`, `permanent` and `remove`. */
      years?: number | undefined;
      permanent?: boolean | undefined;
      remove?: boolean | undefined;
      reason: string;
      operator: string;
    };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e)) throw new AppError('BAD_REQUEST', `Not an e-mail address: ${email}`);
  return e;
}

async function userByEmail(ctx: OperatorContext, email: string) {
  const user = await ctx.identity.findUserByEmail(normalizeEmail(email));
  if (!user) throw new AppError('NOT_FOUND', `No user with e-mail ${email} (create it with user:create)`);
  return user;
}

function directoryOf(ctx: OperatorContext): OrganizationDirectory {
  if (!ctx.directory)
    throw new Error('This command needs the organization directory of the identity provider');
  return ctx.directory;
}

/** One output line: tab-separated columns, tabs and line breaks inside a value replaced by spaces. */
function row(...columns: (string | number)[]): string {
  return columns.map((c) => String(c).replace(/[\t\r\n]+/g, ' ')).join('\t');
}

async function orgBySlug(ctx: OperatorContext, slug: string) {
  const org = await ctx.identity.findOrganizationBySlug(slug.trim().toLowerCase());
  if (!org) throw new AppError('NOT_FOUND', `No organization with slug ${slug}`);
  return org;
}

/**
 * The service's tenant named by `idOrSlug`: a tenant id (a personal workspace's or an organization's), else an
 * organization's slug at the identity provider.
 * @throws AppError NOT_FOUND when neither names a tenant of the service.
 */
async function tenantIdOf(ctx: OperatorContext, idOrSlug: string): Promise<string> {
  const text = idOrSlug.trim();
  if (UUID_PATTERN.test(text)) {
    const byId = await ctx.em.findOne(Tenant, { id: text.toLowerCase() }, { fields: ['id'] });
    if (byId) return byId.id;
  }
  const org = await ctx.identity.findOrganizationBySlug(text.toLowerCase());
  const tenant = org
    ? await ctx.em.findOne(Tenant, { kind: 'organization', externalId: org.id }, { fields: ['id'] })
    : null;
  if (!tenant) throw new AppError('NOT_FOUND', `No tenant with id or organization slug ${idOrSlug}`);
  return tenant.id;
}

/**
 * Runs one operator command.
 * - `user:create`: creates the user (idempotent) and their personal workspace; prints the user id.
 * - `org:create`: creates the organization with the owner (an existing user); prints `<id> <slug>`.
 * - `member:add`: adds or updates a membership with the role owner|admin|editor|reader; the member's pending
 *   invitations the new role could not give are canceled first (`cancelInvitationsNoLongerGrantable`).
 * - `token`: prints a session JWT for the user, with the organization active when `org` is given.
 * - `org:list`: one line per organization at the provider: `<id>\t<slug>\t<name>\t<member count>`, by slug.
 * - `org:members`: one line per member at the provider: `<email>\t<role>`, owners first, then by e-mail.
 * - `anchors:status`: the anchoring pipeline, see `anchorsStatus`.
 * - `org:deletion-status`: one line per organization deletion confirmed and not finished, oldest first:
 *   `<tenant id>\t<organization name>\t<step>\t<running|stopped>\tdocuments <deleted>/<total>\tleft <n>\t
 *   batches <n>\tstarted <ISO>\tprogress <ISO or ->` (`organizationDeletionStatus`; total and left are `-`
 *   before the documents step), or `none` when no deletion is under way.
 * - `storage:sweep`: removes stored objects no live document references, older than `graceMinutes` (default
 *   60), and incomplete uploads older than a day; prints `scanned <n>`, `removed <n>`, `kept-young <n>`,
 *   `incomplete-uploads <n>`, then one `removed <key>` line per object (the first 1000).
 * - `storage:recount`: recomputes the storage quota's used-bytes counter of one tenant (`tenant`: its id, or an
 *   organization's slug) or of every tenant from the Document rows (`recountStorage`); prints `checked <n>`,
 *   `drifted <n>`, then `drifted <tenant id> <bytes before> <bytes after>` per tenant it corrected.
 * - `retention:lift`: lifts the retention hold (a notarial act, the serventia's retention) of one document
 *   (`document`: its id or serial number) or of every document of a tenant (`org`: an organization's slug or a
 *   tenant id), recording `operator`, `reason` and the time in `retention_hold_lift` (`liftRetentionHold`);
 *   prints `lifted document <id> <serial>` or `lifted tenant <id>`. The LGPD deletion of the document, or
 *   the organization's deletion, then works.
 * - `serventia:set`: sets the retention of an organization's declared serventia to `years` or `permanent`
 *   (shorter included, which its members cannot do), or `remove`s the serventia, recording `operator`,
 *   `reason` and the time in `serventia_change` (`changeServentiaByOperator`); prints
 *   `serventia <tenant id> retention <n> years|permanent` or `serventia <tenant id> removed`.
 * - `org:transfer`: makes the member `to` the owner and every previous owner an admin, at the provider and in
 *   the service's role table. The new owner is promoted before anyone is demoted, so the organization never
 *   lacks an owner; a failure midway leaves extra owners, and running the command again finishes the job.
 *   The previous owners' pending invitations for owner are canceled (an admin could not give them).
 * @throws AppError BAD_REQUEST (invalid input, transfer to a non-member), NOT_FOUND (unknown user or
 *   organization), BAD_GATEWAY (provider failure).
 */
export async function runOperatorCommand(ctx: OperatorContext, cmd: OperatorCommand): Promise<string> {
  switch (cmd.command) {
    case 'user:create': {
      const user = await ctx.identity.ensureUser({ email: normalizeEmail(cmd.email) });
      await ensurePersonalTenant(ctx.em, user.id, user.email);
      return user.id;
    }
    case 'org:create': {
      const name = cmd.name.trim();
      if (name.length < 1 || name.length > 120)
        throw new AppError('BAD_REQUEST', 'Organization name must be 1 to 120 characters');
      const owner = await userByEmail(ctx, cmd.owner);
      const org = await ctx.identity.createOrganization({ name, ownerUserId: owner.id });
      const tenant = await ensureOrganizationTenant(ctx.em, org);
      await setTenantRole(ctx.em, tenant, owner.id, 'owner');
      return `${org.id} ${org.slug}`;
    }
    case 'member:add': {
      if (!isRole(cmd.role))
        throw new AppError('BAD_REQUEST', `Role must be owner, admin, editor or reader (got ${cmd.role})`);
      const role: Role = cmd.role;
      const org = await orgBySlug(ctx, cmd.org);
      const user = await userByEmail(ctx, cmd.email);
      // As the team routes: invitations the member could no longer give go first.
      await cancelInvitationsNoLongerGrantable(directoryOf(ctx), org.id, [{ userId: user.id, role }]);
      await ctx.identity.setMember({ organizationId: org.id, userId: user.id, role });
      const tenant = await ensureOrganizationTenant(ctx.em, org);
      await setTenantRole(ctx.em, tenant, user.id, role);
      return `${user.email} is ${role} of ${org.slug}`;
    }
    case 'token': {
      const user = await userByEmail(ctx, cmd.email);
      const org = cmd.org ? await orgBySlug(ctx, cmd.org) : undefined;
      return ctx.identity.issueSessionToken({ userId: user.id, ...(org ? { organizationId: org.id } : {}) });
    }
    case 'org:list': {
      const directory = directoryOf(ctx);
      const organizations = (await directory.listOrganizations()).sort((a, b) =>
        a.slug.localeCompare(b.slug),
      );
      const lines: string[] = [];
      for (const org of organizations) {
        const members = await directory.listMembers(org.id);
        lines.push(row(org.id, org.slug, org.name, members.length));
      }
      return lines.join('\n');
    }
    case 'org:members': {
      const directory = directoryOf(ctx);
      const org = await orgBySlug(ctx, cmd.org);
      const members = await directory.listMembers(org.id);
      members.sort((a, b) => ROLE_RANK[b.role] - ROLE_RANK[a.role] || a.email.localeCompare(b.email));
      return members.map((m) => row(m.email, m.role)).join('\n');
    }
    case 'org:transfer': {
      const directory = directoryOf(ctx);
      const org = await orgBySlug(ctx, cmd.org);
      const user = await userByEmail(ctx, cmd.to);
      const members = await directory.listMembers(org.id);
      if (!members.some((m) => m.userId === user.id)) {
        throw new AppError('BAD_REQUEST', `${user.email} is not a member of ${org.slug} (add them first)`);
      }
      const previous = members.filter((m) => m.role === 'owner' && m.userId !== user.id);
      const tenant = await ensureOrganizationTenant(ctx.em, org);
      await directory.setMemberRole(org.id, user.id, 'owner');
      await setTenantRole(ctx.em, tenant, user.id, 'owner');
      // Former owners keep their admin, editor and reader invitations; owner invitations go.
      await cancelInvitationsNoLongerGrantable(
        directory,
        org.id,
        previous.map((m) => ({ userId: m.userId, role: 'admin' as const })),
      );
      for (const owner of previous) {
        await directory.setMemberRole(org.id, owner.userId, 'admin');
        await setTenantRole(ctx.em, tenant, owner.userId, 'admin');
      }
      const demoted = previous.map((m) => m.email).join(', ');
      return `${user.email} is owner of ${org.slug}${demoted ? `; now admin: ${demoted}` : ''}`;
    }
    case 'storage:sweep': {
      if (!ctx.storage) throw new Error('This command needs the object storage');
      const graceMinutes = cmd.graceMinutes ?? ORPHAN_GRACE_MS / 60_000;
      if (!Number.isFinite(graceMinutes) || graceMinutes < 0)
        throw new AppError('BAD_REQUEST', '--grace-minutes must be a number of minutes, 0 or more');
      const report = await sweepOrphanedObjects(ctx.em, ctx.storage, { graceMs: graceMinutes * 60_000 });
      return [
        row('scanned', report.scanned),
        row('removed', report.removedCount),
        row('kept-young', report.young),
        row('incomplete-uploads', report.incompleteUploads),
        ...report.removed.map((key) => row('removed', key)),
      ].join('\n');
    }
    case 'storage:recount': {
      const tenantId = cmd.tenant === undefined ? undefined : await tenantIdOf(ctx, cmd.tenant);
      const report = await recountStorage(ctx.em, tenantId);
      return [
        row('checked', report.checked),
        row('drifted', report.drifted.length),
        ...report.drifted.map((t) => row('drifted', t.tenantId, t.before, t.after)),
      ].join('\n');
    }
    case 'retention:lift':
      return retentionLift(ctx, cmd);
    case 'serventia:set':
      return serventiaSet(ctx, cmd);
    case 'anchors:status':
      return anchorsStatus(ctx.em);
    case 'org:deletion-status': {
      const deletions = await organizationDeletionStatus(ctx.em);
      if (deletions.length === 0) return 'none';
      return deletions
        .map((d) =>
          row(
            d.tenantId,
            d.organizationName,
            d.step,
            d.running ? 'running' : 'stopped',
            `documents ${d.documentsDeleted}/${d.documentsTotal ?? '-'}`,
            `left ${d.documentsLeft ?? '-'}`,
            `batches ${d.batchesDone}`,
            `started ${d.startedAt.toISOString()}`,
            `progress ${d.progressAt?.toISOString() ?? '-'}`,
          ),
        )
        .join('\n');
    }
  }
}

/** `retention:lift`: lifts the hold of one document, or of every document of an organization (`lift.ts`). */
async function retentionLift(
  ctx: OperatorContext,
  cmd: Extract<OperatorCommand, { command: 'retention:lift' }>,
): Promise<string> {
  if ((cmd.document === undefined) === (cmd.org === undefined)) {
    throw new AppError('BAD_REQUEST', 'retention:lift needs exactly one of --document and --org');
  }
  const target =
    cmd.document !== undefined
      ? { document: cmd.document }
      : { tenantId: await tenantIdOf(ctx, cmd.org ?? '') };
  return liftRetentionHold(ctx.em, target, cmd.operator, cmd.reason);
}

/** `serventia:set`: the operator's change of a serventia's retention, or its removal (`serventia.ts`). */
async function serventiaSet(
  ctx: OperatorContext,
  cmd: Extract<OperatorCommand, { command: 'serventia:set' }>,
): Promise<string> {
  const chosen = [cmd.years !== undefined, cmd.permanent === true, cmd.remove === true].filter(Boolean);
  if (chosen.length !== 1) {
    throw new AppError('BAD_REQUEST', 'serventia:set needs exactly one of --years, --permanent and --remove');
  }
  const change =
    cmd.remove === true
      ? 'remove'
      : cmd.permanent === true
        ? 'permanent'
        : { years: cmd.years ?? Number.NaN };
  return changeServentiaByOperator(ctx.em, await tenantIdOf(ctx, cmd.org), change, cmd.operator, cmd.reason);
}

/** How many failed or retrying transactions `anchors:status` details. */
const STATUS_ERROR_LINES = 20;

/**
 * `anchors:status`: the anchoring pipeline at a glance, tab-separated, one line per row:
 * - `unbatched <count>`: documents pending on a chain and in no batch yet (the next collection takes them);
 * - `batch <status> <count>` per batch status (open, anchored, failed);
 * - `tx <chain> <state> <count>` per chain and transaction state (queued, signed, broadcast, included,
 *   confirmed, failed);
 * - `error <chain> <state> <batch id> <attempts> <tx hash or -> <next attempt ISO> <last error>`: the
 *   failed transactions and those retrying after an error (not confirmed, with a last error), most recently
 *   updated first, at most 20.
 */
export async function anchorsStatus(em: EntityManager): Promise<string> {
  const sql = em as SqlEntityManager;
  const lines: string[] = [];
  const unbatched: { n: string | number }[] = await sql.execute(
    `select count(*) as n from document d
      where (d.onchain_status = 'pending' or d.stacks_status = 'pending')
        and not exists (select 1 from document_anchor a where a.document_id = d.id)`,
  );
  lines.push(row('unbatched', Number(unbatched[0]?.n ?? 0)));
  const batches: { status: string; n: string | number }[] = await sql.execute(
    'select status, count(*) as n from anchor_batch group by status order by status',
  );
  for (const b of batches) lines.push(row('batch', b.status, Number(b.n)));
  const txs: { chain: string; state: string; n: string | number }[] = await sql.execute(
    'select chain, state, count(*) as n from anchor_tx group by chain, state order by chain, state',
  );
  for (const t of txs) lines.push(row('tx', t.chain, t.state, Number(t.n)));
  const errors: {
    chain: string;
    state: string;
    batch_id: string;
    attempts: number;
    tx_hash: string | null;
    next_attempt_at: Date | string;
    last_error: string | null;
  }[] = await sql.execute(
    `select chain, state, batch_id, attempts, tx_hash, next_attempt_at, last_error from anchor_tx
      where state = 'failed' or (state <> 'confirmed' and last_error is not null)
      order by updated_at desc limit ?`,
    [STATUS_ERROR_LINES],
  );
  for (const e of errors) {
    lines.push(
      row(
        'error',
        e.chain,
        e.state,
        e.batch_id,
        e.attempts,
        e.tx_hash ?? '-',
        new Date(e.next_attempt_at).toISOString(),
        e.last_error ?? '',
      ),
    );
  }
  return lines.join('\n');
}
