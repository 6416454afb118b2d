import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import { OrgDeletion, Tenant } from '../../../db/entities';
import { clockOf, type DeletionRunOutcome, type OrgDeletionRunPorts } from './ports';
import { targetOf } from './resume';
import { runDeletion } from './run';

/**
 * Deletes the organization of tenant `tenantId` at once, without a code: marks its deletion started (as an
 * accepted code would) and runs it to the end in this process, in batches of `ports.batchSize` documents,
 * reporting each batch through `ports.log`. For operators' scripts and the benchmark; a run cut short
 * (SIGKILL included) is finished by the service's resume job or by calling this again.
 * @returns `finished`, or `busy` when another run holds the deletion right now (it will finish it).
 * @throws AppError NOT_FOUND when the tenant is not an organization's, BAD_REQUEST for a batch size outside
 *   1..10000; the run's errors as `confirmOrganizationDeletion`'s.
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
