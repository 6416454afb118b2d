import { formatCpf } from '@notary/shared/cpf';
import { formatBrasiliaAndUtc } from '@notary/shared/time';
import { PDFDocument, PDFName, PDFPage } from 'pdf-lib';
import { attachFile, type PdfAttachment } from './attachment';
import { Canvas, type Rgb } from './canvas';
import { A4, placeScreenshot } from './certificate-page';
import { embedFonts, type FontRole, type FontSet } from './fonts';
import { makePdfA3b } from './pdfa';
import { codePointNotation, coverText, wrapText } from './text';

/**
 * The draft (minuta) of an ata notarial of a web capture: a PDF/A-3b file in Portuguese that a tabelião reviews,
 * completes (selo, MNE, livro and folha) and signs. Its sections are fixed text of this module; everything that
 * came from the captured page or its servers (title, visible text, URLs, certificate names, error texts) is data,
 * drawn only inside quoted lines that start with `»` after `dataText` made it one line of visible characters: a
 * page cannot add, end or imitate a section of the draft.
 */

/** Longest excerpt of the page's visible text printed on the draft, characters. */
export const ATA_EXCERPT_MAX_CHARS = 3_000;
/** Longest single value drawn from the capture (a URL may be 64 KiB), characters. */
const VALUE_MAX_CHARS = 600;
/** Most rows of one list (blocked requests, origins, names) printed; the rest are counted. */
const LIST_MAX_ROWS = 25;
/** Most pages the screenshot is spread over (a full-page screenshot is cut at the capture's height cap). */
const SCREENSHOT_MAX_PAGES = 20;

/** What the draft states: the serventia, the requester, the capture's facts and where the archive is. */
export interface AtaDraftData {
  serviceName: string;
  /** The serventia asking: the organization's name, its CNS when declared, the place when configured. */
  serventia: { name: string; cns: string | null; place: string | null };
  /** When the requester's form was received: the draft's date (the same draft is rendered again from it). */
  requestedAt: Date;
  requester: { name: string; cpf: string; qualification: string | null; email: string | null };
  capture: {
    requestedUrl: string;
    finalUrl: string;
    status: number;
    title: string;
    startedAt: Date;
    finishedAt: Date;
    redirects: Array<{ url: string; status: number }>;
    serverIp: string | null;
    egressIp: string | null;
    browser: string;
    screenshot: { width: number; height: number; truncated: boolean };
  };
  /** The page's visible text (any length: the draft prints at most `ATA_EXCERPT_MAX_CHARS`), or why it is not. */
  visibleText: { text: string } | { unavailable: string };
  /** What the capture could not get: refused, failed, cut at the time bound, bodies not handed over whole. */
  missing: {
    blocked: Array<{ url: string; reason: string }>;
    failed: Array<{ url: string; reason: string }>;
    unfinished: string[];
    bodies: Array<{ url: string; kind: string; reason: string }>;
  };
  tls: Array<{
    origin: string;
    protocol: string | null;
    subject: string;
    issuer: string;
    validTo: string;
    sha256: string | null;
    chainLength: number;
  }>;
  dns: Array<{ host: string; outcome: string; addresses: string[] }>;
  wacz: {
    fileName: string;
    serialNumber: string;
    sha256: string;
    bytes: number;
    attached: boolean;
    attachMaxBytes: number;
  };
  /** Anchors and timestamps of the WACZ's hash, each a label and its value (network, transaction, time). */
  anchors: Array<{ label: string; value: string }>;
  /** The full-page screenshot (PNG) as the capture stored it; undefined when it is gone. */
  screenshot?: Uint8Array;
  /** The WACZ itself, attached as an associated file when `wacz.attached`. */
  waczBytes?: Uint8Array;
}

