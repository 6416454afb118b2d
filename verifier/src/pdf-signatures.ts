import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFRawStream,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { decodeAtMost } from './certificate.ts';
import { errorMessage } from './error-message.ts';
import { type Message, msg, render } from './messages/index.ts';

/**
 * Reading the signatures of a PDF and its PAdES validation data, for check 6 and for listing the signatures
 * an uploaded original already carries:
 * - signature dictionaries (ISO 32000-1 12.8.1: `/ByteRange`, `/Contents`, `/Type /Sig`, `/Filter`,
 *   `/SubFilter`, `/M`) and document timestamps (ISO 32000-2 12.8.5, ETSI EN 319 142-1 5.4.3:
 *   `/Type /DocTimeStamp`, `/SubFilter /ETSI.RFC3161`);
 * - the revisions of the file (ISO 32000-1 7.5.6: each incremental update ends with `%%EOF`) and which of
 *   them each signature covers;
 * - the newest catalog's `/DSS` (ETSI EN 319 142-1 5.4.2: `/Certs`, `/OCSPs`, `/CRLs` arrays of streams of
 *   DER, and `/VRI` keyed by the uppercase hex SHA-1 of a signature's /Contents).
 * Pure and bounded: at most `MAX_PDF_SIGNATURES` signatures, CMS of at most `MAX_SIGNATURE_CONTENTS_BYTES`,
 * DSS entries and their decoded sizes capped. Malformed input gives `PdfSignatureError`, never a crash.
 */

/** The PDF's signatures or validation data cannot be read; `message` says why. */
export class PdfSignatureError extends Error {
  override name = 'PdfSignatureError';
}

/** At most this many signature dictionaries are read; a file with more is refused. */
export const MAX_PDF_SIGNATURES = 64;
/** Largest CMS (or RFC 3161 token) in a `/Contents`, bytes. */
export const MAX_SIGNATURE_CONTENTS_BYTES = 1024 * 1024;
/** At most this many streams in each of `/Certs`, `/OCSPs`, `/CRLs`, and this many `/VRI` entries. */
export const MAX_DSS_ENTRIES = 2000;
/** Largest decoded DSS stream (one certificate, OCSP response or CRL), bytes. */
export const MAX_DSS_STREAM_BYTES = 4 * 1024 * 1024;
/** Largest sum of the decoded DSS streams, bytes. */
export const MAX_DSS_TOTAL_BYTES = 64 * 1024 * 1024;
/** At most this many revisions (`%%EOF` markers) are considered. */
export const MAX_REVISIONS = 4096;

