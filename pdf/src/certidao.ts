import { formatBrasiliaAndUtc } from '@notary/shared';
import { PDFDocument, type PDFFont, type PDFPage, rgb } from 'pdf-lib';
import { attachFile } from './attachment';
import { A4 } from './certificate-page';
import { embedFonts, type FontFace, type FontSet } from './fonts';
import { makePdfA3b } from './pdfa';
import { coverText, wrapText } from './text';

/**
 * The certidão de permanência: a PDF/A-3b document in Portuguese stating what a monitoring of one URL saw over
 * its period (first and last time seen, each availability window and each gap with its cause, what changed
 * between consecutive runs, every run's serial, hash and chain link), with the run chain attached as
 * `monitor-chain.json` (ISO 32000-2 14.13, `/AFRelationship /Data`) for `notary-verify`. Bytes in, bytes out:
 * what it states is computed by the caller.
 */

/** A stretch of consecutive runs with the same observation. */
export interface CertidaoWindow {
  /** `available`: the page was seen; `unavailable`: a gap, with its cause; `not-observed`: the service refused. */
  kind: 'available' | 'unavailable' | 'not-observed';
  firstRun: number;
  lastRun: number;
  from: Date;
  to: Date;
  /** The cause in words (Portuguese) for a gap or a refusal. */
  cause?: string;
}

/** What changed from one run to the next one that saw the page. */
export interface CertidaoChange {
  fromRun: number;
  toRun: number;
  /** Line counts and the first changed lines of the visible text; null when the text is the same. */
  text: {
    addedLines: number;
    removedLines: number;
    lines: Array<{ kind: 'added' | 'removed'; text: string }>;
    tooLarge: boolean;
  } | null;
  /** Share of screenshot pixels changed (0..1), and the changed region marked (PNG); null when not compared. */
  pixels: { share: number; marked: Uint8Array | null } | null;
}

/** One run as the certidão lists it. */
export interface CertidaoRun {
  run: number;
  observedAt: Date;
  outcome: 'seen' | 'unavailable';
  /** The cause in words for an unavailable run. */
  cause: string | null;
  serialNumber: string | null;
  waczSha256: string | null;
  previousWaczSha256: string | null;
}

/** Everything the certidão states. */
export interface CertidaoData {
  serviceName: string;
  issuedAt: Date;
  monitorId: string;
  url: string;
  interval: string;
  period: string;
  /** `active`, `finished`, `cancelled`, `failed`, in words. */
  state: string;
  startedAt: Date;
  firstSeen: Date | null;
  lastSeen: Date | null;
  windows: CertidaoWindow[];
  changes: CertidaoChange[];
  runs: CertidaoRun[];
  /** Whether every chain link holds (`checkMonitorChain`), as the service found it when issuing. */
  chainHolds: boolean;
  /** `monitor-chain.json` (`MonitorChainSchema`), attached as is. */
  chainJson: Uint8Array;
}

/** The attached chain's file name. */
export const CERTIDAO_CHAIN_FILE = 'monitor-chain.json';

const MARGIN = 50;
const INK = rgb(0.1, 0.1, 0.12);
const MUTED = rgb(0.38, 0.4, 0.45);
const RED = rgb(0.7, 0.05, 0.05);
const GREEN = rgb(0.05, 0.45, 0.15);

/** A top-down writer of flowing text over as many A4 pages as needed. */
class Flow {
  private page: PDFPage;
  private y = 0;
  private readonly width = A4[0] - 2 * MARGIN;

  constructor(
    private readonly doc: PDFDocument,
    private readonly fonts: FontSet,
  ) {
    this.page = this.newPage();
  }

  private newPage(): PDFPage {
    this.page = this.doc.addPage([A4[0], A4[1]]);
    this.y = A4[1] - MARGIN;
    return this.page;
  }

  private room(height: number): void {
    if (this.y - height < MARGIN) this.newPage();
  }

  /** Wrapped text in `role`, `size` points. */
  text(
    text: string,
    options: { role?: 'sans' | 'bold' | 'mono'; size?: number; color?: ReturnType<typeof rgb> } = {},
  ): void {
    const face: FontFace = this.fonts[options.role ?? 'sans'];
    const size = options.size ?? 9.5;
    const covered = coverText(face, text).text;
    for (const line of wrapText(face, covered, size, this.width)) {
      this.room(size * 1.35);
      this.y -= size * 1.35;
      this.page.drawText(line, {
        x: MARGIN,
        y: this.y,
        size,
        font: face.pdf as PDFFont,
        color: options.color ?? INK,
      });
    }
  }

  heading(text: string): void {
    this.gap(8);
    this.text(text, { role: 'bold', size: 12 });
    this.gap(2);
  }

  gap(points: number): void {
    this.y -= points;
  }

  /** A PNG image, scaled to the text width at most and to `maxHeight` points. */
  async image(png: Uint8Array, maxHeight: number): Promise<void> {
    const image = await this.doc.embedPng(png);
    const scale = Math.min(1, this.width / image.width, maxHeight / image.height);
    const w = image.width * scale;
    const h = image.height * scale;
    this.room(h + 6);
    this.y -= h + 4;
    this.page.drawImage(image, { x: MARGIN, y: this.y, width: w, height: h });
    this.y -= 2;
  }
}

const percent = (share: number) =>
  `${(share * 100).toLocaleString('pt-BR', { maximumFractionDigits: 2, minimumFractionDigits: 2 })}%`;
const when = (at: Date) => formatBrasiliaAndUtc(at, 'pt');

/**
 * Renders the certidão of `data` as a PDF/A-3b file (Portuguese), `monitor-chain.json` attached.
 * @throws Error when a marked region is not a PNG pdf-lib reads (they are written by the service).
 */
