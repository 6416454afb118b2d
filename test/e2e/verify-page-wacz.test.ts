/**
 * The verify page checks a signed web capture too: `verify.html`, built as `npm run build -w @notary/verify`
 * builds it and opened from `file://` in Chromium, given a WACZ (made here by hand, signed in the anonymous
 * form) shows it verified with its seven checks and the capture's facts, a copy with one byte changed failed,
 * everything in Portuguese (then English), the JSON and CSV downloads holding it, and no request made.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { untranslatedTexts } from '@notary/verify/messages/messages.testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageResult } from '../../verifier/web/captures';
import { launchChromium } from '../harness/chromium';
import { handWacz, tamperedWacz } from '../harness/hand-wacz';

const exec = promisify(execFile);
const VERIFIER_DIR = path.resolve(import.meta.dirname, '../../verifier');

let work: string;
let browser: Browser;
let page: Page;
const requests: string[] = [];
const pageErrors: string[] = [];

/** Chooses `files` (paths under the work folder) on the page, runs it and waits for the result. */
async function verify(files: string[]): Promise<void> {
  await page.getByTestId('clear').click();
  await page.getByTestId('files').setInputFiles(files.map((f) => path.join(work, f)));
  await page.getByTestId('run').click();
  await page.getByTestId('summary').waitFor();
}

/** The text of the page's download `id` (`json`, `csv`), saved as a user's click saves it. */
async function downloaded(id: 'json' | 'csv'): Promise<string> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId(`download-${id}`).click(),
  ]);
  return readFile(await download.path(), 'utf8');
}

