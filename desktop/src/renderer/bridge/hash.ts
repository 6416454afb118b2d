import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { errorMessage } from '@notary/shared';
import type { ProgressListener } from '../../common/bridge';
import { ClientError } from '../../common/errors';

/** Up to this size WebCrypto hashes the whole file at once (native speed, one buffer in memory). */
const ONE_SHOT_MAX_BYTES = 32 * 1024 * 1024;
/** Slice read per step when streaming. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * SHA-256 of a `File`/`Blob` in the browser, as 64 lower-case hex characters. WebCrypto cannot hash
 * incrementally, so files above 32 MiB (and every file outside a secure context, where `crypto.subtle` is
 * missing) are streamed slice by slice through @noble/hashes: memory stays at one slice, progress is real.
 * @throws ClientError `cancelled` when `signal` aborts, `file` when the file cannot be read.
 */
export async function hashBlob(
  blob: Blob,
  onProgress: ProgressListener,
  signal?: AbortSignal,
): Promise<string> {
  const total = blob.size;
  const cancelled = () => new ClientError({ kind: 'cancelled', message: 'Hashing cancelled' });
  try {
    onProgress({ loaded: 0, total });
    const subtle = globalThis.crypto?.subtle;
    if (subtle && total <= ONE_SHOT_MAX_BYTES) {
      const digest = await subtle.digest('SHA-256', await blob.arrayBuffer());
      if (signal?.aborted) throw cancelled();
      onProgress({ loaded: total, total });
      return bytesToHex(new Uint8Array(digest));
    }
    const hash = sha256.create();
    for (let offset = 0; offset < total; offset += CHUNK_BYTES) {
      if (signal?.aborted) throw cancelled();
      const chunk = new Uint8Array(await blob.slice(offset, offset + CHUNK_BYTES).arrayBuffer());
      hash.update(chunk);
      onProgress({ loaded: Math.min(total, offset + chunk.length), total });
    }
    if (signal?.aborted) throw cancelled();
    onProgress({ loaded: total, total });
    return bytesToHex(hash.digest());
  } catch (e) {
    if (e instanceof ClientError) throw e;
    throw new ClientError({ kind: 'file', message: `Cannot read the file: ${errorMessage(e)}` });
  }
}
