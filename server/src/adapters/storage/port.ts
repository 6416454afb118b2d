import type { Readable } from 'node:stream';

/** How a presigned URL makes the browser treat the object (RFC 6266 Content-Disposition). */
export type Disposition = 'inline' | 'attachment';

export interface PresignOptions {
  /** Seconds the URL stays valid (spec: 300 for download and view). */
  expiresInSeconds: number;
  /** Content-Type the response must carry (for downloads a neutral `application/octet-stream`). */
  contentType: string;
  disposition: Disposition;
  /** File name offered to the browser; any Unicode (encoded per RFC 6266 / RFC 8187). */
  fileName: string;
}

/**
 * Object storage port. Keys are opaque ASCII paths chosen by the service (`<tenantId>/<uuid>`).
 * Adapters: local files with HMAC-signed URLs (`fs.ts`), S3-compatible with presigned URLs (`s3.ts`).
 */
export interface ObjectStorage {
  readonly kind: 'fs' | 's3';
  /**
   * Streams `body` into `key`. Resolves once the object is durably stored with its size in bytes.
   * If `body` errors or `signal` aborts, rejects and leaves no object (nor partial upload) behind.
   */
  put(key: string, body: Readable, options?: { contentType?: string; signal?: AbortSignal }): Promise<{ size: number }>;
  /** Removes `key`; succeeds when it does not exist. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Reads the whole object as a stream (used by the certificate and by tests). */
  get(key: string): Promise<Readable>;
  /** Lists keys under `prefix` (operators, tests: "nothing left behind"). */
  list(prefix?: string): AsyncIterable<string>;
  /** A URL anyone can GET until it expires; tampering with any part of it invalidates it. */
  presignGet(key: string, options: PresignOptions): Promise<string>;
}
