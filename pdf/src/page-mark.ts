import {
  PDFArray,
  type PDFContext,
  PDFDict,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFRef,
  PDFStream,
} from 'pdf-lib';
import { Canvas, type ColourMode, colourOp, num } from './canvas';
import type { FontSet } from './fonts';
import { stringsFor } from './i18n';
import type { CertificateData, CertificateLanguage } from './model';
import { coverText, measure } from './text';

/**
 * The notarization mark on every page of a stamped PDF: one shared Form XObject (a small bordered box with
 * the service name, serial, hash prefix and verification link) drawn at the bottom margin of each page as
 * displayed (after /Rotate), with the page's original content wrapped in q/Q so its graphics state cannot
 * leak into the mark.
 */

/** Thrown for a page tree that cannot be stamped safely (loops, missing pages, wrong types). */
export class PageTreeError extends Error {}

/** A leaf of the page tree with its inherited attributes resolved (ISO 32000-1, 7.7.3.4). */
export interface PageInfo {
  ref: PDFRef;
  dict: PDFDict;
  /** The effective Resources dictionary (own or inherited), undefined when there is none. */
  resources: PDFDict | undefined;
  /** CropBox, else MediaBox (else US Letter), normalized to [x0, y0, x1, y1] with x0 < x1, y0 < y1. */
  box: [number, number, number, number];
  /** /Rotate normalized to 0, 90, 180 or 270. */
  rotate: 0 | 90 | 180 | 270;
}

const MAX_PAGES = 100_000;
const MAX_DEPTH = 256;

interface Inherited {
  resources: PDFObject | undefined;
  mediaBox: PDFObject | undefined;
  cropBox: PDFObject | undefined;
  rotate: PDFObject | undefined;
}

/**
 * Walks the page tree from the catalog's /Pages (iteratively, each node visited once, depth and page count
 * bounded) and returns the pages in order. Throws `PageTreeError` for a loop, a node reached twice, a kid
 * that is not an indirect dictionary, or no page at all.
 */
export function collectPages(context: PDFContext, catalog: PDFDict): PageInfo[] {
  const rootRef = catalog.get(PDFName.of('Pages'));
  if (!(rootRef instanceof PDFRef)) throw new PageTreeError('the catalog has no indirect /Pages');
  const pages: PageInfo[] = [];
  const visited = new Set<PDFRef>();
  const none: Inherited = {
    resources: undefined,
    mediaBox: undefined,
    cropBox: undefined,
    rotate: undefined,
  };
  // Depth-first, kids pushed in reverse so pages come out in document order.
  const stack: { ref: PDFRef; inherited: Inherited; depth: number }[] = [
    { ref: rootRef, inherited: none, depth: 0 },
  ];
  while (stack.length > 0) {
    const item = stack.pop();
    if (!item) break;
    const { ref, depth } = item;
    if (visited.has(ref)) throw new PageTreeError(`page tree node ${ref} is reached twice (loop)`);
    if (depth > MAX_DEPTH) throw new PageTreeError('page tree too deep');
    visited.add(ref);
    const node = context.lookup(ref);
    if (!(node instanceof PDFDict)) throw new PageTreeError(`page tree node ${ref} is not a dictionary`);
    const inherited: Inherited = {
      resources: node.get(PDFName.of('Resources')) ?? item.inherited.resources,
      mediaBox: node.get(PDFName.of('MediaBox')) ?? item.inherited.mediaBox,
      cropBox: node.get(PDFName.of('CropBox')) ?? item.inherited.cropBox,
      rotate: node.get(PDFName.of('Rotate')) ?? item.inherited.rotate,
    };
    const type = node.lookup(PDFName.of('Type'));
    const kids = node.lookup(PDFName.of('Kids'));
    const isTreeNode =
      type === PDFName.of('Pages') || (type !== PDFName.of('Page') && kids instanceof PDFArray);
    if (!isTreeNode) {
      pages.push(pageInfo(context, ref, node, inherited));
      if (pages.length > MAX_PAGES) throw new PageTreeError('too many pages');
      continue;
    }
    if (!(kids instanceof PDFArray)) throw new PageTreeError(`page tree node ${ref} has no /Kids array`);
    for (let i = kids.size() - 1; i >= 0; i -= 1) {
      const kid = kids.get(i);
      if (!(kid instanceof PDFRef)) throw new PageTreeError(`a kid of ${ref} is not an indirect reference`);
      stack.push({ ref: kid, inherited, depth: depth + 1 });
    }
  }
  if (pages.length === 0) throw new PageTreeError('the document has no pages');
  return pages;
}

