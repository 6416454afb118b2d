import type { EntityManager } from '@mikro-orm/core';
import { type Log, silentLog } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import { OrgDeletion, Tenant, TenantMember } from '../../../db/entities';
import { holdDetails, tenantHold } from '../../retention/hold';
import { atProvider } from '../guard';
import { deleteDocuments } from './batches';
import { cancelHeldDeletion, heldMidRun } from './hold';
import { noticeRecipients, sendNotices } from './notices';
import {
  clockOf,
  type DeletionRunOutcome,
  type DeletionTarget,
  DOCUMENT_BATCH,
  LEASE_MS,
  MAX_DOCUMENT_BATCH,
  type OrgDeletionRunPorts,
} from './ports';
import { sweepPrefix } from './sweep';

/**
 * The leased run of a started deletion's steps, each recorded in the `org_deletion` row so that a retry
 * continues where a failure stopped: collect the members' e-mail addresses at the identity provider (before
 * anything is removed); delete every stored object of every document (file and screenshot) then the document
 * rows, batch by batch in id order (`batches.ts`), then every remaining object under the tenant's storage
 * prefix `<tenantId>/`; e-mail each member the notice; remove the organization at the provider; remove the
 * service's tenant rows (tenant, role table, this row). On-chain records stay: nothing is written to or
 * removed from a chain (anchor batches and transactions are not the tenant's rows; a document's Merkle proof
 * goes with its row).
 *
 * A run holds a lease renewed after each batch. A run that stops (a failure, or its process killed) is
 * finished by the resume job (`resume.ts`) once the lease ran out, or at once by confirming again.
 */

/** What every step of one run uses. */
interface Run {
  em: EntityManager;
  ports: OrgDeletionRunPorts;
  target: DeletionTarget;
  batchSize: number;
  log: Log;
  /** Moves the lease {@link LEASE_MS} past now; resolves to the rows updated. */
  renewLease: () => Promise<number>;
}

/** The end of a lease taken or renewed at `now`. */
const leaseFrom = (now: Date) => new Date(now.getTime() + LEASE_MS);

/**
 * Runs (or resumes) the steps of a started deletion under a lease: resolves `finished` once the organization
 * is gone, `busy` when another run holds the lease (the caller decides whether that is an error).
 * @throws AppError BAD_REQUEST for `ports.batchSize` outside 1..10000; CONFLICT when a document is held
 *   (`hold.ts`); BAD_GATEWAY (provider or mail failure midway; the row keeps what is done), or the storage's
 *   and the database's errors: the lease is released and the row says where to resume.
 */
export async function runDeletion(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  target: DeletionTarget,
): Promise<DeletionRunOutcome> {
  const batchSize = ports.batchSize ?? DOCUMENT_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_DOCUMENT_BATCH) {
    throw new AppError('BAD_REQUEST', `The deletion batch size must be 1 to ${MAX_DOCUMENT_BATCH} documents`);
  }
  const { deletionId, tenantId } = target;
  const claimedAt = clockOf(ports);
  const claimed = await em.nativeUpdate(
    OrgDeletion,
    { id: deletionId, $or: [{ leaseUntil: null }, { leaseUntil: { $lt: claimedAt } }] },
    { leaseUntil: leaseFrom(claimedAt), progressAt: claimedAt },
  );
  if (claimed === 0) return 'busy';
  const run: Run = {
    em,
    ports,
    target,
    batchSize,
    log: ports.log ?? silentLog,
    renewLease: () => {
      const now = clockOf(ports);
      return em.nativeUpdate(
        OrgDeletion,
        { id: deletionId },
        { leaseUntil: leaseFrom(now), progressAt: now },
      );
    },
  };
  let finished = false;
  try {
    const state = await em.findOneOrFail(OrgDeletion, { id: deletionId }, { disableIdentityMap: true });
    // 0. Retention: nothing is touched while a document is held (checked again batch by batch below).
    if (!state.filesDeletedAt) await refuseHeldBeforeStart(run);
    // 1. Who to notify, asked before anything is removed.
    const recipients = state.noticeRecipients ?? (await collectRecipients(run));
    // 2. Stored objects, then document rows, batch by batch; then whatever else the tenant's prefix holds.
    if (!state.filesDeletedAt) await deleteFiles(run);
    // 3. The notice, one member at a time.
    if (!state.noticesSentAt) {
      await sendNotices(em, ports, target, state, recipients, run.log);
      await em.nativeUpdate(OrgDeletion, { id: deletionId }, { noticesSentAt: clockOf(ports) });
      run.log.info(`${tenantId}: members notified`);
    }
    // 4. The organization at the identity provider, with its memberships and invitations.
    if (!state.providerDeletedAt) await deleteAtProvider(run);
    // 5. The service's rows.
    await removeTenant(run);
    finished = true;
    run.log.info(`${tenantId}: organization deleted`);
    await finalSweep(run);
    return 'finished';
  } finally {
    if (!finished) await releaseLease(run);
  }
}

/**
 * Cancels the deletion (`cancelHeldDeletion`) when a document of the tenant is held before any is deleted.
 * @throws AppError CONFLICT with the hold in `details`.
 */