/** DER blobs, as a PAdES /DSS holds them (ETSI EN 319 142-1 5.4.2). */
export interface DssMaterial {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

/** The document security store of the newest catalog. */
export interface Dss extends DssMaterial {
  /** `/VRI` entries: key (uppercase hex SHA-1, as written) to the DER the entry names, and its `/TU` time. */
  vri: Map<string, DssMaterial & { time: Date | null }>;
}

/** Whether a signature's `/ByteRange` covers exactly one revision of the file, and what follows it. */
export interface SignatureCoverage {
  /** `[0 a b c]` with `a`..`b` exactly this dictionary's `/Contents <hex>` string. */
  wellFormed: boolean;
  /** Why not well formed, in English; null when it is. */
  problem: string | null;
  /** `problem` as a message (for a report in another language); null when well formed. */
  problemMessage: Message | null;
  /** `b + c`: the end of the signed bytes. */
  end: number;
  /** The signed bytes end where a revision ends (after its `%%EOF` and end-of-line). */
  endsARevision: boolean;
  /** Index of that revision in `revisions`, -1 when none. */
  revision: number;
  /** The signed bytes reach the end of the file (no later revision). */
  wholeFile: boolean;
  /** Bytes after the signed ones (later incremental updates, or anything appended). */
  bytesAfter: number;
}

/** One signature dictionary (a signature or a document timestamp). */
export interface PdfSignature {
  /** The dictionary's indirect reference, e.g. `12 0 R`. */
  ref: string;
  /** `/Type`: `Sig`, `DocTimeStamp`, or null when absent (it is optional for /Sig). */
  type: string | null;
  /** Whether it is a document timestamp (`/Type /DocTimeStamp` or `/SubFilter /ETSI.RFC3161`). */
  documentTimestamp: boolean;
  filter: string | null;
  subFilter: string | null;
  /** `/M` as written (`D:YYYYMMDDHHmmSSOHH'mm'`) and decoded; null when absent or unreadable. */
  m: string | null;
  signingTime: Date | null;
  /** `/Name`, `/Reason`, `/Location`, `/ContactInfo` (text), null when absent. */
  name: string | null;
  reason: string | null;
  location: string | null;
  contactInfo: string | null;
  byteRange: [number, number, number, number];
  coverage: SignatureCoverage;
  /** The `/Contents` bytes with the placeholder's trailing zero padding (what a /VRI key hashes). */
  contents: Uint8Array;
  /** The CMS (or RFC 3161 token) DER: `contents` cut at the end of its outer DER element. */
  cms: Uint8Array;
}

/** Every signature of a PDF, in the order of their signed ends, and the PDF's validation data. */
export interface PdfSignatures {
  /** File length, bytes. */
  size: number;
  /** End offsets of the revisions (after `%%EOF` and its end-of-line), ascending; the last may be `size`. */
  revisions: number[];
  signatures: PdfSignature[];
  /** The newest catalog's `/DSS`; null when there is none. */
  dss: Dss | null;
}

/**
 * Reads the signatures, revisions and `/DSS` of `pdf`.
 * @throws PdfSignatureError when the PDF does not load, a signature dictionary is malformed (no four-number
 *   /ByteRange, /Contents not a string, larger than the bounds), there are more than `MAX_PDF_SIGNATURES`, or
 *   the /DSS is malformed or past its bounds.
 */
export async function readPdfSignatures(pdf: Uint8Array): Promise<PdfSignatures> {
  const doc = await load(pdf);
  const revisions = findRevisions(pdf);
  const signatures: PdfSignature[] = [];
  try {
    for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
      if (!(object instanceof PDFDict) || !object.has(PDFName.of('ByteRange'))) continue;
      if (!object.has(PDFName.of('Contents'))) continue;
      if (signatures.length >= MAX_PDF_SIGNATURES) {
        throw new PdfSignatureError(`more than ${MAX_PDF_SIGNATURES} signature dictionaries`);
      }
      signatures.push(readSignature(pdf, ref, object, revisions));
    }
  } catch (e) {
    if (e instanceof PdfSignatureError) throw e;
    throw new PdfSignatureError(`a signature dictionary does not read: ${errorMessage(e)}`);
  }
  signatures.sort((x, y) => x.coverage.end - y.coverage.end);
  return { size: pdf.length, revisions, signatures, dss: readDssOf(doc) };
}

/**
 * The `/DSS` of the newest catalog of `pdf` (give a prefix ending at a revision's end for the DSS as of that
 * revision), null when there is none.
 * @throws PdfSignatureError when the PDF does not load or the DSS is malformed or past its bounds.
 */
export async function readDss(pdf: Uint8Array): Promise<Dss | null> {
  return readDssOf(await load(pdf));
}

/** The bytes a signature signs: the file up to `a`, then from `b` to `b + c`. */
export function signedContent(pdf: Uint8Array, signature: PdfSignature): Uint8Array {
  const [, a, b, c] = signature.byteRange;
  const out = new Uint8Array(a + c);
  out.set(pdf.subarray(0, a), 0);
  out.set(pdf.subarray(b, b + c), a);
  return out;
}

async function load(pdf: Uint8Array): Promise<PDFDocument> {
  try {
    return await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  } catch (e) {
    throw new PdfSignatureError(`not a readable PDF: ${errorMessage(e)}`);
  }
}

/**
 * End offsets of the file's revisions: after each `%%EOF` (ISO 32000-1 7.5.5) and the end-of-line that may
 * follow it (CR, LF or CR LF).
 */
function findRevisions(pdf: Uint8Array): number[] {
  const out: number[] = [];
  const marker = [0x25, 0x25, 0x45, 0x4f, 0x46]; // %%EOF
  for (let i = pdf.indexOf(0x25); i !== -1 && i + 5 <= pdf.length; i = pdf.indexOf(0x25, i + 1)) {
    if (!marker.every((m, k) => pdf[i + k] === m)) continue;
    let end = i + 5;
    if (pdf[end] === 0x0d) end += 1;
    if (pdf[end] === 0x0a) end += 1;
    out.push(end);
    if (out.length > MAX_REVISIONS) throw new PdfSignatureError(`more than ${MAX_REVISIONS} revisions`);
  }
  return out;
}

