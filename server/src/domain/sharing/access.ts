import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { sha256HexSync } from '@notary/platform/sha256';
import {
  AppError,
  type EmailAccessRequestDto,
  LIMITS,
  type ShareAccessDto,
  type SharePermission,
  UUID_PATTERN,
  type WalletAccessInput,
} from '@notary/shared';
import { AccessPolicy, type AccessPolicyEntity, type DocumentEntity } from '../../db/entities';
import { type DocumentFiles, documentFileUrl, ipfsCidOf } from '../documents/service';
import { policyStatus } from './policies';
import { OPAQUE_TOKEN_PATTERN } from './tokens';
import { verifyWalletMessage } from './wallet-message';

/** Who accessed, as the access log records it (spec, Access log entry). */
interface Accessor {
  type: 'anonymous' | 'wallet' | 'email';
  identifier: string;
}

/**
 * Refuses a record whose bytes the service cannot point at (neither a stored file nor an IPFS import's CID),
 * before an access is counted.
 * @throws AppError NOT_FOUND.
 */
function assertHasFile(doc: DocumentEntity): void {
  if (!doc.storageKey && ipfsCidOf(doc) === undefined)
    throw new AppError('NOT_FOUND', 'This record has no stored file to share');
}

const gone = () =>
  new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');

/**
 * Counts one access against the policy and writes its access log entry, in one statement: the UPDATE only
 * matches while the policy is unrevoked, unexpired and below `maxAccesses`, so concurrent accesses are
 * serialized by the row lock and never exceed the budget (PostgreSQL re-checks the condition on the row
 * version it waited for; PGlite runs one statement at a time).
 * @returns false when the policy could not be used (revoked, expired or exhausted meanwhile).
 */
async function consume(
  em: EntityManager,
  policyId: string,
  accessor: Accessor,
  ip: string | null,
  now: Date,
): Promise<boolean> {
  const rows: { id: string }[] = await (em as SqlEntityManager).execute(
    `with used as (
       update access_policy set access_count = access_count + 1
        where id = ?::uuid and revoked_at is null
          and (expires_at is null or expires_at > ?::timestamptz)
          and (max_accesses is null or access_count < max_accesses)
       returning id, document_id, permission)
     insert into access_log_entry
       (id, document_id, policy_id, accessor_type, accessor_identifier, permission, ip, created_at)
     select ?::uuid, document_id, id, ?::text, ?::text, permission, ?::text, ?::timestamptz from used
     returning id`,
    [policyId, now, randomUUID(), accessor.type, accessor.identifier, ip, now],
  );
  return rows.length === 1;
}

/** The state of a policy and its document as the database has it now (after `consume` matched nothing). */
async function currentState(
  em: EntityManager,
  policyId: string,
  now: Date,
): Promise<'deleted' | 'revoked' | 'expired' | 'exhausted' | 'active'> {
  const rows: { state: 'deleted' | 'revoked' | 'expired' | 'exhausted' | 'active' }[] = await (
    em as SqlEntityManager
  ).execute(
    `select case when d.deleted_at is not null then 'deleted'
                 when p.revoked_at is not null then 'revoked'
                 when p.expires_at is not null and p.expires_at <= ?::timestamptz then 'expired'
                 when p.max_accesses is not null and p.access_count >= p.max_accesses then 'exhausted'
                 else 'active' end as state
       from access_policy p join document d on d.id = p.document_id
      where p.id = ?::uuid`,
    [now, policyId],
  );
  return rows[0]?.state ?? 'revoked';
}

/**
 * The spec's Share access response: a presigned URL, 3600 s for download, 900 s for view; for an IPFS import
 * its public gateway URL (spec, Documents: rule 3, "IPFS imports resolve to a gateway URL"; `documentFileUrl`).
 */
async function shareResponse(
  files: DocumentFiles,
  doc: DocumentEntity,
  permission: SharePermission,
): Promise<ShareAccessDto> {
  const expiresInSeconds =
    permission === 'download' ? LIMITS.shareDownloadUrlSeconds : LIMITS.shareViewUrlSeconds;
  const { url } = await documentFileUrl(files, doc, permission, expiresInSeconds);
  return {
    documentId: doc.id,
    fileName: doc.fileName,
    serialNumber: doc.serialNumber,
    accessUrl: url,
    permission,
    expiresInSeconds,
  };
}

