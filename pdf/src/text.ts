import type { FontFace } from './fonts';

/**
 * Text preparation for the certificate: glyph coverage, right-to-left runs, measuring and line wrapping.
 * Widths are in PDF points for the given font size.
 */

/** `U+XXXX` (at least 4 hex digits, upper case) of a code point. */
export function codePointNotation(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * `text` in NFC with every code point the font has no glyph for (CJK in DejaVu, control characters...)
 * replaced by its `U+XXXX` notation, so nothing is printed as an anonymous .notdef box.
 * `replaced` says whether any was.
 */
export function coverText(face: FontFace, text: string): { text: string; replaced: boolean } {
  let out = '';
  let replaced = false;
  for (const char of text.normalize('NFC')) {
    const cp = char.codePointAt(0) ?? 0;
    if (cp >= 0x20 && face.kit.hasGlyphForCodePoint(cp)) {
      out += char;
    } else {
      out += codePointNotation(cp);
      replaced = true;
    }
  }
  return { text: out, replaced };
}

const RTL_RANGES: readonly [number, number][] = [
  [0x0590, 0x08ff], // Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, Arabic Extended
  [0xfb1d, 0xfdff], // Hebrew and Arabic presentation forms A
  [0xfe70, 0xfeff], // Arabic presentation forms B
  [0x10800, 0x10fff],
  [0x1e800, 0x1efff],
];

function isRtl(cp: number): boolean {
  return RTL_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/** Spaces and punctuation take the direction of their surroundings; digits and letters do not. */
const NEUTRAL = /^[\s\p{P}\p{S}]$/u;

/**
 * Splits `text` into runs in display order for a left-to-right line: right-to-left runs (strong RTL
 * characters and the neutrals between them) stay in logical order here; fontkit's layout, which detects
 * the run's script, reverses and shapes them (joining forms for Arabic). A simplification of the Unicode
 * bidirectional algorithm (UAX #9) that is right for file names and labels on a left-to-right page.
 */
export function directionalRuns(text: string): string[] {
  const chars = [...text];
  const rtl = chars.map((c) => isRtl(c.codePointAt(0) ?? 0));
  const neutral = chars.map((c) => NEUTRAL.test(c));
  // A neutral is RTL only when the closest strong characters on both sides are RTL.
  const resolved = chars.map((_, i) => {
    if (!neutral[i]) return rtl[i] ?? false;
    let before = i - 1;
    while (before >= 0 && neutral[before]) before -= 1;
    let after = i + 1;
    while (after < chars.length && neutral[after]) after += 1;
    return before >= 0 && after < chars.length && (rtl[before] ?? false) && (rtl[after] ?? false);
  });
  const runs: string[] = [];
  let current = '';
  let currentRtl: boolean | undefined;
  chars.forEach((c, i) => {
    const r = resolved[i] ?? false;
    if (currentRtl !== undefined && r !== currentRtl) {
      runs.push(current);
      current = '';
    }
    current += c;
    currentRtl = r;
  });
  if (current) runs.push(current);
  return runs;
}

/** Hex glyph codes (Identity-H, no angle brackets) of `text`, ready for a `Tj` operand. */
export function encodeHex(face: FontFace, text: string): string {
  let hex = '';
  for (const run of directionalRuns(text)) {
    const encoded = face.pdf.encodeText(run).toString();
    hex += encoded.slice(1, -1);
  }
  return hex;
}

/** Advance width of `text` at `size` points. */
export function measure(face: FontFace, text: string, size: number): number {
  let width = 0;
  for (const run of directionalRuns(text)) width += face.pdf.widthOfTextAtSize(run, size);
  return width;
}

const advanceCache = new WeakMap<FontFace['kit'], Map<number, number>>();

/** Advance width of one code point in thousandths of the font size (the glyph's nominal advance). */
function advance(face: FontFace, codePoint: number): number {
  let cache = advanceCache.get(face.kit);
  if (!cache) {
    cache = new Map();
    advanceCache.set(face.kit, cache);
  }
  let width = cache.get(codePoint);
  if (width === undefined) {
    width = (face.kit.glyphForCodePoint(codePoint).advanceWidth * 1000) / face.kit.unitsPerEm;
    cache.set(codePoint, width);
  }
  return width;
}

/**
 * Width of `text` at `size` from per-character advances: no shaping, so ligatures and Arabic joining forms
 * make the drawn text at most slightly narrower. Fast enough for line breaking, where `measure` (a full
 * layout per call) would dominate the rendering time.
 */
export function estimateWidth(face: FontFace, text: string, size: number): number {
  let width = 0;
  for (const char of text) width += advance(face, char.codePointAt(0) ?? 0);
  return (width * size) / 1000;
}

/** Characters after which a long unbroken token (URL, path, hash-like name) may be split. */
const SOFT_BREAK_AFTER = new Set(['/', '-', '_', '.', '?', '&', '=', ',', ':', '·']);

/**
 * Greedy line breaking of `text` to `maxWidth` points: at spaces, else (a token longer than the line) after
 * a URL-like separator in the second half of the line, else at any character. Never returns an empty list;
 * a line may exceed `maxWidth` only when one character does.
 */
export function wrapText(face: FontFace, text: string, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      const candidate = line ? `${line} ${word}` : word;
      if (estimateWidth(face, candidate, size) <= maxWidth) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      line = '';
      let rest = word;
      while (estimateWidth(face, rest, size) > maxWidth) {
        const cut = breakPoint(face, rest, size, maxWidth);
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      line = rest;
    }
    lines.push(line);
  }
  return lines;
}

/** Index (in UTF-16 units, never inside a surrogate pair) where a too-long token is cut. */
function breakPoint(face: FontFace, token: string, size: number, maxWidth: number): number {
  const chars = [...token];
  let fit = 0;
  let width = 0;
  for (const c of chars) {
    const w = estimateWidth(face, c, size);
    if (width + w > maxWidth && fit > 0) break;
    width += w;
    fit += 1;
  }
  let cut = fit;
  for (let i = fit - 1; i >= Math.ceil(fit / 2); i -= 1) {
    if (SOFT_BREAK_AFTER.has(chars[i] ?? '')) {
      cut = i + 1;
      break;
    }
  }
  return chars.slice(0, Math.max(1, cut)).join('').length;
}
