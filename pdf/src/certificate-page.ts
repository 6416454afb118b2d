import { SCREENSHOT_MAX_PIXELS } from '@notary/shared/limits';
import { type PDFDocument, PDFName, PDFPage, type PDFRef } from 'pdf-lib';
import { Canvas, type ColourMode, type Rgb } from './canvas';
import type { FontRole, FontSet } from './fonts';
import { type CertificateStrings, stringsFor } from './i18n';
import type { CertificateAct, CertificateData, CertificateLanguage, OriginalSignaturesView } from './model';
import type { PdfAStatement } from './pdfa';
import { checkScreenshotHeader, decodeScreenshot } from './png';
import { coverText, measure, wrapText } from './text';

/**
 * Layout of the certificate page(s): A4 portrait, a header with the service name on every page, the title
 * block, label/value sections, the QR code, the compliance notes and a footer with page numbers and the
 * issue time. Content that does not fit flows onto further pages.
 */

/** A4 in points (ISO 216: 210 x 297 mm). */
export const A4: readonly [number, number] = [595.28, 841.89];

const MARGIN_X = 56.7;
const TOP = A4[1] - 46;
const CONTENT_BOTTOM = 66;
const CONTENT_W = A4[0] - 2 * MARGIN_X;
const LABEL_W = 118;
const VALUE_X = MARGIN_X + LABEL_W + 8;
const VALUE_W = A4[0] - MARGIN_X - VALUE_X;
const QR_SIZE = 104;
/** Tallest screenshot box: 40% of the page; a taller (full-page) screenshot shows its top part. */
const SCREENSHOT_MAX_H = 0.4 * A4[1];

const INK: Rgb = [0.11, 0.12, 0.14];
const MUTED: Rgb = [0.4, 0.43, 0.48];
const ACCENT: Rgb = [0.1, 0.22, 0.4];
const RULE: Rgb = [0.78, 0.8, 0.84];
const PANEL: Rgb = [0.965, 0.972, 0.982];
const OK: Rgb = [0.08, 0.42, 0.2];
const PENDING: Rgb = [0.66, 0.38, 0.02];
const BAD: Rgb = [0.7, 0.1, 0.1];

/** Resource names of the three fonts in every certificate page. */
const FONT_NAMES: Record<FontRole, string> = { sans: 'F1', bold: 'F2', mono: 'F3' };
/** Resource name of the screenshot image XObject. */
const SCREENSHOT_NAME = 'Im1';

/**
 * Where a web capture's screenshot stands on the certificate (`placeScreenshot`): embedded (its image object
 * and pixel size), or left out with a sentence saying why and where it is instead: its declared size is over
 * `SCREENSHOT_MAX_PIXELS` (`too-large`), or it could not be read within its bounds (`unavailable`).
 */
export type ScreenshotPlacement =
  | { kind: 'image'; ref: PDFRef; width: number; height: number }
  | { kind: 'too-large'; width: number; height: number }
  | { kind: 'unavailable' };

export interface CertificateLayoutOptions {
  lang: CertificateLanguage;
  /** Byte length of the original when the certificate is appended to it (stamped layout), else null. */
  originalBytes: number | null;
  /** The screenshot of a web capture, embedded or left out (`placeScreenshot`); none for other sources. */
  screenshot?: ScreenshotPlacement;
  /** What the file declares of PDF/A and, stamped, what the original did (a sentence under the document). */
  pdfa?: PdfAStatement;
  /** DeviceRGB (default) or DeviceGray for every colour: gray under a PDF/A original's non-RGB output intent. */
  colour?: ColourMode;
}

/** A value cell: text and the font it is set in. */
interface Value {
  text: string;
  mono?: boolean;
  color?: Rgb;
}

/** Flows blocks down the pages, opening a new page when the next block does not fit. */
class Flow {
  readonly pages: Canvas[] = [];
  private y = 0;
  /** Title of the section being laid out. */
  private currentSection: string | undefined;

  constructor(
    private readonly fonts: FontSet,
    private readonly s: CertificateStrings,
    private readonly data: CertificateData,
    private readonly colour: ColourMode = 'rgb',
  ) {
    this.newPage();
  }