async function refuseHeldBeforeStart({ em, ports, target }: Run): Promise<void> {
  const hold = await tenantHold(em, target.tenantId, clockOf(ports));
  if (!hold) return;
  await cancelHeldDeletion(em, target.deletionId, target.tenantId, hold.rule, hold.held, clockOf(ports));
  throw new AppError('CONFLICT', hold.message, { details: holdDetails(hold) });
}

/**
 * The members' addresses, from the identity provider, recorded in the row: once the organization is gone at
 * the provider, its member list is gone too.
 * @throws AppError BAD_GATEWAY when the provider fails (nothing is deleted yet).
 */
async function collectRecipients({ em, ports, target }: Run): Promise<string[]> {
  const members = await atProvider(
    () => ports.directory.listMembers(target.organizationId),
    'The identity provider failed to list the members; nothing was deleted yet: confirm again with the same code',
  ).catch((e: unknown) => {
    // Removed at the provider already (by someone else): nobody left to list, the rest still applies.
    if (e instanceof AppError && e.code === 'NOT_FOUND') return [];
    throw e;
  });
  const recipients = noticeRecipients(members.map((m) => m.email));
  await em.nativeUpdate(OrgDeletion, { id: target.deletionId }, { noticeRecipients: recipients });
  return recipients;
}

/**
 * The tenant's documents (objects, then rows) and every object under its prefix; cancels the deletion when a
 * batch finds a held document.
 * @throws AppError CONFLICT (`heldMidRun`) when a batch found held documents.
 */
async function deleteFiles(run: Run): Promise<void> {
  const { em, ports, target, batchSize, log } = run;
  const { deletionId, tenantId } = target;
  log.info(`${tenantId}: deleting documents, ${batchSize} per batch`);
  const held = await deleteDocuments(em, ports, deletionId, tenantId, batchSize, log);
  if (held) {
    await cancelHeldDeletion(em, deletionId, tenantId, held.rule, held.count, clockOf(ports));
    throw heldMidRun(held.count);
  }
  await sweepPrefix(ports.storage, tenantId, run.renewLease);
  await em.nativeUpdate(OrgDeletion, { id: deletionId }, { filesDeletedAt: clockOf(ports) });
  log.info(`${tenantId}: documents and files deleted`);
}

/** Removes the organization at the identity provider. @throws AppError BAD_GATEWAY when the provider fails. */
async function deleteAtProvider({ em, ports, target }: Run): Promise<void> {
  await atProvider(
    () => ports.directory.deleteOrganization(target.organizationId),
    "The organization's documents and files are deleted, but removing the organization at the identity provider failed: the service retries by itself; or confirm again with the same code to finish now",
  ).catch((e: unknown) => {
    // Gone already (removed at the provider by someone else): that is the goal of this step.
    if (e instanceof AppError && e.code === 'NOT_FOUND') return;
    throw e;
  });
  await em.nativeUpdate(OrgDeletion, { id: target.deletionId }, { providerDeletedAt: clockOf(ports) });
}

/**
 * The service's rows. An upload that slipped in while the steps above ran (its token was still valid)
 * stored its object before inserting its row: delete such rows with their objects, sweep again, then
 * remove the tenant, whose foreign keys cascade to the role table, the deletion's row and anything left.
 * @throws AppError CONFLICT (`heldMidRun`) when such a late document is held.
 */
async function removeTenant(run: Run): Promise<void> {
  const { em, ports, target, batchSize, log } = run;
  const { deletionId, tenantId } = target;
  await em.nativeUpdate(OrgDeletion, { id: deletionId }, { documentCursor: null });
  const late = await deleteDocuments(em, ports, deletionId, tenantId, batchSize, log);
  // The organization is gone at the provider: no cancelling now; the resume job retries until the operator
  // lifts the hold (an act recorded on a document uploaded during the deletion).
  if (late) throw heldMidRun(late.count);
  await sweepPrefix(ports.storage, tenantId, run.renewLease);
  await em.transactional(async (tx) => {
    await tx.nativeDelete(TenantMember, { tenant: tenantId });
    await tx.nativeDelete(Tenant, { id: tenantId });
  });
}

/**
 * The prefix swept once more after the tenant is gone. An upload whose row insert raced the removal fails on
 * the foreign key and deletes its own object; one whose object was stored after the sweep but whose row was
 * cascaded away is caught here (and, should this fail, by the orphan sweep: its key has no live row).
 */
async function finalSweep({ ports, target, log }: Run): Promise<void> {
  // Best effort: the tenant is gone, so a failure can no longer be retried by the user, only logged.
  await sweepPrefix(ports.storage, target.tenantId, async () => 0).catch((e: unknown) =>
    log.warn(`final sweep of ${target.tenantId}/ failed: ${String(e)}`),
  );
}

/**
 * Frees the deletion at once for a retry after a failed run; `progressAt` dates the failure, so the resume
 * job leaves the user's own retry a head start. A failure to do so is logged (the lease then runs out).
 */
async function releaseLease({ em, ports, target, log }: Run): Promise<void> {
  await em
    .nativeUpdate(OrgDeletion, { id: target.deletionId }, { leaseUntil: null, progressAt: clockOf(ports) })
    .catch((e: unknown) => log.warn(`could not release the lease of ${target.deletionId}: ${String(e)}`));
}