function pageInfo(context: PDFContext, ref: PDFRef, dict: PDFDict, inherited: Inherited): PageInfo {
  const resources = context.lookup(inherited.resources);
  const box = rectangle(context, inherited.cropBox) ??
    rectangle(context, inherited.mediaBox) ?? [0, 0, 612, 792];
  const rotateObj = context.lookup(inherited.rotate);
  const raw = rotateObj instanceof PDFNumber ? rotateObj.asNumber() : 0;
  // Only multiples of 90 are meaningful; viewers round others the same way.
  const rotate = ((((Math.round(raw / 90) * 90) % 360) + 360) % 360) as 0 | 90 | 180 | 270;
  return { ref, dict, resources: resources instanceof PDFDict ? resources : undefined, box, rotate };
}

function rectangle(
  context: PDFContext,
  obj: PDFObject | undefined,
): [number, number, number, number] | undefined {
  const array = context.lookup(obj);
  if (!(array instanceof PDFArray) || array.size() !== 4) return undefined;
  const values: number[] = [];
  for (let i = 0; i < 4; i += 1) {
    const n = context.lookup(array.get(i));
    if (!(n instanceof PDFNumber) || !Number.isFinite(n.asNumber())) return undefined;
    values.push(n.asNumber());
  }
  const [a = 0, b = 0, c = 0, d = 0] = values;
  const rect: [number, number, number, number] = [
    Math.min(a, c),
    Math.min(b, d),
    Math.max(a, c),
    Math.max(b, d),
  ];
  return rect[2] - rect[0] > 0 && rect[3] - rect[1] > 0 ? rect : undefined;
}

const MARK_FONT_SIZE = 6;
const MARK_PAD_X = 4;
const MARK_HEIGHT = 10.5;
/** Distance from the displayed bottom edge and minimum side margin, in points. */
const MARK_BOTTOM = 4;
const MARK_SIDE = 10;

/** The mark's text, e.g. `Notary · Notarizado · Nº 2026-000123 · SHA-256 3f2a9c0b1d2e4f56… · Verificar: <url>`. */
export function markText(data: CertificateData, lang: CertificateLanguage): string {
  const s = stringsFor(lang);
  const d = data.document;
  return `${data.serviceName} · ${s.markNotarized} · ${s.serialLabel} ${d.serialNumber} · SHA-256 ${d.sha256Hash.slice(0, 16)}… · ${s.markVerify}: ${data.verifyUrl}`;
}

/**
 * Registers the mark Form XObject (ISO 32000-1, 8.10) in `context`: width = text + padding, height
 * `MARK_HEIGHT`, origin bottom-left; white box at 85 % opacity with a thin grey border. Returns its ref
 * and size.
 */
function createMark(
  context: PDFContext,
  fonts: FontSet,
  text: string,
  colour: ColourMode,
): { ref: PDFRef; width: number } {
  const covered = coverText(fonts.sans, text).text;
  const width = measure(fonts.sans, covered, MARK_FONT_SIZE) + 2 * MARK_PAD_X;
  const canvas = new Canvas(fonts, { sans: 'F', bold: 'F', mono: 'F' }, colour);
  const box = `q /GS gs ${colourOp([1, 1, 1], false, colour)} ${colourOp([0.55, 0.58, 0.62], true, colour)} 0.4 w 0.2 0.2 ${num(width - 0.4)} ${num(MARK_HEIGHT - 0.4)} re B Q`;
  canvas.text(MARK_PAD_X, 3.4, 'sans', MARK_FONT_SIZE, covered, [0.16, 0.2, 0.28]);
  const stream = context.flateStream(`${box}\n${canvas.toString()}`, {
    Type: 'XObject',
    Subtype: 'Form',
    BBox: [0, 0, width, MARK_HEIGHT],
    Resources: {
      Font: { F: fonts.sans.pdf.ref },
      ExtGState: { GS: { Type: 'ExtGState', ca: 0.85 } },
    },
  });
  return { ref: context.register(stream), width };
}

/**
 * The matrix placing the mark (scaled by `scale`) at display position (dx, dy) of a page shown with
 * /Rotate `rotate`: display coordinates have their origin at the bottom-left of the page as shown.
 */
