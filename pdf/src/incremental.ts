import { createHash } from 'node:crypto';
import { errorMessage } from '@notary/shared';
import {
  PDFArray,
  PDFContext,
  PDFCrossRefStream,
  PDFDict,
  type PDFDocument,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
} from 'pdf-lib';
import { decodeBounded, inflateBounded } from './bounded-decode';
import { PDF_MAX_STREAM_DECODED_BYTES, PdfBoundError } from './bounds';

/**
 * Incremental update of an existing PDF (ISO 32000-1, 7.5.6): the original bytes stay untouched as a prefix
 * and only new or changed objects are appended, with their own cross-reference section (a classic table,
 * or a cross-reference stream, 7.5.8, when the original's last section is one) and a trailer chained to
 * the original by /Prev. Before that, `inspectOriginal` checks that the original's cross-reference chain is
 * sound: an update appended to a file whose offsets are wrong would be as broken as the file.
 */

/** The original cannot be updated incrementally; `message` is a short English reason. */
export class UnsoundPdfError extends Error {}

/** What the update needs from the original's cross-reference chain. */
export interface OriginalStructure {
  /** Offset of the last cross-reference section: the value after the last `startxref`, the update's /Prev. */
  startxref: number;
  /** Kind of that section; the update's section is written the same way. */
  xrefKind: 'table' | 'stream';
  /** Largest /Size in the chain: every object number below it may be in use. */
  size: number;
  /** The newest /Root, /Info and /ID of the chain, copied into the update's trailer. */
  root: PDFRef;
  info: PDFObject | undefined;
  id: PDFObject | undefined;
  /** A trailer of the chain has /Encrypt. */
  encrypted: boolean;
}

/** A cross-reference entry for an object stored uncompressed at `offset`. */
interface InUseEntry {
  objectNumber: number;
  generation: number;
  offset: number;
}

interface Section {
  kind: 'table' | 'stream';
  trailer: PDFDict;
  inUse: InUseEntry[];
  /** Object numbers of object streams holding compressed entries (type 2). */
  objectStreams: number[];
}

const MAX_SECTIONS = 512;
/** How far from the end `startxref` is looked for (the spec says the last line; writers add some slack). */
const TAIL = 2048;

/**
 * Checks the original's cross-reference chain and returns what the update needs:
 * - `startxref` within the last 2 KB, pointing inside the file;
 * - at that offset, and at every /Prev (and /XRefStm of hybrid files), a classic `xref` table with its
 *   trailer or a cross-reference stream object (decoded: Flate with PNG predictors, or pdf-lib's filters);
 * - every in-use entry points at `<num> <gen> obj` of the same object; type-2 entries name an object stream
 *   below /Size;
 * - a /Root reference.
 * Pure and bounded (at most 512 sections, loops detected, decoded xref streams of at most
 * `PDF_MAX_STREAM_DECODED_BYTES`). Throws `UnsoundPdfError` with the reason, `PdfBoundError` past a bound.
 */