/**
 * Uses `policy` (document populated) for one access: 410 for an LGPD-deleted document or an expired or
 * exhausted policy, `revoked` for a revoked one (the caller picks the status), else counts it, logs it and
 * answers with a URL to the file (`shareResponse`).
 */
async function accessThrough(
  em: EntityManager,
  files: DocumentFiles,
  policy: AccessPolicyEntity,
  accessor: Accessor,
  ip: string | null,
  revoked: () => AppError,
): Promise<ShareAccessDto> {
  const doc = policy.document as DocumentEntity;
  const now = new Date();
  const fail = (state: string): AppError => {
    if (state === 'deleted') return gone();
    if (state === 'revoked') return revoked();
    if (state === 'expired') return new AppError('GONE', 'This access has expired');
    return new AppError('GONE', 'This access has reached its maximum number of accesses');
  };
  if (doc.deletedAt) throw gone();
  const status = policyStatus(policy, now);
  if (status !== 'active') throw fail(status);
  assertHasFile(doc);
  if (!(await consume(em, policy.id, accessor, ip, now))) throw fail(await currentState(em, policy.id, now));
  return shareResponse(files, doc, policy.permission);
}

/**
 * `GET /share/:token` (spec, Public, no credentials): 200 share access response; 404 for a token that is
 * malformed, unknown or
 * revoked; 410 when the link expired or reached its maximum accesses, or the document was LGPD-deleted.
 */
export async function accessByShareLink(
  em: EntityManager,
  files: DocumentFiles,
  token: string,
  ip: string | null,
): Promise<ShareAccessDto> {
  const invalid = () => new AppError('NOT_FOUND', 'Invalid share token');
  if (!OPAQUE_TOKEN_PATTERN.test(token)) throw invalid();
  const policy = await em.findOne(
    AccessPolicy,
    { tokenHash: sha256HexSync(token), kind: 'link' },
    { populate: ['document'] },
  );
  if (!policy) throw invalid();
  return accessThrough(
    em,
    files,
    policy,
    { type: 'anonymous', identifier: `link:${policy.id}` },
    ip,
    invalid,
  );
}

/**
 * `GET /access/public/:documentId` (spec, Public, no credentials): 200 share access response through the
 * document's public policy;
 * 404 when it is not publicly shared (never was, or revoked); 410 when the public access expired (or reached
 * its maximum accesses), or the document was LGPD-deleted.
 */