function placement(page: PageInfo, dx: number, dy: number, scale: number): number[] {
  const [x0, y0, x1, y1] = page.box;
  // Display axes expressed in user space, and the user-space point of the display origin.
  const axes: Record<PageInfo['rotate'], [number, number, number, number, number, number]> = {
    0: [1, 0, 0, 1, x0, y0],
    90: [0, 1, -1, 0, x1, y0],
    180: [-1, 0, 0, -1, x1, y1],
    270: [0, -1, 1, 0, x0, y1],
  };
  const [a, b, c, d, e, f] = axes[page.rotate];
  return [a * scale, b * scale, c * scale, d * scale, a * dx + c * dy + e, b * dx + d * dy + f];
}

/** Width and height of the page as displayed. */
function displaySize(page: PageInfo): [number, number] {
  const w = page.box[2] - page.box[0];
  const h = page.box[3] - page.box[1];
  return page.rotate === 90 || page.rotate === 270 ? [h, w] : [w, h];
}

/** The original /Contents as a list of stream references (an indirect array is expanded). */
function contentRefs(context: PDFContext, page: PageInfo): PDFObject[] {
  const contents = page.dict.get(PDFName.of('Contents'));
  if (contents === undefined) return [];
  const resolved = context.lookup(contents);
  if (resolved instanceof PDFArray) return resolved.asArray();
  if (resolved instanceof PDFStream) return [contents];
  return [];
}

/** A name not yet used for another object in `dict`. */
function freeName(dict: PDFDict, base: string, ref: PDFRef): PDFName {
  for (let i = 0; ; i += 1) {
    const name = PDFName.of(i === 0 ? base : `${base}${i}`);
    const existing = dict.get(name);
    if (existing === undefined || existing === ref) return name;
  }
}

/**
 * Marks every page: the mark XObject is added to the page's effective Resources (/XObject), and /Contents
 * becomes `[q, ...original, Q, mark]` where `q` and `Q` are two shared one-operator streams and the mark
 * stream is shared by pages of identical geometry. Only objects that must change are touched (pages,
 * Resources or their /XObject dictionaries); shared Resources are extended in place, which is harmless
 * since the added name is unique. `colour` is `gray` on a PDF/A original whose output intent is not RGB.
 */
export function stampPages(
  context: PDFContext,
  pages: PageInfo[],
  fonts: FontSet,
  data: CertificateData,
  lang: CertificateLanguage,
  colour: ColourMode = 'rgb',
): void {
  const mark = createMark(context, fonts, markText(data, lang), colour);
  const push = context.register(context.stream('q\n'));
  const pop = context.register(context.stream('\nQ\n'));
  const drawStreams = new Map<string, PDFRef>();
  for (const page of pages) {
    const name = attachXObject(context, page, mark.ref);
    const [w] = displaySize(page);
    const scale = Math.min(1, (w - 2 * MARK_SIDE) / mark.width);
    const dx = (w - mark.width * scale) / 2;
    const m = placement(page, dx, MARK_BOTTOM * scale, scale);
    // Marked as a pagination artifact so assistive technology skips it in tagged PDFs.
    const ops = `/Artifact <</Type /Pagination /Subtype /Footer>> BDC\nq ${m.map(num).join(' ')} cm ${name.toString()} Do Q\nEMC\n`;
    let draw = drawStreams.get(ops);
    if (!draw) {
      draw = context.register(context.stream(ops));
      drawStreams.set(ops, draw);
    }
    page.dict.set(PDFName.of('Contents'), context.obj([push, ...contentRefs(context, page), pop, draw]));
  }
}

/** Adds the mark to the page's effective /Resources /XObject and returns the name it is drawn with. */
function attachXObject(context: PDFContext, page: PageInfo, mark: PDFRef): PDFName {
  let resources = page.resources;
  if (!resources) {
    resources = context.obj({});
    page.dict.set(PDFName.of('Resources'), resources);
    page.resources = resources;
  }
  const existing = resources.lookup(PDFName.of('XObject'));
  const xobjects = existing instanceof PDFDict ? existing : context.obj({});
  if (xobjects !== existing) resources.set(PDFName.of('XObject'), xobjects);
  const name = freeName(xobjects, 'NotaryMark', mark);
  xobjects.set(name, mark);
  return name;
}