const MARGIN_X = 56.7;
const TOP = A4[1] - 50;
const BOTTOM = 56;
const CONTENT_W = A4[0] - 2 * MARGIN_X;
const LABEL_W = 150;
const INK: Rgb = [0.07, 0.07, 0.07];
const MUTED: Rgb = [0.35, 0.35, 0.35];
const ACCENT: Rgb = [0.1, 0.22, 0.45];
const DATA_BG: Rgb = [0.95, 0.95, 0.95];
const FONT_NAMES: Record<FontRole, string> = { sans: 'F1', bold: 'F2', mono: 'F3' };
const IMAGE_NAME = 'Im1';
/** Marks every line of data drawn from the capture, so that none can pass for the draft's own text. */
export const DATA_MARK = '» ';

/** The fixed section headings, in order (tests read them back with pdftotext). */
export const ATA_SECTIONS = [
  '1. SERVENTIA E LOCAL',
  '2. DATA E HORA',
  '3. SOLICITANTE',
  '4. ENDEREÇOS ACESSADOS',
  '5. NARRAÇÃO OBJETIVA',
  '6. O QUE NÃO FOI OBTIDO',
  '7. ANEXO TÉCNICO',
  '8. O QUE ESTA ATA NÃO ATESTA',
  '9. ENCERRAMENTO E ESPAÇOS DO TABELIÃO',
] as const;

/**
 * `text` from the capture as one line of visible characters, at most `max` characters (then `…`): NFC, every
 * control, format (bidirectional overrides and isolates, zero-width marks) and line or paragraph separator
 * written as its `U+XXXX` notation, and runs of white space as one space. Nothing of it can start a line, move
 * text, or hide text on the draft.
 */
export function dataText(text: string, max: number = VALUE_MAX_CHARS): string {
  const visible = text
    .normalize('NFC')
    .replace(/[\t\n\r\f\v ]+/g, ' ')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/gu, (c) => codePointNotation(c.codePointAt(0) ?? 0))
    .trim();
  const chars = [...visible];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : visible;
}

/** Flows the draft's blocks down A4 pages. */
class AtaFlow {
  readonly pages: Canvas[] = [];
  private y = TOP;

  constructor(private readonly fonts: FontSet) {
    this.newPage();
  }

  private get page(): Canvas {
    const page = this.pages.at(-1);
    if (!page) throw new Error('no page');
    return page;
  }

  private newPage(): void {
    const page = new Canvas(this.fonts, FONT_NAMES);
    page.text(
      MARGIN_X,
      A4[1] - 30,
      'sans',
      7.5,
      'MINUTA DE ATA NOTARIAL — para revisão e lavratura pelo tabelião',
      MUTED,
    );
    this.pages.push(page);
    this.y = TOP;
  }

  private room(height: number): void {
    if (this.y - height < BOTTOM) this.newPage();
  }

  /** Lines of `text` (fixed or already `dataText`) wrapped to `width` in `role`, covered by the font. */
  private lines(text: string, role: FontRole, size: number, width: number): string[] {
    return wrapText(this.fonts[role], coverText(this.fonts[role], text).text, size, width);
  }

  title(text: string, size: number): void {
    for (const line of this.lines(text, 'bold', size, CONTENT_W)) {
      this.room(size + 6);
      this.page.text(MARGIN_X, this.y, 'bold', size, line, ACCENT);
      this.y -= size + 6;
    }
  }

  heading(text: (typeof ATA_SECTIONS)[number]): void {
    this.y -= 8;
    this.room(40);
    this.page.text(MARGIN_X, this.y, 'bold', 10.5, text, ACCENT);
    this.y -= 4;
    this.page.line(MARGIN_X, this.y, MARGIN_X + CONTENT_W, this.y, 0.6, ACCENT);
    this.y -= 13;
  }

  /** A paragraph of the draft's own text. */
  para(text: string, options: { size?: number; color?: Rgb; role?: FontRole } = {}): void {
    const size = options.size ?? 9;
    const role = options.role ?? 'sans';
    for (const line of this.lines(text, role, size, CONTENT_W)) {
      this.room(size + 3);
      this.page.text(MARGIN_X, this.y, role, size, line, options.color ?? INK);
      this.y -= size + 3;
    }
    this.y -= 3;
  }

