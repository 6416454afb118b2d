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
    /** Upper-case serial prefix, 2 to 12 characters [A-Z0-9] (docs/api.md, Serial numbers). */
    serialPrefix: p.string().length(12),
    /**
     * `serialPrefixKey(serialPrefix)` (`@notary/shared`: `O`→`0`, `I`/`L`→`1`), unique: no two tenants hold
     * prefixes that read alike. Null only on tenants created before the key existed that shared their key with
     * an older tenant: they keep their prefix (issued serials name them), and the older one holds the key.
     */
    serialPrefixKey: p.string().length(12).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['kind', 'externalId'] }, { properties: ['serialPrefixKey'] }],
});
export type TenantEntity = InferEntity<typeof Tenant>;

/**
 * Bytes a tenant keeps in object storage, the figure its storage quota is checked against
 * (`domain/documents/quota.ts`): always the sum of `file_size` over its Document rows with `deleted_at` null and
 * `storage_key` not null, kept in the same transactions that add or remove such rows, so an upload reads one
 * row instead of summing over the whole archive. Objects without a row (what the orphan sweep removes) were
 * never counted, so the sweep leaves it alone. A table of its own, not a column of `tenant`: its row lock,
 * held from an upload's increment to its commit, never waits on nor blocks other changes to the tenant.
 * Missing for a tenant that never stored a file; `storage:recount` rebuilds it from the rows.
 */
export const TenantStorage = defineEntity({
  name: 'TenantStorage',
  tableName: 'tenant_storage',
  properties: {
    tenant: () => p.oneToOne(Tenant).primary().deleteRule('cascade'),
    /** Bytes, the sum described above. */
    usedBytes: p.bigint('number'),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
export type TenantStorageEntity = InferEntity<typeof TenantStorage>;

/**
 * The service's own role table (spec, Authentication: item 5): authorization reads roles here, never from the
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

/** A notarized record (spec, Document). `storageKey` is null for reference-only imports. */
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
    /** Indexed with `varchar_pattern_ops` (see `indexes`): equality and prefix search alike. */
    sha256Hash: p.string().length(64).fieldName('sha256_hash'),
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
    /**
     * Set by an LGPD deletion: the bytes are gone, the hash stays on record (spec, What the service does:
     * item 8).
     */
    deletedAt: p.datetime().nullable(),
  },
  // Migration20261126170100 writes these; docs/api.md (Documents list, Acervo feed) says which query each serves.
  indexes: [
    /** The documents list: a tenant's rows by `(createdAt desc, id desc)`, read backwards (keyset paging). */
    { properties: ['tenant', 'createdAt', 'id'] },
    /** The acervo feed: a tenant's published, non-deleted documents, newest publication first. */
    {
      name: 'document_acervo_index',
      properties: ['tenant', 'publishedAt', 'createdAt', 'id'],
      where: '"published" and "deleted_at" is null',
    },
    /** Public verify (equality) and the list's hash-prefix search (`LIKE 'p%'` under any collation). */
    {
      name: 'document_sha256_hash_pattern_index',
      expression:
        'create index "document_sha256_hash_pattern_index" on "document" ("sha256_hash" varchar_pattern_ops)',
    },
    /** The list's serial-prefix search. */
    {
      name: 'document_serial_number_pattern_index',
      expression:
        'create index "document_serial_number_pattern_index" on "document" ("serial_number" varchar_pattern_ops)',
    },
    /** The list's file name search (`ILIKE '%part%'`), trigrams of `pg_trgm`. */
    {
      name: 'document_file_name_trgm_index',
      expression:
        'create index "document_file_name_trgm_index" on "document" using gin ("file_name" gin_trgm_ops)',
    },
    /** The list's CID search over IPFS imports (`ipfs://<cid>` prefix). */
    {
      name: 'document_ipfs_source_uri_index',
      expression: `create index "document_ipfs_source_uri_index" on "document" ("source_uri" text_pattern_ops) where "source_type" = 'ipfs'`,
    },
    // Migration20261126170300 writes these three.
    /** An organization deletion's batches: the tenant's next ids after its cursor (keyset on id). */
    { name: 'document_tenant_id_id_index', properties: ['tenant', 'id'] },
    /** The orphan sweep: which of a page of listed keys a live document names. */
    {
      name: 'document_storage_key_live_index',
      properties: ['storageKey'],
      where: '"deleted_at" is null and "storage_key" is not null',
    },
    {
      name: 'document_screenshot_key_live_index',
      properties: ['screenshotKey'],
      where: '"deleted_at" is null and "screenshot_key" is not null',
    },
  ],
});
export type DocumentEntity = InferEntity<typeof Document>;