function readSignature(pdf: Uint8Array, ref: PDFRef, dict: PDFDict, revisions: number[]): PdfSignature {
  const where = `signature dictionary ${ref.toString()}`;
  const rangeObject = dict.lookup(PDFName.of('ByteRange'));
  const numbers =
    rangeObject instanceof PDFArray && rangeObject.size() === 4
      ? rangeObject.asArray().map((n) => (n instanceof PDFNumber ? n.asNumber() : Number.NaN))
      : [];
  if (numbers.length !== 4 || !numbers.every((n) => Number.isSafeInteger(n) && n >= 0)) {
    throw new PdfSignatureError(`${where}: /ByteRange is not four non-negative integers`);
  }
  const byteRange = numbers as [number, number, number, number];
  const contentsObject = dict.lookup(PDFName.of('Contents'));
  if (!(contentsObject instanceof PDFHexString || contentsObject instanceof PDFString)) {
    throw new PdfSignatureError(`${where}: /Contents is not a string`);
  }
  // pdf-lib keeps the hex text; its length bounds the decoded size before decoding.
  if (contentsObject.toString().length > 2 * MAX_SIGNATURE_CONTENTS_BYTES + 2) {
    throw new PdfSignatureError(`${where}: /Contents is larger than ${MAX_SIGNATURE_CONTENTS_BYTES} bytes`);
  }
  const contents = contentsObject.asBytes();
  const type = name(dict, 'Type');
  const subFilter = name(dict, 'SubFilter');
  const m = text(dict, 'M');
  let signingTime: Date | null = null;
  const mObject = dict.lookup(PDFName.of('M'));
  if (mObject instanceof PDFString || mObject instanceof PDFHexString) {
    try {
      const decoded = mObject.decodeDate();
      signingTime = Number.isNaN(decoded.getTime()) ? null : decoded;
    } catch {
      signingTime = null;
    }
  }
  return {
    ref: ref.toString(),
    type,
    documentTimestamp: type === 'DocTimeStamp' || subFilter === 'ETSI.RFC3161',
    filter: name(dict, 'Filter'),
    subFilter,
    m,
    signingTime,
    name: text(dict, 'Name'),
    reason: text(dict, 'Reason'),
    location: text(dict, 'Location'),
    contactInfo: text(dict, 'ContactInfo'),
    byteRange,
    coverage: coverage(pdf, byteRange, contents, revisions),
    contents,
    cms: derPrefix(contents),
  };
}

/**
 * ISO 32000-1 12.8.1: the signed bytes are the whole file of that revision but the `/Contents` hex string,
 * `<` and `>` included: `[0 a b c]`, the string from `a` to `b`, and `b + c` the revision's end.
 */
function coverage(
  pdf: Uint8Array,
  [start, a, b, c]: [number, number, number, number],
  contents: Uint8Array,
  revisions: number[],
): SignatureCoverage {
  const end = b + c;
  // A writer may sign up to `%%EOF` or include the end-of-line after it.
  const revision = revisions.findIndex(
    (r) =>
      r === end || (r > end && r - end <= 2 && pdf.subarray(end, r).every((x) => x === 0x0a || x === 0x0d)),
  );
  const base = {
    end,
    endsARevision: revision !== -1,
    revision,
    wholeFile: end === pdf.length,
    bytesAfter: Math.max(0, pdf.length - end),
  };
  const range = `[0 ${a} ${b} ${c}]`;
  const problem =
    start !== 0
      ? msg('pdf.rangeStart', { start })
      : !(a < b && end <= pdf.length)
        ? msg('pdf.rangeDoesNotFit', { range, bytes: pdf.length })
        : pdf[a] !== 0x3c || pdf[b - 1] !== 0x3e
          ? msg('pdf.gapNotHex', { range })
          : !gapHolds(pdf.subarray(a + 1, b - 1), contents)
            ? msg('pdf.gapNotContents', { range })
            : null;
  return {
    ...base,
    wellFormed: problem === null,
    problem: problem && render(problem, 'en'),
    problemMessage: problem,
  };
}

/** Whether the hex digits `hex` (file bytes, whitespace allowed) spell exactly `contents`. */
function gapHolds(hex: Uint8Array, contents: Uint8Array): boolean {
  let k = 0;
  let high = -1;
  for (const byte of hex) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c) continue;
    const v = hexValue(byte);
    if (v < 0) return false;
    if (high < 0) {
      high = v;
      continue;
    }
    if (k >= contents.length || contents[k] !== high * 16 + v) return false;
    k += 1;
    high = -1;
  }
  if (high >= 0) {
    // ISO 32000-1 7.3.4.3: an odd final digit is followed by an assumed 0.
    if (k >= contents.length || contents[k] !== high * 16) return false;
    k += 1;
  }
  return k === contents.length;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/**
 * The first DER element of `bytes` (X.690 8.1: tag, definite length): the CMS without the placeholder's
 * zero padding. The whole input when its header is not a definite-length one.
 */
