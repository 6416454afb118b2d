import { fileTypeFromBuffer } from 'file-type';

/** Bytes of the file's beginning that content sniffing needs (file-type reads at most 4100). */
export const SNIFF_BYTES = 4100;

/**
 * The file's real media type: detected from its magic bytes (file-type), else `text/plain` when the client
 * declared text and the head is valid UTF-8 without NUL, else `application/octet-stream`. The client's
 * declared type is never trusted for anything served inline (spec, Documents rule 4).
 */
export async function detectMimeType(head: Uint8Array, declared: string | undefined): Promise<string> {
  const detected = await fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  const declaredBase = declared?.split(';')[0]?.trim().toLowerCase();
  if (
    declaredBase?.startsWith('text/') ||
    declaredBase === 'image/svg+xml' ||
    declaredBase === 'application/json'
  ) {
    if (looksLikeText(head)) return declaredBase;
  }
  if (
    declaredBase &&
    /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(declaredBase) &&
    !declaredBase.startsWith('text/')
  ) {
    // Kept for the record only (e.g. application/zip on an empty body); never a reason to serve inline.
    return declaredBase === 'application/pdf' || declaredBase.startsWith('image/')
      ? 'application/octet-stream'
      : declaredBase;
  }
  return 'application/octet-stream';
}

function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    // A multi-byte sequence cut at the end of the head is not an error: drop the last 3 bytes from the check.
    new TextDecoder('utf-8', { fatal: true }).decode(
      head.length >= SNIFF_BYTES ? head.subarray(0, head.length - 3) : head,
    );
    return true;
  } catch {
    return false;
  }
}
