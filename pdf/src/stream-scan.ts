import { PDFObjectParser } from 'pdf-lib';

/**
 * A faster end-of-stream search for pdf-lib's parser (pdf-lib 1.17.1). When a stream's /Length is an
 * indirect reference (pdfTeX writes every stream so) pdf-lib cannot use it and finds `endstream` by trying
 * its keywords at every byte of the stream: about 30 ms per parse of a 1 MB paper, paid at each long-term
 * update of a certificate. This does the same search with `indexOf` (native), with the same result: the
 * same end offset, the same nesting rule (a `stream` keyword inside a stream opens one more level) and the
 * same error when no end is found. Only the line and column pdf-lib tracks for its error messages are not
 * advanced over the skipped bytes (the offset in those messages stays exact).
 */

/** The parts of pdf-lib's internal `ByteStream` the search reads (pdf-lib 1.17.1). */
interface ByteStreamInternals {
  bytes: Uint8Array;
  idx: number;
  length: number;
}

interface ParserInternals {
  bytes: ByteStreamInternals;
}

type EndOfStreamFallback = (this: ParserInternals, startPos: unknown) => number;

const STREAM = Buffer.from('stream', 'latin1');
const END = [0x65, 0x6e, 0x64]; // "end"
const CR = 0x0d;
const LF = 0x0a;

/** Whether `bytes` holds "end" at `at`. */
function endAt(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === END[0] && bytes[at + 1] === END[1] && bytes[at + 2] === END[2];
}

/**
 * Where pdf-lib's scan from `from` meets a keyword whose `stream` is at `s`: an `endstream` (preceded by CR LF,
 * CR, LF or nothing, the earliest start at or after `from` winning, as pdf-lib tries each byte in turn) gives
 * its start; else the keyword is `stream` itself (-1).
 */
function endstreamStart(bytes: Uint8Array, s: number, from: number): number {
  if (s - 5 >= from && bytes[s - 5] === CR && bytes[s - 4] === LF && endAt(bytes, s - 3)) return s - 5;
  const eol = bytes[s - 4];
  if (s - 4 >= from && (eol === CR || eol === LF) && endAt(bytes, s - 3)) return s - 4;
  if (s - 3 >= from && endAt(bytes, s - 3)) return s - 3;
  return -1;
}

/**
 * pdf-lib's `findEndOfStreamFallback` by `indexOf`: from the parser's offset, the offset where the matching
 * `endstream` keyword (with its end-of-line) starts; the parser is left after that keyword.
 * @throws what pdf-lib's own throws when the stream has no end (its `PDFStreamParsingError`), by calling it.
 */
function makeFastEndOfStream(original: EndOfStreamFallback): EndOfStreamFallback {
  return function findEndOfStreamFallback(this: ParserInternals, startPos: unknown): number {
    const stream = this.bytes;
    const { bytes, length } = stream;
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(length, bytes.byteLength));
    let at = stream.idx;
    let nesting = 1;
    for (;;) {
      const s = view.indexOf(STREAM, at);
      if (s < 0) return original.call(this, startPos);
      const start = endstreamStart(bytes, s, at);
      at = s + STREAM.length;
      if (start < 0) {
        nesting += 1;
        continue;
      }
      nesting -= 1;
      if (nesting === 0) {
        stream.idx = at;
        return start;
      }
    }
  };
}

let installed = false;

/**
 * Replaces pdf-lib's end-of-stream search by the `indexOf` one in this thread (idempotent). Checks the
 * internals it relies on first and leaves pdf-lib as it is when they differ (another pdf-lib version).
 * @returns whether the faster search is in place.
 */
export function installFastStreamScan(): boolean {
  if (installed) return true;
  const proto = PDFObjectParser.prototype as unknown as { findEndOfStreamFallback?: EndOfStreamFallback };
  const original = proto.findEndOfStreamFallback;
  const probe = PDFObjectParser.forBytes(
    new Uint8Array(1),
    undefined as never,
  ) as unknown as Partial<ParserInternals>;
  const internals = probe.bytes;
  if (
    typeof original !== 'function' ||
    !internals ||
    !(internals.bytes instanceof Uint8Array) ||
    typeof internals.idx !== 'number' ||
    typeof internals.length !== 'number'
  ) {
    return false;
  }
  proto.findEndOfStreamFallback = makeFastEndOfStream(original);
  installed = true;
  return true;
}
