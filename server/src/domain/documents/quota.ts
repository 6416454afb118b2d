import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '@notary/shared';

/** Bytes in a GiB, for messages. */
const GIB = 1024 ** 3;

/**
 * Bytes the tenant keeps in object storage: the file sizes of its live documents that have stored bytes
 * (reference-only records such as IPFS imports cost nothing). One aggregate query.
 */
export async function storageUsedBytes(em: EntityManager, tenantId: string): Promise<number> {
  const rows: { used: string | number | null }[] = await (em as SqlEntityManager).execute(
    `select coalesce(sum(file_size), 0) as used from document
      where tenant_id = ? and deleted_at is null and storage_key is not null`,
    [tenantId],
  );
  return Number(rows[0]?.used ?? 0);
}

/** How a full quota reads: "10.0 GiB", or bytes under a MiB. */
function size(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}

/**
 * Refuses an upload of `incomingBytes` that would take the tenant past `quotaBytes` (issue 12: per-tenant
 * storage quota). Returns the bytes still free before this upload, so a caller can bound the stream by it.
 * `quotaBytes` 0 means no quota (returns `Infinity`).
 * @throws AppError('PAYLOAD_TOO_LARGE') naming the quota and what is used.
 */
export async function assertStorageRoom(
  em: EntityManager,
  tenantId: string,
  quotaBytes: number,
  incomingBytes: number,
): Promise<number> {
  if (quotaBytes === 0) return Number.POSITIVE_INFINITY;
  const used = await storageUsedBytes(em, tenantId);
  if (used + incomingBytes > quotaBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `This workspace's storage quota is full: ${size(used)} of ${size(quotaBytes)} used` +
        (incomingBytes > 0 ? `, and this file needs ${size(incomingBytes)}` : '') +
        '. Delete documents or ask the operator for more room.',
    );
  }
  return quotaBytes - used;
}

/**
 * Inside a transaction: serializes the tenant's quota checks (a row lock on the tenant), so two concurrent
 * uploads cannot both fit in the same last free bytes; then checks as {@link assertStorageRoom}.
 */
export async function lockAndAssertStorageRoom(
  tx: EntityManager,
  tenantId: string,
  quotaBytes: number,
  incomingBytes: number,
): Promise<void> {
  if (quotaBytes === 0) return;
  await (tx as SqlEntityManager).execute('select id from tenant where id = ? for update', [tenantId]);
  await assertStorageRoom(tx, tenantId, quotaBytes, incomingBytes);
}