export async function renderCertidao(data: CertidaoData): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  makePdfA3b(
    doc,
    {
      title: 'Certidão de permanência',
      subject: `Permanência de ${data.url} (monitoramento ${data.monitorId})`,
      author: data.serviceName,
      creator: data.serviceName,
      producer: data.serviceName,
      created: data.issuedAt,
      modified: data.issuedAt,
    },
    `certidao ${data.monitorId} ${data.issuedAt.toISOString()}`,
  );
  doc.setLanguage('pt-BR');
  const fonts = await embedFonts(doc);
  const flow = new Flow(doc, fonts);
  flow.text('CERTIDÃO DE PERMANÊNCIA', { role: 'bold', size: 16 });
  flow.text(`${data.serviceName} · emitida em ${when(data.issuedAt)}`, { color: MUTED });
  flow.gap(6);
  flow.text(`Endereço monitorado: ${data.url}`, { role: 'bold' });
  flow.text(
    `Monitoramento ${data.monitorId}: uma captura a cada ${data.interval}, por ${data.period}, a partir de ` +
      `${when(data.startedAt)}. Situação: ${data.state}. Capturas realizadas: ${data.runs.length}.`,
  );
  writeSummary(flow, data);
  writeWindows(flow, data.windows);
  await writeChanges(flow, data.changes);
  writeRuns(flow, data);
  flow.heading('O que esta certidão não atesta');
  flow.text(
    'Esta certidão atesta o que o serviço obteve do endereço em cada captura, nos instantes indicados. Não ' +
      'atesta a veracidade do conteúdo, quem o escreveu, nem o que foi servido entre duas capturas ou a outros ' +
      'visitantes.',
  );
  attachFile(doc, {
    name: CERTIDAO_CHAIN_FILE,
    bytes: data.chainJson,
    mimeType: 'application/json',
    description:
      'Cadeia das capturas do monitoramento (notary-monitor-chain/1), verificável com notary-verify',
    relationship: 'Data',
    modified: data.issuedAt,
  });
  return doc.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
}

function writeSummary(flow: Flow, data: CertidaoData): void {
  flow.heading('Resumo');
  flow.text(
    data.firstSeen
      ? `Primeira vez vista: ${when(data.firstSeen)}`
      : 'A página não foi vista em nenhuma captura.',
  );
  if (data.lastSeen) flow.text(`Última vez vista: ${when(data.lastSeen)}`);
  flow.text(
    data.chainHolds
      ? 'Cadeia: cada captura registra o SHA-256 do arquivo WACZ da anterior; todos os elos conferem.'
      : 'Cadeia: há elos que não conferem (capturas removidas ou fora de ordem). Verifique com notary-verify.',
    { color: data.chainHolds ? GREEN : RED },
  );
}

function writeWindows(flow: Flow, windows: readonly CertidaoWindow[]): void {
  flow.heading('Janelas de disponibilidade e lacunas');
  for (const w of windows) {
    const runs = w.firstRun === w.lastRun ? `captura ${w.firstRun}` : `capturas ${w.firstRun} a ${w.lastRun}`;
    const span = `de ${when(w.from)} a ${when(w.to)}`;
    if (w.kind === 'available') flow.text(`Disponível (${runs}), ${span}.`, { color: GREEN });
    else if (w.kind === 'unavailable')
      flow.text(`Indisponível (${runs}), ${span}. Causa: ${w.cause}.`, { color: RED });
    else flow.text(`Não observada (${runs}), ${span}: ${w.cause}.`, { color: MUTED });
  }
}

async function writeChanges(flow: Flow, changes: readonly CertidaoChange[]): Promise<void> {
  flow.heading('Alterações entre capturas consecutivas');
  if (changes.length === 0) flow.text('Nenhuma alteração do texto visível nem da imagem entre as capturas.');
  for (const c of changes) {
    flow.gap(4);
    flow.text(`Da captura ${c.fromRun} para a captura ${c.toRun}:`, { role: 'bold' });
    if (c.text?.tooLarge)
      flow.text('Texto visível: alterado extensamente (diferença grande demais para listar).');
    else if (c.text) {
      flow.text(
        `Texto visível: ${c.text.addedLines} linha(s) incluída(s), ${c.text.removedLines} removida(s).`,
      );
      for (const line of c.text.lines) {
        flow.text(`${line.kind === 'added' ? '+ ' : '− '}${line.text}`, {
          role: 'mono',
          size: 8,
          color: line.kind === 'added' ? GREEN : RED,
        });
      }
    } else flow.text('Texto visível: sem alteração.');
    if (c.pixels) {
      flow.text(`Imagem: ${percent(c.pixels.share)} dos pixels alterados.`);
      if (c.pixels.marked) {
        flow.text('Região alterada (marcada em vermelho) na captura posterior:', { color: MUTED, size: 8 });
        await flow.image(c.pixels.marked, 220);
      }
    }
  }
}

function writeRuns(flow: Flow, data: CertidaoData): void {
  flow.heading('Capturas, números de série e elos da cadeia');
  for (const r of data.runs) {
    const seen = r.outcome === 'seen' ? 'vista' : `indisponível (${r.cause ?? 'causa não registrada'})`;
    flow.text(`Captura ${r.run} · ${when(r.observedAt)} · ${seen}`, { role: 'bold', size: 8.5 });
    if (r.serialNumber) flow.text(`Número de série ${r.serialNumber}`, { size: 8 });
    if (r.waczSha256) flow.text(`SHA-256 do WACZ ${r.waczSha256}`, { role: 'mono', size: 7.5 });
    flow.text(`Elo anterior ${r.previousWaczSha256 ?? '(primeiro arquivo da cadeia)'}`, {
      role: 'mono',
      size: 7.5,
      color: MUTED,
    });
  }
}