export function derPrefix(bytes: Uint8Array): Uint8Array {
  if (bytes.length < 2) return bytes;
  const first = bytes[1] as number;
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4 || bytes.length < 2 + count) return bytes;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] as number);
    header = 2 + count;
  }
  const total = header + length;
  return total <= bytes.length ? bytes.subarray(0, total) : bytes;
}

function name(dict: PDFDict, key: string): string | null {
  const value = dict.lookup(PDFName.of(key));
  return value instanceof PDFName ? value.decodeText() : null;
}

function text(dict: PDFDict, key: string): string | null {
  const value = dict.lookup(PDFName.of(key));
  if (!(value instanceof PDFString || value instanceof PDFHexString)) return null;
  try {
    return value.decodeText();
  } catch {
    return null;
  }
}

/** The newest catalog's `/DSS`, read with the bounds above. */
function readDssOf(doc: PDFDocument): Dss | null {
  let dssObject: PDFObject | undefined;
  try {
    dssObject = doc.catalog.lookup(PDFName.of('DSS'));
  } catch (e) {
    throw new PdfSignatureError(`/DSS does not read: ${errorMessage(e)}`);
  }
  if (dssObject === undefined) return null;
  if (!(dssObject instanceof PDFDict)) throw new PdfSignatureError('/DSS is not a dictionary');
  const budget = { left: MAX_DSS_TOTAL_BYTES };
  const streams = (dict: PDFDict, key: string, what: string): Uint8Array[] => {
    const value = dict.lookup(PDFName.of(key));
    if (value === undefined) return [];
    if (!(value instanceof PDFArray)) throw new PdfSignatureError(`${what} /${key} is not an array`);
    if (value.size() > MAX_DSS_ENTRIES) {
      throw new PdfSignatureError(`${what} /${key} has more than ${MAX_DSS_ENTRIES} entries`);
    }
    return value.asArray().map((item, i) => {
      const stream = item instanceof PDFRef ? doc.context.lookup(item) : item;
      if (!(stream instanceof PDFRawStream)) {
        throw new PdfSignatureError(`${what} /${key} entry ${i} is not a stream`);
      }
      let bytes: Uint8Array;
      try {
        bytes = decodeAtMost(stream, Math.min(MAX_DSS_STREAM_BYTES, budget.left));
      } catch (e) {
        throw new PdfSignatureError(`${what} /${key} entry ${i} does not decode: ${errorMessage(e)}`);
      }
      budget.left -= bytes.length;
      return bytes;
    });
  };
  try {
    const vri = new Map<string, DssMaterial & { time: Date | null }>();
    const vriDict = dssObject.lookup(PDFName.of('VRI'));
    if (vriDict !== undefined) {
      if (!(vriDict instanceof PDFDict)) throw new PdfSignatureError('/DSS /VRI is not a dictionary');
      const entries = vriDict.entries();
      if (entries.length > MAX_DSS_ENTRIES) {
        throw new PdfSignatureError(`/DSS /VRI has more than ${MAX_DSS_ENTRIES} entries`);
      }
      for (const [key, value] of entries) {
        const entry = value instanceof PDFRef ? doc.context.lookup(value) : value;
        const label = `/DSS /VRI /${key.decodeText()}`;
        if (!(entry instanceof PDFDict)) throw new PdfSignatureError(`${label} is not a dictionary`);
        const tu = entry.lookup(PDFName.of('TU'));
        let time: Date | null = null;
        if (tu instanceof PDFString || tu instanceof PDFHexString) {
          try {
            time = tu.decodeDate();
          } catch {
            time = null;
          }
        }
        vri.set(key.decodeText(), {
          certs: streams(entry, 'Cert', label),
          ocsps: streams(entry, 'OCSP', label),
          crls: streams(entry, 'CRL', label),
          time,
        });
      }
    }
    return {
      certs: streams(dssObject, 'Certs', '/DSS'),
      ocsps: streams(dssObject, 'OCSPs', '/DSS'),
      crls: streams(dssObject, 'CRLs', '/DSS'),
      vri,
    };
  } catch (e) {
    if (e instanceof PdfSignatureError) throw e;
    throw new PdfSignatureError(`/DSS does not read: ${errorMessage(e)}`);
  }
}