export async function accessPublic(
  em: EntityManager,
  files: DocumentFiles,
  documentId: string,
  ip: string | null,
): Promise<ShareAccessDto> {
  const notShared = () => new AppError('NOT_FOUND', 'This document is not publicly shared');
  if (!UUID_PATTERN.test(documentId)) throw notShared();
  // Creating a public policy revokes the previous one: the newest is the one in force, if any.
  const policy = await em.findOne(
    AccessPolicy,
    { document: documentId, kind: 'public' },
    { populate: ['document'], orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  if (!policy) throw notShared();
  return accessThrough(em, files, policy, { type: 'anonymous', identifier: 'public' }, ip, notShared);
}

/**
 * `POST /access/wallet/:documentId` (spec, Public, no credentials): a wallet proves itself with an EIP-191
 * signature over a fresh
 * Sign-In With Ethereum message for this service that names the document id (`verifyWalletMessage`), and gets
 * a share access response through a wallet policy of the document that authorizes it. Statuses: 400 invalid
 * address; 401 invalid signature, a message for another site or without the document id, a stale, future or
 * already used message, or a wallet no policy in force authorizes (unknown documents included); 410 when the
 * authorizing policies expired or are exhausted, or the document was LGPD-deleted.
 */
export async function accessByWallet(
  em: EntityManager,
  files: DocumentFiles,
  options: { publicUrl: string; now?: Date },
  documentId: string,
  input: WalletAccessInput,
  ip: string | null,
): Promise<ShareAccessDto> {
  const now = options.now ?? new Date();
  // Address (400) first, then the proof (401): see `verifyWalletMessage`.
  const verified = await verifyWalletMessage({
    ...input,
    documentId,
    service: { publicUrl: options.publicUrl },
    now,
  });
  const wallet = verified.address.toLowerCase();
  const notAuthorized = () =>
    new AppError('UNAUTHENTICATED', 'This wallet is not authorized for this document');
  if (!UUID_PATTERN.test(documentId)) throw notAuthorized();
  const policies = (
    await em.find(
      AccessPolicy,
      { document: documentId, kind: 'wallet' },
      { populate: ['document'], orderBy: { createdAt: 'asc', id: 'asc' } },
    )
  ).filter((p) => (p.addresses ?? []).includes(wallet));
  const first = policies[0];
  if (!first) throw notAuthorized();
  if ((first.document as DocumentEntity).deletedAt) throw gone();
  const unrevoked = policies.filter((p) => !p.revokedAt);
  if (unrevoked.length === 0) throw notAuthorized();
  const usable = unrevoked.filter((p) => policyStatus(p, now) === 'active');
  if (usable.length === 0) {
    throw new AppError('GONE', 'The access of this wallet has expired or reached its maximum accesses');
  }
  const doc = first.document as DocumentEntity;
  assertHasFile(doc);
  await rememberSignature(em, verified.useHash, verified.rememberUntil, now);
  const accessor: Accessor = { type: 'wallet', identifier: wallet };
  for (const policy of usable) {
    if (await consume(em, policy.id, accessor, ip, now)) return shareResponse(files, doc, policy.permission);
  }
  // Every policy was revoked, expired or exhausted meanwhile (concurrent accesses, a manager, a deletion).
  const states: string[] = [];
  for (const policy of usable) states.push(await currentState(em, policy.id, now));
  if (states.includes('deleted')) throw gone();
  if (states.every((s) => s === 'revoked')) throw notAuthorized();
  throw new AppError('GONE', 'The access of this wallet has expired or reached its maximum accesses');
}

/**
 * Records a (wallet, message) use; a second use of the same pair is refused, whatever the signature bytes
 * (an ECDSA signature has a malleable twin that also verifies). Forgets uses that aged out of the window.
 * @throws AppError UNAUTHENTICATED when the message was already used.
 */
async function rememberSignature(em: EntityManager, hash: string, until: Date, now: Date): Promise<void> {
  const sql = em as SqlEntityManager;
  await sql.execute('delete from wallet_signature_use where expires_at < ?::timestamptz', [now]);
  const rows: { hash: string }[] = await sql.execute(
    `insert into wallet_signature_use (hash, used_at, expires_at) values (?, ?::timestamptz, ?::timestamptz)
     on conflict (hash) do nothing returning hash`,
    [hash, now, until],
  );
  if (rows.length === 0) {
    throw new AppError('UNAUTHENTICATED', 'This signed message was already used: sign a new one');
  }
}

/** Lifetime of an e-mail access token (shown in development only; verification is not wired). */
const EMAIL_TOKEN_SECONDS = 15 * 60;
const EMAIL_REQUEST_MESSAGE =
  'If this address is authorized for this document, an access link will be sent to it.';

/**
 * `POST /access/email/:documentId/request` (spec, Public, no credentials): the same `{message}` whether or
 * not the address is
 * authorized (no enumeration: unknown documents, unauthorized and authorized addresses look alike). Nothing is
 * sent: e-mail delivery of access links is not wired (spec, Public, no credentials). In development only,
 * `token` is added: for an
 * authorized address a token signed with a key derived from `SECRET` naming the policy, the address and an
 * expiry (`<payload>.<mac>`, base64url), else a random string of the same shape.
 */
export async function requestEmailAccess(
  em: EntityManager,
  options: { secret: string; development: boolean; now?: Date },
  documentId: string,
  email: string,
): Promise<EmailAccessRequestDto> {
  const address = email.trim().toLowerCase();
  const now = options.now ?? new Date();
  const policies = UUID_PATTERN.test(documentId)
    ? await em.find(
        AccessPolicy,
        { document: { id: documentId, deletedAt: null }, kind: 'email', revokedAt: null },
        { orderBy: { createdAt: 'asc', id: 'asc' } },
      )
    : [];
  const policy = policies.find(
    (p) => policyStatus(p, now) === 'active' && (p.addresses ?? []).includes(address),
  );
  if (!options.development) return { message: EMAIL_REQUEST_MESSAGE };
  const exp = Math.floor(now.getTime() / 1000) + EMAIL_TOKEN_SECONDS;
  const payload = Buffer.from(JSON.stringify({ p: policy?.id ?? randomUUID(), e: address, x: exp })).toString(
    'base64url',
  );
  const key = policy
    ? createHmac('sha256', options.secret).update('notary/email-access-token/v1').digest()
    : randomBytes(32);
  const mac = createHmac('sha256', key).update(payload).digest('base64url');
  return { message: EMAIL_REQUEST_MESSAGE, token: `${payload}.${mac}` };
}
