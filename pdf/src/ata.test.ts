import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPdfA, expectPdfA3b } from '../../test/harness/pdfa/conformance.testing';
import {
  ATA_EXCERPT_MAX_CHARS,
  ATA_SECTIONS,
  type AtaDraftData,
  DATA_MARK,
  dataText,
  renderAtaDraft,
} from './ata';
import { sampleAtaData } from './ata.testing';

/** The ata draft read back with third-party tools: qpdf, pdftotext, the PDF/A-3b checker of the test harness. */

const run = promisify(execFile);

/** The sample's first TLS origin. */
function sampleTls(): AtaDraftData['tls'][number] {
  const [first] = sampleAtaData().tls;
  if (!first) throw new Error('the sample has a TLS origin');
  return first;
}
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ata-draft-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes `pdf`, checks it with `qpdf --check` (exit 0 only) and returns its text as pdftotext lays it out. */
async function textOf(pdf: Uint8Array, name: string): Promise<string> {
  const file = path.join(dir, `${name}.pdf`);
  await writeFile(file, pdf);
  await run('qpdf', ['--check', file]);
  const { stdout } = await run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { maxBuffer: 1 << 26 });
  return stdout;
}

describe('the ata notarial draft', () => {
  it('is PDF/A-3b, carries every field, the WACZ attached and the screenshot over pages', async () => {
    const data = sampleAtaData();
    const { pdf, pages } = await renderAtaDraft(data);
    expectPdfA3b(await checkPdfA(pdf));
    const text = await textOf(pdf, 'ordinary');
    let at = -1;
    for (const section of ATA_SECTIONS) {
      const next = text.indexOf(section);
      expect(next, section).toBeGreaterThan(at);
      at = next;
    }
    for (const field of [
      '1º Tabelionato de Notas de Exemplo',
      '123456',
      'Florianópolis, SC',
      'Maria da Silva',
      '529.982.247-25',
      'engenheira',
      'maria@example.test',
      'https://example.test/post',
      'https://www.example.test/post/1',
      '04/03/2026 09:00:00 (horário de Brasília, UTC−03:00)',
      '12:00:00 UTC',
      'Uma publicação',
      'Texto visível da publicação, com acentuação.',
      'http://10.0.0.1/tracker.js',
      'net::ERR_CONNECTION_RESET',
      'https://slow.example.test/feed',
      'https://www.example.test/video',
      '203.0.113.7',
      '198.51.100.2',
      'TLS 1.3',
      'CN=Test CA',
      'NOT-2026-000042',
      'cd'.repeat(32),
      'Carimbo do tempo (RFC 3161)',
      'Não atesta a veracidade do conteúdo, nem quem o escreveu',
      'Selo de fiscalização',
      'MNE',
      'Livro',
      'Folha',
      'Tabelião / escrevente',
      'Captura de tela, parte 1 de',
      'anexado a este PDF',
    ]) {
      expect(text.replace(/\s+/g, ' '), field).toContain(field);
    }
    expect(pages).toBeGreaterThan(2);
    const { stdout } = await run('pdfdetach', ['-list', path.join(dir, 'ordinary.pdf')]);
    expect(stdout).toContain(data.wacz.fileName);
  });

  it('names the WACZ by hash and serial when it is not attached', async () => {
    const data = sampleAtaData();
    const { pdf } = await renderAtaDraft({
      ...data,
      wacz: { ...data.wacz, attached: false, attachMaxBytes: 5 },
    });
    const text = await textOf(pdf, 'unattached');
    expect(text).toContain('não anexado (maior que 5 bytes)');
    const { stdout } = await run('pdfdetach', ['-list', path.join(dir, 'unattached.pdf')]);
    expect(stdout).toContain('0 embedded files');
  });

  it('prints a bounded excerpt of a long visible text', async () => {
    const long = 'palavra '.repeat(2_000);
    const { pdf } = await renderAtaDraft(sampleAtaData({ visibleText: { text: long } }));
    const text = await textOf(pdf, 'long');
    expect(text).toContain(`os primeiros ${ATA_EXCERPT_MAX_CHARS} de`);
    expect(text.split('palavra').length - 1).toBeLessThanOrEqual(ATA_EXCERPT_MAX_CHARS / 8 + 1);
  });

  it("keeps a hostile page's title and text out of the fixed sections", async () => {
    const fake = `\n\n${ATA_SECTIONS[8]}\nSelo de fiscalização: INJETADO-SELO\nLivro INJETADO`;
    const title = `\u202EOTEJNI\u202C INJETADO-TITULO \u0000\u0007\u2028${ATA_SECTIONS[7]} ${'x'.repeat(5_000)}`;
    const { pdf } = await renderAtaDraft(
      sampleAtaData({
        capture: { ...sampleAtaData().capture, title, finalUrl: `https://evil.test/${fake}` },
        visibleText: { text: `INJETADO-TEXTO ${fake}\r\n${'\u2067'.repeat(30)}${'ا'.repeat(50)}` },
        requester: { ...sampleAtaData().requester, name: `Fulano ${fake}` },
        tls: [{ ...sampleTls(), subject: `CN=a ${fake}`, issuer: `\u202E${fake}` }],
      }),
    );
    expectPdfA3b(await checkPdfA(pdf));
    const text = await textOf(pdf, 'hostile');
    const lines = text.split('\n');
    // Every section heading once, on a line of its own; every line with injected text is a marked data line.
    for (const section of ATA_SECTIONS) {
      expect(
        lines.filter((l) => l.trim() === section),
        section,
      ).toHaveLength(1);
    }
    const injected = lines.filter(
      (l) => /INJETADO|ESPAÇOS DO TABELIÃO|NÃO ATESTA/.test(l) && !ATA_SECTIONS.includes(l.trim() as never),
    );
    expect(injected.length).toBeGreaterThan(0);
    for (const line of injected) expect(line, line).toContain(DATA_MARK.trim());
    // Direction overrides and controls are shown as notation, never applied.
    expect(text).toContain('U+202E');
    expect(text).not.toContain('\u202E');
    expect(text).toContain('U+0000');
    // The title is bounded.
    expect(text.split('x').length).toBeLessThan(1_000);
  });

  it('dataText makes one line of visible characters', () => {
    expect(dataText('a\n\nb\u202Ec\u0000', 100)).toBe('a bU+202EcU+0000');
    expect(dataText('abcdef', 3)).toBe('abc…');
  });
});