  get page(): Canvas {
    const page = this.pages.at(-1);
    if (!page) throw new Error('no page');
    return page;
  }

  private newPage(): void {
    const page = new Canvas(this.fonts, FONT_NAMES, this.colour);
    this.pages.push(page);
    this.header(page);
    this.y = TOP - 34;
  }

  /** Guarantees `height` points below the cursor on the current page. */
  ensure(height: number): void {
    if (this.y - height >= CONTENT_BOTTOM) return;
    this.newPage();
    // A section that runs over repeats its heading, so the page does not start with orphan rows.
    if (this.currentSection) this.heading(`${this.currentSection} ${this.s.continued}`);
  }

  space(points: number): void {
    this.y -= points;
  }

  /** `text` with the characters the font of `role` lacks shown as U+XXXX. */
  cover(role: FontRole, text: string): string {
    return coverText(this.fonts[role], text).text;
  }

  private header(page: Canvas): void {
    const name = this.cover('bold', this.data.serviceName);
    page.text(MARGIN_X, TOP, 'bold', 12.5, name, ACCENT);
    page.textRight(
      A4[0] - MARGIN_X,
      TOP + 1,
      'sans',
      7.5,
      this.cover('sans', this.data.serviceUrl.replace(/^https?:\/\//, '')),
      MUTED,
    );
    page.line(MARGIN_X, TOP - 9, A4[0] - MARGIN_X, TOP - 9, 0.8, ACCENT);
  }

  title(): void {
    const s = this.s;
    this.page.text(MARGIN_X, this.y - 14, 'bold', 20, s.title, INK);
    this.y -= 32;
    const serial = `${s.serialLabel} ${this.cover('sans', this.data.document.serialNumber)}`;
    const issued = s.issuedAt(s.formatTime(this.data.issuedAt));
    const sub = `${serial}   ·   ${issued}`;
    // Brasília time and UTC make the issue time long: it takes its own line(s) when both do not fit on one.
    const lines =
      measure(this.fonts.sans, sub, 9.5) <= CONTENT_W
        ? [sub]
        : [serial, ...wrapText(this.fonts.sans, issued, 9.5, CONTENT_W)];
    lines.forEach((line, i) => {
      this.page.text(MARGIN_X, this.y - i * 12.5, 'sans', 9.5, line, MUTED);
    });
    this.y -= 20 + (lines.length - 1) * 12.5;
  }

  /** A section heading with a thin rule; kept on the same page as at least `keep` points of content. */
  section(title: string, keep = 48): void {
    this.currentSection = undefined;
    this.ensure(26 + keep);
    this.currentSection = title;
    this.heading(title);
  }

  private heading(title: string): void {
    this.y -= 8;
    this.page.text(MARGIN_X, this.y - 9, 'bold', 9.5, title.toUpperCase(), ACCENT);
    this.y -= 14;
    this.page.line(MARGIN_X, this.y, A4[0] - MARGIN_X, this.y, 0.4, RULE);
    this.y -= 11;
  }

  /** One label/value row; the value wraps in its column (monospace for hashes, addresses and URLs). */
  row(label: string, value: Value): void {
    const role: FontRole = value.mono ? 'mono' : 'sans';
    const size = value.mono ? 7.9 : 8.8;
    const leading = value.mono ? 10.6 : 11.2;
    const labelLines = wrapText(this.fonts.sans, label, 7.8, LABEL_W);
    const valueLines = wrapText(this.fonts[role], this.cover(role, value.text), size, VALUE_W);
    const height = Math.max(labelLines.length * 10.2, valueLines.length * leading);
    this.ensure(height);
    labelLines.forEach((line, i) => {
      this.page.text(MARGIN_X, this.y - 7 - i * 10.2, 'sans', 7.8, line, MUTED);
    });
    valueLines.forEach((line, i) => {
      this.page.text(VALUE_X, this.y - 7 - i * leading, role, size, line, value.color ?? INK);
    });
    this.y -= height + 4.2;
  }

  /** A small note in the value column, under the previous row. */
  note(text: string): void {
    const lines = wrapText(this.fonts.sans, text, 7.2, VALUE_W);
    this.ensure(lines.length * 9.4);
    this.y += 1.5;
    lines.forEach((line, i) => {
      this.page.text(VALUE_X, this.y - 7 - i * 9.4, 'sans', 7.2, line, MUTED);
    });
    this.y -= lines.length * 9.4 + 3;
  }

  /** A paragraph over the full width. */
  paragraph(text: string, options: { size?: number; color?: Rgb } = {}): void {
    const size = options.size ?? 8.4;
    const leading = size * 1.36;
    const lines = wrapText(this.fonts.sans, this.cover('sans', text), size, CONTENT_W);
    for (const line of lines) {
      this.ensure(leading);
      this.page.text(MARGIN_X, this.y - size, 'sans', size, line, options.color ?? INK);
      this.y -= leading;
    }
    this.y -= 3;
  }

  /** A bulleted or numbered list; items do not split across pages. */
  list(items: string[], numbered: boolean): void {
    const size = 8.3;
    const leading = 11.2;
    const indent = 15;
    items.forEach((item, i) => {
      const lines = wrapText(this.fonts.sans, this.cover('sans', item), size, CONTENT_W - indent);
      this.ensure(lines.length * leading);
      const marker = numbered ? `${i + 1}.` : '•';
      this.page.text(MARGIN_X + 2, this.y - size, numbered ? 'bold' : 'sans', size, marker, ACCENT);
      lines.forEach((line, j) => {
        this.page.text(MARGIN_X + indent, this.y - size - j * leading, 'sans', size, line, INK);
      });
      this.y -= lines.length * leading + 3.2;
    });
  }

  /** The QR code on the left of a light panel, its caption and target URL on the right. */
  qrPanel(target: string, caption: string, extra: { label: string; url: string } | null): void {
    const pad = 10;
    const textX = MARGIN_X + pad + QR_SIZE + 16;
    const textW = A4[0] - MARGIN_X - pad - textX;
    const captionLines = wrapText(this.fonts.sans, this.cover('sans', caption), 8.6, textW);
    const urlLines = wrapText(this.fonts.mono, this.cover('mono', target), 7.9, textW);
    const extraLines = extra ? wrapText(this.fonts.mono, this.cover('mono', extra.url), 7.9, textW) : [];
    const height = QR_SIZE + 2 * pad;
    this.ensure(height);
    const top = this.y;
    this.page.rect(MARGIN_X, top - height, CONTENT_W, height, { fill: PANEL, stroke: RULE, lineWidth: 0.4 });
    this.page.qr(target, MARGIN_X + pad, top - pad - QR_SIZE, QR_SIZE);
    let y = top - pad - 9;
    for (const line of captionLines) {
      this.page.text(textX, y, 'sans', 8.6, line, INK);
      y -= 11.4;
    }
    y -= 3;
    for (const line of urlLines) {
      this.page.text(textX, y, 'mono', 7.9, line, ACCENT);
      y -= 10.4;
    }
    if (extra) {
      y -= 6;
      this.page.text(textX, y, 'sans', 7.8, extra.label, MUTED);
      y -= 10.4;
      for (const line of extraLines) {
        this.page.text(textX, y, 'mono', 7.9, line, ACCENT);
        y -= 10.4;
      }
    }
    this.y = top - height - 6;
  }

  /**
   * The screenshot at the content width, framed, its caption under it. Taller than `SCREENSHOT_MAX_H` once
   * scaled, it is cropped to its top part (a clipping path, the caption says so) rather than shrunk: the
   * top is what a visitor saw first, and a full-page capture shrunk to 40% of A4 would be unreadable.
   */
  screenshot(image: { width: number; height: number }): void {
    const fullH = (CONTENT_W * image.height) / image.width;
    const cropped = fullH > SCREENSHOT_MAX_H;
    const boxH = Math.min(fullH, SCREENSHOT_MAX_H);
    const caption = wrapText(this.fonts.sans, this.s.screenshotCaption(cropped), 7.8, CONTENT_W);
    this.ensure(boxH + 6 + caption.length * 10.2);
    const top = this.y;
    const clip = cropped ? { y: top - boxH, h: boxH } : undefined;
    this.page.image(SCREENSHOT_NAME, MARGIN_X, top - fullH, CONTENT_W, fullH, clip);
    this.page.rect(MARGIN_X, top - boxH, CONTENT_W, boxH, { stroke: RULE, lineWidth: 0.4 });
    this.y = top - boxH - 6;
    caption.forEach((line, i) => {
      this.page.text(MARGIN_X, this.y - 7 - i * 10.2, 'sans', 7.8, line, MUTED);
    });
    this.y -= caption.length * 10.2 + 4;
  }

  /** Footers, once the page count is known. */
  footers(): void {
    const total = this.pages.length;
    const left = `${this.cover('sans', this.data.serviceName)} · ${this.s.certificateNo(this.cover('sans', this.data.document.serialNumber))}`;
    // The issue time (Brasília time and UTC) does not fit beside the name and number: it has the line below.
    const issued = this.s.issuedAt(this.s.formatTime(this.data.issuedAt));
    this.pages.forEach((page, i) => {
      page.line(MARGIN_X, 46, A4[0] - MARGIN_X, 46, 0.4, RULE);
      const pageText = this.s.page(i + 1, total);
      const room = CONTENT_W - measure(this.fonts.sans, pageText, 7.3) - 12;
      page.text(MARGIN_X, 35, 'sans', 7.3, fitLine(this.fonts, left, 7.3, room), MUTED);
      page.text(MARGIN_X, 26, 'sans', 7.3, fitLine(this.fonts, issued, 7.3, room), MUTED);
      page.textRight(A4[0] - MARGIN_X, 35, 'sans', 7.3, pageText, MUTED);
    });
  }
}

/** `text` cut with an ellipsis to fit `width` (footer only: the full values are in the body). */
function fitLine(fonts: FontSet, text: string, size: number, width: number): string {
  if (measure(fonts.sans, text, size) <= width) return text;
  const chars = [...text];
  while (chars.length > 1 && measure(fonts.sans, `${chars.join('')}…`, size) > width) chars.pop();
  return `${chars.join('')}…`;
}

/** Lays out the whole certificate; returns one content stream (operators) per page. */
export function layoutCertificate(
  fonts: FontSet,
  data: CertificateData,
  options: CertificateLayoutOptions,
): string[] {
  const s = stringsFor(options.lang);
  const flow = new Flow(fonts, s, data, options.colour);
  const doc = data.document;
  flow.title();

  flow.section(s.sectionDocument);
  flow.row(s.fileName, { text: doc.fileName });
  if (coverText(fonts.sans, doc.fileName).replaced) flow.note(s.fileNameNote);
  flow.row(s.sha256, { text: doc.sha256Hash, mono: true });
  flow.row(s.fileSize, { text: s.formatSize(doc.fileSize) });
  flow.row(s.mimeType, { text: doc.mimeType });
  flow.row(s.registeredAt, { text: s.formatTime(doc.createdAt) });
  flow.row(s.tenant, { text: doc.tenantName });
  flow.row(s.serial, { text: doc.serialNumber, mono: true });
  flow.row(s.documentId, { text: doc.id, mono: true });
  if (options.originalBytes !== null) {
    flow.space(2);
    flow.paragraph(s.stamped(String(options.originalBytes)), { size: 7.8, color: MUTED });
  }
  // Stamped: what became of the original's PDF/A, beside the sentence on the stamping. A separate certificate
  // states its own PDF/A under the compliance notes (the document section keeps room for a screenshot).
  const pdfaSentence = options.pdfa ? s.pdfa(options.pdfa) : '';
  if (pdfaSentence && options.pdfa?.original !== undefined) {
    flow.space(2);
    flow.paragraph(pdfaSentence, { size: 7.8, color: MUTED });
  }
  for (const line of data.notes ?? []) {
    flow.space(2);
    flow.paragraph(line, { size: 7.8, color: MUTED });
  }
  const shot = options.screenshot;
  if (shot) {
    flow.space(6);
    if (shot.kind === 'image') flow.screenshot(shot);
    else {
      const why =
        shot.kind === 'too-large' ? s.screenshotTooLarge(shot.width, shot.height) : s.screenshotUnavailable;
      flow.paragraph(why, { size: 7.8, color: MUTED });
    }
  }

  if (data.act) actSection(flow, s, data.act);
  if (data.originalSignatures) originalSignaturesSection(flow, s, data.originalSignatures);

  flow.section(s.sectionVerification, QR_SIZE + 20);
  const attestation = data.evm?.attestationUrl ?? null;
  if (attestation) {
    flow.qrPanel(attestation, s.qrAttestation, { label: s.publicRecord, url: data.verifyUrl });
    // VALIDAR reads a QR code of the public record's URL, then asks its user for the code printed beside it.
    if (data.validar) {
      flow.qrPanel(data.verifyUrl, s.validarQr, { label: s.validarCode, url: data.validar.accessCode });
    }
  } else {
    // The one QR code already opens the public record: VALIDAR reads that one, with the code beside it.
    const caption = data.evm?.status === 'pending' ? s.qrPending : s.qrNoExplorer;
    flow.qrPanel(
      data.verifyUrl,
      data.validar ? `${s.validarQr} ${caption}` : caption,
      data.validar ? { label: s.validarCode, url: data.validar.accessCode } : null,
    );
  }

  merkleSection(flow, s, data);
  evmSection(flow, s, data);
  stacksSection(flow, s, data);

  flow.section(s.sectionConsent, 24);
  flow.paragraph(
    data.consent.given ? s.consentGiven(s.formatTime(data.consent.timestamp)) : s.consentMissing,
  );

  flow.section(s.sectionCompliance);
  flow.list(
    s.compliance({
      signed: data.signed,
      evm: data.evm !== null,
      stacks: data.stacks !== null,
      ...(data.signatureLevel ? { level: data.signatureLevel } : {}),
    }),
    false,
  );
  if (pdfaSentence && options.pdfa?.original === undefined) {
    flow.paragraph(pdfaSentence, { size: 7.8, color: MUTED });
  }

  flow.section(s.sectionHowTo);
  flow.list(
    s.howTo({
      originalBytes: options.originalBytes,
      hasSiblings: (data.merkle?.siblings.length ?? 0) > 0,
      evm: data.evm !== null,
      stacks: data.stacks !== null,
    }),
    true,
  );
  flow.footers();
  return flow.pages.map((p) => p.toString());
}

/** The document's notarial act: type, MNE, selo, book and page, when it was recorded. */
function actSection(flow: Flow, s: CertificateStrings, act: CertificateAct): void {
  const a = s.act;
  flow.section(a.section);
  flow.row(a.type, { text: a.types[act.type] });
  if (act.mne) flow.row(a.mne, { text: act.mne, mono: true });
  if (act.selo) flow.row(a.selo, { text: `${act.selo.state} ${act.selo.code}`, mono: true });
  const bookPage = [act.book, act.page].filter((x) => x).join(', ');
  if (bookPage) flow.row(a.bookPage, { text: bookPage });
  flow.row(a.recordedAt, { text: s.formatTime(act.recordedAt) });
  flow.space(2);
  flow.paragraph(a.note, { size: 7.8, color: MUTED });
}

/** Each signature the original carried, as read at notarization (`OriginalSignatureView`). */
function originalSignaturesSection(flow: Flow, s: CertificateStrings, view: OriginalSignaturesView): void {
  const o = s.originals;
  if (view.status === 'read' && view.signatures.length === 0) return;
  flow.section(o.section);
  if (view.status === 'unreadable') {
    flow.paragraph(o.unreadable(view.reason), { size: 7.8, color: MUTED });
    return;
  }
  flow.paragraph(o.intro, { size: 7.8, color: MUTED });
  const time = (iso: string) => s.formatTime(new Date(iso));
  for (const sig of view.signatures) {
    flow.row(o.heading(sig.index, sig.kind), { text: sig.signer ?? o.notCarried });
    flow.row(o.issuer, { text: sig.issuer ?? o.notCarried });
    flow.row(o.claimedTime, { text: sig.claimedTime ? time(sig.claimedTime) : o.notCarried });
    const ts = sig.timestamp;
    flow.row(o.timestamp, {
      text: ts ? o.timestampValue(time(ts.genTime), ts.tsa, ts.imprint && ts.signature) : o.none,
      ...(ts && !(ts.imprint && ts.signature) ? { color: BAD } : {}),
    });
    flow.row(o.format, {
      text: [sig.filter, sig.subFilter].filter((x) => x !== null).join(' / ') || o.notCarried,
    });
    flow.row(o.policy, { text: sig.policyOid ?? o.none, ...(sig.policyOid ? { mono: true } : {}) });
    flow.row(o.coverage, {
      text: o.coverageValue(sig.coverage),
      ...(sig.coverage.wellFormed && sig.coverage.wholeOriginal ? {} : { color: PENDING }),
    });
    const intact = sig.integrity.digest === true && sig.integrity.signature === true;
    const broken = sig.integrity.digest === false || sig.integrity.signature === false;
    flow.row(o.integrity, {
      text: o.integrityValue(sig.integrity),
      ...(intact ? { color: OK } : broken ? { color: BAD } : {}),
    });
    flow.row(o.chain, { text: o.chainValue(sig.chain) });
    flow.row(o.revocation, { text: o.revocationValue(sig.revocation) });
    if (sig.problem) flow.row(o.problem, { text: sig.problem, color: BAD });
    flow.space(4);
  }
}

function status(s: CertificateStrings, value: 'pending' | 'registered'): Value {
  return value === 'registered'
    ? { text: s.statusRegistered, color: OK }
    : { text: s.statusPending, color: PENDING };
}

function merkleSection(flow: Flow, s: CertificateStrings, data: CertificateData): void {
  flow.section(s.sectionMerkle);
  const m = data.merkle;
  if (!m) {
    flow.row(s.status, { text: s.merklePending, color: PENDING });
    return;
  }
  flow.row(s.merkleRoot, { text: m.root, mono: true });
  flow.row(s.batchSize, { text: String(m.batchSize) });
  flow.row(s.leafIndex, { text: String(m.leafIndex) });
  if (m.siblings.length === 0) {
    flow.row(s.siblings, { text: s.siblingsNone });
    return;
  }
  m.siblings.forEach((sibling, i) => {
    flow.row(s.sibling(i + 1, sibling.position), { text: sibling.hash, mono: true });
  });
}

function evmSection(flow: Flow, s: CertificateStrings, data: CertificateData): void {
  flow.section(s.sectionEvm);
  const evm = data.evm;
  if (!evm) {
    flow.row(s.status, { text: s.notEnabled });
    return;
  }
  flow.row(s.status, status(s, evm.status));
  flow.row(s.network, { text: `${evm.network} (${s.chainId} ${evm.chainId})` });
  flow.row(s.easContract, evm.easContract ? { text: evm.easContract, mono: true } : { text: s.unknown });
  flow.row(s.schemaUid, { text: evm.schemaUid, mono: true });
  flow.row(s.schema, { text: evm.schema, mono: true });
  // Transaction fields exist only once included: a pending anchor prints none of them.
  if (evm.attestationUid) flow.row(s.attestationUid, { text: evm.attestationUid, mono: true });
  if (evm.txHash) flow.row(s.txHash, { text: evm.txHash, mono: true });
  if (evm.anchoredAt) flow.row(s.anchoredAt, { text: s.formatTime(evm.anchoredAt) });
  if (evm.explorerTxUrl) flow.row(s.explorerTx, { text: evm.explorerTxUrl, mono: true });
  if (evm.attestationUrl) flow.row(s.explorerAttestation, { text: evm.attestationUrl, mono: true });
}

function stacksSection(flow: Flow, s: CertificateStrings, data: CertificateData): void {
  flow.section(s.sectionStacks);
  const stx = data.stacks;
  if (!stx) {
    flow.row(s.status, { text: s.notEnabled });
    return;
  }
  flow.row(s.status, status(s, stx.status));
  flow.row(s.network, { text: stx.network });
  flow.row(s.stacksContract, stx.contract ? { text: stx.contract, mono: true } : { text: s.unknown });
  if (stx.txId) flow.row(s.stacksTxId, { text: stx.txId, mono: true });
  if (stx.anchoredAt) flow.row(s.anchoredAt, { text: s.formatTime(stx.anchoredAt) });
  if (stx.explorerTxUrl) flow.row(s.explorerTx, { text: stx.explorerTxUrl, mono: true });
}

/**
 * Creates the certificate pages in `doc` (A4, own Resources, explicit CropBox and /Rotate 0 so that nothing
 * is inherited from the document's page tree) WITHOUT inserting them into the page tree: the caller does,
 * the way its layout needs. Fonts must be embedded in `doc`.
 */
export function createCertificatePages(
  doc: PDFDocument,
  fonts: FontSet,
  data: CertificateData,
  options: CertificateLayoutOptions,
): PDFPage[] {
  const context = doc.context;
  const fontDict = context.obj({
    [FONT_NAMES.sans]: fonts.sans.pdf.ref,
    [FONT_NAMES.bold]: fonts.bold.pdf.ref,
    [FONT_NAMES.mono]: fonts.mono.pdf.ref,
  });
  const resources =
    options.screenshot?.kind === 'image'
      ? { XObject: { [SCREENSHOT_NAME]: options.screenshot.ref }, ProcSet: ['PDF', 'Text', 'ImageC'] }
      : { ProcSet: ['PDF', 'Text'] };
  return layoutCertificate(fonts, data, options).map((content) => {
    const page = PDFPage.create(doc);
    const box = context.obj([0, 0, A4[0], A4[1]]);
    page.node.set(PDFName.of('MediaBox'), box);
    page.node.set(PDFName.of('CropBox'), box);
    page.node.set(PDFName.of('Rotate'), context.obj(0));
    page.node.set(PDFName.of('Resources'), context.obj({ Font: fontDict, ...resources }));
    page.node.set(PDFName.of('Contents'), context.register(context.flateStream(content)));
    return page;
  });
}

/**
 * Where `data.screenshot` (a PNG) goes on the certificate; undefined when there is none (not a web capture).
 * With `decode`, a PNG whose header passes `checkScreenshotHeader` is decoded within its bounds
 * (`decodeScreenshot`) and embedded in `doc` as an image XObject (ISO 32000-1, 8.9.5: /FlateDecode with the PNG
 * predictors), its alpha channel as a soft mask (11.6.5.3); decoding spends CPU and memory in proportion to the
 * image, so `decode` is for the bounded stamping worker only. With `header-only` (the calling thread must not
 * decode) only the header is read: a screenshot it would have shown is `unavailable`. A PNG over the pixel cap
 * is `too-large`, one that cannot be read within its bounds `unavailable`: the certificate is issued either way.
 */
export function placeScreenshot(
  doc: PDFDocument,
  data: Pick<CertificateData, 'screenshot'>,
  how: 'decode' | 'header-only',
): ScreenshotPlacement | undefined {
  const png = data.screenshot;
  if (!png) return undefined;
  const read =
    how === 'decode'
      ? decodeScreenshot(png, SCREENSHOT_MAX_PIXELS)
      : checkScreenshotHeader(png, SCREENSHOT_MAX_PIXELS);
  if (read.kind === 'too-large') return { kind: 'too-large', width: read.width, height: read.height };
  if (read.kind !== 'image') return { kind: 'unavailable' };
  const { image } = read;
  const context = doc.context;
  const parms = (colors: number) => ({
    Predictor: 15,
    Colors: colors,
    BitsPerComponent: 8,
    Columns: image.width,
  });
  const common = {
    Type: 'XObject',
    Subtype: 'Image',
    Width: image.width,
    Height: image.height,
    BitsPerComponent: 8,
    Filter: 'FlateDecode',
  };
  const mask = image.alpha
    ? context.register(
        context.stream(image.alpha, { ...common, ColorSpace: 'DeviceGray', DecodeParms: parms(1) }),
      )
    : undefined;
  const ref = context.register(
    context.stream(image.color, {
      ...common,
      ColorSpace: image.colors === 3 ? 'DeviceRGB' : 'DeviceGray',
      DecodeParms: parms(image.colors),
      ...(mask ? { SMask: mask } : {}),
    }),
  );
  return { kind: 'image', ref, width: image.width, height: image.height };
}
