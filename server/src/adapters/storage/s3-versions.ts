import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectLockConfigurationCommand,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandOutput,
  type ObjectIdentifier,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { AppError } from '@notary/shared';

/** Most keys one DeleteObjects request may name (S3 API limit). */
const DELETE_OBJECTS_MAX = 1000;

/** HTTP status of an SDK error, when the server answered. */
export const statusOf = (e: unknown): number | undefined =>
  e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined;

/** Seconds a client is told to wait while the object store is away: a gateway restart takes some. */
export const STORAGE_RETRY_AFTER_SECONDS = 10;

/**
 * Wraps an S3 or network failure as the service's error, keeping the SDK error as cause: the store
 * unreachable (no HTTP answer: refused, reset, timed out) or answering 5xx (RFC 9110 section 15.6; S3's
 * `ServiceUnavailable`, `SlowDown`, `InternalError`) is 503 SERVICE_UNAVAILABLE with
 * `retryAfterSeconds` 10, since the same request succeeds once it is back; any other answer (403 credentials,
 * 400) is 502 BAD_GATEWAY, which waiting does not fix. An `AppError` is returned as it is.
 */
export function storageError(e: unknown, what: string): AppError {
  if (e instanceof AppError) return e;
  const name = e instanceof Error ? e.name : 'Error';
  const status = statusOf(e);
  if (status === undefined || status >= 500) {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `Object storage is unavailable: ${what} (${name}); try again in ${STORAGE_RETRY_AFTER_SECONDS} s`,
      { cause: e, retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS },
    );
  }
  return new AppError('BAD_GATEWAY', `Object storage: ${what} (${name})`, { cause: e });
}

/**
 * Every version and delete marker of exactly `key` (ListObjectVersions under the key as prefix, paginated,
 * other keys sharing the prefix left out). On a bucket that was never versioned the object is one version
 * whose id is `null`; on a server without ListObjectVersions (501) the answer is undefined.
 */
async function versionsOf(
  client: S3Client,
  bucket: string,
  key: string,
): Promise<ObjectIdentifier[] | undefined> {
  const found: ObjectIdentifier[] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    let page: ListObjectVersionsCommandOutput;
    try {
      page = await client.send(
        new ListObjectVersionsCommand({
          Bucket: bucket,
          Prefix: key,
          KeyMarker: keyMarker,
          VersionIdMarker: versionIdMarker,
        }),
      );
    } catch (e) {
      if (statusOf(e) === 501) return undefined;
      throw storageError(e, 'listing object versions failed');
    }
    for (const v of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]) {
      if (v.Key === key && v.VersionId !== undefined) found.push({ Key: key, VersionId: v.VersionId });
    }
    if (!page.IsTruncated) return found;
    keyMarker = page.NextKeyMarker;
    versionIdMarker = page.NextVersionIdMarker;
  }
}

/**
 * Deletes `key` for good: every version and delete marker it has (DeleteObjects with each `VersionId`, 1000 a
 * request), so that a versioned bucket (versioning enabled or suspended) keeps no restorable copy; on an
 * unversioned bucket this deletes the one `null` version. This is what an LGPD deletion needs (docs/sharing.md,
 * LGPD deletion): a plain DeleteObject on a versioned bucket only adds a delete marker and keeps every byte.
 * A server without ListObjectVersions (501 Not Implemented) gets a plain DeleteObject. Nothing found: nothing
 * to do (idempotent).
 * @throws AppError BAD_GATEWAY when S3 fails or refuses to delete any version (Object Lock, legal hold,
 *   permissions): the caller learns the bytes are still there.
 */
export async function deleteEveryVersion(client: S3Client, bucket: string, key: string): Promise<void> {
  const versions = await versionsOf(client, bucket, key);
  if (versions === undefined) {
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (e) {
      if (statusOf(e) !== 404) throw storageError(e, 'delete failed');
    }
    return;
  }
  for (let i = 0; i < versions.length; i += DELETE_OBJECTS_MAX) {
    const batch = versions.slice(i, i + DELETE_OBJECTS_MAX);
    let errors: { VersionId?: string; Code?: string }[];
    try {
      const out = await client.send(
        new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }),
      );
      errors = out.Errors ?? [];
    } catch (e) {
      throw storageError(e, 'delete failed');
    }
    // A version deleted meanwhile (NoSuchVersion, NoSuchKey) is as good as deleted.
    const failed = errors.filter((e) => e.Code !== 'NoSuchVersion' && e.Code !== 'NoSuchKey');
    if (failed.length > 0) {
      throw new AppError(
        'BAD_GATEWAY',
        `Object storage: ${failed.length} version(s) of the object could not be deleted (${failed[0]?.Code ?? 'unknown'})`,
      );
    }
  }
}

/**
 * Refuses a bucket with S3 Object Lock enabled: its retention would keep files the service must be able to
 * destroy (LGPD deletion, organization deletion). Servers that do not implement Object Lock (or buckets with no
 * lock configuration) pass.
 * @throws AppError BAD_REQUEST naming the bucket when Object Lock is enabled.
 */
export async function refuseObjectLock(client: S3Client, bucket: string): Promise<void> {
  let enabled = false;
  try {
    const out = await client.send(new GetObjectLockConfigurationCommand({ Bucket: bucket }));
    enabled = out.ObjectLockConfiguration?.ObjectLockEnabled === 'Enabled';
  } catch {
    // No lock configuration (404 ObjectLockConfigurationNotFoundError), or not implemented: nothing locks.
    return;
  }
  if (enabled) {
    throw new AppError(
      'BAD_REQUEST',
      `S3 bucket ${bucket} has Object Lock enabled: files deleted under the LGPD could not be destroyed. ` +
        'Use a bucket without Object Lock (versioning is fine: every version is deleted).',
    );
  }
}
