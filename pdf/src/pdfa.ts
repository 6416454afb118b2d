/**
 * PDF/A (ISO 19005) facts of the certificate: the separate certificate is written as PDF/A-3b (ISO 19005-3: XMP
 * metadata in sync with the Info dictionary, an sRGB output intent, embedded fonts, the receipt as an associated
 * file); a stamped original that declares PDF/A keeps a PDF/A declaration (its XMP rewritten in the incremental
 * update when the receipt needs part 3). Reading an original's declaration parses untrusted bytes: only in the
 * bounded stamping worker (the Metadata stream decoded with at most `PDFA_MAX_XMP_BYTES`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFString,
} from 'pdf-lib';
import { decodeBounded } from './bounded-decode';
import type { ColourMode } from './canvas';

/** A PDF/A identification (XMP `pdfaid:part` and `pdfaid:conformance`, ISO 19005-1..4 6.7.11 / 6.6.4). */
export interface PdfAId {
  /** 1 to 4. */
  part: number;
  /** Upper-case conformance level (`A`, `B`, `U`; PDF/A-4: `E`, `F` or empty). */
  conformance: string;
}

/** What the separate certificate declares (and is written to meet). */
export const PDFA_SEPARATE: PdfAId = { part: 3, conformance: 'B' };

/** Largest decoded XMP packet read from an original (a real one is a few KB). */
export const PDFA_MAX_XMP_BYTES = 4 * 1024 * 1024;

const PDFAID_NS = 'http://www.aiim.org/pdfa/ns/id/';

/** `PDF/A-3b`, `PDF/A-4f`, `PDF/A-4`. */
export function pdfaLabel(id: PdfAId): string {
  return `PDF/A-${id.part}${id.conformance.toLowerCase()}`;
}

let srgb: Uint8Array | undefined;

/**
 * The sRGB IEC61966-2.1 ICC profile (v2, 3 KB) of the output intent, read once per process. It comes from the
 * `pdfkit` package (MIT), which ships it as `js/data/sRGB_IEC61966_2_1.icc` for its own PDF/A output; its
 * `exports` map hides data files, so the file is found beside the package's CommonJS entry (`js/pdfkit.js`),
 * resolved from this module like the DejaVu fonts (`fonts.ts`): the same from the sources and from the
 * production bundle. Throws if the package is missing (a deployment error).
 */
export function srgbIccProfile(): Uint8Array {
  if (srgb) return srgb;
  const require = createRequire(import.meta.url);
  const entry = require.resolve('pdfkit');
  srgb = new Uint8Array(readFileSync(join(dirname(entry), 'data', 'sRGB_IEC61966_2_1.icc')));
  return srgb;
}

/**
 * `text` with what XML 1.0 cannot carry (C0 controls but tab, LF and CR; U+FFFE/U+FFFF; lone surrogates)
 * replaced by U+FFFD. Document metadata is written through it both into the Info dictionary and the XMP so
 * that the two stay equal (ISO 19005-3 6.6.3: the Info entries and their XMP properties must be equivalent).
 */
export function xmlSafeText(text: string): string {
  let out = '';
  // Iterating a string yields code points; a lone surrogate comes as one code unit in D800-DFFF.
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const bad =
      (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) ||
      code === 0xfffe ||
      code === 0xffff ||
      (code >= 0xd800 && code <= 0xdfff);
    out += bad ? '\uFFFD' : char;
  }
  return out;
}