/** What the revisions after a signature change in the objects that signature covers. */
export interface LaterChanges {
  /** Objects the later revisions add. */
  added: number;
  /** Objects they redefine, e.g. `1 0 R (catalog: /DSS)`, each an allowed change. */
  allowed: string[];
  /** Redefinitions that change what the signed revision shows or means, e.g. `5 0 R (a page's /Contents)`. */
  refused: string[];
}

/** Catalog keys a validation-data or document-timestamp update may add or change. */
const CATALOG_KEYS_ALLOWED = new Set(['DSS', 'AcroForm', 'Extensions']);
/** AcroForm keys such an update may change (a new signature field for a document timestamp). */
const ACROFORM_KEYS_ALLOWED = new Set(['Fields', 'SigFlags']);

/**
 * Compares the objects of the revision ending at `end` with the newest revision of `pdf` (ISO 32000-1 7.5.6),
 * to tell validation data and document timestamps added after a signature (ETSI EN 319 142-1 5.4.2, 5.4.3)
 * from changes to the signed document. Allowed: new objects; the catalog's /DSS, /AcroForm, /Extensions;
 * the AcroForm's /Fields (only grown) and /SigFlags; a page's /Annots (only grown) and those arrays; the
 * objects of a /DSS the signed revision already had; the trailer's /Info. Anything else is refused.
 * @throws PdfSignatureError when either revision does not load.
 */
export async function changesAfter(pdf: Uint8Array, end: number): Promise<LaterChanges> {
  const base = await load(pdf.subarray(0, end));
  const last = await load(pdf);
  const result: LaterChanges = { added: 0, allowed: [], refused: [] };
  const tolerated = new Map<string, string>();
  const grownArrays = new Map<string, string>();
  const baseRoot = base.context.trailerInfo.Root;
  if (baseRoot instanceof PDFRef) tolerated.set(baseRoot.toString(), 'catalog');
  const info = base.context.trailerInfo.Info;
  if (info instanceof PDFRef) tolerated.set(info.toString(), 'document information');
  const differing = (x: PDFDict, y: PDFDict): string[] => {
    const keys = new Set([...x.keys(), ...y.keys()].map((k) => k.decodeText()));
    return [...keys].filter((k) => serialize(x.get(PDFName.of(k))) !== serialize(y.get(PDFName.of(k))));
  };
  // The catalog, wherever it lives: only the keys a DSS or document-timestamp update needs.
  const catalogChanges = differing(base.catalog, last.catalog).filter((k) => !CATALOG_KEYS_ALLOWED.has(k));
  for (const k of catalogChanges) result.refused.push(`catalog /${k}`);
  const baseForm = base.catalog.get(PDFName.of('AcroForm'));
  const baseFormDict = base.catalog.lookup(PDFName.of('AcroForm'));
  const lastFormDict = last.catalog.lookup(PDFName.of('AcroForm'));
  if (baseFormDict instanceof PDFDict) {
    if (baseForm instanceof PDFRef) tolerated.set(baseForm.toString(), 'AcroForm');
    if (!(lastFormDict instanceof PDFDict)) result.refused.push('the AcroForm was removed');
    else {
      for (const k of differing(baseFormDict, lastFormDict).filter((k) => !ACROFORM_KEYS_ALLOWED.has(k)))
        result.refused.push(`AcroForm /${k}`);
      const before = baseFormDict.get(PDFName.of('Fields'));
      if (before instanceof PDFRef) grownArrays.set(before.toString(), 'AcroForm /Fields');
      else if (!grew(baseFormDict.lookup(PDFName.of('Fields')), lastFormDict.lookup(PDFName.of('Fields'))))
        result.refused.push('AcroForm /Fields lost entries');
    }
  }
  const baseDss = base.catalog.get(PDFName.of('DSS'));
  for (const ref of reachable(base, baseDss)) tolerated.set(ref, 'validation data');
  for (const [ref, object] of base.context.enumerateIndirectObjects()) {
    if (object instanceof PDFDict && name(object, 'Type') === 'Page') {
      const annots = object.get(PDFName.of('Annots'));
      if (annots instanceof PDFRef) grownArrays.set(annots.toString(), 'page /Annots');
      tolerated.set(ref.toString(), 'page');
    }
  }
  for (const [ref, object] of last.context.enumerateIndirectObjects()) {
    const before = base.context.lookup(ref);
    if (before === undefined) {
      result.added += 1;
      continue;
    }
    if (same(before, object)) continue;
    const key = ref.toString();
    const grownAs = grownArrays.get(key);
    if (grownAs) {
      if (grew(before, object)) result.allowed.push(`${key} (${grownAs}, grown)`);
      else result.refused.push(`${key} (${grownAs} lost entries)`);
      continue;
    }
    const role = tolerated.get(key);
    if (role === 'page') {
      if (!(before instanceof PDFDict) || !(object instanceof PDFDict)) {
        result.refused.push(`${key} (a page replaced by another object)`);
        continue;
      }
      const keys = differing(before, object);
      const others = keys.filter((k) => k !== 'Annots');
      if (others.length > 0) result.refused.push(`${key} (a page's /${others.join(', /')})`);
      else if (!grew(before.lookup(PDFName.of('Annots')), object.lookup(PDFName.of('Annots'))))
        result.refused.push(`${key} (a page's /Annots lost entries)`);
      else result.allowed.push(`${key} (a page's /Annots, grown)`);
      continue;
    }
    if (role) result.allowed.push(`${key} (${role})`);
    else result.refused.push(`${key} (${describe(before)})`);
  }
  return result;
}