export function inspectOriginal(bytes: Uint8Array): OriginalStructure {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const startxref = findStartxref(buf);
  const context = PDFContext.create();
  const visited = new Set<number>();
  const pending: number[] = [startxref];
  let first: Section | undefined;
  let size = 0;
  let root: PDFRef | undefined;
  let info: PDFObject | undefined;
  let id: PDFObject | undefined;
  let encrypted = false;
  while (pending.length > 0) {
    const offset = pending.shift();
    if (offset === undefined) break;
    if (visited.has(offset)) throw new UnsoundPdfError(`cross-reference loop at offset ${offset}`);
    if (visited.size >= MAX_SECTIONS) throw new UnsoundPdfError('too many cross-reference sections');
    visited.add(offset);
    const section = readSection(buf, offset, context);
    first ??= section;
    checkEntries(buf, section);
    const t = section.trailer;
    size = Math.max(size, numberOf(t.get(PDFName.of('Size'))) ?? 0);
    root ??= refOf(t.get(PDFName.of('Root')));
    info ??= t.get(PDFName.of('Info'));
    id ??= t.get(PDFName.of('ID'));
    if (t.has(PDFName.of('Encrypt'))) encrypted = true;
    // A hybrid file's /XRefStm section is read before /Prev (7.5.8.4).
    const xrefStm = numberOf(t.get(PDFName.of('XRefStm')));
    if (section.kind === 'table' && xrefStm !== undefined)
      pending.push(checkedOffset(buf, xrefStm, 'XRefStm'));
    const prev = numberOf(t.get(PDFName.of('Prev')));
    if (prev !== undefined) pending.push(checkedOffset(buf, prev, 'Prev'));
  }
  if (!first) throw new UnsoundPdfError('no cross-reference section');
  if (!root) throw new UnsoundPdfError('no /Root in the trailer');
  if (size <= 0) throw new UnsoundPdfError('no /Size in the trailer');
  return { startxref, xrefKind: first.kind, size, root, info, id, encrypted };
}

function numberOf(obj: PDFObject | undefined): number | undefined {
  return obj instanceof PDFNumber && Number.isSafeInteger(obj.asNumber()) ? obj.asNumber() : undefined;
}

function refOf(obj: PDFObject | undefined): PDFRef | undefined {
  return obj instanceof PDFRef ? obj : undefined;
}

function checkedOffset(buf: Buffer, offset: number, what: string): number {
  if (offset <= 0 || offset >= buf.length)
    throw new UnsoundPdfError(`/${what} offset ${offset} outside the file`);
  return offset;
}

function findStartxref(buf: Buffer): number {
  const tailStart = Math.max(0, buf.length - TAIL);
  const tail = buf.toString('latin1', tailStart);
  const at = tail.lastIndexOf('startxref');
  if (at < 0) throw new UnsoundPdfError('no startxref in the last 2 KB');
  const match = /^startxref\s+(\d+)\s+%%EOF/.exec(tail.slice(at));
  if (!match?.[1]) throw new UnsoundPdfError('malformed startxref / %%EOF');
  return checkedOffset(buf, Number(match[1]), 'startxref');
}

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);

function skipWhitespace(buf: Buffer, offset: number): number {
  let at = offset;
  while (at < buf.length && WHITESPACE.has(buf[at] ?? 0)) at += 1;
  return at;
}

/** `<num> <gen> obj` at `offset` (after optional whitespace): the object number, generation and end. */
function objectHeader(buf: Buffer, offset: number): { num: number; gen: number; end: number } | undefined {
  const start = skipWhitespace(buf, offset);
  const text = buf.toString('latin1', start, Math.min(buf.length, start + 40));
  const match = /^(\d+)[\0\t\n\f\r ]+(\d+)[\0\t\n\f\r ]+obj(?![A-Za-z0-9])/.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  return { num: Number(match[1]), gen: Number(match[2]), end: start + match[0].length };
}

function readSection(buf: Buffer, offset: number, context: PDFContext): Section {
  const start = skipWhitespace(buf, offset);
  if (buf.toString('latin1', start, start + 4) === 'xref') return readTable(buf, start + 4, context);
  const header = objectHeader(buf, offset);
  if (header) return readStream(buf, header.end, context);
  throw new UnsoundPdfError(`no cross-reference section at offset ${offset}`);
}

