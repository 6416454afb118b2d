import { deflateSync, inflateSync, type ZlibOptions } from 'node:zlib';
import { errorMessage } from '@notary/shared';

/**
 * A web capture's screenshot (PNG, W3C PNG Specification, third edition; ISO/IEC 15948) read for its
 * certificate with the work bounded before it starts: the declared size is read from the IHDR chunk and
 * compared with a pixel cap before a byte is inflated, and the image data is inflated with a maximum output of
 * exactly what that size needs, so a decompression bomb stops there (worker heap limits do not count Buffers).
 *
 * Only what a capture makes is read: 8-bit greyscale or truecolour, with or without alpha, not interlaced
 * (Chromium writes 8-bit RGB). The result is PDF image data (ISO 32000-1, 8.9.5), not pixels: the PNG's own zlib
 * stream of filtered rows is a FlateDecode stream with the PNG predictors (7.4.4.4, /Predictor 15), so an opaque
 * screenshot is embedded without being re-compressed; an alpha channel is split off as a soft mask (11.6.5.3).
 */

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The fields of a PNG's IHDR chunk (11.2.1). */
export interface PngHeader {
  /** Pixels. */
  width: number;
  /** Pixels. */
  height: number;
  bitDepth: number;
  /** 0 greyscale, 2 truecolour, 3 indexed, 4 greyscale with alpha, 6 truecolour with alpha. */
  colorType: number;
  /** 0 none, 1 Adam7. */
  interlace: number;
}

/** The bit depths the PNG specification allows for each colour type (Table 11.1). */
const ALLOWED_DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

/** Channels (bytes) per pixel of the colour types read here, at 8 bits each. */
const CHANNELS: Record<number, 1 | 2 | 3 | 4> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/** A screenshot's header judged against the pixel cap: readable, larger than the cap, or not read at all. */
export type ScreenshotCheck =
  | { kind: 'ok'; header: PngHeader }
  | { kind: 'too-large'; width: number; height: number }
  | { kind: 'unreadable'; detail: string };

/** A screenshot as PDF image data (`decodeScreenshot`). */
export interface ScreenshotImageData {
  /** Pixels. */
  width: number;
  /** Pixels. */
  height: number;
  /** 1: /DeviceGray, 3: /DeviceRGB. */
  colors: 1 | 3;
  /** zlib (RFC 1950) data of the colour samples' rows, each prefixed with its PNG filter type: /Predictor 15. */
  color: Uint8Array;
  /** The same for the alpha samples (one a pixel), when the PNG has an alpha channel. */
  alpha: Uint8Array | undefined;
}

export type ScreenshotDecode =
  | { kind: 'image'; image: ScreenshotImageData }
  | Exclude<ScreenshotCheck, { kind: 'ok' }>;

const unreadable = (detail: string) => ({ kind: 'unreadable', detail }) as const;

function ascii(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + 4));
}

/**
 * Judges `png` by its signature and IHDR chunk alone (its first 33 bytes; nothing is inflated): `too-large`
 * when it declares more than `maxPixels` pixels, `unreadable` when it is not a PNG, declares a bit depth and
 * colour type the specification does not allow together, or is valid but not a kind read here (not 8 bits a
 * sample, indexed colour, interlaced).
 */
export function checkScreenshotHeader(png: Uint8Array, maxPixels: number): ScreenshotCheck {
  if (png.length < 33 || SIGNATURE.some((b, i) => png[i] !== b)) return unreadable('not a PNG');
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  if (view.getUint32(8) !== 13 || ascii(png, 12) !== 'IHDR') return unreadable('the first chunk is not IHDR');
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  const [bitDepth = 0, colorType = 0, compression = 0, filter = 0, interlace = 0] = png.subarray(24, 29);
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    return unreadable(`invalid size ${width} x ${height}`);
  }
  if (compression !== 0 || filter !== 0 || interlace > 1)
    return unreadable('unknown compression, filter or interlace method');
  if (!ALLOWED_DEPTHS[colorType]?.includes(bitDepth)) {
    return unreadable(`bit depth ${bitDepth} with colour type ${colorType} is not a valid PNG`);
  }
  if (width * height > maxPixels) return { kind: 'too-large', width, height };
  if (bitDepth !== 8 || CHANNELS[colorType] === undefined || interlace !== 0) {
    return unreadable(
      `not an 8-bit, non-interlaced greyscale or truecolour PNG (colour type ${colorType}, ${bitDepth} bits)`,
    );
  }
  return { kind: 'ok', header: { width, height, bitDepth, colorType, interlace } };
}

