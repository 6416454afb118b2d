import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { sha256HexSync } from '@notary/platform/sha256';
import {
  type AccessPolicyDto,
  type AccessPolicyListDto,
  AppError,
  type CreateAccessPolicyInput,
  type CreatedAccessPolicyDto,
  UUID_PATTERN,
} from '@notary/shared';
import { AccessPolicy, type AccessPolicyEntity, type DocumentEntity } from '../../db/entities';
import { assertNotDeleted, findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { newOpaqueToken } from './tokens';
import { parseWalletAddress } from './wallet-message';

/** The status a policy has at `now` (revocation first, then expiry, then the access budget). */
export function policyStatus(
  policy: Pick<AccessPolicyEntity, 'revokedAt' | 'expiresAt' | 'maxAccesses' | 'accessCount'>,
  now: Date,
): AccessPolicyDto['status'] {
  if (policy.revokedAt) return 'revoked';
  if (policy.expiresAt && policy.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (policy.maxAccesses != null && policy.accessCount >= policy.maxAccesses) return 'exhausted';
  return 'active';
}

export function toPolicyDto(policy: AccessPolicyEntity, now = new Date()): AccessPolicyDto {
  return {
    id: policy.id,
    documentId: policy.document.id,
    kind: policy.kind,
    permission: policy.permission,
    status: policyStatus(policy, now),
    expiresAt: policy.expiresAt ? policy.expiresAt.toISOString() : null,
    maxAccesses: policy.maxAccesses ?? null,
    accessCount: policy.accessCount,
    addresses: policy.addresses ?? [],
    createdBy: policy.createdBy,
    createdAt: policy.createdAt.toISOString(),
    revokedAt: policy.revokedAt ? policy.revokedAt.toISOString() : null,
  };
}

/**
 * Locks the document row until the transaction ends and re-reads its deletion mark: policy creation and LGPD
 * deletion (which revokes every policy under the same lock) never interleave.
 * @throws AppError GONE when the document was deleted meanwhile.
 */
async function lockLiveDocument(tx: EntityManager, documentId: string): Promise<void> {
  const rows: { deleted: boolean }[] = await (tx as SqlEntityManager).execute(
    'select deleted_at is not null as deleted from document where id = ? for update',
    [documentId],
  );
  if (rows[0]?.deleted !== false) {
    throw new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');
  }
}

/**
 * `POST /api/documents/:id/access-policies`: creates a policy. A link gets a fresh opaque token, returned
 * this once with its URL (`<publicUrl>/share/<token>`); only its SHA-256 is stored. A document has at most
 * one public policy in force: creating one revokes the previous. Addresses are stored lower case, once each.
 * @throws AppError FORBIDDEN (other tenant, not the document's owner), NOT_FOUND, GONE (LGPD-deleted).
 */
export async function createAccessPolicy(
  em: EntityManager,
  actor: Actor,
  publicUrl: string,
  documentId: string,
  input: CreateAccessPolicyInput,
): Promise<CreatedAccessPolicyDto> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  requirePermission(actor, { documentOwner: doc }, 'manage how this document is shared');
  assertNotDeleted(doc);
  const now = new Date();
  const token = input.kind === 'link' ? newOpaqueToken() : undefined;
  // Wallets are checked like at access time (a mixed-case address with a wrong EIP-55 checksum is a typo: 400).
  if (input.kind === 'wallet') for (const a of input.addresses ?? []) parseWalletAddress(a);
  const addresses =
    input.kind === 'wallet' || input.kind === 'email'
      ? [...new Set((input.addresses ?? []).map((a) => a.trim().toLowerCase()))]
      : null;
  const policy = await em.transactional(async (tx) => {
    await lockLiveDocument(tx, doc.id);
    if (input.kind === 'public') {
      await tx.nativeUpdate(
        AccessPolicy,
        { document: doc.id, kind: 'public', revokedAt: null },
        { revokedAt: now },
      );
    }
    const created = tx.create(AccessPolicy, {
      id: crypto.randomUUID(),
      document: doc.id,
      kind: input.kind,
      tokenHash: token ? sha256HexSync(token) : null,
      permission: input.permission ?? 'download',
      expiresAt:
        input.expiresInSeconds === undefined ? null : new Date(now.getTime() + input.expiresInSeconds * 1000),
      maxAccesses: input.maxAccesses ?? null,
      accessCount: 0,
      addresses,
      createdBy: actor.userId,
      createdAt: now,
      revokedAt: null,
    });
    await tx.flush();
    return created;
  });
  return {
    policy: toPolicyDto(policy, now),
    ...(token ? { token, shareUrl: `${publicUrl}/share/${token}` } : {}),
  };
}

/** `GET /api/documents/:id/access-policies`: every policy of the document, revoked ones included, newest first. */
export async function listAccessPolicies(
  em: EntityManager,
  actor: Actor,
  documentId: string,
): Promise<AccessPolicyListDto> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  requirePermission(actor, { documentOwner: doc }, 'manage how this document is shared');
  const policies = await em.find(
    AccessPolicy,
    { document: doc.id },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  const now = new Date();
  return { policies: policies.map((p) => toPolicyDto(p, now)) };
}

/**
 * `DELETE /api/documents/:id/access-policies/:policyId`: revokes the policy at once (its link, public or
 * wallet access then answers 404 or 401). Revoking a revoked policy succeeds again.
 * @throws AppError NOT_FOUND when the policy is not one of this document's.
 */
export async function revokeAccessPolicy(
  em: EntityManager,
  actor: Actor,
  documentId: string,
  policyId: string,
): Promise<{ ok: true }> {
  const doc: DocumentEntity = await findDocumentInTenant(em, actor, documentId);
  requirePermission(actor, { documentOwner: doc }, 'manage how this document is shared');
  const policy = UUID_PATTERN.test(policyId)
    ? await em.findOne(AccessPolicy, { id: policyId, document: doc.id })
    : null;
  if (!policy) throw new AppError('NOT_FOUND', 'No such access policy for this document');
  await em.nativeUpdate(AccessPolicy, { id: policy.id, revokedAt: null }, { revokedAt: new Date() });
  return { ok: true };
}
