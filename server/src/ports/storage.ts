import type { Readable } from 'node:stream';

/** How a presigned URL makes the browser treat the object (RFC 6266 Content-Disposition). */
export type Disposition = 'inline' | 'attachment';

export interface PresignOptions {
  /** Seconds the URL stays valid (spec, Limits: 300 for download and view). */
  expiresInSeconds: number;
  /** Content-Type the response must carry (for downloads a neutral `application/octet-stream`). */
  contentType: string;
  disposition: Disposition;
  /** File name offered to the browser; any Unicode (encoded per RFC 6266 / RFC 8187). */
  fileName: string;
}

/** One stored object as a listing shows it. */
export interface StoredObjectInfo {
  key: string;
  /** Size in bytes. */
  size: number;
  /** When the object was completed (S3 `LastModified`, a file's mtime). */
  lastModified: Date;
}

/**
 * Object storage port. Keys are opaque ASCII paths chosen by the service (`<tenantId>/<uuid>`): segments of
 * `[A-Za-z0-9_.-]` joined by `/`, none empty or starting with `.`, at most 1024 characters; any other key is
 * refused with AppError('BAD_REQUEST') by every method (`validate.ts`). A key is written once (one put per key).
 * Adapters: local files with HMAC-signed URLs (`fs.ts`), S3-compatible with presigned URLs (`s3.ts`).
 */
export interface ObjectStorage {
  readonly kind: 'fs' | 's3';
  /**
   * Streams `body` into `key`. Resolves once the object is durably stored with its size in bytes.
   * If `body` errors or `signal` aborts, rejects and leaves no object (nor partial upload) behind: with
   * `signal.reason` when aborted (so a caller can abort with its own AppError), else with the stream's error.
   * `body` is destroyed when the put fails; the promise settles only after the cleanup is done.
   */
  put(
    key: string,
    body: Readable,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<{ size: number }>;
  /** Removes `key`; succeeds when it does not exist. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Reads the whole object as a stream (used by the certificate and by tests). @throws AppError('NOT_FOUND'). */
  get(key: string): Promise<Readable>;
  /**
   * Lists keys under `prefix` in byte-wise lexicographic order (operators, tests: "nothing left behind").
   * Local files sort each directory in memory: walks over a whole store use `listObjects`.
   */
  list(prefix?: string): AsyncIterable<string>;
  /**
   * Every object under `prefix` with its size and completion time (the orphan sweep's grace period needs the
   * time), streamed with memory bounded whatever the count: S3 a ListObjectsV2 page at a time (continuation
   * tokens, key order), local files a few directory entries at a time (in the file system's order). Deleting
   * objects already yielded while iterating is safe; callers that delete must not rely on the order.
   */
  listObjects(prefix?: string): AsyncIterable<StoredObjectInfo>;
  /**
   * Removes uploads started before `startedBefore` that never completed and never became objects (S3:
   * incomplete multipart uploads, which S3 bills and never lists; local files: temp files of a crashed put).
   * A put still running is younger than any sane cutoff. @returns how many were removed.
   */
  removeIncompleteUploads(startedBefore: Date): Promise<number>;
  /**
   * A URL anyone can GET until it expires; tampering with any part of it invalidates it (403). The response
   * carries exactly `contentType` and a `Content-Disposition` built from `disposition` and `fileName`.
   * Does not check that the object exists (a URL for a missing object answers 404).
   * @throws AppError('BAD_REQUEST') for an invalid key, `expiresInSeconds` outside 1..604800 (7 days, the SigV4
   *   maximum), a content type that is not a printable-ASCII media type, or a file name with control characters.
   */
  presignGet(key: string, options: PresignOptions): Promise<string>;
}
