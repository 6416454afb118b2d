import {
  decodePDFRawStream,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  type PDFObject,
  PDFRawStream,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { errorMessage } from './error-message.ts';
import { RECEIPT_FILE_NAME } from './receipt.ts';

/**
 * Reading a certificate PDF: the `receipt.json` it carries as an associated file (ISO 32000-2 14.13: the
 * catalog's `/Names /EmbeddedFiles` name tree and `/AF` array, `/AFRelationship /Supplement`), and whether it
 * begins with the notarized file (a stamped PDF is the original followed by an incremental update, ISO
 * 32000-1 7.5.6).
 */

/** The certificate is not a PDF we can read, or carries no receipt. */
export class CertificateError extends Error {
  override name = 'CertificateError';
}

/** The attached receipt and how it is attached. */
export interface AttachedReceipt {
  /** The attachment's bytes (UTF-8 JSON). */
  bytes: Uint8Array;
  /** The file specification is listed in the catalog's `/AF`. */
  inAssociatedFiles: boolean;
  /** Its `/AFRelationship`, e.g. `Supplement`; null when absent. */
  relationship: string | null;
}

const MAX_TREE_NODES = 10_000;
const MAX_TREE_DEPTH = 32;

/**
 * Largest decoded `receipt.json`, bytes: a receipt is a few KB; its stream is decoded in chunks and refused
 * past this (a Flate bomb in place of the receipt is read no further).
 */
export const MAX_RECEIPT_BYTES = 1024 * 1024;
/** Bytes read at a time from pdf-lib's decoder. */
const DECODE_CHUNK = 64 * 1024;

/**
 * The `receipt.json` attached to `pdf` (the name tree's entry; with several revisions the newest catalog's).
 * @throws CertificateError when the PDF does not load, its structure is not what the reading expects (a
 *   damaged or hostile file: any error of the reading counts), or it has no such attachment.
 */
export async function extractReceipt(pdf: Uint8Array): Promise<AttachedReceipt> {
  try {
    return await readReceipt(pdf);
  } catch (e) {
    if (e instanceof CertificateError) throw e;
    throw new CertificateError(`the certificate is not a readable PDF: ${errorMessage(e)}`);
  }
}

async function readReceipt(pdf: Uint8Array): Promise<AttachedReceipt> {
  return readAttached(pdf, RECEIPT_FILE_NAME, MAX_RECEIPT_BYTES);
}

/**
 * The file attached to `pdf` under `name` (the name tree's entry; the newest catalog's), decoded to at most
 * `max` bytes, with how it is associated. Another document's attachment read the same way as the receipt
 * (the certidão de permanência's `monitor-chain.json`).
 * @throws CertificateError as `extractReceipt`.
 */
export async function extractAttachment(
  pdf: Uint8Array,
  name: string,
  max: number,
): Promise<AttachedReceipt> {
  try {
    return await readAttached(pdf, name, max);
  } catch (e) {
    if (e instanceof CertificateError) throw e;
    throw new CertificateError(`the document is not a readable PDF: ${errorMessage(e)}`);
  }
}

async function readAttached(pdf: Uint8Array, name: string, max: number): Promise<AttachedReceipt> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  } catch (e) {
    throw new CertificateError(`the certificate is not a readable PDF: ${errorMessage(e)}`);
  }
  const context = doc.context;
  const names = doc.catalog.lookup(PDFName.of('Names'));
  const tree = names instanceof PDFDict ? names.lookup(PDFName.of('EmbeddedFiles')) : undefined;
  const specRef = tree instanceof PDFDict ? findName(tree, name) : undefined;
  const spec = specRef === undefined ? undefined : context.lookup(specRef);
  if (!(spec instanceof PDFDict)) throw new CertificateError(`the document has no attached ${name}`);
  const ef = spec.lookup(PDFName.of('EF'));
  const stream =
    ef instanceof PDFDict ? (ef.lookup(PDFName.of('F')) ?? ef.lookup(PDFName.of('UF'))) : undefined;
  if (!(stream instanceof PDFRawStream)) {
    throw new CertificateError(`the attached ${name} has no embedded file stream`);
  }
  let bytes: Uint8Array;
  try {
    bytes = decodeAtMost(stream, max);
  } catch (e) {
    throw new CertificateError(`the attached ${name} does not decode: ${errorMessage(e)}`);
  }
  const af = doc.catalog.lookup(PDFName.of('AF'));
  const inAssociatedFiles =
    af instanceof PDFArray &&
    af
      .asArray()
      .some((item) => item === specRef || (item instanceof PDFRef && context.lookup(item) === spec));
  const rel = spec.lookup(PDFName.of('AFRelationship'));
  return { bytes, inAssociatedFiles, relationship: rel instanceof PDFName ? rel.decodeText() : null };
}

/**
 * The decoded bytes of `stream` (pdf-lib's filters), read in chunks.
 * @throws Error when they pass `max` bytes (nothing more is decoded), or pdf-lib's decoding errors.
 */
export function decodeAtMost(stream: PDFRawStream, max: number): Uint8Array {
  const decoder = decodePDFRawStream(stream);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = decoder.getBytes(DECODE_CHUNK);
    if (chunk.length === 0) break;
    total += chunk.length;
    if (total > max) throw new Error(`it decodes to more than ${max} bytes`);
    chunks.push(new Uint8Array(chunk));
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The value of `key` in a name tree (ISO 32000-1 7.9.6), walked iteratively with bounds. */
function findName(root: PDFDict, key: string): PDFObject | undefined {
  const stack: { node: PDFDict; depth: number }[] = [{ node: root, depth: 0 }];
  let visited = 0;
  let found: PDFObject | undefined;
  while (stack.length > 0) {
    const item = stack.pop();
    if (!item || ++visited > MAX_TREE_NODES) break;
    const names = item.node.lookup(PDFName.of('Names'));
    if (names instanceof PDFArray) {
      for (let i = 0; i + 1 < names.size(); i += 2) {
        const k = names.lookup(i);
        const text = k instanceof PDFString || k instanceof PDFHexString ? k.decodeText() : undefined;
        // The last entry of that name wins (a tree should not repeat it).
        if (text === key) found = names.get(i + 1);
      }
    }
    const kids = item.node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray && item.depth < MAX_TREE_DEPTH) {
      for (let i = 0; i < kids.size(); i++) {
        const kid = kids.lookup(i);
        if (kid instanceof PDFDict) stack.push({ node: kid, depth: item.depth + 1 });
      }
    }
  }
  return found;
}

/** Whether `certificate` begins with exactly the bytes of `file` (a stamped PDF: original + update). */
export function startsWith(certificate: Uint8Array, file: Uint8Array): boolean {
  if (file.length === 0 || certificate.length <= file.length) return false;
  for (let i = 0; i < file.length; i++) if (certificate[i] !== file[i]) return false;
  return true;
}
