import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * Database entities (MikroORM 7 `defineEntity`). Table names are explicit and avoid the identity
 * provider's tables (better-auth) and pg-boss's schema.
 */

/**
 * A tenant: an organization (its id at the identity provider in `externalId`) or a user's personal workspace
 * (the user id in `externalId`). Documents belong to exactly one tenant.
 */
export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenant',
  properties: {
    id: p.uuid().primary(),
    kind: p.enum(['personal', 'organization'] as const),
    externalId: p.string().length(128),
    name: p.string().length(200),
    /** Upper-case serial prefix, 2 to 12 characters [A-Z0-9] (README, Serial numbers). */
    serialPrefix: p.string().length(12),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['kind', 'externalId'] }],
});
export type TenantEntity = InferEntity<typeof Tenant>;

/**
 * The service's own role table (spec, Authentication 5): authorization reads roles here, never from the
 * token's role hint. Reconciled with the identity provider's memberships.
 */
export const TenantMember = defineEntity({
  name: 'TenantMember',
  tableName: 'tenant_member',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    userId: p.string().length(128),
    role: p.enum(['owner', 'admin', 'editor', 'reader'] as const),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'userId'] }],
  indexes: [{ properties: ['userId'] }],
});
export type TenantMemberEntity = InferEntity<typeof TenantMember>;

/** A notarized record (spec, Resources: Document). `storageKey` is null for reference-only imports. */
export const Document = defineEntity({
  name: 'Document',
  tableName: 'document',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    serialNumber: p.string().length(32).unique(),
    fileName: p.string().length(1024),
    fileSize: p.bigint('number'),
    mimeType: p.string().length(255),
    sha256Hash: p.string().length(64).fieldName('sha256_hash').index(),
    sourceType: p.enum(['upload', 'ipfs', 'fileverse', 'web-capture'] as const),
    sourceUri: p.text().nullable(),
    storageKey: p.string().length(512).nullable(),
    screenshotKey: p.string().length(512).nullable(),
    onchainStatus: p.enum(['pending', 'registered'] as const).default('pending'),
    onchainTxHash: p.string().length(66).nullable(),
    onchainAttestationUid: p.string().length(66).nullable(),
    onchainAt: p.datetime().nullable(),
    stacksStatus: p.enum(['pending', 'registered'] as const).default('pending'),
    stacksTxId: p.string().length(66).nullable(),
    stacksAnchoredAt: p.datetime().nullable(),
    consentGiven: p.boolean(),
    consentTimestamp: p.datetime(),
    uploaderUserId: p.string().length(128),
    uploaderIp: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    published: p.boolean().default(false),
    publishedAt: p.datetime().nullable(),
    acervoTitle: p.string().length(500).nullable(),
    acervoAuthor: p.string().length(500).nullable(),
    metadata: p.text().nullable(),
    /** Set by an LGPD deletion: the bytes are gone, the hash stays on record (spec, item 8). */
    deletedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['tenant', 'createdAt'] }],
});
export type DocumentEntity = InferEntity<typeof Document>;

export const entities = [Tenant, TenantMember, Document];
