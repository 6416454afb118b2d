import type { EntityManager } from '@mikro-orm/core';
import type { HoldRule, Role } from '@notary/shared';
import { RetentionRefusal } from '../../db/entities';

/** One refused destruction, as `retention_refusal` keeps it. */
export interface RefusalRecord {
  tenantId: string;
  /** The document refused; absent for an organization deletion. */
  documentId?: string;
  /** `lgpd_deletion`; `org_deletion` (request or confirmation); `org_deletion_run` (a run found a hold). */
  action: 'lgpd_deletion' | 'org_deletion' | 'org_deletion_run';
  rule: HoldRule;
  /** Documents held, for an organization deletion. */
  heldCount?: number;
  /** Who asked (absent for the service's own run). */
  actor?: { userId: string; role: Role; ip: string | null };
  at: Date;
}

/**
 * Writes the audit row of a deletion refused because of a retention hold (`retention_refusal`), flushed at
 * once: in its own transaction when `em` is outside one, else in the caller's, which commits it with nothing
 * deleted.
 */
export async function recordRefusal(em: EntityManager, record: RefusalRecord): Promise<void> {
  em.create(RetentionRefusal, {
    id: crypto.randomUUID(),
    tenantId: record.tenantId,
    documentId: record.documentId ?? null,
    action: record.action,
    rule: record.rule,
    heldCount: record.heldCount ?? null,
    userId: record.actor?.userId ?? null,
    role: record.actor?.role ?? null,
    ip: record.actor?.ip ?? null,
    refusedAt: record.at,
  });
  await em.flush();
}