  /** A fixed label and a value of the service's own (a date, a count; a hash in `mono`). */
  field(label: string, value: string, mono = false): void {
    const role: FontRole = mono ? 'mono' : 'sans';
    const size = mono ? 8 : 9;
    const lines = this.lines(value, role, size, CONTENT_W - LABEL_W);
    lines.forEach((line, i) => {
      this.room(12);
      if (i === 0) this.page.text(MARGIN_X, this.y, 'bold', 9, label, INK);
      this.page.text(MARGIN_X + LABEL_W, this.y, role, size, line, INK);
      this.y -= 12;
    });
  }

  /** A fixed label and a value that came from the capture: every line marked, on a shaded band. */
  dataField(label: string, value: string, max: number = VALUE_MAX_CHARS): void {
    const width = CONTENT_W - LABEL_W;
    this.room(12);
    this.page.text(MARGIN_X, this.y, 'bold', 9, label, INK);
    this.quoteLines(dataText(value, max), MARGIN_X + LABEL_W, width);
  }

  /** A value from the capture on its own lines, the full width, every line marked. */
  quote(value: string, max: number = VALUE_MAX_CHARS): void {
    this.quoteLines(dataText(value, max), MARGIN_X, CONTENT_W);
    this.y -= 3;
  }

  private quoteLines(text: string, x: number, width: number): void {
    const markWidth = this.fonts.mono.pdf.widthOfTextAtSize(DATA_MARK, 8.5);
    for (const line of this.lines(text || '(vazio)', 'mono', 8.5, width - markWidth - 4)) {
      this.room(11.5);
      this.page.rect(x - 2, this.y - 3, width + 2, 11.5, { fill: DATA_BG });
      this.page.text(x, this.y, 'mono', 8.5, DATA_MARK, MUTED);
      this.page.text(x + markWidth, this.y, 'mono', 8.5, line, INK);
      this.y -= 11.5;
    }
  }

  /** An empty slot for the tabelião to fill: a label and a line. */
  slot(label: string, height = 18): void {
    this.room(height + 4);
    this.y -= height - 12;
    this.page.text(MARGIN_X, this.y, 'bold', 9, label, INK);
    this.page.line(MARGIN_X + LABEL_W, this.y - 2, MARGIN_X + CONTENT_W, this.y - 2, 0.5, INK);
    this.y -= 14;
  }

  /** At most `LIST_MAX_ROWS` rows of `rows`, then how many were left out. */
  list<T>(rows: readonly T[], none: string, draw: (row: T) => void): void {
    if (rows.length === 0) {
      this.para(none, { color: MUTED });
      return;
    }
    for (const row of rows.slice(0, LIST_MAX_ROWS)) draw(row);
    if (rows.length > LIST_MAX_ROWS) {
      this.para(`… e mais ${rows.length - LIST_MAX_ROWS}, listados no capture.json do arquivo WACZ.`, {
        color: MUTED,
      });
    }
  }
}

/** Brasília time and UTC, as every time of the draft. */
const when = (at: Date) => formatBrasiliaAndUtc(at, 'pt');

