import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createWriteStream, type Dir } from 'node:fs';
import { type FileHandle, mkdir, open, opendir, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@notary/shared';
import type { Disposition, ObjectStorage, PresignOptions, StoredObjectInfo } from '../../ports/storage';
import { abortReason, assertValidKey, assertValidPrefix, assertValidPresignOptions } from './validate';

/** Query parameter names of a signed file URL (`/files/<key>?exp=&ct=&cd=&fn=&sig=`). */
const Q = { exp: 'exp', contentType: 'ct', disposition: 'cd', fileName: 'fn', signature: 'sig' } as const;

/** Directory under the root holding in-flight uploads; hidden names are never valid keys, so it never lists. */
const TMP_DIR = '.tmp';

export interface FsObjectStorageOptions {
  /** Directory holding the objects (config `storage.root`, i.e. `DATA_DIR/objects`); created on demand. */
  root: string;
  /**
   * Secret the URL signing key is derived from (config `secret`). Any length; a purpose-specific key is derived
   * with HMAC so the same secret can also serve other components.
   */
  secret: string | Uint8Array;
  /**
   * Base URL the service is reached at, without trailing slash (e.g. `http://127.0.0.1:3000`). A function
   * because the server learns its port only after listening.
   */
  publicBaseUrl: () => string;
  /** Current time in milliseconds since the epoch; injectable for tests. Default `Date.now`. */
  clock?: () => number;
}

/** What a verified signed URL grants: the file to stream and the headers it was signed with. */
export interface SignedFileGrant {
  /** Absolute path of the object file. */
  path: string;
  contentType: string;
  disposition: Disposition;
  /** Unicode file name to put in `Content-Disposition`. */
  fileName: string;
  /** Object size in bytes at verification time. */
  size: number;
}

/**
 * Object storage as plain files under `root`: the embedded default, needing no configuration. Objects are served by the
 * service itself at `/files/<key>` (see `http/files.ts`) through URLs signed with HMAC-SHA256 that bind the key, the
 * expiry, the content type, the disposition and the file name.
 */
export class FsObjectStorage implements ObjectStorage {
  readonly kind = 'fs' as const;
  readonly root: string;
  private readonly signingKey: Buffer;
  private readonly publicBaseUrl: () => string;
  private readonly clock: () => number;

  constructor(options: FsObjectStorageOptions) {
    this.root = path.resolve(options.root);
    // Domain separation: the config secret also keys other things (identity), never sign with it directly.
    this.signingKey = createHmac('sha256', options.secret).update('notary/storage/fs/signed-url/v1').digest();
    this.publicBaseUrl = options.publicBaseUrl;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Streams `body` to a temp file under `<root>/.tmp` (same filesystem), fsyncs it, then renames it onto the
   * key's path, so a reader never sees a partial object. On stream error or abort the temp file is removed,
   * `body` is destroyed and the promise rejects with `signal.reason` (when aborted) or the stream's error.
   * @returns the object's size in bytes.
   * @throws AppError('BAD_REQUEST') for an invalid key.
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
    const target = this.pathOf(key);
    const tmp = path.join(this.root, TMP_DIR, `${randomBytes(16).toString('hex')}.part`);
    let size = 0;
    try {
      await mkdir(path.dirname(tmp), { recursive: true });
      // flush: fsync before close, and pipeline resolves only once the file is closed.
      // A 4 MiB buffer lets the socket keep reading while the disk writes (16 KiB default: they wait on each
      // other chunk by chunk, about 25% slower on a 200 MB upload); bounded memory per upload all the same.
      const file = createWriteStream(tmp, {
        flags: 'wx',
        mode: 0o640,
        flush: true,
        highWaterMark: 4 * 1024 * 1024,
      });
      await pipeline(body, file, { signal });
      size = file.bytesWritten;
      signal?.throwIfAborted();
      await mkdir(path.dirname(target), { recursive: true });
      await rename(tmp, target);
    } catch (e) {
      body.destroy();
      await unlink(tmp).catch(() => undefined);
      // pipeline wraps an abort in its own AbortError; callers get the reason they aborted with.
      if (signal?.aborted) throw abortReason(signal);
      throw e;
    }
    await syncDir(path.dirname(target));
    return { size };
  }

  /** Removes the object; succeeds when it does not exist. @throws AppError('BAD_REQUEST') for an invalid key. */
  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      await unlink(this.pathOf(key));
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT' && errnoCode(e) !== 'ENOTDIR') throw e;
    }
  }

  /**
   * Removes temp files of uploads interrupted by a crash (a running put keeps writing to its file, so only
   * files untouched for `olderThanMs`, default 24 h, are removed). Call at startup.
   * @returns how many files were removed.
   */
  async removeStaleTempFiles(olderThanMs = 24 * 3600 * 1000): Promise<number> {
    const dir = path.join(this.root, TMP_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return 0;
      throw e;
    }
    let removed = 0;
    for (const name of names) {
      const file = path.join(dir, name);
      const st = await stat(file).catch(() => undefined);
      if (st?.isFile() && this.clock() - st.mtimeMs > olderThanMs) {
        await unlink(file).catch(() => undefined);
        removed++;
      }
    }
    return removed;
  }

  /** Whether a regular file exists at the key. */
  async exists(key: string): Promise<boolean> {
    assertValidKey(key);
    try {
      return (await stat(this.pathOf(key))).isFile();
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return false;
      throw e;
    }
  }

  /**
   * Opens the object for reading. The file is opened before resolving, so a concurrent delete cannot cut the
   * stream short. @throws AppError('NOT_FOUND') when the object does not exist.
   */
  async get(key: string): Promise<Readable> {
    assertValidKey(key);
    const handle = await this.openObject(key);
    return handle.createReadStream();
  }

  /**
   * Yields every key starting with `prefix`, in byte-wise lexicographic order like S3 ListObjectsV2.
   * @throws AppError('BAD_REQUEST') for a prefix with characters keys cannot have.
   */
  async *list(prefix = ''): AsyncIterable<string> {
    assertValidPrefix(prefix);
    // Walk only the deepest directory the prefix fully names, then filter on the rest of it.
    const dirPart = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    for await (const key of this.walk(dirPart)) {
      if (key.startsWith(prefix)) yield key;
    }
  }

  /**
   * Every object under `prefix` with its size and mtime, streamed: directories are read a few entries at a
   * time (`opendir`), in the order the file system returns them (no sorting, which would need a whole
   * directory in memory: a tenant's directory holds one file per document). Objects deleted while the walk
   * runs are simply not yielded; the others are yielded once.
   * @throws AppError('BAD_REQUEST') for a prefix with characters keys cannot have.
   */
  async *listObjects(prefix = ''): AsyncIterable<StoredObjectInfo> {
    assertValidPrefix(prefix);
    const dirPart = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    for await (const key of this.scan(dirPart)) {
      if (!key.startsWith(prefix)) continue;
      // A key deleted between the walk and the stat is simply not there any more.
      const st = await stat(this.pathOf(key)).catch(() => undefined);
      if (st?.isFile()) yield { key, size: st.size, lastModified: st.mtime };
    }
  }

  /** Temp files of puts interrupted by a crash, untouched since `startedBefore` (see `removeStaleTempFiles`). */
  removeIncompleteUploads(startedBefore: Date): Promise<number> {
    return this.removeStaleTempFiles(Math.max(0, this.clock() - startedBefore.getTime()));
  }

  /**
   * A URL serving the object through the service until `expiresInSeconds` from now:
   * `<publicBaseUrl>/files/<key>?exp=<unix seconds>&ct=<content type>&cd=<inline|attachment>&fn=<file name>&sig=<hex>`
   * where `sig` is HMAC-SHA256 over the key and every parameter (see `signature`). Does not check that the object
   * exists (like S3). @throws AppError('BAD_REQUEST') for an invalid key or options.
   */
  async presignGet(key: string, options: PresignOptions): Promise<string> {
    assertValidKey(key);
    assertValidPresignOptions(options);
    const exp = String(Math.floor(this.clock() / 1000) + options.expiresInSeconds);
    const query = new URLSearchParams({
      [Q.exp]: exp,
      [Q.contentType]: options.contentType,
      [Q.disposition]: options.disposition,
      [Q.fileName]: options.fileName,
      [Q.signature]: this.signature(key, exp, options.contentType, options.disposition, options.fileName),
    });
    // Key characters are all URL-safe, so the key goes into the path verbatim.
    return `${this.publicBaseUrl().replace(/\/+$/, '')}/files/${key}?${query.toString()}`;
  }

  /**
   * Checks a request for `/files/<key>` against its query string.
   * @param key the object key from the URL path (decoded).
   * @param query the request's query parameters; each one must appear exactly once.
   * @param now current time in milliseconds since the epoch (default: the storage clock).
   * @returns the file path, the signed headers and the size.
   * @throws AppError('FORBIDDEN', 'Invalid signature') when a parameter is missing, repeated or tampered with
   *   (compared in constant time); AppError('FORBIDDEN', 'URL expired') once `now` is past `exp`, the same
   *   status S3 answers for an expired presigned URL (403 AccessDenied "Request has expired");
   *   AppError('NOT_FOUND') when the URL is valid but the object does not exist (any more).
   */
  async verifySignedRequest(
    key: string,
    query: URLSearchParams,
    now = this.clock(),
  ): Promise<SignedFileGrant> {
    const one = (name: string): string => {
      const values = query.getAll(name);
      if (values.length !== 1 || values[0] === undefined)
        throw new AppError('FORBIDDEN', 'Invalid signature');
      return values[0];
    };
    const exp = one(Q.exp);
    const contentType = one(Q.contentType);
    const disposition = one(Q.disposition);
    const fileName = one(Q.fileName);
    const given = Buffer.from(one(Q.signature), 'utf8');
    const expected = Buffer.from(this.signature(key, exp, contentType, disposition, fileName), 'utf8');
    // Length first: timingSafeEqual requires equal lengths, and the expected length is public anyway.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('FORBIDDEN', 'Invalid signature');
    }
    // Signed values are ours, but re-check them so a leaked signing key cannot smuggle a bad key or header.
    if (!/^\d{1,12}$/.test(exp) || (disposition !== 'inline' && disposition !== 'attachment')) {
      throw new AppError('FORBIDDEN', 'Invalid signature');
    }
    assertValidKey(key);
    assertValidPresignOptions({ expiresInSeconds: 1, contentType, disposition, fileName });
    if (now > Number(exp) * 1000) throw new AppError('FORBIDDEN', 'URL expired');
    const file = this.pathOf(key);
    let size: number;
    try {
      const st = await stat(file);
      if (!st.isFile()) throw new AppError('NOT_FOUND', 'Object not found');
      size = st.size;
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR')
        throw new AppError('NOT_FOUND', 'Object not found');
      throw e;
    }
    return { path: file, contentType, disposition, fileName, size };
  }

  /**
   * Opens the object file for reading (used by the file route to stream exactly what it stats).
   * @throws AppError('NOT_FOUND') when it does not exist.
   */
  async openObject(key: string): Promise<FileHandle> {
    assertValidKey(key);
    try {
      const handle = await open(this.pathOf(key), 'r');
      if (!(await handle.stat()).isFile()) {
        await handle.close();
        throw new AppError('NOT_FOUND', 'Object not found');
      }
      return handle;
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR')
        throw new AppError('NOT_FOUND', 'Object not found');
      throw e;
    }
  }

  /** Hex HMAC-SHA256 over a versioned JSON array of every signed field (JSON: unambiguous separators). */
  private signature(
    key: string,
    exp: string,
    contentType: string,
    disposition: string,
    fileName: string,
  ): string {
    const message = JSON.stringify(['v1', key, exp, contentType, disposition, fileName]);
    return createHmac('sha256', this.signingKey).update(message, 'utf8').digest('hex');
  }

  private pathOf(key: string): string {
    // assertValidKey already excluded traversal; this is a second, independent guard.
    const resolved = path.resolve(this.root, key);
    if (!resolved.startsWith(this.root + path.sep)) throw new AppError('BAD_REQUEST', 'Invalid object key');
    return resolved;
  }

  /**
   * Keys of regular files under `dir` (relative, ending with `/` or empty), depth first, in directory order:
   * one open directory handle per level, read in small chunks, whatever the number of entries.
   */
  private async *scan(dir: string): AsyncGenerator<string> {
    let handle: Dir;
    try {
      handle = await opendir(path.join(this.root, dir), { bufferSize: 128 });
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return;
      throw e;
    }
    // The iterator closes the handle when the loop ends, breaks or throws.
    for await (const entry of handle) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) yield* this.scan(`${dir}${entry.name}/`);
      else if (entry.isFile()) yield `${dir}${entry.name}`;
    }
  }

  /**
   * Keys of regular files under `dir` (relative, ending with `/` or empty), depth first in key order. Each
   * directory is read whole to be sorted: for `list` (operators, tests), not for walks over a whole store.
   */
  private async *walk(dir: string): AsyncGenerator<string> {
    let entries: { name: string; isDir: boolean; isFile: boolean }[];
    try {
      entries = (await readdir(path.join(this.root, dir), { withFileTypes: true }))
        .filter((d) => !d.name.startsWith('.'))
        .map((d) => ({ name: d.name, isDir: d.isDirectory(), isFile: d.isFile() }));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return;
      throw e;
    }
    // Sorting a directory as `name/` makes the depth-first walk yield keys in global byte order.
    const sortName = (e: { name: string; isDir: boolean }) => (e.isDir ? `${e.name}/` : e.name);
    entries.sort((a, b) => (sortName(a) < sortName(b) ? -1 : sortName(a) > sortName(b) ? 1 : 0));
    for (const entry of entries) {
      if (entry.isDir) yield* this.walk(`${dir}${entry.name}/`);
      else if (entry.isFile) yield `${dir}${entry.name}`;
    }
  }
}

/** fsyncs a directory so a rename into it survives a crash; best effort where directories cannot be opened. */
async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms refuse fsync on directories; the data itself was already synced.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string'
    ? e.code
    : undefined;
}