/** The concatenated data of the IDAT chunks (11.2.4), or why there is none. */
function imageData(png: Uint8Array): Buffer | string {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const parts: Uint8Array[] = [];
  for (let at = 8; at + 8 <= png.length; ) {
    const length = view.getUint32(at);
    const type = ascii(png, at + 4);
    const end = at + 8 + length;
    if (length > 0x7fffffff || end + 4 > png.length) return 'a chunk runs past the end of the file';
    if (type === 'IDAT') parts.push(png.subarray(at + 8, end));
    if (type === 'IEND') break;
    at = end + 4;
  }
  return parts.length > 0 ? Buffer.concat(parts) : 'no image data';
}

/** `inflateSync` with `info: true`, which @types/node does not type: the output and the input bytes it read. */
const inflateWithInfo = inflateSync as unknown as (
  data: Uint8Array,
  options: ZlibOptions & { info: true },
) => { buffer: Buffer; engine: { bytesWritten: number } };

let decodes = 0;

/**
 * How many screenshots this thread has started to inflate (`decodeScreenshot` past the header check): the
 * service's main thread must stay at 0, its stamping workers do that work.
 */
export function screenshotDecodes(): number {
  return decodes;
}

/**
 * `png` as PDF image data (see the module comment), its work bounded: the header is judged first
 * (`checkScreenshotHeader`, nothing inflated when it fails), then the image data is inflated to at most the
 * bytes its declared size needs (one filter byte a row plus the samples) and must fill them exactly, with a
 * known filter type (0 to 4) on every row. Spends CPU (about 0.1 s for a 1280 x 16384 RGB screenshot, more
 * with alpha): call it only in a bounded worker thread.
 * @returns `image`, or `too-large` / `unreadable` (with a short English detail: bomb, truncation, corruption).
 */
export function decodeScreenshot(png: Uint8Array, maxPixels: number): ScreenshotDecode {
  const check = checkScreenshotHeader(png, maxPixels);
  if (check.kind !== 'ok') return check;
  const { width, height, colorType } = check.header;
  const idat = imageData(png);
  if (typeof idat === 'string') return unreadable(idat);
  const channels = CHANNELS[colorType] ?? 4;
  const stride = 1 + width * channels;
  const expected = stride * height;
  decodes += 1;
  let rows: Buffer;
  let consumed: number;
  try {
    const inflated = inflateWithInfo(idat, { maxOutputLength: expected, info: true });
    rows = inflated.buffer;
    consumed = inflated.engine.bytesWritten;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      return unreadable(
        `its image data inflates to more than the ${expected} bytes of ${width} x ${height} pixels`,
      );
    }
    return unreadable(`corrupt image data: ${errorMessage(error)}`);
  }
  if (rows.length !== expected)
    return unreadable(`its image data ends after ${rows.length} of ${expected} bytes`);
  for (let at = 0; at < expected; at += stride) {
    const filterType = rows[at] ?? 0;
    if (filterType > 4) return unreadable(`unknown row filter type ${filterType}`);
  }
  if (channels === 1 || channels === 3) {
    // The PNG's own zlib stream, without anything after its end (PDF readers would see it as stream data).
    const end = consumed > 0 && consumed <= idat.length ? consumed : idat.length;
    return {
      kind: 'image',
      image: { width, height, colors: channels, color: idat.subarray(0, end), alpha: undefined },
    };
  }
  const { color, alpha } = splitAlpha(rows, width, height, channels - 1);
  return {
    kind: 'image',
    image: {
      width,
      height,
      colors: channels === 2 ? 1 : 3,
      color: deflateSync(color),
      alpha: deflateSync(alpha),
    },
  };
}

/**
 * Splits filtered rows of `colors` + 1 samples a pixel into filtered colour rows and filtered alpha rows, each
 * keeping the row's filter type. Every PNG filter predicts a byte from the same byte of the pixel on the left,
 * above and above-left (9.2), that is from the same channel: each channel's bytes are filtered rows of their
 * own, and the PNG predictors of a PDF reader (bytes a pixel from /Colors) undo them without unfiltering here.
 */
function splitAlpha(
  rows: Buffer,
  width: number,
  height: number,
  colors: number,
): { color: Buffer; alpha: Buffer } {
  const color = Buffer.allocUnsafe((1 + width * colors) * height);
  const alpha = Buffer.allocUnsafe((1 + width) * height);
  let from = 0;
  let c = 0;
  let a = 0;
  for (let y = 0; y < height; y += 1) {
    const filterType = rows[from++] ?? 0;
    color[c++] = filterType;
    alpha[a++] = filterType;
    for (let x = 0; x < width; x += 1) {
      for (let k = 0; k < colors; k += 1) color[c++] = rows[from++] ?? 0;
      alpha[a++] = rows[from++] ?? 0;
    }
  }
  return { color, alpha };
}