/**
 * A webhook delivery of the identity provider already processed, by its delivery id (`svix-id` for Clerk):
 * a replay or a retry of a processed delivery is acknowledged without being applied again. Rows older than
 * the provider's retry horizon are pruned by the reconcile job.
 */
export const IdentityWebhookDelivery = defineEntity({
  name: 'IdentityWebhookDelivery',
  tableName: 'identity_webhook_delivery',
  properties: {
    /** The provider's delivery id (`svix-id`). */
    id: p.string().length(128).primary(),
    /** The event type the delivery carried (e.g. `organizationMembership.deleted`), for the record. */
    type: p.string().length(128),
    receivedAt: p
      .datetime()
      .onCreate(() => new Date())
      .index(),
  },
});
export type IdentityWebhookDeliveryEntity = InferEntity<typeof IdentityWebhookDelivery>;

/**
 * The two-step deletion of an organization (spec, Organization: `POST /api/org/delete/request` and
 * `/confirm`; `server/src/domain/org/deletion/`). One row per organization tenant, removed with the tenant
 * (cascade) when the deletion completes. It holds:
 * - the pending code: only its HMAC-SHA256 (`codeHash`, 64 hex), bound to the member who asked for it
 *   (`requestedBy`), expiring at `codeExpiresAt`, burnt after 5 wrong attempts (`failedAttempts`), consumed
 *   once accepted (`codeConsumedAt`);
 * - the request rate limit: `requestsInWindow` requests since `requestWindowStart` (fixed one-hour window);
 * - the progress of a confirmed deletion, so that a retry continues where a failure stopped: `startedAt`,
 *   `noticeRecipients` (member e-mails still to notify, collected before anything is removed),
 *   `filesDeletedAt`, `noticesSentAt`, `providerDeletedAt`; `leaseUntil` keeps two runs (confirmations, the
 *   resume job) from running the steps at the same time; the document batches' progress (`documentsTotal`,
 *   `documentsDeleted`, `batchesDone`, `documentCursor`, `progressAt`).
 */
export const OrgDeletion = defineEntity({
  name: 'OrgDeletion',
  tableName: 'org_deletion',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    /** User id of the member who requested the pending code: only they can confirm it. */
    requestedBy: p.string().length(128).nullable(),
    /** Language of the members' notice: the requester's (`MailLanguage` of `@notary/shared`). */
    lang: p.enum(['pt', 'en'] as const).default('pt'),
    /** Hex HMAC-SHA256 of the pending (or consumed) code; never the code itself. */
    codeHash: p.string().length(64).nullable(),
    codeIssuedAt: p.datetime().nullable(),
    codeExpiresAt: p.datetime().nullable(),
    failedAttempts: p.integer().default(0),
    /**
     * When the code was accepted: it is then consumed for this deletion (no longer subject to expiry or
     * attempts) and only resumes it. Reset by a new request.
     */
    codeConsumedAt: p.datetime().nullable(),
    requestWindowStart: p.datetime().nullable(),
    requestsInWindow: p.integer().default(0),
    startedAt: p.datetime().nullable(),
    /** E-mail addresses still to notify (null until collected from the identity provider). */
    noticeRecipients: p.json<string[]>().nullable(),
    filesDeletedAt: p.datetime().nullable(),
    noticesSentAt: p.datetime().nullable(),
    providerDeletedAt: p.datetime().nullable(),
    leaseUntil: p.datetime().nullable(),
    /** The tenant's documents when the deletion reached them (null before): `org:deletion-status`'s total. */
    documentsTotal: p.integer().nullable(),
    /** Document rows deleted so far, moved in the transaction that deletes each batch. */
    documentsDeleted: p.integer().default(0),
    /** Batches of documents deleted so far (their objects, then their rows). */
    batchesDone: p.integer().default(0),
    /** The greatest document id deleted: the next batch reads the tenant's ids after it (null: from the start). */
    documentCursor: p.uuid().nullable(),
    /** When the last batch committed (the operator tells a running deletion from a stalled one). */
    progressAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['tenant'] }],
});
export type OrgDeletionEntity = InferEntity<typeof OrgDeletion>;