/** Sections 1 to 4: who asks, where, when, which addresses. */
function drawHead(flow: AtaFlow, data: AtaDraftData): void {
  flow.title('MINUTA DE ATA NOTARIAL', 16);
  flow.para(
    'Constatação de conteúdo de origem digital (CPC, art. 384). Minuta gerada a partir de uma captura técnica para revisão do tabelião: não é ata lavrada enquanto não for conferida, completada e assinada por ele.',
    { color: MUTED, size: 8.5 },
  );
  flow.heading(ATA_SECTIONS[0]);
  flow.dataField('Serventia', data.serventia.name, 200);
  flow.field('CNS', data.serventia.cns ?? 'não declarado pela serventia');
  if (data.serventia.place) flow.dataField('Local', data.serventia.place, 200);
  else flow.slot('Local');
  flow.heading(ATA_SECTIONS[1]);
  flow.field('Minuta solicitada em', when(data.requestedAt));
  flow.field('Captura iniciada em', when(data.capture.startedAt));
  flow.field('Captura concluída em', when(data.capture.finishedAt));
  flow.heading(ATA_SECTIONS[2]);
  flow.dataField('Nome', data.requester.name, 200);
  flow.field('CPF', formatCpf(data.requester.cpf));
  if (data.requester.qualification) flow.dataField('Qualificação', data.requester.qualification, 500);
  else flow.slot('Qualificação');
  if (data.requester.email) flow.dataField('E-mail', data.requester.email, 254);
  flow.heading(ATA_SECTIONS[3]);
  flow.dataField('Endereço solicitado', data.capture.requestedUrl);
  flow.dataField('Endereço final', data.capture.finalUrl);
  flow.field('Resposta HTTP', String(data.capture.status));
  flow.field('Redirecionamentos', String(data.capture.redirects.length));
  flow.list(data.capture.redirects, 'Nenhum: o endereço solicitado respondeu diretamente.', (r) =>
    flow.dataField(`HTTP ${r.status}`, r.url),
  );
}

/** Section 5: what was seen, from the capture's facts only. */
function drawNarration(flow: AtaFlow, data: AtaDraftData, screenshotPages: number): void {
  const c = data.capture;
  flow.heading(ATA_SECTIONS[4]);
  flow.para(
    `A pedido do solicitante acima qualificado, em ${when(c.startedAt)}, o navegador isolado do serviço ${data.serviceName} (${c.browser}) acessou o endereço solicitado, que respondeu com o código HTTP ${c.status} no endereço final indicado na seção 4. A página apresentava o título:`,
  );
  flow.quote(c.title || '(sem título)', 300);
  if ('text' in data.visibleText) {
    const total = [...dataText(data.visibleText.text, Number.MAX_SAFE_INTEGER)].length;
    flow.para(
      total > ATA_EXCERPT_MAX_CHARS
        ? `Trecho do texto visível da página (os primeiros ${ATA_EXCERPT_MAX_CHARS} de ${total} caracteres; o texto integral está no arquivo WACZ):`
        : `Texto visível da página (${total} caracteres):`,
    );
    flow.quote(data.visibleText.text, ATA_EXCERPT_MAX_CHARS);
  } else {
    flow.para(`O texto visível da página não foi transcrito: ${data.visibleText.unavailable}.`);
  }
  const shot = c.screenshot;
  flow.para(
    screenshotPages > 0
      ? `A imagem da página inteira (${shot.width} × ${shot.height} pixels CSS${shot.truncated ? ', cortada na altura máxima da captura' : ''}) segue ao final desta minuta, em ${screenshotPages} página(s) numerada(s) “Captura de tela, parte n de ${screenshotPages}”.`
      : 'A imagem da página não acompanha esta minuta (excluída ou grande demais para imprimir); ela está no arquivo WACZ.',
  );
}

/** Section 6: everything the capture could not get, so that the narration is not read as complete. */
function drawMissing(flow: AtaFlow, data: AtaDraftData): void {
  const m = data.missing;
  flow.heading(ATA_SECTIONS[5]);
  flow.field('Requisições bloqueadas', String(m.blocked.length));
  flow.list(m.blocked, 'Nenhuma.', (b) => flow.quote(`${b.url} — ${b.reason}`));
  flow.field('Requisições com falha', String(m.failed.length));
  flow.list(m.failed, 'Nenhuma.', (f) => flow.quote(`${f.url} — ${f.reason}`));
  flow.field('Interrompidas no prazo', String(m.unfinished.length));
  flow.list(m.unfinished, 'Nenhuma.', (u) => flow.quote(u));
  flow.field('Conteúdos incompletos', String(m.bodies.length));
  flow.list(m.bodies, 'Nenhum.', (b) => flow.quote(`${b.url} — ${b.kind}: ${b.reason}`));
}