function readTable(buf: Buffer, bodyStart: number, context: PDFContext): Section {
  const trailerAt = buf.indexOf('trailer', bodyStart, 'latin1');
  if (trailerAt < 0) throw new UnsoundPdfError('xref table without trailer');
  const body = buf.toString('latin1', bodyStart, trailerAt);
  const token = /\s*(\d+)\s+(\d+)(?:\s+([nf]))?/y;
  const inUse: InUseEntry[] = [];
  let objectNumber = 0;
  let remaining = 0;
  for (;;) {
    const at = token.lastIndex;
    const match = token.exec(body);
    if (!match) {
      if (body.slice(at).trim() !== '' || remaining > 0) throw new UnsoundPdfError('malformed xref table');
      break;
    }
    const [, a = '', b = '', kind] = match;
    if (kind === undefined) {
      if (remaining > 0) throw new UnsoundPdfError('xref subsection shorter than its count');
      objectNumber = Number(a);
      remaining = Number(b);
      continue;
    }
    if (remaining <= 0) throw new UnsoundPdfError('xref subsection longer than its count');
    if (kind === 'n') inUse.push({ objectNumber, generation: Number(b), offset: Number(a) });
    objectNumber += 1;
    remaining -= 1;
  }
  const trailer = parseAt(buf, trailerAt + 'trailer'.length, context);
  if (!(trailer instanceof PDFDict)) throw new UnsoundPdfError('trailer is not a dictionary');
  return { kind: 'table', trailer, inUse, objectStreams: [] };
}

function parseAt(buf: Buffer, offset: number, context: PDFContext): PDFObject {
  try {
    return PDFObjectParser.forBytes(buf.subarray(offset), context).parseObject();
  } catch (error) {
    throw new UnsoundPdfError(`unparseable object at offset ${offset}: ${errorMessage(error)}`);
  }
}

function readStream(buf: Buffer, bodyStart: number, context: PDFContext): Section {
  const stream = parseAt(buf, bodyStart, context);
  if (!(stream instanceof PDFRawStream) || stream.dict.get(PDFName.of('Type')) !== PDFName.of('XRef')) {
    throw new UnsoundPdfError('startxref does not point at an xref table or stream');
  }
  const dict = stream.dict;
  const widths = intArray(dict.get(PDFName.of('W')));
  const size = numberOf(dict.get(PDFName.of('Size')));
  if (widths?.length !== 3 || size === undefined || widths.some((w) => w < 0 || w > 8)) {
    throw new UnsoundPdfError('xref stream with bad /W or /Size');
  }
  const index = intArray(dict.get(PDFName.of('Index'))) ?? [0, size];
  if (index.length % 2 !== 0) throw new UnsoundPdfError('xref stream with bad /Index');
  const data = decodeXrefData(
    stream,
    widths.reduce((a, b) => a + b, 0),
  );
  const [w0 = 0, w1 = 0, w2 = 0] = widths;
  const rowSize = w0 + w1 + w2;
  const inUse: InUseEntry[] = [];
  const objectStreams = new Set<number>();
  let row = 0;
  for (let i = 0; i < index.length; i += 2) {
    const first = index[i] ?? 0;
    const count = index[i + 1] ?? 0;
    for (let j = 0; j < count; j += 1, row += 1) {
      const at = row * rowSize;
      if (at + rowSize > data.length) throw new UnsoundPdfError('xref stream shorter than its /Index');
      const type = w0 === 0 ? 1 : readInt(data, at, w0);
      const f2 = readInt(data, at + w0, w1);
      const f3 = readInt(data, at + w0 + w1, w2);
      if (type === 1) inUse.push({ objectNumber: first + j, generation: f3, offset: f2 });
      else if (type === 2) objectStreams.add(f2);
    }
  }
  for (const objStm of objectStreams) {
    if (objStm >= size) throw new UnsoundPdfError(`object stream ${objStm} beyond /Size`);
  }
  return { kind: 'stream', trailer: dict, inUse, objectStreams: [...objectStreams] };
}

function intArray(obj: PDFObject | undefined): number[] | undefined {
  if (!(obj instanceof PDFArray)) return undefined;
  const values: number[] = [];
  for (const item of obj.asArray()) {
    const n = numberOf(item);
    if (n === undefined) return undefined;
    values.push(n);
  }
  return values;
}

function readInt(data: Uint8Array, at: number, width: number): number {
  let value = 0;
  for (let i = 0; i < width; i += 1) value = value * 256 + (data[at + i] ?? 0);
  return value;
}