/**
 * A Merkle batch of document hashes anchored on every configured chain. `root` is the tree's root
 * (64 hex, no 0x); `leafCount` counts the tree's leaves. The transparency log's checkpoint signed when the batch
 * was cut is its last leaf (`checkpoint*`: size, root, signed note and the leaf's proof; null for a batch cut
 * before the log was anchored or while it had no checkpoint); a batch of one leaf anchors that leaf's value
 * itself. `status` is `open` until every chain's transaction is confirmed (`anchored`), `failed` when one of them
 * failed for good.
 */
export const AnchorBatch = defineEntity({
  name: 'AnchorBatch',
  tableName: 'anchor_batch',
  properties: {
    id: p.uuid().primary(),
    createdAt: p.datetime().onCreate(() => new Date()),
    leafCount: p.integer(),
    root: p.string().length(64),
    status: p.enum(['open', 'anchored', 'failed'] as const).default('open'),
    checkpointSize: p.bigint('number').nullable(),
    checkpointRoot: p.blob().nullable(),
    /** The log's signed note (without cosignatures): the leaf's value is the SHA-256 of its checkpoint text. */
    checkpointNote: p.text().nullable(),
    /** The checkpoint leaf's `MerkleProof` in the batch tree (`domain/anchoring/merkle.ts`). */
    checkpointProof: p
      .json<{ index: number; siblings: { position: 'left' | 'right'; hash: string }[] }>()
      .nullable(),
  },
});
export type AnchorBatchEntity = InferEntity<typeof AnchorBatch>;

/**
 * One anchoring transaction per (batch, chain) and its state machine (`domain/anchoring/anchor-worker.ts`):
 * `queued` (no nonce yet) → `signed` (raw bytes and hash committed, not known to be sent) → `broadcast` →
 * `included` (in a block, documents `registered`) → `confirmed` (enough confirmations); `failed` is final and
 * visible (`anchors:status`). `raw` is exactly what is (re-)broadcast. `nextAttemptAt` schedules the next
 * step and doubles as a claim lease between workers.
 */
export const AnchorTx = defineEntity({
  name: 'AnchorTx',
  tableName: 'anchor_tx',
  properties: {
    id: p.uuid().primary(),
    batch: () => p.manyToOne(AnchorBatch).deleteRule('cascade'),
    chain: p.enum(['evm', 'stacks'] as const),
    state: p.enum(['queued', 'signed', 'broadcast', 'included', 'confirmed', 'failed'] as const),
    /** Decimal string (nonces are bigints). */
    nonce: p.string().length(32).nullable(),
    txHash: p.string().length(66).nullable(),
    raw: p.blob().nullable(),
    /**
     * Hashes of the transactions this row replaced (same nonce, lower fee): one of them may still be mined,
     * which then counts as this row's inclusion (never a second anchoring).
     */
    replacedTxHashes: p.json<string[]>().nullable(),
    /** Decimal strings, in the chain's smallest unit (see `FeeParams`). */
    maxFee: p.string().length(80).nullable(),
    priorityFee: p.string().length(80).nullable(),
    /** Every retry (outages included): drives the backoff. */
    attempts: p.integer().default(0),
    /** Refusals by the node or reverts only: the row fails after `maxAttempts` of them, never for an outage. */
    refusals: p.integer().default(0),
    lastError: p.text().nullable(),
    broadcastAt: p.datetime().nullable(),
    nextAttemptAt: p.datetime(),
    attestationUid: p.string().length(66).nullable(),
    blockNumber: p.bigint('string').nullable(),
    /** Where the transaction was signed for (`ChainNetworkInfo`), recorded at signing: certificates print it. */
    network: p.string().length(64).nullable(),
    /** Stacks chain ids exceed 32 bits (testnet 0x80000000). */
    chainId: p.bigint('number').nullable(),
    /** EAS contract address (EVM) or `<address>.<name>` of the notary contract (Stacks). */
    contract: p.string().length(160).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['batch', 'chain'] }],
  indexes: [{ properties: ['chain', 'state', 'nextAttemptAt'] }],
});
export type AnchorTxEntity = InferEntity<typeof AnchorTx>;

/** A document's place in its batch: its leaf index and Merkle proof (sibling hashes, JSON). */
export const DocumentAnchor = defineEntity({
  name: 'DocumentAnchor',
  tableName: 'document_anchor',
  properties: {
    document: () => p.oneToOne(Document).primary().deleteRule('cascade'),
    batch: () => p.manyToOne(AnchorBatch).deleteRule('cascade').index(),
    leafIndex: p.integer(),
    proof: p.json<unknown>(),
  },
});
export type DocumentAnchorEntity = InferEntity<typeof DocumentAnchor>;