/** Section 7: addresses, TLS per origin, names resolved, the archive and its anchors. */
function drawAnnex(flow: AtaFlow, data: AtaDraftData): void {
  const w = data.wacz;
  flow.heading(ATA_SECTIONS[6]);
  flow.field('IP do servidor', data.capture.serverIp ?? 'não registrado');
  flow.field('IP de saída', data.capture.egressIp ?? 'não declarado pelo operador');
  flow.para(`Conexões TLS (${data.tls.length} origem(ns)):`, { role: 'bold' });
  flow.list(data.tls, 'Nenhuma origem acessada por TLS.', (t) =>
    flow.quote(
      `${t.origin} — ${t.protocol ?? 'protocolo não informado'}; titular ${t.subject}; emissor ${t.issuer}; válido até ${t.validTo}; cadeia de ${t.chainLength} certificado(s); SHA-256 ${t.sha256 ?? 'não informado'}`,
    ),
  );
  flow.para(`Resolução de nomes (${data.dns.length} resposta(s)):`, { role: 'bold' });
  flow.list(data.dns, 'Nenhuma.', (d) =>
    flow.quote(`${d.host} — ${d.outcome}: ${d.addresses.join(', ') || '—'}`),
  );
  flow.para('Arquivo da captura (WACZ, assinado pelo serviço):', { role: 'bold' });
  flow.dataField('Nome', w.fileName, 200);
  flow.field('Número de série', w.serialNumber);
  flow.field('SHA-256', w.sha256, true);
  flow.field('Tamanho', `${w.bytes} bytes`);
  flow.field(
    'Anexo',
    w.attached
      ? `anexado a este PDF como arquivo associado (${w.fileName})`
      : `não anexado (maior que ${w.attachMaxBytes} bytes): identificado pelo SHA-256 e pelo número de série acima`,
  );
  flow.para('Âncoras e carimbos do tempo do SHA-256 do arquivo:', { role: 'bold' });
  flow.list(data.anchors, 'Nenhuma ainda: a ancoragem pode estar pendente.', (a) =>
    flow.para(`${a.label}: ${a.value}`),
  );
}

/** Sections 8 and 9: the limits of what is attested, and the slots the tabelião fills. */
function drawClosing(flow: AtaFlow): void {
  flow.heading(ATA_SECTIONS[7]);
  flow.para(
    'Esta ata atesta a existência e o modo de existir do conteúdo acima no momento da captura, tal como foi apresentado ao navegador do serviço a partir das conexões registradas. Não atesta a veracidade do conteúdo, nem quem o escreveu ou publicou, nem que outras pessoas o viram da mesma forma em outro momento, lugar ou conta de acesso.',
  );
  flow.heading(ATA_SECTIONS[8]);
  flow.para(
    'Lida e achada conforme, a ata é assinada pelo solicitante (ou o tabelião certifica como foi solicitada) e pelo tabelião. Espaços a preencher pela serventia:',
  );
  flow.slot('Selo de fiscalização');
  flow.slot('MNE');
  flow.slot('Livro');
  flow.slot('Folha');
  flow.slot('Assinatura do solicitante', 30);
  flow.slot('Tabelião / escrevente', 30);
}

/** The screenshot's pages: the image at the page width, cut across pages by clipping. */
function screenshotCanvases(fonts: FontSet, image: { width: number; height: number }): Canvas[] {
  const sliceH = TOP - 20 - BOTTOM;
  // The page width, unless the image would need more pages than the bound: then narrower, whole.
  const scale = Math.min(CONTENT_W / image.width, (SCREENSHOT_MAX_PAGES * sliceH) / image.height);
  const width = image.width * scale;
  const total = image.height * scale;
  const count = Math.max(1, Math.ceil(total / sliceH - 1e-9));
  const pages: Canvas[] = [];
  for (let i = 0; i < count; i += 1) {
    const page = new Canvas(fonts, FONT_NAMES);
    page.text(MARGIN_X, TOP, 'bold', 10, `Captura de tela, parte ${i + 1} de ${count}`, ACCENT);
    const clipTop = TOP - 12;
    page.image(IMAGE_NAME, MARGIN_X, clipTop - total + i * sliceH, width, total, {
      y: clipTop - sliceH,
      h: sliceH,
    });
    page.rect(
      MARGIN_X,
      clipTop - Math.min(sliceH, total - i * sliceH),
      width,
      Math.min(sliceH, total - i * sliceH),
      { stroke: MUTED },
    );
    pages.push(page);
  }
  return pages;
}