/**
 * The decoded rows of an xref stream: Flate via zlib (tolerating a missing end), PNG predictors undone. At
 * most `PDF_MAX_STREAM_DECODED_BYTES` are decoded: beyond, `PdfBoundError` (a Flate bomb, not damage).
 */
function decodeXrefData(stream: PDFRawStream, columns: number): Uint8Array {
  const filter = stream.dict.get(PDFName.of('Filter'));
  let data: Uint8Array;
  try {
    if (filter === undefined) data = stream.contents;
    else if (filter === PDFName.of('FlateDecode')) {
      data = inflateBounded(stream.contents, PDF_MAX_STREAM_DECODED_BYTES);
    } else data = decodeBounded(stream, PDF_MAX_STREAM_DECODED_BYTES);
  } catch (error) {
    if (error instanceof PdfBoundError) throw error;
    throw new UnsoundPdfError(`undecodable xref stream: ${errorMessage(error)}`);
  }
  const parms = stream.dict.get(PDFName.of('DecodeParms'));
  const predictor = parms instanceof PDFDict ? (numberOf(parms.get(PDFName.of('Predictor'))) ?? 1) : 1;
  if (predictor === 1) return data;
  if (predictor < 10) throw new UnsoundPdfError(`unsupported xref stream predictor ${predictor}`);
  const cols = parms instanceof PDFDict ? (numberOf(parms.get(PDFName.of('Columns'))) ?? columns) : columns;
  return undoPngPredictor(data, cols);
}

/** PNG row filters (RFC 2083, 6) with one byte per pixel, as xref streams use them. */
function undoPngPredictor(data: Uint8Array, columns: number): Uint8Array {
  const rows = Math.floor(data.length / (columns + 1));
  const out = new Uint8Array(rows * columns);
  for (let r = 0; r < rows; r += 1) {
    const filterType = data[r * (columns + 1)] ?? 0;
    for (let c = 0; c < columns; c += 1) {
      const raw = data[r * (columns + 1) + 1 + c] ?? 0;
      const left = c > 0 ? (out[r * columns + c - 1] ?? 0) : 0;
      const up = r > 0 ? (out[(r - 1) * columns + c] ?? 0) : 0;
      const upLeft = r > 0 && c > 0 ? (out[(r - 1) * columns + c - 1] ?? 0) : 0;
      let value: number;
      switch (filterType) {
        case 0:
          value = raw;
          break;
        case 1:
          value = raw + left;
          break;
        case 2:
          value = raw + up;
          break;
        case 3:
          value = raw + Math.floor((left + up) / 2);
          break;
        case 4:
          value = raw + paeth(left, up, upLeft);
          break;
        default:
          throw new UnsoundPdfError(`bad PNG predictor row type ${filterType}`);
      }
      out[r * columns + c] = value & 0xff;
    }
  }
  return out;
}

/** The PNG Paeth predictor (PNG spec 9.4): of left `a`, up `b` and up-left `c`, the one nearest `a + b - c`. */
export function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

function checkEntries(buf: Buffer, section: Section): void {
  for (const entry of section.inUse) {
    if (entry.offset <= 0 || entry.offset >= buf.length) {
      throw new UnsoundPdfError(`object ${entry.objectNumber} has offset ${entry.offset} outside the file`);
    }
    const header = objectHeader(buf, entry.offset);
    if (!header || header.num !== entry.objectNumber || header.gen !== entry.generation) {
      throw new UnsoundPdfError(`xref entry of object ${entry.objectNumber} does not point at it`);
    }
  }
}

/** Serializes objects into one growing scratch buffer (no allocation per object). */
class Serializer {
  private scratch = new Uint8Array(1 << 16);

  /** The object's bytes as pdf-lib writes them; valid until the next call. */
  bytes(obj: PDFObject): Uint8Array {
    const size = obj.sizeInBytes();
    if (size > this.scratch.length) this.scratch = new Uint8Array(Math.max(size, this.scratch.length * 2));
    obj.copyBytesInto(this.scratch, 0);
    return this.scratch.subarray(0, size);
  }
}