/** Indirect references reachable from `start` (bounded walk), as `N G R` strings. */
function reachable(doc: PDFDocument, start: PDFObject | undefined): Set<string> {
  const out = new Set<string>();
  const stack: (PDFObject | undefined)[] = [start];
  let steps = 0;
  while (stack.length > 0 && steps++ < 100_000) {
    const item = stack.pop();
    if (item instanceof PDFRef) {
      if (out.has(item.toString())) continue;
      out.add(item.toString());
      stack.push(doc.context.lookup(item));
    } else if (item instanceof PDFDict) {
      for (const [, v] of item.entries()) stack.push(v);
    } else if (item instanceof PDFArray) {
      stack.push(...item.asArray());
    } else if (item instanceof PDFRawStream) {
      for (const [, v] of item.dict.entries()) stack.push(v);
    }
  }
  return out;
}

/** Whether the array `after` holds every element of the array `before` (absent counts as empty). */
function grew(before: PDFObject | undefined, after: PDFObject | undefined): boolean {
  const items = (x: PDFObject | undefined) => (x instanceof PDFArray ? x.asArray().map(serialize) : []);
  if (before !== undefined && !(before instanceof PDFArray)) return false;
  if (after !== undefined && !(after instanceof PDFArray)) return false;
  const later = new Set(items(after));
  return items(before).every((x) => later.has(x));
}

/** The object's PDF syntax (streams: their dictionary only; `same` compares their bytes too). */
function serialize(object: PDFObject | undefined, depth = 0): string {
  if (object === undefined) return '';
  // Beyond this depth the syntax as written is compared (a hostile nesting is not walked further).
  if (depth > 32) return object.toString();
  if (object instanceof PDFRawStream) return `${serialize(object.dict, depth + 1)} stream`;
  // Dictionaries with their keys sorted: a writer that saves the same dictionary in another order changes
  // nothing.
  if (object instanceof PDFDict) {
    const entries = object
      .entries()
      .map(([k, v]) => `${k.toString()} ${serialize(v, depth + 1)}`)
      .sort();
    return `<<${entries.join(' ')}>>`;
  }
  if (object instanceof PDFArray)
    return `[${object
      .asArray()
      .map((v) => serialize(v, depth + 1))
      .join(' ')}]`;
  if (object instanceof PDFString || object instanceof PDFHexString) {
    // (abc) and <616263> are the same string.
    return `<${[...object.asBytes()].map((b) => b.toString(16).padStart(2, '0')).join('')}>`;
  }
  return object.toString();
}

function same(x: PDFObject, y: PDFObject): boolean {
  if (x instanceof PDFRawStream || y instanceof PDFRawStream) {
    if (!(x instanceof PDFRawStream && y instanceof PDFRawStream)) return false;
    if (serialize(x) !== serialize(y) || x.contents.length !== y.contents.length) return false;
    return x.contents.every((b, i) => y.contents[i] === b);
  }
  return serialize(x) === serialize(y);
}

function describe(object: PDFObject): string {
  if (object instanceof PDFDict) return `a ${name(object, 'Type') ?? 'dictionary'} object`;
  if (object instanceof PDFRawStream) return 'a stream';
  return 'an object';
}
