import QRCode from 'qrcode';
import type { FontFace, FontRole, FontSet } from './fonts';
import { encodeHex, measure } from './text';

/** An RGB colour, components 0..1. */
export type Rgb = readonly [number, number, number];

/** A PDF number: at most 3 decimals, never an exponent (|value| < 1e15 in page content). */
export function num(value: number): string {
  const rounded = Math.round(value * 1000) / 1000;
  return rounded === 0 ? '0' : String(rounded);
}

/**
 * How colours are written: `rgb` (DeviceRGB, valid under an sRGB output intent) or `gray` (DeviceGray, the
 * luminance of the colour: PDF/A allows it under any output intent, ISO 19005-2 6.2.4.3, so the stamp and the
 * certificate pages of a PDF/A original whose output intent is not RGB use it).
 */
export type ColourMode = 'rgb' | 'gray';

/** The operator setting `color` as fill (`rg`/`g`) or stroke (`RG`/`G`) colour in `mode`. */
export function colourOp(color: Rgb, stroking: boolean, mode: ColourMode = 'rgb'): string {
  if (mode === 'gray') {
    // ITU-R BT.601 luma weights: the grey a reader would expect for the colour.
    const [r, g, b] = color;
    return `${num(0.299 * r + 0.587 * g + 0.114 * b)} ${stroking ? 'G' : 'g'}`;
  }
  return `${color.map(num).join(' ')} ${stroking ? 'RG' : 'rg'}`;
}

/**
 * Accumulates the operators of one content stream (ISO 32000-1, 8 and 9) in PDF user space (points, origin
 * bottom-left). Fonts are referenced by the resource names given at construction; text must already be
 * covered by the font (`coverText`).
 */
export class Canvas {
  private readonly ops: string[] = [];

  constructor(
    readonly fonts: FontSet,
    private readonly fontNames: Record<FontRole, string>,
    private readonly colourMode: ColourMode = 'rgb',
  ) {}

  private rgb(color: Rgb, stroking: boolean): string {
    return colourOp(color, stroking, this.colourMode);
  }

  /** Draws one line of text with its baseline starting at (x, y). */
  text(x: number, y: number, role: FontRole, size: number, text: string, color: Rgb): void {
    if (!text) return;
    const face: FontFace = this.fonts[role];
    this.ops.push(
      `BT /${this.fontNames[role]} ${num(size)} Tf ${this.rgb(color, false)} 1 0 0 1 ${num(x)} ${num(y)} Tm <${encodeHex(face, text)}> Tj ET`,
    );
  }

  /** Like `text`, with the line ending at x. */
  textRight(xRight: number, y: number, role: FontRole, size: number, text: string, color: Rgb): void {
    this.text(xRight - measure(this.fonts[role], text, size), y, role, size, text, color);
  }

  line(x1: number, y1: number, x2: number, y2: number, width: number, color: Rgb): void {
    this.ops.push(
      `${num(width)} w ${this.rgb(color, true)} ${num(x1)} ${num(y1)} m ${num(x2)} ${num(y2)} l S`,
    );
  }

  /** A rectangle (x, y bottom-left), filled and/or stroked. */
  rect(
    x: number,
    y: number,
    w: number,
    h: number,
    style: { fill?: Rgb; stroke?: Rgb; lineWidth?: number },
  ): void {
    const paint = style.fill && style.stroke ? 'B' : style.fill ? 'f' : 'S';
    const colours = [
      style.fill ? this.rgb(style.fill, false) : '',
      style.stroke ? this.rgb(style.stroke, true) : '',
    ]
      .filter(Boolean)
      .join(' ');
    this.ops.push(
      `q ${num(style.lineWidth ?? 0.5)} w ${colours} ${num(x)} ${num(y)} ${num(w)} ${num(h)} re ${paint} Q`,
    );
  }

  /**
   * A QR code of `value` (byte mode, error correction M) as vector modules inside a `size`-point square at
   * (x, y) bottom-left, including the 4-module quiet zone on a white background.
   */
  qr(value: string, x: number, y: number, size: number): void {
    const { modules } = QRCode.create(value, { errorCorrectionLevel: 'M' });
    const count = modules.size;
    const quiet = 4;
    const cell = size / (count + 2 * quiet);
    const parts = [
      `q ${this.rgb([1, 1, 1], false)} ${num(x)} ${num(y)} ${num(size)} ${num(size)} re f ${this.rgb([0, 0, 0], false)}`,
    ];
    for (let row = 0; row < count; row += 1) {
      // One rectangle per horizontal run of dark modules: fewer operators, no hairline seams.
      let col = 0;
      while (col < count) {
        if (!modules.get(row, col)) {
          col += 1;
          continue;
        }
        const start = col;
        while (col < count && modules.get(row, col)) col += 1;
        const rx = x + (quiet + start) * cell;
        const ry = y + size - (quiet + row + 1) * cell;
        parts.push(`${num(rx)} ${num(ry)} ${num((col - start) * cell)} ${num(cell)} re`);
      }
    }
    parts.push('f Q');
    this.ops.push(parts.join('\n'));
  }

  /**
   * Image XObject `name` scaled to `w` x `h` points at (x, y) bottom-left, clipped to the box (x, clipY,
   * w, clipH) when given: the part of the image outside it is not painted (ISO 32000-1, 8.5.4 and 8.9.5).
   */
  image(name: string, x: number, y: number, w: number, h: number, clip?: { y: number; h: number }): void {
    const clipOps = clip ? `${num(x)} ${num(clip.y)} ${num(w)} ${num(clip.h)} re W n ` : '';
    this.ops.push(`q ${clipOps}${num(w)} 0 0 ${num(h)} ${num(x)} ${num(y)} cm /${name} Do Q`);
  }

  /** The content stream text. */
  toString(): string {
    return this.ops.join('\n');
  }
}
