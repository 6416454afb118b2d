/**
 * PNG files (W3C PNG Specification, third edition) for the tests of a web capture's screenshot on its
 * certificate: ordinary screenshots (every row filter type, with or without alpha, a full-height capture),
 * one that declares a size far past the pixel cap, and decompression bombs whose image data inflates to far
 * more than their declared size.
 */
import { crc32, deflateSync } from 'node:zlib';
import { deflatePrefixAndZeros } from './hostile-pdfs.testing';
import { paeth } from './incremental';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One chunk (5.3): length, type, data, CRC-32 of type and data. */
export function pngChunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** The fields of an IHDR chunk (11.2.1); compression and filter method 0. */
export interface IhdrFields {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlace?: number;
}

/** A PNG of `header` whose one IDAT chunk holds `zlibData` as given (not checked against the header). */
export function assemblePng(header: IhdrFields, zlibData: Uint8Array): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(header.width, 0);
  ihdr.writeUInt32BE(header.height, 4);
  ihdr[8] = header.bitDepth;
  ihdr[9] = header.colorType;
  ihdr[12] = header.interlace ?? 0;
  return Buffer.concat([
    SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlibData),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** `raw` (one row of samples) filtered with `type` (9.2: 0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth). */
function filterRow(type: number, raw: Buffer, prior: Buffer, bpp: number): Buffer {
  const out = Buffer.alloc(raw.length + 1);
  out[0] = type;
  for (let i = 0; i < raw.length; i += 1) {
    const x = raw[i] ?? 0;
    const a = i >= bpp ? (raw[i - bpp] ?? 0) : 0;
    const b = prior[i] ?? 0;
    const c = i >= bpp ? (prior[i - bpp] ?? 0) : 0;
    const predicted = [0, a, b, (a + b) >> 1, paeth(a, b, c)][type] ?? 0;
    out[i + 1] = (x - predicted) & 0xff;
  }
  return out;
}

/** A screenshot-like PNG and its samples, row-major without filter bytes (RGB or RGBA, 8 bits each). */
export interface PatternPng {
  png: Buffer;
  samples: Buffer;
}

/**
 * An 8-bit RGB (or RGBA with `alpha`) PNG of `width` x `height` pixels whose samples vary with x and y, each
 * row filtered with filter type `y % 5` (every type of 9.2, so that a reader must undo each of them).
 */
export function patternPng(width: number, height: number, alpha: boolean): PatternPng {
  const channels = alpha ? 4 : 3;
  const samples = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const at = (y * width + x) * channels;
      samples[at] = (x * 7 + y * 3) & 0xff;
      samples[at + 1] = (x ^ (y * 5)) & 0xff;
      samples[at + 2] = y < height / 2 ? 220 : 20;
      if (alpha) samples[at + 3] = (x * 11 + y * 13) & 0xff;
    }
  }
  const rowBytes = width * channels;
  const rows: Buffer[] = [];
  let prior = Buffer.alloc(rowBytes);
  for (let y = 0; y < height; y += 1) {
    const raw = samples.subarray(y * rowBytes, (y + 1) * rowBytes);
    rows.push(filterRow(y % 5, raw, prior, channels));
    prior = raw;
  }
  const png = assemblePng(
    { width, height, bitDepth: 8, colorType: alpha ? 6 : 2 },
    deflateSync(Buffer.concat(rows)),
  );
  return { png, samples };
}

/**
 * An 8-bit RGB PNG like a full-page capture: `width` x `height` pixels in horizontal bands of 64 rows, each
 * of its own colour, no row filter; at 1280 x 16384 (the largest screenshot a capture makes) about 200 KB.
 */
export function bandedPng(width: number, height: number): Buffer {
  const stride = 1 + width * 3;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y += 1) {
    const band = y >> 6;
    const rgb = Buffer.from([(band * 37) & 0xff, (band * 91) & 0xff, (band * 53 + 40) & 0xff]);
    raw.fill(rgb, y * stride + 1, (y + 1) * stride);
  }
  return assemblePng({ width, height, bitDepth: 8, colorType: 2 }, deflateSync(raw, { level: 9 }));
}

/**
 * A valid header declaring an 8-bit RGB image of `width` x `height` pixels (e.g. 100000 x 100000, 30 GB of
 * samples) with image data for one row only: a few hundred bytes that must be refused before any decoding.
 */
export function hugeDeclaredPng(width: number, height: number): Buffer {
  return assemblePng({ width, height, bitDepth: 8, colorType: 2 }, deflateSync(Buffer.alloc(1 + width * 3)));
}

/**
 * A decompression bomb: a valid header declaring an 8-bit RGB image of `width` x `height` pixels (within the
 * cap) whose image data inflates to `zeroBytes` zero bytes, far more than that size needs (about 1 KB of
 * file per MiB of zeros).
 */
export async function bombPng(width: number, height: number, zeroBytes: number): Promise<Buffer> {
  return assemblePng(
    { width, height, bitDepth: 8, colorType: 2 },
    await deflatePrefixAndZeros(new Uint8Array(0), zeroBytes),
  );
}
