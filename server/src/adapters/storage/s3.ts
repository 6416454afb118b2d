import { pipeline, Readable, Transform } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { type Log, silentLog } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import type { StorageConfig } from '../../config';
import type { ObjectStorage, PresignOptions, StoredObjectInfo } from '../../ports/storage';
import { deleteEveryVersion, refuseObjectLock, statusOf, storageError } from './s3-versions';
import {
  abortReason,
  assertValidKey,
  assertValidPrefix,
  assertValidPresignOptions,
  contentDispositionHeader,
} from './validate';

/** The S3 branch of the storage configuration. */
export type S3StorageConfig = Extract<StorageConfig, { kind: 's3' }>;

export interface S3ObjectStorageOptions {
  /** Multipart part size in bytes (S3 minimum 5 MiB). Default 8 MiB. */
  partSizeBytes?: number;
  /**
   * Parts uploaded concurrently. Default 2. Memory held by one `put` is about `(queueSize + 2) * partSizeBytes`
   * (parts in flight, the one being filled and its concatenation), whatever the object size: 40-65 MiB of
   * retained buffers measured with the defaults on a 256 MiB stream.
   */
  queueSize?: number;
  /** Keys per ListObjectsV2 page (1..1000). Default 1000, the S3 maximum; smaller only to test pagination. */
  listPageSize?: number;
  /** Where failures that are not thrown are reported (a multipart upload left to abort). Default: nowhere. */
  log?: Log;
}

/** Default multipart part size: 8 MiB (S3 minimum is 5 MiB; at most 10,000 parts, so objects up to 80 GiB). */
export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

/**
 * Object storage on any S3-compatible server (AWS S3, Ceph RADOS Gateway, MinIO) through `@aws-sdk/client-s3`.
 * Downloads go straight from S3 through SigV4 presigned URLs whose signed query fixes the response's
 * Content-Type and Content-Disposition.
 */
export class S3ObjectStorage implements ObjectStorage {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly bucket: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly listPageSize: number;
  private readonly log: Log;

  /**
   * @param config bucket, region, optional endpoint (self-hosted servers), static credentials (both or neither;
   *   neither uses the SDK's default provider chain) and path-style addressing.
   */
  constructor(config: S3StorageConfig, options: S3ObjectStorageOptions = {}) {
    this.bucket = config.bucket;
    this.partSize = options.partSizeBytes ?? DEFAULT_PART_SIZE;
    this.queueSize = options.queueSize ?? 2;
    this.listPageSize = options.listPageSize ?? 1000;
    this.log = options.log ?? silentLog;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials:
        config.accessKeyId && config.secretAccessKey
          ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
          : undefined,
      // The SDK's default CRC32 trailers on streamed bodies corrupt objects on some S3-compatible servers and
      // are refused by others: checksum only where the API requires it.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /**
   * Creates the bucket if it does not exist; call once at startup. Safe when several instances race. A bucket
   * with Object Lock enabled is refused (`refuseObjectLock`): deletions must be able to destroy files.
   * @throws AppError('BAD_GATEWAY') when the bucket exists but is not accessible with these credentials, or S3
   *   fails; AppError('BAD_REQUEST') when the bucket has Object Lock enabled.
   */
  async ensureBucket(): Promise<void> {
    await this.createBucketIfMissing();
    await refuseObjectLock(this.client, this.bucket);
  }

  private async createBucketIfMissing(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (e) {
      if (statusOf(e) !== 404) throw storageError(e, `bucket ${this.bucket} is not accessible`);
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (e) {
      // Another instance created it first: fine if it is ours (HeadBucket decides).
      if (!(e instanceof S3ServiceException) || !/^BucketAlready(OwnedByYou|Exists)$/.test(e.name)) {
        throw storageError(e, `cannot create bucket ${this.bucket}`);
      }
      try {
        await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      } catch (e2) {
        throw storageError(e2, `bucket ${this.bucket} exists but is not accessible`);
      }
    }
  }

  /**
   * Streams `body` of unknown length with `@aws-sdk/lib-storage`: one PutObject when it fits in one part,
   * otherwise a multipart upload of `partSizeBytes` parts, `queueSize` at a time (memory stays flat).
   * On stream error or `signal` abort the body is destroyed, the multipart upload aborted (no parts left
   * billed or listed) and, if the object was completed before the abort was seen, it is deleted; then the
   * promise rejects with `signal.reason` (aborted) or the stream's error.
   * Keys are expected to be unique per put (`<tenantId>/<uuid>`): cleanup never touches another upload.
   * @returns the object's size in bytes.
   * @throws AppError('BAD_REQUEST') for an invalid key; AppError SERVICE_UNAVAILABLE or BAD_GATEWAY when S3 fails (`storageError`).
   */
  async put(
    key: string,
    body: Readable,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<{ size: number }> {
    const signal = options?.signal;
    try {
      assertValidKey(key);
      signal?.throwIfAborted();
    } catch (e) {
      body.destroy();
      throw e;
    }
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        callback(null, chunk);
      },
    });
    let streamError: unknown;
    // Seen before lib-storage's read loop fails with it (pipeline's own callback may come later).
    body.once('error', (err) => {
      streamError ??= err;
    });
    // pipeline, not pipe: an error on either side destroys both, which ends lib-storage's read loop.
    pipeline(body, counter, () => undefined);
    // Abort by destroying the source rather than with Upload.abort(): abort() makes done() reject at once while
    // parts are still in flight and AbortMultipartUpload has not run yet; a failing read settles everything first.
    const onAbort = () => counter.destroy(signal ? toError(abortReason(signal)) : undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: counter, ContentType: options?.contentType },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (e) {
      counter.destroy();
      // lib-storage already aborts the multipart upload on failure; repeat it in case that call itself failed.
      if (upload.uploadId) await this.abortMultipart(key, upload.uploadId);
      if (signal?.aborted) throw abortReason(signal);
      if (streamError !== undefined) throw streamError;
      throw storageError(e, 'upload failed');
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (signal?.aborted) {
      // Aborted while the last request was completing: the object exists, take it back.
      await this.delete(key);
      throw abortReason(signal);
    }
    return { size };
  }

  /**
   * Removes the object with every version and delete marker it has, so that nothing of it stays restorable on
   * a versioned bucket (`deleteEveryVersion`). Idempotent. @throws AppError SERVICE_UNAVAILABLE or BAD_GATEWAY when S3 fails (`storageError`).
   */
  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await deleteEveryVersion(this.client, this.bucket, key);
  }