/**
 * Renders the draft of `data` as PDF/A-3b (ISO 19005-3, `makePdfA3b`): sections 1 to 9 (`ATA_SECTIONS`), then the
 * screenshot over at most `SCREENSHOT_MAX_PAGES` pages (decoded within `SCREENSHOT_MAX_PIXELS`; one past it is left
 * out, the narration saying so); the WACZ as an associated file (`/AFRelationship /Source`) when `data.wacz.attached`.
 * The file is the same for the same data (its /ID and dates come from the request).
 * @returns the PDF bytes and the number of pages.
 */
export async function renderAtaDraft(data: AtaDraftData): Promise<{ pdf: Uint8Array; pages: number }> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  makePdfA3b(
    doc,
    {
      title: `Minuta de ata notarial — ${data.wacz.serialNumber}`,
      subject: 'Minuta de ata notarial de conteúdo de origem digital (captura web)',
      author: data.serviceName,
      creator: data.serviceName,
      producer: data.serviceName,
      created: data.requestedAt,
      modified: data.requestedAt,
    },
    `ata ${data.wacz.serialNumber} ${data.requestedAt.toISOString()}`,
  );
  doc.setLanguage('pt-BR');
  const fonts = await embedFonts(doc);
  const shot = data.screenshot ? placeScreenshot(doc, { screenshot: data.screenshot }, 'decode') : undefined;
  const image = shot?.kind === 'image' ? shot : undefined;
  const shotPages = image ? screenshotCanvases(fonts, image) : [];
  const flow = new AtaFlow(fonts);
  drawHead(flow, data);
  drawNarration(flow, data, shotPages.length);
  drawMissing(flow, data);
  drawAnnex(flow, data);
  drawClosing(flow);
  const context = doc.context;
  const fontDict = context.obj({
    [FONT_NAMES.sans]: fonts.sans.pdf.ref,
    [FONT_NAMES.bold]: fonts.bold.pdf.ref,
    [FONT_NAMES.mono]: fonts.mono.pdf.ref,
  });
  const all = [...flow.pages, ...shotPages];
  all.forEach((canvas, i) => {
    const page = PDFPage.create(doc);
    const box = context.obj([0, 0, A4[0], A4[1]]);
    canvas.textRight(A4[0] - MARGIN_X, 30, 'sans', 7.5, `${i + 1} / ${all.length}`, MUTED);
    page.node.set(PDFName.of('MediaBox'), box);
    page.node.set(PDFName.of('CropBox'), box);
    page.node.set(PDFName.of('Rotate'), context.obj(0));
    const xobject = image && i >= flow.pages.length ? { XObject: { [IMAGE_NAME]: image.ref } } : {};
    page.node.set(PDFName.of('Resources'), context.obj({ Font: fontDict, ...xobject }));
    page.node.set(PDFName.of('Contents'), context.register(context.flateStream(canvas.toString())));
    doc.addPage(page);
  });
  if (data.wacz.attached && data.waczBytes) attachFile(doc, waczAttachment(data));
  const pdf = await doc.save({
    useObjectStreams: false,
    addDefaultPage: false,
    updateFieldAppearances: false,
  });
  return { pdf, pages: all.length };
}

/** The WACZ as the draft's associated file: the source of every fact the draft states. */
function waczAttachment(data: AtaDraftData): PdfAttachment {
  return {
    name: data.wacz.fileName,
    bytes: data.waczBytes ?? new Uint8Array(),
    mimeType: 'application/wacz',
    description: `Arquivo WACZ da captura ${data.wacz.serialNumber}, SHA-256 ${data.wacz.sha256}`,
    relationship: 'Source',
    modified: data.requestedAt,
  };
}