/**
 * An RFC 3161 token issued over a document's SHA-256 by `POST /api/documents/:id/timestamp`, kept for the document's
 * receipt, which proves the hash's time without this service (`domain/documents/receipt.ts`). `token` is the DER
 * TimeStampToken (a CMS ContentInfo, RFC 3161 2.4.2) as the TSA signed it.
 */
export const DocumentTimestamp = defineEntity({
  name: 'DocumentTimestamp',
  tableName: 'document_timestamp',
  properties: {
    id: p.uuid().primary(),
    document: () => p.manyToOne(Document).deleteRule('cascade').index(),
    token: p.blob(),
    genTime: p.datetime(),
    /** TSTInfo serial number, hex. */
    serialNumber: p.string().length(80),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type DocumentTimestampEntity = InferEntity<typeof DocumentTimestamp>;

/**
 * How a document is shared (spec, Access policy: see also docs/sharing.md): a `link` (its opaque token stored only as
 * `tokenHash`, SHA-256 hex), the document's `public` access, `wallet` or `email` addresses (`addresses`, lower
 * case). `accessCount` grows by one per successful access through one conditional UPDATE that never passes
 * `maxAccesses` (`domain/sharing/access.ts`). `revokedAt` is set by a manager or by an LGPD deletion.
 */
export const AccessPolicy = defineEntity({
  name: 'AccessPolicy',
  tableName: 'access_policy',
  properties: {
    id: p.uuid().primary(),
    document: () => p.manyToOne(Document).deleteRule('cascade'),
    kind: p.enum(['link', 'public', 'wallet', 'email'] as const),
    tokenHash: p.string().length(64).nullable().unique(),
    permission: p.enum(['download', 'view'] as const),
    expiresAt: p.datetime().nullable(),
    maxAccesses: p.integer().nullable(),
    accessCount: p.integer().default(0),
    addresses: p.json<string[]>().nullable(),
    /** User id of the member who created it. */
    createdBy: p.string().length(128),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['document', 'kind'] }],
});
export type AccessPolicyEntity = InferEntity<typeof AccessPolicy>;

/** One successful share, public or wallet access (spec, Access log entry), kept after the policy is revoked. */
export const AccessLogEntry = defineEntity({
  name: 'AccessLogEntry',
  tableName: 'access_log_entry',
  properties: {
    id: p.uuid().primary(),
    document: () => p.manyToOne(Document).deleteRule('cascade'),
    policy: () => p.manyToOne(AccessPolicy).deleteRule('cascade').index(),
    accessorType: p.enum(['anonymous', 'wallet', 'email'] as const),
    accessorIdentifier: p.string().length(320),
    permission: p.enum(['download', 'view'] as const),
    ip: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['document', 'createdAt'] }],
});
export type AccessLogEntryEntity = InferEntity<typeof AccessLogEntry>;

/**
 * A wallet-signed access message already used (docs/sharing.md, Wallet messages): SHA-256 of the address and
 * the message, kept until the message is too old to be accepted anyway (`expiresAt`), so a captured signature
 * cannot be replayed even within its freshness window.
 */
export const WalletSignatureUse = defineEntity({
  name: 'WalletSignatureUse',
  tableName: 'wallet_signature_use',
  properties: {
    hash: p.string().length(64).primary(),
    usedAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime().index(),
  },
});
export type WalletSignatureUseEntity = InferEntity<typeof WalletSignatureUse>;

/**
 * A tenant's acervo token (spec, Authentication: item 3): only its SHA-256 hex; one per tenant, so generating a new
 * one replaces (invalidates) the previous. Deleting the row disables the feed.
 */
export const AcervoToken = defineEntity({
  name: 'AcervoToken',
  tableName: 'acervo_token',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade').unique(),
    tokenHash: p.string().length(64).unique(),
    createdBy: p.string().length(128),
    createdAt: p.datetime(),
  },
});
export type AcervoTokenEntity = InferEntity<typeof AcervoToken>;