  /** HeadObject: true on 200, false on 404. @throws AppError SERVICE_UNAVAILABLE or BAD_GATEWAY on any other S3 failure (`storageError`). */
  async exists(key: string): Promise<boolean> {
    assertValidKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (e) {
      if (statusOf(e) === 404) return false;
      throw storageError(e, 'head failed');
    }
  }

  /**
   * GetObject as a Node stream (the response socket: consume or destroy it).
   * @throws AppError('NOT_FOUND') when the object does not exist; AppError SERVICE_UNAVAILABLE or BAD_GATEWAY on S3 failure (`storageError`).
   */
  async get(key: string): Promise<Readable> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(out.Body instanceof Readable)) throw new AppError('INTERNAL', 'S3 body is not a Node stream');
      return out.Body;
    } catch (e) {
      if (statusOf(e) === 404) throw new AppError('NOT_FOUND', 'Object not found', { cause: e });
      throw storageError(e, 'get failed');
    }
  }

  /**
   * Keys under `prefix` in S3's lexicographic order, paginating ListObjectsV2 (1000 keys a page).
   * @throws AppError SERVICE_UNAVAILABLE or BAD_GATEWAY when S3 fails (`storageError`).
   */
  async *list(prefix = ''): AsyncIterable<string> {
    for await (const o of this.listObjects(prefix)) yield o.key;
  }

  /** As `list`, with each object's `Size` and `LastModified`. @throws AppError SERVICE_UNAVAILABLE or BAD_GATEWAY when S3 fails (`storageError`). */
  async *listObjects(prefix = ''): AsyncIterable<StoredObjectInfo> {
    assertValidPrefix(prefix);
    let token: string | undefined;
    do {
      let page: Awaited<ReturnType<typeof this.listPage>>;
      try {
        page = await this.listPage(prefix, token);
      } catch (e) {
        throw storageError(e, 'list failed');
      }
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined) continue;
        yield { key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /**
   * Aborts multipart uploads initiated before `startedBefore` (ListMultipartUploads, paginated): the parts of
   * an upload whose process died are billed and invisible to ListObjects until aborted.
   * @throws AppError SERVICE_UNAVAILABLE or BAD_GATEWAY when S3 fails to list (`storageError`).
   */
  async removeIncompleteUploads(startedBefore: Date): Promise<number> {
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      let page: ListMultipartUploadsCommandOutput;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
      } catch (e) {
        throw storageError(e, 'listing multipart uploads failed');
      }
      for (const u of page.Uploads ?? []) {
        if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated >= startedBefore) continue;
        await this.abortMultipart(u.Key, u.UploadId);
        removed++;
      }
      if (!page.IsTruncated) return removed;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  /**
   * SigV4 query-string presigned GetObject URL
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html) valid `expiresInSeconds`
   * (1..604800). `response-content-type` and `response-content-disposition` are part of the signed query, so
   * S3 answers with exactly those headers and refuses (403) a URL where they, the key or the expiry changed.
   * @throws AppError('BAD_REQUEST') for an invalid key or options.
   */
  async presignGet(key: string, options: PresignOptions): Promise<string> {
    assertValidKey(key);
    assertValidPresignOptions(options);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentType: options.contentType,
      ResponseContentDisposition: contentDispositionHeader(options.disposition, options.fileName),
    });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds });
  }

  private listPage(prefix: string, token: string | undefined) {
    return this.client.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: prefix || undefined,
        ContinuationToken: token,
        MaxKeys: this.listPageSize,
      }),
    );
  }

  /** AbortMultipartUpload, ignoring "no such upload" (already aborted) and logging other failures. */
  private async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }),
      );
    } catch (e) {
      if (statusOf(e) !== 404)
        this.log.warn({ err: e }, `cannot abort multipart upload ${uploadId} of ${key}`);
    }
  }
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
