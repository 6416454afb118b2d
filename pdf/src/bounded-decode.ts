import { inflateSync, constants as zlibConstants } from 'node:zlib';
import { decodePDFRawStream, PDFContext, PDFName, PDFRawStream } from 'pdf-lib';
import { PdfBoundError } from './bounds';

/**
 * Stream decoding with a maximum output, since any uploaded PDF is untrusted: a Flate bomb (a few MB that inflate to
 * gigabytes) fails with `PdfBoundError` as soon as the output passes the bound, without allocating more than about the
 * bound.
 */

/**
 * zlib inflate (RFC 1950/1951, the PDF FlateDecode filter, ISO 32000-1 7.4.4) of `data`, tolerating a missing
 * end of stream as PDF readers do, with at most `maxOutputLength` bytes of output.
 * @throws PdfBoundError when the output would exceed `maxOutputLength`; zlib's Error for corrupt data.
 */
export function inflateBounded(data: Uint8Array, maxOutputLength: number): Uint8Array {
  try {
    return inflateSync(data, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new PdfBoundError(`a stream inflates to more than ${maxOutputLength} bytes`);
    }
    throw error;
  }
}

/** Bytes read at a time from a pdf-lib decoder, so that its buffer never grows far past what was read. */
const CHUNK = 64 * 1024;

/**
 * The decoded bytes of `stream` through pdf-lib's filters (LZW, ASCII85, ASCIIHex, RunLength, Flate, chains of
 * them), read in chunks and stopped once more than `maxOutputLength` bytes come out.
 * @throws PdfBoundError beyond `maxOutputLength`; pdf-lib's errors for unsupported filters or corrupt data.
 */
export function decodeBounded(stream: PDFRawStream, maxOutputLength: number): Uint8Array {
  const decoder = decodePDFRawStream(stream);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = decoder.getBytes(CHUNK);
    if (chunk.length === 0) break;
    total += chunk.length;
    if (total > maxOutputLength) {
      throw new PdfBoundError(`a stream decodes to more than ${maxOutputLength} bytes`);
    }
    chunks.push(new Uint8Array(chunk));
  }
  return new Uint8Array(Buffer.concat(chunks, total));
}

/** The part of pdf-lib's internal `DecodeStream` (a port of pdf.js's) that every filter grows its output by. */
interface DecodeStreamPrototype {
  ensureBuffer(this: { buffer: Uint8Array }, requested: number): Uint8Array;
}

/** Running total of one job's decoded buffers; `reset()` starts a new job. */
export interface DecodeBudget {
  reset(): void;
  /** Bytes of decode buffers allocated since the last reset. */
  readonly used: number;
  /**
   * The first bound exceeded since the last reset: pdf-lib's parser catches what a decoder throws and goes
   * on to report a generic invalid object, so the real reason is kept here.
   */
  readonly exceeded: PdfBoundError | undefined;
}

let installed: DecodeBudget | undefined;

/**
 * Bounds every stream pdf-lib decodes in this thread (object and cross-reference streams while
 * `PDFDocument.load` parses, 7.5.7 and 7.5.8): one decoded stream may not pass `perStream` bytes and the
 * decode buffers of one job may not pass `perJob` in total; past either, the decoder throws `PdfBoundError`.
 * pdf-lib has no option for this, so the shared `ensureBuffer` of its decoders is wrapped (pdf-lib 1.17.1;
 * any other shape fails here, at once). Meant for a worker thread that parses untrusted PDFs; idempotent per
 * thread (the first bounds stay).
 */
export function boundPdfLibDecoding(perStream: number, perJob: number): DecodeBudget {
  if (installed) return installed;
  // Any decoder reaches the shared prototype; ASCIIHex is the one whose constructor reads nothing.
  const dict = PDFContext.create().obj({ Filter: PDFName.of('ASCIIHexDecode') });
  const probe = decodePDFRawStream(PDFRawStream.of(dict, new Uint8Array(0)));
  const proto = Object.getPrototypeOf(Object.getPrototypeOf(probe)) as Partial<DecodeStreamPrototype> | null;
  const original = proto?.ensureBuffer;
  if (!proto || typeof original !== 'function') {
    throw new Error('pdf-lib: DecodeStream.ensureBuffer not found (pdf-lib version changed?)');
  }
  let used = 0;
  let exceeded: PdfBoundError | undefined;
  const fail = (message: string): never => {
    exceeded ??= new PdfBoundError(message);
    throw exceeded;
  };
  proto.ensureBuffer = function ensureBuffer(requested) {
    if (requested > perStream) fail(`a stream decodes to more than ${perStream} bytes`);
    const before = this.buffer.byteLength;
    const buffer = original.call(this, requested);
    used += buffer.byteLength - before;
    if (used > perJob) fail(`the streams of the PDF decode to more than ${perJob} bytes in total`);
    return buffer;
  };
  installed = {
    reset: () => {
      used = 0;
      exceeded = undefined;
    },
    get used() {
      return used;
    },
    get exceeded() {
      return exceeded;
    },
  };
  return installed;
}
