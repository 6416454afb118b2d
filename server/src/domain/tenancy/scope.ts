import type { EntityManager, EntityName, FilterQuery } from '@mikro-orm/core';
import {
  AccessLogEntry,
  AccessPolicy,
  AcervoToken,
  AtaRequest,
  Document,
  DocumentAnchor,
  DocumentDeletion,
  DocumentTimestamp,
  Monitor,
  MonitorRun,
  NotarialAct,
  NotarialActHistory,
  NotarySignatureSession,
  OrgDeletion,
  RetentionHoldLift,
  RetentionRefusal,
  Serventia,
  ServentiaChange,
  TenantMember,
  TenantStorage,
} from '../../db/entities';

/** Name of the MikroORM filter that keeps a request's queries inside its tenant. */
export const TENANT_FILTER = 'tenant';

/**
 * Every tenant-owned entity and how its rows name their tenant: directly (`tenant`) or through the document they
 * belong to. An entity added to the schema with a tenant must be listed here (the scope test lists the schema's
 * entities and fails on one that is missing).
 */
export const TENANT_OWNED = {
  Document: (tenantId: string) => ({ tenant: tenantId }),
  TenantMember: (tenantId: string) => ({ tenant: tenantId }),
  TenantStorage: (tenantId: string) => ({ tenant: tenantId }),
  OrgDeletion: (tenantId: string) => ({ tenant: tenantId }),
  AcervoToken: (tenantId: string) => ({ tenant: tenantId }),
  DocumentDeletion: (tenantId: string) => ({ tenant: tenantId }),
  AccessPolicy: (tenantId: string) => ({ document: { tenant: tenantId } }),
  AccessLogEntry: (tenantId: string) => ({ document: { tenant: tenantId } }),
  DocumentAnchor: (tenantId: string) => ({ document: { tenant: tenantId } }),
  DocumentTimestamp: (tenantId: string) => ({ document: { tenant: tenantId } }),
  NotarialAct: (tenantId: string) => ({ tenant: tenantId }),
  NotarialActHistory: (tenantId: string) => ({ tenant: tenantId }),
  Serventia: (tenantId: string) => ({ tenant: tenantId }),
  // Audit records of retention: they name their tenant by id, without a foreign key, to outlive it.
  RetentionHoldLift: (tenantId: string) => ({ tenantId }),
  RetentionRefusal: (tenantId: string) => ({ tenantId }),
  ServentiaChange: (tenantId: string) => ({ tenantId }),
  AtaRequest: (tenantId: string) => ({ document: { tenant: tenantId } }),
  NotarySignatureSession: (tenantId: string) => ({ document: { tenant: tenantId } }),
  Monitor: (tenantId: string) => ({ tenant: tenantId }),
  MonitorRun: (tenantId: string) => ({ monitor: { tenant: tenantId } }),
} as const satisfies Record<string, (tenantId: string) => FilterQuery<object>>;

const ENTITIES: EntityName[] = [
  Document,
  TenantMember,
  TenantStorage,
  OrgDeletion,
  AcervoToken,
  DocumentDeletion,
  AccessPolicy,
  AccessLogEntry,
  DocumentAnchor,
  DocumentTimestamp,
  NotarialAct,
  NotarialActHistory,
  Serventia,
  RetentionHoldLift,
  RetentionRefusal,
  ServentiaChange,
  AtaRequest,
  NotarySignatureSession,
  Monitor,
  MonitorRun,
];

/**
 * Makes `em` (a request's own fork) see only `tenantId`'s rows of every tenant-owned entity, for every query made
 * through it or its forks and transactions: the tenant is scoped in this one place, so no query can forget to filter. A
 * query that must see other tenants (telling 403 from 404 in `findDocumentInTenant`) says so with
 * `filters: { [TENANT_FILTER]: false }`. Returns `em`.
 */
export function scopeToTenant<T extends EntityManager>(em: T, tenantId: string): T {
  em.addFilter({
    name: TENANT_FILTER,
    entity: ENTITIES,
    default: true,
    // The tenant is bound here, not passed as filter parameters at each query.
    args: false,
    cond: (_args, _type, _em, _options, entityName) => {
      const condition = TENANT_OWNED[entityName as keyof typeof TENANT_OWNED];
      if (!condition) throw new Error(`tenant scope: no condition for ${entityName}`);
      return condition(tenantId);
    },
  });
  return em;
}