/** Audit trail of LGPD deletions (docs/sharing.md, LGPD deletion): who deleted which document, when, and why. */
export const DocumentDeletion = defineEntity({
  name: 'DocumentDeletion',
  tableName: 'document_deletion',
  properties: {
    id: p.uuid().primary(),
    document: () => p.oneToOne(Document).deleteRule('cascade').unique(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade').index(),
    deletedBy: p.string().length(128),
    deletedByEmail: p.string().length(254).nullable(),
    /** The deleter's role in the tenant at the time. */
    role: p.enum(['owner', 'admin', 'editor', 'reader'] as const),
    ip: p.string().length(64).nullable(),
    reason: p.string().length(500).nullable(),
    deletedAt: p.datetime(),
  },
});
export type DocumentDeletionEntity = InferEntity<typeof DocumentDeletion>;

/** The kinds of notarial act (`NOTARIAL_ACT_TYPES` of `@notary/shared`, repeated: db/ imports nothing else). */
const ACT_TYPES = ['ata_notarial', 'autenticacao', 'procuracao', 'escritura', 'testamento', 'outro'] as const;

/**
 * The notarial act a tabelião recorded for a document (`domain/acts/`; `@notary/shared` notarial-act.ts): at
 * most one per document, its own row so that the document's hash, serial and anchors never change with it.
 * `mne` is canonical (`CCCCCC.AAAA.MM.DD.NNNNNNNN-DD`) and unique across the service; `seloState` (UF) and
 * `seloCode` are both set or both null. A removed act is deleted here; its history stays in
 * `notarial_act_history`. Migration20261129080000 writes the table and its search indexes.
 */
export const NotarialAct = defineEntity({
  name: 'NotarialAct',
  tableName: 'notarial_act',
  properties: {
    id: p.uuid().primary(),
    document: () => p.oneToOne(Document).deleteRule('cascade').unique(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade').index(),
    type: p.enum(ACT_TYPES),
    mne: p.text().nullable().unique(),
    seloState: p.text().nullable(),
    seloCode: p.text().nullable(),
    book: p.text().nullable(),
    page: p.text().nullable(),
    /** User id of who recorded the act first. */
    recordedBy: p.string().length(128),
    recordedAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  indexes: [
    /** The documents list's MNE search (a prefix `LIKE`, whatever the collation). */
    {
      name: 'notarial_act_mne_pattern_index',
      expression:
        'create index "notarial_act_mne_pattern_index" on "notarial_act" ("mne" text_pattern_ops) where "mne" is not null',
    },
    /** The documents list's selo code search (prefix). */
    {
      name: 'notarial_act_selo_code_pattern_index',
      expression:
        'create index "notarial_act_selo_code_pattern_index" on "notarial_act" ("selo_code" text_pattern_ops) where "selo_code" is not null',
    },
  ],
});
export type NotarialActEntity = InferEntity<typeof NotarialAct>;

/** What a history row keeps of an act, before or after a change. */
export interface NotarialActSnapshot {
  type: (typeof ACT_TYPES)[number];
  mne: string | null;
  selo: { state: string; code: string } | null;
  book: string | null;
  page: string | null;
}

/**
 * Every change of a document's notarial act, written in the transaction of the change: who (user id, e-mail,
 * role in the tenant, IP), when, and the act before and after (`null` before the first record and after a
 * removal). Kept when the act is removed; removed with the document's tenant.
 */
export const NotarialActHistory = defineEntity({
  name: 'NotarialActHistory',
  tableName: 'notarial_act_history',
  properties: {
    id: p.uuid().primary(),
    document: () => p.manyToOne(Document).deleteRule('cascade'),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade').index(),
    action: p.enum(['recorded', 'changed', 'removed'] as const),
    before: p.json<NotarialActSnapshot>().nullable(),
    after: p.json<NotarialActSnapshot>().nullable(),
    actorUserId: p.string().length(128),
    actorEmail: p.string().length(254).nullable(),
    role: p.enum(['owner', 'admin', 'editor', 'reader'] as const),
    ip: p.string().length(64).nullable(),
    at: p.datetime(),
  },
  indexes: [{ properties: ['document', 'at'] }],
});
export type NotarialActHistoryEntity = InferEntity<typeof NotarialActHistory>;

/**
 * The serventia an organization declares itself to be (`PUT /api/org/serventia`): its CNS (6 digits, CNJ
 * Justiça Aberta) and the minimum retention of its documents, `retentionYears` (1 to 100) or null for
 * permanent (Provimento CNJ 50/2015's table). One per tenant; a personal workspace has none.
 */
export const Serventia = defineEntity({
  name: 'Serventia',
  tableName: 'serventia',
  properties: {
    tenant: () => p.oneToOne(Tenant).primary().deleteRule('cascade'),
    cns: p.string().length(6).index(),
    /** Whole years counted from each document's `createdAt`; null: permanent. */
    retentionYears: p.integer().nullable(),
    /** When it was last declared or changed. */
    declaredAt: p.datetime(),
    /** User id of the member who declared it last; null when the operator set it. */
    declaredBy: p.string().length(128).nullable(),
  },
});
export type ServentiaEntity = InferEntity<typeof Serventia>;

/**
 * An operator's lift of a retention hold (`retention:lift`): afterwards the document (`documentId`), or every
 * document of the tenant (`documentId` null), may be destroyed again despite a notarial act or the
 * serventia's retention. An audit record: no foreign keys, so it outlives the document and the tenant it names.
 */
export const RetentionHoldLift = defineEntity({
  name: 'RetentionHoldLift',
  tableName: 'retention_hold_lift',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    /** The lifted document; null when the whole tenant is lifted. */
    documentId: p.uuid().nullable().index(),
    /** The document's serial number at the time (for the record). */
    documentSerial: p.string().length(32).nullable(),
    /** Who lifted it, as the operator gave it (default: the OS user running the CLI). */
    operator: p.string().length(128),
    reason: p.string().length(500),
    liftedAt: p.datetime(),
  },
  indexes: [{ properties: ['tenantId', 'documentId'] }],
});
export type RetentionHoldLiftEntity = InferEntity<typeof RetentionHoldLift>;

/**
 * An operator's change of a declared serventia (`serventia:set`): a retention set (possibly shorter than the
 * members could declare) or the serventia removed, with who, why and when. An audit record without foreign
 * keys: it outlives the tenant it names.
 */
export const ServentiaChange = defineEntity({
  name: 'ServentiaChange',
  tableName: 'serventia_change',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid().index(),
    action: p.enum(['retention', 'remove'] as const),
    cns: p.string().length(6),
    /** The retention before (null: permanent). */
    retentionYearsBefore: p.integer().nullable(),
    /** The retention set (null: permanent, or removed). */
    retentionYearsAfter: p.integer().nullable(),
    operator: p.string().length(128),
    reason: p.string().length(500),
    changedAt: p.datetime(),
  },
});
export type ServentiaChangeEntity = InferEntity<typeof ServentiaChange>;

/**
 * A destruction refused because of a retention hold (docs/sharing.md, LGPD deletion; docs/team.md, Serventia
 * and retention): which action, on
 * which document (null: the organization), by whom, under which rule. An audit record: no foreign keys, so it
 * outlives what it names.
 */
export const RetentionRefusal = defineEntity({
  name: 'RetentionRefusal',
  tableName: 'retention_refusal',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid().index(),
    documentId: p.uuid().nullable().index(),
    /** `lgpd_deletion`, `org_deletion` (request or confirm), `org_deletion_run` (a batch found a hold). */
    action: p.enum(['lgpd_deletion', 'org_deletion', 'org_deletion_run'] as const),
    rule: p.enum(['notarial_act', 'retention_period'] as const),
    /** Documents held when an organization deletion was refused; null for one document. */
    heldCount: p.integer().nullable(),
    /** The member who asked; null for the service's own run. */
    userId: p.string().length(128).nullable(),
    role: p.enum(['owner', 'admin', 'editor', 'reader'] as const).nullable(),
    ip: p.string().length(64).nullable(),
    refusedAt: p.datetime(),
  },
});
export type RetentionRefusalEntity = InferEntity<typeof RetentionRefusal>;

