import type { Readable } from 'node:stream';
import { OriginalSignaturesSchema, type ReceiptOriginalSignatures } from '@notary/verify/receipt';
import type { DocumentEntity } from '../../db/entities';
import type { OriginalSignatureReader } from '../../ports/original-signatures';
import type { ObjectStorage } from '../../ports/storage';

/**
 * Largest stored PDF whose signatures are read: the bound of stamping (`STAMP_MAX_BYTES`), so that a
 * certificate and the receipt served alone say the same of the same file.
 */
export const ORIGINAL_SIGNATURES_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What the certificate and the receipt say of the signatures `pdf` (the document's original bytes) carries,
 * judged at the notarization time (`doc.createdAt`): undefined when it carries none, so that only signed PDFs
 * get the section and the receipt field. A PDF whose signatures cannot be read is `unreadable` only when it
 * has a signature dictionary at all (`carriesSignatureDictionary`): a damaged unsigned PDF says nothing.
 * @throws `signal`'s reason once it aborts.
 */
export async function originalSignaturesOf(
  reader: OriginalSignatureReader,
  doc: DocumentEntity,
  pdf: Uint8Array,
  signal?: AbortSignal,
): Promise<ReceiptOriginalSignatures | undefined> {
  if (!reader.carriesSignatureDictionary(pdf)) return undefined;
  const read = await reader.read(pdf, { at: doc.createdAt, ...(signal ? { signal } : {}) });
  if (read.status === 'read' && read.signatures.length === 0) return undefined;
  // What a hostile file makes the reader say must still fit the receipt (or the receipt could not be made).
  const checked = OriginalSignaturesSchema.safeParse(read);
  if (!checked.success) {
    return {
      status: 'unreadable',
      reason: `the signatures read do not fit the receipt: ${checked.error.issues[0]?.message ?? ''}`,
    };
  }
  return checked.data;
}

/**
 * `originalSignaturesOf` for the receipt served alone (`GET /api/documents/:id/receipt`): the stored PDF is read
 * again (up to `ORIGINAL_SIGNATURES_MAX_BYTES`); undefined for other files, LGPD-deleted ones and
 * reference-only records (an IPFS import's bytes are fetched only for its certificate).
 */
export async function storedOriginalSignatures(
  ctx: { storage: ObjectStorage; originalSignatures: OriginalSignatureReader },
  doc: DocumentEntity,
): Promise<ReceiptOriginalSignatures | undefined> {
  if (doc.mimeType !== 'application/pdf' || doc.deletedAt || !doc.storageKey) return undefined;
  if (doc.fileSize > ORIGINAL_SIGNATURES_MAX_BYTES) return undefined;
  const bytes = await readAtMost(await ctx.storage.get(doc.storageKey), ORIGINAL_SIGNATURES_MAX_BYTES);
  return bytes ? originalSignaturesOf(ctx.originalSignatures, doc, bytes) : undefined;
}

/**
 * A stored object's bytes, or undefined past `max` bytes (the stream is destroyed then, the rest not read).
 * Shared with certificate issuing (`certificates/service.ts`), which refuses such an object instead.
 */
export async function readAtMost(stream: Readable, max: number): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > max) {
      stream.destroy();
      return undefined;
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}