async function downloadedJson(): Promise<PageResult> {
  return JSON.parse(await downloaded('json')) as PageResult;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-verify-page-wacz-'));
  await exec(process.execPath, ['build/build.ts', '--out', work], { cwd: VERIFIER_DIR });
  const wacz = handWacz();
  await writeFile(path.join(work, 'captura.wacz'), wacz);
  await writeFile(path.join(work, 'copia.wacz'), tamperedWacz(wacz));
  await writeFile(path.join(work, 'notas.txt'), 'no proof for this one');
  browser = await launchChromium();
  const context = await browser.newContext({ locale: 'pt-BR', acceptDownloads: true });
  page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  page.setDefaultTimeout(60_000);
  await page.goto(`file://${path.join(work, 'verify.html')}`);
  // The shipped roots as anchors: passed to checks 4 and 5, which the anonymous form does not have.
  await page.getByTestId('trust-icp-brasil').check();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('verify.html and a web capture', () => {
  it('verifies a signed WACZ alone: seven checks, the capture facts, exit status 0, in Portuguese', async () => {
    await verify(['captura.wacz']);
    expect(pageErrors).toEqual([]);
    const summary = page.getByTestId('summary');
    expect(await summary.getAttribute('data-outcome')).toBe('passed');
    expect(await summary.getAttribute('data-exit-code')).toBe('0');
    const item = page.locator('[data-testid="item"][data-file="captura.wacz"]');
    expect(await item.getAttribute('data-kind')).toBe('wacz');
    expect(await item.getAttribute('data-outcome')).toBe('passed');
    const checks = item.locator('[data-testid^="check-"]');
    expect(await checks.evaluateAll((els) => els.map((el) => el.getAttribute('data-status')))).toEqual([
      'passed',
      'passed',
      'passed',
      'not-run',
      'not-run',
      'passed',
      'passed',
    ]);
    expect(await item.locator('.badge').first().textContent()).toBe('Verificado');
    expect(await item.getByTestId('check-1').textContent()).toContain(
      '1. Hashes do pacote (datapackage.json)',
    );
    expect(await item.getByTestId('check-7').textContent()).toContain('Registro da captura (capture.json)');
    expect(await item.getByTestId('exit-line').textContent()).toBe(
      'Como notary-verify captura.wacz no terminal: código de saída 0.',
    );
    expect(await item.getByTestId('fact-url').textContent()).toBe('https://example.test/page');
    // Times in Brasília time and UTC (the report keeps RFC 3339 UTC).
    expect(await item.getByTestId('fact-time').textContent()).toBe(
      'de 02/01/2026 00:04:00 (horário de Brasília, UTC\u221203:00) · 2026-01-02 03:04:00 UTC a ' +
        '02/01/2026 00:04:05 (horário de Brasília, UTC\u221203:00) · 2026-01-02 03:04:05 UTC',
    );
    expect(await item.getByTestId('fact-tls').textContent()).toMatch(
      /^CN=example\.test; emissor CN=Example Test CA, O=Example; válido de 31\/12\/2025 21:00:00 \(horário de Brasília, UTC\u221203:00\) · 2026-01-01 00:00:00 UTC a 31\/03\/2026 21:00:00 \(horário de Brasília, UTC\u221203:00\) · 2026-04-01 00:00:00 UTC; SHA-256 [0-9a-f]{64}$/,
    );
    const evidence = (await item.getByTestId('evidence').allTextContents()).join('\n');
    expect(evidence).toContain('SHA-256 da chave pública');
    expect(evidence).toContain('endereço final arquivado');
    expect(evidence).not.toContain('public key SHA-256');
    // Every text of the report the page shows has its Portuguese (checked on the downloaded report).
    const result = await downloadedJson();
    expect(result.captures).toHaveLength(1);
    const report = result.captures[0]?.report;
    expect(report).toBeDefined();
    expect(untranslatedTexts(report ? [report] : [])).toEqual([]);
    const lines = (await item.getByTestId('summary-line').allTextContents()).join('\n');
    expect(lines).toContain('os 4 arquivos listados em datapackage.json têm seu SHA-256 e tamanho');
  });

  it('fails a copy with one byte changed, beside a file without proof, and downloads both', async () => {
    await verify(['copia.wacz', 'notas.txt']);
    expect(pageErrors).toEqual([]);
    const summary = page.getByTestId('summary');
    expect(await summary.getAttribute('data-outcome')).toBe('failed');
    expect(await summary.getAttribute('data-exit-code')).toBe('1');
    const item = page.locator('[data-testid="item"][data-file="copia.wacz"]');
    expect(await item.getAttribute('data-outcome')).toBe('failed');
    expect(await item.getAttribute('data-failed-at')).toBe('1');
    expect(await item.getAttribute('data-exit-code')).toBe('1');
    expect(await item.locator('.badge').first().textContent()).toBe('Não confere');
    expect(await item.getByTestId('check-1').getAttribute('data-status')).toBe('failed');
    expect(await item.getByTestId('check-1').textContent()).toContain('falhou: indexes/index.cdx');
    expect(await page.getByTestId('skipped').textContent()).toContain(
      'notas.txt: sem certificado nem recibo',
    );
    const result = await downloadedJson();
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 1, skipped: [{ name: 'notas.txt' }] });
    const csv = await downloaded('csv');
    expect(csv.split('\r\n')[0]).toContain(',check_6,check_7,problem');
    expect(csv).toMatch(/\r\ncopia\.wacz,copia\.wacz,wacz,failed,1,1,,[0-9a-f]{64},failed,/);
    expect(csv).toContain('\r\nnotas.txt,,,skipped:no-proof,');

    await page.getByTestId('lang-en').click();
    expect(await item.locator('.badge').first().textContent()).toBe('Failed');
    expect(await item.getByTestId('check-1').textContent()).toContain('1. Package hashes (datapackage.json)');
    expect(await item.getByTestId('check-1').textContent()).toContain('failed: indexes/index.cdx');
    await page.getByTestId('lang-pt').click();
  });

  it('made no request but to the page itself and its own downloads', () => {
    expect(requests.filter((u) => !u.startsWith('file://') && !u.startsWith('blob:'))).toEqual([]);
  });
});