/**
 * A deferred signature by the tabelião's own certificate (`domain/certificates/notary-signature.ts`): the
 * certificate prepared with the signer's field (`preparedPdf`), the CAdES signed attributes answered
 * (`signedAttributes`, DER) for the announced chain (`certificates`, base64 DER, leaf first), bound to the member
 * who asked and to the document, valid until `expiresAt`. Completing it sets `completedAt` once (a conditional
 * UPDATE), with the signed file, its SHA-256 hex and the PAdES level reached; nothing else is written before.
 */
export const NotarySignatureSession = defineEntity({
  name: 'NotarySignatureSession',
  tableName: 'notary_signature_session',
  properties: {
    id: p.uuid().primary(),
    document: () => p.manyToOne(Document).deleteRule('cascade').index(),
    userId: p.string().length(128),
    policy: p.enum(['icp-brasil-ad-rb', 'icp-brasil-ad-rt'] as const),
    certificates: p.json<string[]>(),
    signedAttributes: p.blob(),
    preparedPdf: p.blob(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    signedPdf: p.blob().nullable(),
    signedPdfSha256: p.string().length(64).nullable(),
    level: p.string().length(8).nullable(),
  },
});
export type NotarySignatureSessionEntity = InferEntity<typeof NotarySignatureSession>;

/**
 * The requester of a web capture's ata notarial draft (`domain/documents/ata.ts`): the form filled when the draft
 * was asked for, kept with the document so that the same draft can be rendered again. Personal data (name, CPF,
 * qualification, e-mail): an LGPD deletion of the document deletes the row. One per document: a new request
 * replaces it. `cpf` holds the 11 digits.
 */
export const AtaRequest = defineEntity({
  name: 'AtaRequest',
  tableName: 'ata_request',
  properties: {
    document: () => p.oneToOne(Document).primary().deleteRule('cascade'),
    name: p.string().length(200),
    cpf: p.string().length(11),
    qualification: p.string().length(500).nullable(),
    email: p.string().length(254).nullable(),
    /** User id of the member who asked. */
    requestedBy: p.string().length(128),
    requestedAt: p.datetime(),
  },
});
export type AtaRequestEntity = InferEntity<typeof AtaRequest>;

/**
 * A monitoring of one URL (`POST /api/monitors`; the certidão de permanência, docs/cartorios.md): runs every
 * `intervalSeconds` from `startsAt` until `endsAt`, each scheduled as a pg-boss job with its start time (never a
 * timer), so the state survives restarts. `plannedRuns` is the period over the interval plus the first run.
 * `certidao` is the last certidão issued (an ordinary document of the tenant). Runs by `createdBy`, whose role is
 * read again at each run.
 */
export const Monitor = defineEntity({
  name: 'Monitor',
  tableName: 'monitor',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade').index(),
    createdBy: p.string().length(128),
    createdByEmail: p.string().length(254).nullable(),
    url: p.text(),
    /** The ISO 8601 durations as asked, and their seconds. */
    interval: p.string().length(32),
    period: p.string().length(32),
    intervalSeconds: p.integer(),
    periodSeconds: p.integer(),
    plannedRuns: p.integer(),
    state: p.enum(['active', 'finished', 'cancelled', 'failed'] as const),
    failure: p.text().nullable(),
    consentAt: p.datetime(),
    createdAt: p.datetime(),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    endedAt: p.datetime().nullable(),
    certidao: () => p.manyToOne(Document).deleteRule('set null').nullable(),
  },
});
export type MonitorEntity = InferEntity<typeof Monitor>;