function digest(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('base64');
}

/**
 * What tells an indirect object unchanged between `IncrementalUpdate.begin` and `write`: the digest of its
 * serialization; for a raw stream, of its dictionary only, its bytes being compared by identity
 * (`StreamContents`): pdf-lib never changes a parsed stream's bytes in place, a changed stream is a new
 * object. So the content streams of an uploaded original (most of a file) are not serialized and hashed twice
 * per update.
 */
function fingerprint(serializer: Serializer, obj: PDFObject): string {
  return obj instanceof PDFRawStream
    ? `stream ${digest(serializer.bytes(obj.dict))}`
    : digest(serializer.bytes(obj));
}

/** The bytes of each raw stream as loaded, by reference (see `fingerprint`). */
type StreamContents = Map<PDFRef, Uint8Array>;

const latin1 = (text: string): Uint8Array => Buffer.from(text, 'latin1');

/**
 * Records the state of a loaded document so that, after modifications and `doc.flush()`, exactly the new
 * and changed indirect objects are written as an incremental update.
 *
 * Usage: `const update = IncrementalUpdate.begin(doc, original, structure)` right after
 * `PDFDocument.load(original, { updateMetadata: false })`, modify, `await doc.flush()`, `update.write()`.
 */
export class IncrementalUpdate {
  // Plain fields, not parameter properties: `notary-verify extend` loads this file too, and the verifier is
  // checked for syntax Node can strip.
  private readonly doc: PDFDocument;
  private readonly original: Uint8Array;
  private readonly structure: OriginalStructure;
  private readonly digests: Map<PDFRef, string>;
  private readonly contents: StreamContents;
  /** What `write` saw of every object, for the update that follows it (`next`). */
  private written: { digests: Map<PDFRef, string>; contents: StreamContents } | undefined;

  private constructor(
    doc: PDFDocument,
    original: Uint8Array,
    structure: OriginalStructure,
    digests: Map<PDFRef, string>,
    contents: StreamContents,
  ) {
    this.doc = doc;
    this.original = original;
    this.structure = structure;
    this.digests = digests;
    this.contents = contents;
  }

  /**
   * Snapshots a digest of every indirect object's serialization and reserves the object numbers below the
   * original /Size (pdf-lib does not register object and xref streams, whose numbers must not be reused).
   */
  static begin(doc: PDFDocument, original: Uint8Array, structure: OriginalStructure): IncrementalUpdate {
    const serializer = new Serializer();
    const digests = new Map<PDFRef, string>();
    const contents: StreamContents = new Map();
    for (const [ref, obj] of doc.context.enumerateIndirectObjects()) {
      digests.set(ref, fingerprint(serializer, obj));
      if (obj instanceof PDFRawStream) contents.set(ref, obj.contents);
    }
    doc.context.largestObjectNumber = Math.max(doc.context.largestObjectNumber, structure.size - 1);
    return new IncrementalUpdate(doc, original, structure, digests, contents);
  }