function escapeXml(text: string): string {
  return xmlSafeText(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** An XMP date (ISO 8601, UTC, whole seconds), the instant `PDFString.fromDate` writes into the Info dictionary. */
function xmpDate(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The document information written both to the Info dictionary and to the XMP packet. */
export interface DocumentFacts {
  title: string;
  subject: string;
  author: string;
  creator: string;
  producer: string;
  created: Date;
  modified: Date;
}

/**
 * The XMP packet (ISO 16684-1) of a document with `facts`, declaring `id`: `pdfaid:part`/`conformance`, and the
 * properties ISO 19005-3 6.6.3 pairs with the Info dictionary: dc:title (Title), dc:creator (Author),
 * dc:description (Subject), xmp:CreatorTool (Creator), pdf:Producer (Producer), xmp:CreateDate (CreationDate),
 * xmp:ModifyDate (ModDate); all text through `xmlSafeText`.
 */
export function xmpPacket(facts: DocumentFacts, id: PdfAId): string {
  const alt = (value: string) =>
    `<rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(value)}</rdf:li></rdf:Alt>`;
  return [
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    `  <rdf:Description rdf:about="" xmlns:pdfaid="${PDFAID_NS}">`,
    `   <pdfaid:part>${id.part}</pdfaid:part>`,
    `   <pdfaid:conformance>${id.conformance}</pdfaid:conformance>`,
    '  </rdf:Description>',
    '  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">',
    '   <dc:format>application/pdf</dc:format>',
    `   <dc:title>${alt(facts.title)}</dc:title>`,
    `   <dc:creator><rdf:Seq><rdf:li>${escapeXml(facts.author)}</rdf:li></rdf:Seq></dc:creator>`,
    `   <dc:description>${alt(facts.subject)}</dc:description>`,
    '  </rdf:Description>',
    '  <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">',
    `   <xmp:CreatorTool>${escapeXml(facts.creator)}</xmp:CreatorTool>`,
    `   <xmp:CreateDate>${xmpDate(facts.created)}</xmp:CreateDate>`,
    `   <xmp:ModifyDate>${xmpDate(facts.modified)}</xmp:ModifyDate>`,
    `   <xmp:MetadataDate>${xmpDate(facts.modified)}</xmp:MetadataDate>`,
    '  </rdf:Description>',
    '  <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">',
    `   <pdf:Producer>${escapeXml(facts.producer)}</pdf:Producer>`,
    '  </rdf:Description>',
    ' </rdf:RDF>',
    '</x:xmpmeta>',
    '<?xpacket end="w"?>',
  ].join('\n');
}

/** Sets the catalog's /Metadata to an uncompressed XMP stream of `xmp` (ISO 19005-3 6.6.2.1: no /Filter). */
function setMetadata(doc: PDFDocument, xmp: string): void {
  const bytes = new Uint8Array(Buffer.from(xmp, 'utf8'));
  const stream = doc.context.stream(bytes, { Type: 'Metadata', Subtype: 'XML' });
  doc.catalog.set(PDFName.of('Metadata'), doc.context.register(stream));
}

/**
 * Adds the sRGB output intent (`/S /GTS_PDFA1`, ISO 19005-3 6.2.3) with the ICC profile of `srgbIccProfile`
 * as its `/DestOutputProfile` (`/N 3`) to the catalog's /OutputIntents (created when absent).
 */
export function addSrgbOutputIntent(doc: PDFDocument): void {
  const context = doc.context;
  const profile = context.register(context.flateStream(srgbIccProfile(), { N: 3 }));
  const intent = context.obj({
    Type: 'OutputIntent',
    S: 'GTS_PDFA1',
    DestOutputProfile: profile,
  });
  intent.set(PDFName.of('OutputConditionIdentifier'), PDFString.of('sRGB IEC61966-2.1'));
  intent.set(PDFName.of('RegistryName'), PDFString.of('http://www.color.org'));
  intent.set(PDFName.of('Info'), PDFString.of('sRGB IEC61966-2.1'));
  const existing = doc.catalog.lookup(PDFName.of('OutputIntents'));
  if (existing instanceof PDFArray) existing.push(context.register(intent));
  else doc.catalog.set(PDFName.of('OutputIntents'), context.obj([context.register(intent)]));
}

/**
 * Makes the new document `doc` a PDF/A-3b file (ISO 19005-3) as far as the document level goes: the Info
 * dictionary from `facts` (pdf-lib's own Producer and dates are not used: create the document with
 * `updateMetadata: false`), the XMP packet declaring `PDFA_SEPARATE` with the same values, the sRGB output
 * intent, and a trailer /ID (6.1.3) derived from `idSeed` (stable for the same certificate). Page content must
 * use embedded fonts and DeviceRGB/DeviceGray only, annotations print flags and appearances: that is the
 * certificate layout's part.
 */
export function makePdfA3b(doc: PDFDocument, facts: DocumentFacts, idSeed: string): void {
  const title = xmlSafeText(facts.title);
  doc.setTitle(title, { showInWindowTitleBar: true });
  doc.setSubject(xmlSafeText(facts.subject));
  doc.setAuthor(xmlSafeText(facts.author));
  doc.setCreator(xmlSafeText(facts.creator));
  doc.setProducer(xmlSafeText(facts.producer));
  doc.setCreationDate(facts.created);
  doc.setModificationDate(facts.modified);
  setMetadata(doc, xmpPacket(facts, PDFA_SEPARATE));
  addSrgbOutputIntent(doc);
  const id = createHash('sha256').update(idSeed).digest('hex').slice(0, 32);
  doc.context.trailerInfo.ID = doc.context.obj([PDFHexString.of(id), PDFHexString.of(id)]);
}

/** The PDF/A declaration of an original as read from its catalog (see `readPdfA`). */
export interface OriginalPdfA {
  /** What its XMP declares; null when it has no /Metadata or no pdfaid part. */
  declared: PdfAId | null;
  /** The XMP text (UTF-8), kept to be rewritten; null when unreadable. */
  xmp: string | null;
  /** Prefix bound to the pdfaid namespace in `xmp`. */
  prefix: string | null;
  /** Components (`/N`) of the first `/GTS_PDFA1` output intent's profile; null when there is none. */
  outputIntentComponents: number | null;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The value of `prefix:name`, written as an attribute or as an element, in `xmp`. */
function xmpValue(xmp: string, prefix: string, name: string): string | undefined {
  const key = `${escapeRegExp(prefix)}:${name}`;
  // Greedy runs of one character class each: linear time on a hostile packet (no nested or lazy quantifiers).
  const attribute = new RegExp(`${key}\\s*=\\s*["']([^"'<]*)["']`).exec(xmp);
  const element = new RegExp(`<${key}>([^<]*)</${key}>`).exec(xmp);
  return (attribute?.[1] ?? element?.[1])?.trim();
}

/**
 * Reads what `doc`'s catalog declares: the XMP `/Metadata` stream (decoded with at most `PDFA_MAX_XMP_BYTES`,
 * an undecodable one counts as none), its `pdfaid:part` and `pdfaid:conformance` under whatever prefix names
 * the namespace `http://www.aiim.org/pdfa/ns/id/`, and the output intent. Parses untrusted input: only in the
 * bounded stamping worker. Never throws because of the file.
 */
export function readPdfA(doc: PDFDocument): OriginalPdfA {
  const outputIntentComponents = readOutputIntent(doc);
  const none = { declared: null, xmp: null, prefix: null, outputIntentComponents };
  const stream = doc.catalog.lookup(PDFName.of('Metadata'));
  if (!(stream instanceof PDFRawStream)) return none;
  let xmp: string;
  try {
    xmp = Buffer.from(decodeBounded(stream, PDFA_MAX_XMP_BYTES)).toString('utf8');
  } catch {
    return none;
  }
  const binding = new RegExp(`xmlns:([A-Za-z_][\\w.-]*)\\s*=\\s*["']${escapeRegExp(PDFAID_NS)}["']`).exec(
    xmp,
  );
  const prefix = binding?.[1];
  if (!prefix) return { ...none, xmp };
  const part = Number(xmpValue(xmp, prefix, 'part'));
  if (!Number.isInteger(part) || part < 1 || part > 4) return { ...none, xmp, prefix };
  const conformance = (xmpValue(xmp, prefix, 'conformance') ?? '').toUpperCase();
  return { declared: { part, conformance }, xmp, prefix, outputIntentComponents };
}

function readOutputIntent(doc: PDFDocument): number | null {
  const intents = doc.catalog.lookup(PDFName.of('OutputIntents'));
  if (!(intents instanceof PDFArray)) return null;
  for (let i = 0; i < intents.size(); i += 1) {
    const intent = intents.lookup(i);
    if (!(intent instanceof PDFDict) || intent.get(PDFName.of('S')) !== PDFName.of('GTS_PDFA1')) continue;
    const profile = intent.lookup(PDFName.of('DestOutputProfile'));
    const n = profile instanceof PDFRawStream ? profile.dict.lookup(PDFName.of('N')) : undefined;
    return n instanceof PDFNumber ? n.asNumber() : null;
  }
  return null;
}

/**
 * Why a stamped copy declares other than its original: part 3 for the receipt as an associated file, level B
 * since the added pages are not tagged, PDF/A-4 level F for an attached file.
 */
export type PdfAChange = 'part-3-for-attachment' | 'level-b-untagged' | 'level-f-for-attachment';

/**
 * What the certificate states about PDF/A: what this file declares (`produced`, null when it is not PDF/A) and,
 * stamped onto an original, what the original declared (`original`, null: not PDF/A) and why they differ.
 * The separate certificate has no `original`.
 */
export interface PdfAStatement {
  produced: PdfAId | null;
  original?: PdfAId | null;
  changes?: PdfAChange[];
}

/** How a stamped PDF/A original is kept PDF/A (`planPdfACopy`). */
export interface PdfACopyPlan {
  original: PdfAId;
  /** What the stamped copy declares. */
  produced: PdfAId;
  /** Why `produced` differs from `original` (none when equal). */
  changes: PdfAChange[];
  /** Colours of the stamp and the certificate pages: DeviceGray when the original's output intent is not RGB. */
  colour: ColourMode;
  /** The original declares PDF/A without an output intent: the sRGB one is added with the stamp. */
  addOutputIntent: boolean;
}

/**
 * What a stamped copy of a PDF/A original declares:
 * - PDF/A-1 and -2 forbid embedded files that are not PDF/A (ISO 19005-2 6.8): with `attachments` (the receipt)
 *   the copy declares part 3, which allows any associated file (ISO 19005-3 6.8);
 * - level A requires every page tagged (logical structure): the stamp and certificate pages are not, so the copy
 *   declares level B, which level A includes; U is kept (the embedded DejaVu fonts carry /ToUnicode), B too;
 * - PDF/A-4 is kept, with level F when files are attached (ISO 19005-4 6.9);
 * - an output intent that is not RGB (`/N` 1 or 4) makes our content DeviceGray; none at all gets ours (sRGB).
 */
export function planPdfACopy(read: OriginalPdfA, attachments: boolean): PdfACopyPlan | null {
  const original = read.declared;
  if (!original) return null;
  const changes: PdfACopyPlan['changes'] = [];
  let produced: PdfAId;
  if (original.part === 4) {
    produced = { part: 4, conformance: attachments ? 'F' : original.conformance };
    if (produced.conformance !== original.conformance) changes.push('level-f-for-attachment');
  } else {
    const part = attachments && original.part < 3 ? 3 : original.part;
    if (part !== original.part) changes.push('part-3-for-attachment');
    let conformance = original.conformance;
    if (conformance === 'A') {
      conformance = 'B';
      changes.push('level-b-untagged');
    }
    if (conformance !== 'U' && conformance !== 'B') conformance = 'B';
    produced = { part, conformance };
  }
  const n = read.outputIntentComponents;
  return {
    original,
    produced,
    changes,
    colour: n === null || n === 3 ? 'rgb' : 'gray',
    addOutputIntent: n === null,
  };
}

/**
 * Writes `plan` into the update being built on `doc`: when the declaration changes, a new uncompressed /Metadata
 * stream with the original XMP whose `pdfaid:part` and `pdfaid:conformance` are replaced (attribute or element
 * form; the other properties, the Info dictionary and its dates untouched, so they stay as in sync as the
 * original had them), and the sRGB output intent when the original had none.
 */
export function applyPdfACopy(doc: PDFDocument, read: OriginalPdfA, plan: PdfACopyPlan): void {
  const { original, produced } = plan;
  if (
    read.xmp &&
    read.prefix &&
    (original.part !== produced.part || original.conformance !== produced.conformance)
  ) {
    let xmp = replaceXmpValue(read.xmp, read.prefix, 'part', String(produced.part));
    if (xmpValue(xmp, read.prefix, 'conformance') !== undefined) {
      xmp = replaceXmpValue(xmp, read.prefix, 'conformance', produced.conformance);
    } else if (produced.conformance) {
      xmp = insertConformance(xmp, read.prefix, produced.conformance);
    }
    setMetadata(doc, xmp);
  }
  if (plan.addOutputIntent) addSrgbOutputIntent(doc);
}

function replaceXmpValue(xmp: string, prefix: string, name: string, value: string): string {
  const key = `${escapeRegExp(prefix)}:${name}`;
  return xmp
    .replace(new RegExp(`(${key}\\s*=\\s*["'])[^"'<]*(["'])`), `$1${value}$2`)
    .replace(new RegExp(`(<${key}>)[^<]*(</${key}>)`), `$1${value}$2`);
}

function insertConformance(xmp: string, prefix: string, value: string): string {
  const key = `${escapeRegExp(prefix)}:part`;
  const element = new RegExp(`(<${key}>[^<]*</${key}>)`);
  if (element.test(xmp))
    return xmp.replace(element, `$1<${prefix}:conformance>${value}</${prefix}:conformance>`);
  return xmp.replace(new RegExp(`(${key}\\s*=\\s*["'][^"'<]*["'])`), `$1 ${prefix}:conformance="${value}"`);
}