/**
 * One run of a monitoring, unique by `(monitor, run)` so a job delivered twice records it once: `seen` (the
 * capture's document, serial and WACZ hash) or `unavailable` (the cause and detail). `previousWaczSha256` is the
 * WACZ hash of the last run seen before it, as the run's signed record states it.
 */
export const MonitorRun = defineEntity({
  name: 'MonitorRun',
  tableName: 'monitor_run',
  properties: {
    id: p.uuid().primary(),
    monitor: () => p.manyToOne(Monitor).deleteRule('cascade'),
    run: p.integer(),
    dueAt: p.datetime(),
    observedAt: p.datetime(),
    outcome: p.enum(['seen', 'unavailable'] as const),
    cause: p
      .enum(['dns', 'tls', 'http-status', 'timeout', 'unreachable', 'refused', 'error'] as const)
      .nullable(),
    detail: p.text().nullable(),
    httpStatus: p.integer().nullable(),
    document: () => p.manyToOne(Document).deleteRule('set null').nullable(),
    serialNumber: p.string().length(32).nullable(),
    waczSha256: p.string().length(64).nullable(),
    previousWaczSha256: p.string().length(64).nullable(),
  },
  uniques: [{ properties: ['monitor', 'run'] }],
});
export type MonitorRunEntity = InferEntity<typeof MonitorRun>;

/**
 * One leaf of the transparency log (`domain/log/`): `entry` is the leaf's bytes (what the log commits to: serial,
 * SHA-256, time and tenant commitment, `domain/log/entry.ts`), written in the transaction of its document.
 * `leafIndex` is null while the entry is pending and set once, in order and without gaps, when the sequencer
 * integrates it into the tree. `documentId` maps the leaf back to its record; it has no foreign key (the log
 * outlives any deletion). The migrations add a partial index on `id` where `leaf_index` is null (the sequencer's
 * read of the pending entries) and make `leaf_index` unique among the integrated entries only.
 */
