import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { sha256HexSync } from '@notary/platform/sha256';
import { type AcervoTokenCreatedDto, type AcervoTokenStatusDto, AppError } from '@notary/shared';
import { AcervoToken } from '../../db/entities';
import { newOpaqueToken } from '../sharing/tokens';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';

/** Acervo tokens are `acv_` + 43 base64url characters (32 random bytes): the prefix helps secret scanners. */
const ACERVO_TOKEN_PATTERN = /^acv_[A-Za-z0-9_-]{43}$/;

/**
 * The acervo token is the tenant's setting (spec, Authentication: the roles table, "Manage settings"): admin
 * or owner.
 */
const MANAGE_TOKEN = "manage this organization's acervo token";

/**
 * `POST /api/settings/acervo-token`: generates the tenant's acervo token, or rotates it: the new token
 * replaces the old one in one statement, so the old one stops working at once. Only its SHA-256 is stored;
 * the token is in this answer only.
 */
export async function createAcervoToken(em: EntityManager, actor: Actor): Promise<AcervoTokenCreatedDto> {
  requirePermission(actor, 'manageSettings', MANAGE_TOKEN);
  const token = `acv_${newOpaqueToken()}`;
  const createdAt = new Date();
  await (em as SqlEntityManager).execute(
    `insert into acervo_token (id, tenant_id, token_hash, created_by, created_at)
     values (?::uuid, ?::uuid, ?, ?, ?::timestamptz)
     on conflict (tenant_id) do update
       set token_hash = excluded.token_hash, created_by = excluded.created_by, created_at = excluded.created_at`,
    [crypto.randomUUID(), actor.tenant.id, sha256HexSync(token), actor.userId, createdAt],
  );
  return { token, createdAt: createdAt.toISOString() };
}

/** `DELETE /api/settings/acervo-token`: disables the feed (the token no longer works). Idempotent. */
export async function deleteAcervoToken(em: EntityManager, actor: Actor): Promise<{ ok: true }> {
  requirePermission(actor, 'manageSettings', MANAGE_TOKEN);
  await em.nativeDelete(AcervoToken, { tenant: actor.tenant.id });
  return { ok: true };
}

/** `GET /api/settings/acervo-token`: whether a token is in force and since when (never the token). */
export async function acervoTokenStatus(em: EntityManager, actor: Actor): Promise<AcervoTokenStatusDto> {
  requirePermission(actor, 'manageSettings', MANAGE_TOKEN);
  const row = await em.findOne(AcervoToken, { tenant: actor.tenant.id });
  return { enabled: !!row, createdAt: row ? row.createdAt.toISOString() : null };
}

/**
 * The tenant an acervo bearer token names (spec, Authentication: item 3).
 * @throws AppError UNAUTHENTICATED when missing, malformed, rotated away, disabled or unknown.
 */
export async function tenantOfAcervoToken(em: EntityManager, bearer: string | null): Promise<string> {
  if (!bearer) throw new AppError('UNAUTHENTICATED', 'Missing Authorization: Bearer acervo token');
  const row = ACERVO_TOKEN_PATTERN.test(bearer)
    ? await em.findOne(AcervoToken, { tokenHash: sha256HexSync(bearer) })
    : null;
  if (!row) throw new AppError('UNAUTHENTICATED', 'Invalid acervo token');
  return row.tenant.id;
}
