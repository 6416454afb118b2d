import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import { OrgDeletion } from '../../../db/entities';
import { recordRefusal } from '../../retention/audit';
import { holdDetails, tenantHold } from '../../retention/hold';
import type { OrganizationActor } from '../../tenancy/actor';

/**
 * A deletion meeting a retention hold (`domain/retention/hold.ts`): while any document of the organization is
 * held (a notarial act, or the retention of its declared serventia, not lifted by the operator), the request,
 * the confirmation and a run are refused with CONFLICT and the refusal is written to `retention_refusal`; a
 * run that finds a held document in a batch cancels the deletion unless the organization is already gone at
 * the provider.
 */

/** Held documents a batch found: how many, and the rule of the first. */
export interface HeldInBatch {
  count: number;
  rule: 'notarial_act' | 'retention_period';
}

/**
 * Refuses the deletion of `org`'s tenant while any of its documents is held (`tenantHold`), writing the
 * refusal to `retention_refusal` first.
 * @throws AppError CONFLICT naming the rule and LGPD art. 16 I, the hold in `details`.
 */
export async function refuseWhileHeld(em: EntityManager, org: OrganizationActor, now: Date): Promise<void> {
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

/** A run's refusal when a batch found held documents. */
export function heldMidRun(count: number): AppError {
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
export async function cancelHeldDeletion(
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
