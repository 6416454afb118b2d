import path from 'node:path';
import { z } from 'zod';
import { bool, invalidConfig, optionalString } from './env';

/** Object storage, the tenant quota, the orphan sweep and the free-space guard (README, Configuration). */
export const StorageEnv = z.object({
  S3_ENDPOINT: optionalString,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: bool,
  // 10 GiB per tenant; 0 means no quota.
  TENANT_STORAGE_QUOTA_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 1024 ** 3),
  ORPHAN_SWEEP_HOURS: z.coerce
    .number()
    .min(0)
    .max(24 * 7)
    .default(6),
  // 1 GiB; 0 turns the guard off.
  DISK_FREE_FLOOR_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(1024 ** 3),
});
export type StorageEnv = z.infer<typeof StorageEnv>;

export type StorageConfig =
  | { kind: 'fs'; root: string }
  | {
      kind: 's3';
      endpoint: string | undefined;
      bucket: string;
      region: string;
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      forcePathStyle: boolean;
    };

/** Where stored files go and the bounds on them. */
export interface StorageSettings {
  storage: StorageConfig;
  /**
   * Bytes a tenant may keep in object storage, summed over its live documents' files (`TENANT_STORAGE_QUOTA_BYTES`,
   * default 10 GiB); an upload that would pass it is 413. 0: no quota.
   */
  tenantStorageQuotaBytes: number;
  /** Hours between two sweeps of orphaned objects (`ORPHAN_SWEEP_HOURS`, default 6); 0 disables the timer. */
  orphanSweepHours: number;
  /**
   * Free bytes the volumes holding `DATA_DIR` (and the stored files) and the capture's temporary directory keep
   * (`DISK_FREE_FLOOR_BYTES`, default 1 GiB): below it every intake is refused with 507. 0: no guard.
   */
  diskFreeFloorBytes: number;
}

/**
 * The storage settings of `e`: S3 when `S3_BUCKET` is set, else files under `<dataDir>/objects`.
 * @throws Error "Invalid configuration" when `S3_ENDPOINT` is set without `S3_BUCKET`.
 */
export function storageSettings(e: StorageEnv, dataDir: string): StorageSettings {
  let storage: StorageConfig = { kind: 'fs', root: path.join(dataDir, 'objects') };
  if (e.S3_BUCKET) {
    storage = {
      kind: 's3',
      endpoint: e.S3_ENDPOINT,
      bucket: e.S3_BUCKET,
      region: e.S3_REGION,
      accessKeyId: e.S3_ACCESS_KEY_ID,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY,
      // Self-hosted S3 servers (MinIO, radosgw) rarely have wildcard DNS for virtual-hosted buckets.
      forcePathStyle: e.S3_FORCE_PATH_STYLE ?? e.S3_ENDPOINT !== undefined,
    };
  } else if (e.S3_ENDPOINT) {
    throw invalidConfig('S3_BUCKET: required when S3_ENDPOINT is set');
  }
  return {
    storage,
    tenantStorageQuotaBytes: e.TENANT_STORAGE_QUOTA_BYTES,
    orphanSweepHours: e.ORPHAN_SWEEP_HOURS,
    diskFreeFloorBytes: e.DISK_FREE_FLOOR_BYTES,
  };
}
