import { checkScreenshotHeader } from '@notary/pdf/png';
import { SCREENSHOT_MAX_PIXELS } from '@notary/shared';
import { diffLines } from 'diff';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';

/**
 * What changed between two consecutive runs of a monitoring, for the certidão: the visible text compared line by
 * line (npm `diff`, Myers' algorithm), the screenshots compared pixel by pixel (`pixelmatch`, YIQ colour distance
 * with anti-aliasing detection, over PNGs decoded by `pngjs`).
 */

/** A line added or removed between two runs' visible text. */
export interface TextChangeLine {
  kind: 'added' | 'removed';
  text: string;
}

/** The text diff of two runs: counts, and the first changed lines (bounded). */
export interface TextChange {
  addedLines: number;
  removedLines: number;
  /** At most `TEXT_CHANGE_LINES` changed lines, each at most `TEXT_CHANGE_LINE_CHARS` characters. */
  lines: TextChangeLine[];
  /** True when the edit was too large to compute (`TEXT_MAX_EDIT`): only "changed" is said. */
  tooLarge: boolean;
}

/** Changed lines a certidão lists per pair of runs. */
export const TEXT_CHANGE_LINES = 12;
/** Characters of one changed line the certidão prints. */
export const TEXT_CHANGE_LINE_CHARS = 160;
/** Largest edit (in lines) computed: Myers' algorithm is O(N·D), so a page rewritten whole is bounded. */
const TEXT_MAX_EDIT = 5_000;

/**
 * The line diff of `before` and `after` (a page's visible text), whitespace at line ends ignored.
 * @returns null when the texts are the same line for line.
 */
export function textChange(before: string, after: string): TextChange | null {
  const norm = (t: string) =>
    t
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l !== '')
      .join('\n');
  const a = norm(before);
  const b = norm(after);
  if (a === b) return null;
  const parts = diffLines(`${a}\n`, `${b}\n`, { maxEditLength: TEXT_MAX_EDIT });
  if (!parts) return { addedLines: 0, removedLines: 0, lines: [], tooLarge: true };
  const change: TextChange = { addedLines: 0, removedLines: 0, lines: [], tooLarge: false };
  for (const part of parts) {
    if (!part.added && !part.removed) continue;
    const kind = part.added ? 'added' : 'removed';
    const lines = part.value.split('\n').filter((l) => l !== '');
    if (kind === 'added') change.addedLines += lines.length;
    else change.removedLines += lines.length;
    for (const line of lines) {
      if (change.lines.length >= TEXT_CHANGE_LINES) break;
      change.lines.push({ kind, text: line.slice(0, TEXT_CHANGE_LINE_CHARS) });
    }
  }
  return change;
}

/** A rectangle in screenshot pixels. */
export interface PixelBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The screenshot comparison of two runs. */
export interface PixelChange {
  /** Pixels that differ (the part of the taller image past the shorter one counts as changed). */
  changedPixels: number;
  /** Pixels of the larger of the two images. */
  totalPixels: number;
  /** `changedPixels / totalPixels`, 0..1. */
  share: number;
  /** The smallest box holding every changed pixel; null when none changed. */
  box: PixelBox | null;
  /**
   * The later screenshot cut around `box` (with a margin, at most `MARKED_MAX` pixels a side) with the box
   * drawn in red, PNG; null when nothing changed.
   */
  marked: Buffer | null;
}

/** Largest side of the marked region image, pixels. */
const MARKED_MAX = 1280;
/** Margin kept around the changed box in the marked image, pixels. */
const MARKED_MARGIN = 24;
/** pixelmatch's threshold (0..1 of the YIQ distance): below it two pixels count as the same. */
const PIXEL_THRESHOLD = 0.1;

/**
 * Compares two screenshots (PNG, as captures store them). Their headers are judged before any decoding
 * (`SCREENSHOT_MAX_PIXELS`, the largest a capture makes).
 * @returns the comparison; undefined when either is not a PNG read here or is larger than the bound.
 */
