import { crc32 } from 'node:zlib';
import type { CaptureRecord } from '../../../ports/capture';

/**
 * The screenshot's own copy of its capture's record (`capture.json` in an iTXt chunk): written by the service
 * when it signs the archive (the capture process hands the PNG over as Chromium rendered it), read back when
 * a certificate is issued (`CaptureRecordReader`).
 */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The iTXt keyword under which a screenshot carries its capture's record. */
const RECORD_KEYWORD = 'capture.json';

/** Whether `bytes` start with the PNG signature (PNG spec, 5.2). */
export function isPng(bytes: Uint8Array): boolean {
  return PNG_SIGNATURE.equals(Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(8, bytes.byteLength)));
}

/**
 * `png` with the record added as an uncompressed iTXt chunk (PNG spec, 11.3.4.5) keyworded `capture.json`,
 * placed before IEND (in place of a record chunk it already carries: a record is written again when the TSA
 * fails and the signature's facts change): the screenshot carries what the certificate states about its capture, and its
 * SHA-256 in the WACZ's `datapackage.json` covers both. @throws Error when `png` is not a PNG.
 */
export function withCaptureRecord(original: Buffer, record: CaptureRecord): Buffer {
  if (!isPng(original)) throw new Error('not a PNG');
  const png = stripCaptureRecord(original);
  const iend = png.length - 12;
  if (png.toString('latin1', iend + 4, iend + 8) !== 'IEND') throw new Error('PNG does not end with IEND');
  // keyword NUL, compression flag 0, method 0, language tag "" NUL, translated keyword "" NUL, UTF-8 text.
  const data = Buffer.concat([
    Buffer.from(RECORD_KEYWORD, 'latin1'),
    Buffer.from([0, 0, 0, 0, 0]),
    Buffer.from(JSON.stringify(record), 'utf8'),
  ]);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write('iTXt', 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([png.subarray(0, iend), head, data, crc, png.subarray(iend)]);
}

/**
 * `png` without its `capture.json` iTXt chunks: the image as the browser rendered it, byte for byte, when the
 * chunk was added by `withCaptureRecord` (its SHA-256 is the one the provenance summary states). A PNG without
 * such a chunk, or not a PNG, comes back as it is.
 */
export function stripCaptureRecord(png: Uint8Array): Buffer {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!isPng(buf)) return Buffer.from(buf);
  const kept: Buffer[] = [buf.subarray(0, 8)];
  let at = 8;
  // Chunks are walked by their lengths up to IEND; anything else (a length past the end, bytes after IEND)
  // leaves the PNG as it is.
  while (at + 12 <= buf.length) {
    const length = buf.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > buf.length) break;
    const type = buf.toString('latin1', at + 4, at + 8);
    const isRecord =
      type === 'iTXt' &&
      buf.toString('latin1', at + 8, at + 8 + RECORD_KEYWORD.length + 1) === `${RECORD_KEYWORD}\0`;
    if (!isRecord) kept.push(buf.subarray(at, end));
    at = end;
    if (type === 'IEND') break;
  }
  return Buffer.concat(at === buf.length ? kept : [buf]);
}

/** The record a screenshot carries (`withCaptureRecord`), or undefined when it has none or is not a PNG. */
export function readCaptureRecord(png: Uint8Array): CaptureRecord | undefined {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!isPng(buf)) return undefined;
  let at = 8;
  while (at + 12 <= buf.length) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (type === 'iTXt' && data.toString('latin1', 0, RECORD_KEYWORD.length + 1) === `${RECORD_KEYWORD}\0`) {
      const text = data.subarray(RECORD_KEYWORD.length + 5);
      try {
        return JSON.parse(text.toString('utf8')) as CaptureRecord;
      } catch {
        return undefined;
      }
    }
    if (type === 'IEND') return undefined;
    at += 12 + length;
  }
  return undefined;
}