export const LogEntry = defineEntity({
  name: 'LogEntry',
  tableName: 'log_entry',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    documentId: p.uuid().nullable().index(),
    entry: p.blob(),
    leafIndex: p.bigint('number').nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [
    {
      name: 'log_entry_leaf_index_unique',
      expression:
        'create unique index "log_entry_leaf_index_unique" on "log_entry" ("leaf_index") where "leaf_index" is not null',
    },
  ],
});
export type LogEntryEntity = InferEntity<typeof LogEntry>;

/**
 * Where the log's sequencer starts reading pending entries (`domain/log/pending-bound.ts`): one row (`id` 1).
 * Every entry up to `safeId` is final; `candidateId` becomes the bound once the oldest running transaction is
 * past `candidateXid` (a PostgreSQL 64-bit transaction id).
 */
export const LogSequencer = defineEntity({
  name: 'LogSequencer',
  tableName: 'log_sequencer',
  properties: {
    id: p.smallint().primary(),
    safeId: p.bigint('number'),
    candidateId: p.bigint('number').nullable(),
    candidateXid: p.bigint('string').nullable(),
  },
});
export type LogSequencerEntity = InferEntity<typeof LogSequencer>;

/**
 * A tile of the log's tree (C2SP tlog-tiles): the hashes at `level` (each the root of 256^level leaves) numbered
 * `idx * 256` onwards, 32 bytes each; a partial tile grows until it holds 256.
 */
export const LogTile = defineEntity({
  name: 'LogTile',
  tableName: 'log_tile',
  properties: {
    level: p.smallint().primary(),
    idx: p.bigint('number').primary(),
    hashes: p.blob(),
  },
});
export type LogTileEntity = InferEntity<typeof LogTile>;

/** A signed checkpoint of the log (C2SP tlog-checkpoint in a signed-note), one per tree size it was made at. */
export const LogCheckpoint = defineEntity({
  name: 'LogCheckpoint',
  tableName: 'log_checkpoint',
  properties: {
    size: p.bigint('number').primary(),
    root: p.blob(),
    note: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type LogCheckpointEntity = InferEntity<typeof LogCheckpoint>;

/** A witness of this log (its verifier key's name) and the tree size it last cosigned (C2SP tlog-witness). */
export const LogWitness = defineEntity({
  name: 'LogWitness',
  tableName: 'log_witness',
  properties: {
    witness: p.text().primary(),
    size: p.bigint('number'),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});
export type LogWitnessEntity = InferEntity<typeof LogWitness>;

/** A witness's cosignature line (C2SP tlog-cosignature) of this log's checkpoint of `size`. */
export const LogCosignature = defineEntity({
  name: 'LogCosignature',
  tableName: 'log_cosignature',
  properties: {
    size: p.bigint('number').primary(),
    witness: p.text().primary(),
    /** The root cosigned: a checkpoint of the same size made after a rollback does not inherit the line. */
    root: p.blob(),
    line: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type LogCosignatureEntity = InferEntity<typeof LogCosignature>;

/**
 * As a witness of another log: the latest checkpoint of `origin` it cosigned (size, root, and the note with the
 * log's signature and this witness's cosignature), what the next `add-checkpoint` must be consistent with.
 */
export const WitnessLog = defineEntity({
  name: 'WitnessLog',
  tableName: 'witness_log',
  properties: {
    origin: p.text().primary(),
    size: p.bigint('number'),
    root: p.blob(),
    note: p.text(),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});
export type WitnessLogEntity = InferEntity<typeof WitnessLog>;

export const entities = [
  Tenant,
  TenantStorage,
  TenantMember,
  Document,
  IdentityWebhookDelivery,
  OrgDeletion,
  AnchorBatch,
  AnchorTx,
  DocumentAnchor,
  DocumentTimestamp,
  AccessPolicy,
  AccessLogEntry,
  WalletSignatureUse,
  AcervoToken,
  DocumentDeletion,
  NotarialAct,
  NotarialActHistory,
  Serventia,
  RetentionHoldLift,
  RetentionRefusal,
  ServentiaChange,
  NotarySignatureSession,
  AtaRequest,
  Monitor,
  MonitorRun,
  LogEntry,
  LogTile,
  LogCheckpoint,
  LogWitness,
  LogCosignature,
  WitnessLog,
  LogSequencer,
];