export function pixelChange(beforePng: Uint8Array, afterPng: Uint8Array): PixelChange | undefined {
  for (const png of [beforePng, afterPng]) {
    if (checkScreenshotHeader(png, SCREENSHOT_MAX_PIXELS).kind !== 'ok') return undefined;
  }
  let a: PNG;
  let b: PNG;
  try {
    a = PNG.sync.read(Buffer.from(beforePng));
    b = PNG.sync.read(Buffer.from(afterPng));
  } catch {
    return undefined;
  }
  const width = Math.min(a.width, b.width);
  const height = Math.min(a.height, b.height);
  const total = Math.max(a.width * a.height, b.width * b.height);
  const diff = Buffer.alloc(width * height * 4);
  const changedCommon = pixelmatch(crop(a, width, height), crop(b, width, height), diff, width, height, {
    threshold: PIXEL_THRESHOLD,
    diffMask: true,
  });
  let box = boxOf(diff, width, height);
  // What one image has past the other (a page grown or shortened) changed whole.
  const extra = total - width * height;
  if (extra > 0) {
    const grown: PixelBox = { x: 0, y: height, width: Math.max(a.width, b.width), height: 0 };
    grown.height = Math.max(a.height, b.height) - height;
    if (a.width !== b.width) {
      grown.y = 0;
      grown.height = Math.max(a.height, b.height);
    }
    box = box ? union(box, grown) : grown;
  }
  const changedPixels = changedCommon + extra;
  return {
    changedPixels,
    totalPixels: total,
    share: total === 0 ? 0 : changedPixels / total,
    box,
    marked: box ? markRegion(b, box) : null,
  };
}

/** The top-left `width` × `height` pixels of `png`, RGBA. */
function crop(png: PNG, width: number, height: number): Buffer {
  if (png.width === width && png.height === height) return png.data;
  const out = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    png.data.copy(out, y * width * 4, y * png.width * 4, (y * png.width + width) * 4);
  }
  return out;
}

/** The box of the pixels pixelmatch marked (`diffMask`: only they are opaque). */
function boxOf(diff: Buffer, width: number, height: number): PixelBox | null {
  let minX = width;
  let minY = height;
  let maxX = -1;
  let maxY = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if ((diff[(y * width + x) * 4 + 3] ?? 0) === 0) continue;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
  }
  return maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
}

function union(p: PixelBox, q: PixelBox): PixelBox {
  const x = Math.min(p.x, q.x);
  const y = Math.min(p.y, q.y);
  return {
    x,
    y,
    width: Math.max(p.x + p.width, q.x + q.width) - x,
    height: Math.max(p.y + p.height, q.y + q.height) - y,
  };
}

/** `png` cut around `box` (margin, bounded size) with a 2-pixel red frame on the box, as PNG. */
function markRegion(png: PNG, box: PixelBox): Buffer {
  const x0 = Math.max(0, box.x - MARKED_MARGIN);
  const y0 = Math.max(0, box.y - MARKED_MARGIN);
  const w = Math.max(1, Math.min(png.width - x0, box.width + 2 * MARKED_MARGIN, MARKED_MAX));
  const h = Math.max(1, Math.min(png.height - y0, box.height + 2 * MARKED_MARGIN, MARKED_MAX));
  const out = new PNG({ width: w, height: h });
  for (let y = 0; y < h; y++) {
    png.data.copy(out.data, y * w * 4, ((y0 + y) * png.width + x0) * 4, ((y0 + y) * png.width + x0 + w) * 4);
  }
  const bx = box.x - x0;
  const by = box.y - y0;
  const paint = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    out.data.set([220, 0, 0, 255], (y * w + x) * 4);
  };
  for (let t = 0; t < 2; t++) {
    for (let x = bx - 2; x < bx + box.width + 2; x++) {
      paint(x, by - 1 - t);
      paint(x, by + box.height + t);
    }
    for (let y = by - 2; y < by + box.height + 2; y++) {
      paint(bx - 1 - t, y);
      paint(bx + box.width + t, y);
    }
  }
  return PNG.sync.write(out);
}