  /**
   * The updated file: the original bytes, a newline if they do not end with one, every new or changed
   * object (ascending object number), then a cross-reference table or stream covering exactly those
   * objects, with a trailer carrying /Size, /Prev (the original startxref), /Root, /Info and /ID of the
   * original, `startxref` and `%%EOF`.
   */
  write(): Uint8Array {
    const context = this.doc.context;
    const serializer = new Serializer();
    const parts: Uint8Array[] = [this.original];
    let offset = this.original.length;
    const last = this.original[this.original.length - 1];
    if (last !== 0x0a && last !== 0x0d) {
      parts.push(latin1('\n'));
      offset += 1;
    }
    const written: { ref: PDFRef; offset: number }[] = [];
    const digests = new Map<PDFRef, string>();
    const contents: StreamContents = new Map();
    for (const [ref, obj] of context.enumerateIndirectObjects()) {
      if (obj instanceof PDFRawStream) contents.set(ref, obj.contents);
      const sameBytes = !(obj instanceof PDFRawStream) || this.contents.get(ref) === obj.contents;
      const digest = sameBytes ? fingerprint(serializer, obj) : undefined;
      if (digest !== undefined && this.digests.get(ref) === digest) {
        digests.set(ref, digest);
        continue;
      }
      const bytes = serializer.bytes(obj);
      const head = latin1(`${ref.objectNumber} ${ref.generationNumber} obj\n`);
      parts.push(head, bytes.slice(), latin1('\nendobj\n'));
      written.push({ ref, offset });
      offset += head.length + bytes.length + 8;
      // Taken after writing: serializing a new stream sets its /Length, as a fresh snapshot would see it.
      digests.set(ref, fingerprint(serializer, obj));
    }
    const xrefOffset = offset;
    if (this.structure.xrefKind === 'stream') {
      const ref = context.nextRef();
      written.push({ ref, offset: xrefOffset });
      const stream = PDFCrossRefStream.create(this.trailerDict(context, ref.objectNumber + 1), true);
      for (const entry of written) stream.addUncompressedEntry(entry.ref, entry.offset);
      parts.push(
        latin1(`${ref.objectNumber} 0 obj\n`),
        serializer.bytes(stream).slice(),
        latin1('\nendobj\n'),
      );
    } else {
      const size = Math.max(this.structure.size, context.largestObjectNumber + 1);
      parts.push(
        latin1(`${xrefTable(written)}trailer\n`),
        serializer.bytes(this.trailerDict(context, size)).slice(),
      );
      parts.push(latin1('\n'));
    }
    parts.push(latin1(`startxref\n${xrefOffset}\n%%EOF\n`));
    this.written = { digests, contents };
    return new Uint8Array(Buffer.concat(parts));
  }

  /**
   * The update of `written` (this update's output, or those bytes with a signature placeholder filled: the
   * same objects) on the same document, left unchanged since `write`: its snapshot is the one `write` took,
   * no object is fingerprinted again. `structure`: `inspectOriginal(written)`. Undefined before `write`.
   */
  next(written: Uint8Array, structure: OriginalStructure): IncrementalUpdate | undefined {
    if (!this.written) return undefined;
    const context = this.doc.context;
    context.largestObjectNumber = Math.max(context.largestObjectNumber, structure.size - 1);
    return new IncrementalUpdate(this.doc, written, structure, this.written.digests, this.written.contents);
  }

  private trailerDict(context: PDFContext, minSize: number): PDFDict {
    const s = this.structure;
    const dict = context.obj({});
    dict.set(PDFName.of('Size'), PDFNumber.of(Math.max(s.size, minSize, context.largestObjectNumber + 1)));
    dict.set(PDFName.of('Prev'), PDFNumber.of(s.startxref));
    dict.set(PDFName.of('Root'), s.root);
    if (s.info) dict.set(PDFName.of('Info'), s.info);
    if (s.id) dict.set(PDFName.of('ID'), s.id);
    return dict;
  }
}

/** A classic cross-reference section (7.5.4): one subsection per run of consecutive object numbers. */
function xrefTable(entries: { ref: PDFRef; offset: number }[]): string {
  const sorted = [...entries].sort((a, b) => a.ref.objectNumber - b.ref.objectNumber);
  let out = 'xref\n';
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (
      j + 1 < sorted.length &&
      (sorted[j + 1]?.ref.objectNumber ?? 0) === (sorted[j]?.ref.objectNumber ?? 0) + 1
    ) {
      j += 1;
    }
    out += `${sorted[i]?.ref.objectNumber ?? 0} ${j - i + 1}\n`;
    for (let k = i; k <= j; k += 1) {
      const e = sorted[k];
      if (e)
        out += `${String(e.offset).padStart(10, '0')} ${String(e.ref.generationNumber).padStart(5, '0')} n\r\n`;
    }
    i = j + 1;
  }
  return out;
}
