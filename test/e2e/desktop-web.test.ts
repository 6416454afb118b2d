/**
 * The desktop client's renderer, built as the web client and served by the real service at `/app/`, driven in Debian's
 * Chromium by Playwright. The service runs on its embedded defaults (PGlite, file storage, in-process identity, the
 * development mailbox) with the in-process anchoring devnets, plus the test TSA and a signing certificate so that the
 * timestamp and the signed certificate are real. `SESSION_TTL_SECONDS=30` makes the session JWT renew several times
 * during the run.
 *
 * Screenshots of the main screens go to `test/e2e/screenshots/` (git-ignored).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { uploadBytes } from '../harness/anchored';
import { launchChromium } from '../harness/chromium';
import { mailbox, mailedCode } from '../harness/dev-mailbox';
import { FIXTURES_DIR, sha256sum } from '../harness/fixtures';
import { api } from '../harness/http';
import { type IpfsTestGateway, startIpfsGateway } from '../harness/ipfs-gateway';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg } from '../harness/tenants';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';
import { startSite, type TestSite } from '../harness/web-site';

const exec = promisify(execFile);
const SCREENSHOTS = path.resolve(import.meta.dirname, 'screenshots');
const UPLOADED = path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf');
const OTHER = path.join(FIXTURES_DIR, 'pdfs/hello_world_rotated.pdf');
/** Documents the client asks per page (`PAGE_SIZE` of the renderer's Documents screen). */
const PAGE_SIZE = 50;
/** How long a test waits for a signed certificate's download (the test itself may take 60 s). */
const CERTIFICATE_WAIT_MS = 50_000;

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A console message with the resource it is about (a failed request names no URL in its text). */
function consoleLine(m: { text(): string; location(): { url: string } }): string {
  return `${m.text()} [${m.location().url}]`;
}

describe('desktop client (web build) in Chromium against the real service', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  /** A trustless IPFS gateway and a web site on loopback, for the Notarize screen's two other intakes. */
  let gateway: IpfsTestGateway;
  let site: TestSite;
  let t: TestService | undefined;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const email = freshEmail('tabeliao');
  let documentId = '';
  let serial = '';
  /** Where the test keeps the saved certificate and a tampered copy of the file. */
  let workDir = '';
  let certificatePath = '';
  const pageErrors: string[] = [];
  /** Console errors other than the expected 401 of `/api/auth/token` while signed out (CSP violations...). */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    await rm(SCREENSHOTS, { recursive: true, force: true });
    await mkdir(SCREENSHOTS, { recursive: true });
    workDir = await mkdtemp(path.join(os.tmpdir(), 'desktop-web-'));
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    gateway = await startIpfsGateway();
    site = await startSite((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Edital 12/2026</title><h1>Edital 12/2026</h1><p>Prazo: 30 dias.</p>');
    });
    t = await startTestService('pglite', {
      IPFS_GATEWAYS: gateway.url,
      CAPTURE_ALLOW_HOSTS: '127.0.0.1',
      ANCHORING: 'devnet',
      MAIL_DEV: '1',
      SESSION_TTL_SECONDS: '30',
      ...signingEnv(pki, tsa),
    });
    url = t.url;
    browser = await launchChromium(['--disable-quic']);
    context = await browser.newContext({
      acceptDownloads: true,
      locale: 'pt-BR',
      viewport: { width: 1360, height: 860 },
    });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401/.test(m.text())) consoleErrors.push(consoleLine(m));
    });
    page.setDefaultTimeout(15_000);
  });

  // The steps build on each other: after a failure the rest would only time out.
  let failed = false;
  beforeEach((ctx) => {
    if (failed) ctx.skip();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true;
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await tsa?.stop();
    await gateway?.close();
    await site?.close();
    await pki?.dispose();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('signs in with the e-mail code read from the development mailbox (Portuguese by default)', async () => {
    await page.goto(`${url}/app/`);
    await expect.poll(() => page.locator('h1').first().textContent()).toBe('Entrar');
    await shot(page, '01-sign-in');
    await page.getByLabel('E-mail').fill(email);
    const known = await mailbox(t?.dataDir ?? '');
    await page.getByRole('button', { name: 'Enviar código' }).click();
    const code = await mailedCode(t?.dataDir ?? '', email, known);
    await page.getByLabel('Código recebido por e-mail').fill(code);
    await page.getByRole('button', { name: 'Entrar', exact: true }).click();
    await page.getByText('Nenhum documento neste espaço ainda.').waitFor();
    expect(await page.getByTestId('user-email').textContent()).toBe(email);
    await shot(page, '02-documents-empty');
  });

  it('hashes a picked file locally and refuses to upload without consent', async () => {
    await page.getByRole('link', { name: 'Notarizar' }).click();
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Escolher arquivos' }).click();
    await (await chooser).setFiles(UPLOADED);
    const item = page.getByTestId('queue-item');
    await expect.poll(() => item.getAttribute('data-stage')).toBe('ready');
    // The hash shown was computed in the browser; it is the file's sha256sum.
    expect(await item.locator('.queue-hash').textContent()).toBe(await sha256sum(UPLOADED));
    const submit = page.getByTestId('submit-upload');
    expect(await submit.isDisabled()).toBe(true);
    await page.getByTestId('consent-item').check();
    expect(await submit.isDisabled()).toBe(false);
    await page.getByTestId('consent-item').uncheck();
    expect(await submit.isDisabled()).toBe(true);
    await shot(page, '03-notarize-consent');
    // Nothing reached the server.
    const listed = await api<{ documents: unknown[] }>(url, '/api/documents', {
      token: await t?.token(email),
    });
    expect(listed.body.documents).toEqual([]);
  });

  it('uploads with consent, then the detail view follows both anchors until registered', async () => {
    await page.getByTestId('consent-all').check();
    await page.getByTestId('submit-upload').click();
    const item = page.getByTestId('queue-item');
    await expect.poll(() => item.getAttribute('data-stage'), { timeout: 30_000 }).toBe('done');
    serial = (await item.getByTestId('queue-stage').textContent())?.replace(/^.*: /, '') ?? '';
    expect(serial).toMatch(/^U[0-9A-Z]{5}-[0-9A-HJKMNP-TV-Z]{10}$/);
    await shot(page, '04-notarize-done');
    await page.getByRole('button', { name: 'Ver registro' }).click();
    await page.getByTestId('document-detail').waitFor();
    documentId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    expect(await page.getByTestId('detail-serial').textContent()).toBe(serial);
    expect(await page.getByTestId('detail-hash').textContent()).toBe(await sha256sum(UPLOADED));
    await expect
      .poll(() => page.getByTestId('detail-status').locator('[data-status]').getAttribute('data-status'), {
        timeout: 45_000,
        interval: 500,
      })
      .toBe('registered');
    expect(await page.getByTestId('anchor-evm').getAttribute('data-status')).toBe('registered');
    expect(await page.getByTestId('anchor-stacks').getAttribute('data-status')).toBe('registered');
    expect(await page.getByTestId('anchor-evm').textContent()).toMatch(/0x[0-9a-f]{64}/);
    await shot(page, '05-detail-registered');
  });

  it('saves the certificate (a signed PDF) and the RFC 3161 timestamp token', async () => {
    // The download starts once the signed certificate is issued: a worker's first stamping of a 14-page PDF, a
    // TSA token and the long-term validation attempts, longer than Playwright's default wait on a busy machine.
    const certDownload = page.waitForEvent('download', { timeout: CERTIFICATE_WAIT_MS });
    await page.getByTestId('save-certificate').click();
    const cert = await certDownload;
    expect(cert.suggestedFilename()).toBe(`certificado-${serial}.pdf`);
    const pdf = await readFile((await cert.path()) ?? '');
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.includes(Buffer.from('/ETSI.CAdES.detached'))).toBe(true);
    certificatePath = path.join(workDir, `certificado-${serial}.pdf`);
    await cert.saveAs(certificatePath);
    await expect
      .poll(() => page.getByTestId('certificate-result').textContent())
      .toContain('assinado pelo serviço');

    const tsrDownload = page.waitForEvent('download');
    await page.getByTestId('save-timestamp').click();
    const tsr = await tsrDownload;
    expect(tsr.suggestedFilename()).toBe(`${serial}.tsr`);
    const { stdout } = await exec('openssl', [
      'ts',
      '-verify',
      '-digest',
      await sha256sum(UPLOADED),
      '-in',
      (await tsr.path()) ?? '',
      '-CAfile',
      pki.caChainPath,
    ]);
    expect(stdout).toContain('Verification: OK');
    await page.getByTestId('timestamp-result').waitFor();
  });

  it('verifies a local file against the record: match, then mismatch', async () => {
    const pick = async (file: string) => {
      const chooser = page.waitForEvent('filechooser');
      await page
        .getByTestId('verify-local-dropzone')
        .getByRole('button', { name: 'Escolher arquivo' })
        .click();
      await (await chooser).setFiles(file);
    };
    await pick(UPLOADED);
    const result = page.getByTestId('compare-result');
    await expect.poll(() => result.getAttribute('data-match')).toBe('true');
    expect(await result.textContent()).toContain('O arquivo confere com este registro.');
    await shot(page, '06-detail-verify-match');
    await pick(OTHER);
    await expect.poll(() => result.getAttribute('data-match')).toBe('false');
    expect(await result.textContent()).toContain(await sha256sum(OTHER));
    await result.scrollIntoViewIfNeeded();
    await shot(page, '07-detail-verify-mismatch');
  });

  it('shows an already notarized file instead of uploading it again', async () => {
    await page.getByRole('link', { name: 'Notarizar' }).click();
    await page.getByRole('button', { name: 'Limpar concluídos' }).click();
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Escolher arquivos' }).click();
    await (await chooser).setFiles(UPLOADED);
    const item = page.getByTestId('queue-item');
    await expect.poll(() => item.getAttribute('data-stage')).toBe('existing');
    expect(await item.textContent()).toContain(`Já registrado: ${serial}`);
    // Nothing to send: no consent box, no send button.
    expect(await page.getByTestId('submit-upload').count()).toBe(0);
    expect(await page.getByTestId('consent-all').count()).toBe(0);
  });

  it('lists the tenant documents with search and status filter, in English too', async () => {
    await page.getByRole('link', { name: 'Documentos' }).click();
    const rows = page.getByTestId('document-row');
    await expect.poll(() => rows.count()).toBe(1);
    const search = page.getByPlaceholder('Buscar por nome, número de série, hash ou CID');
    // Searched by the server: a serial (any case), a hash prefix, a part of the file name.
    for (const q of [serial.toLowerCase(), (await sha256sum(UPLOADED)).slice(0, 20), 'tracemonkey']) {
      await search.fill(q);
      await expect.poll(() => rows.count()).toBe(1);
    }
    await search.fill('no-such-document');
    await expect.poll(() => rows.count()).toBe(0);
    await search.fill('');
    await page.getByRole('tab', { name: 'Em registro' }).click();
    await expect.poll(() => rows.count()).toBe(0);
    await page.getByRole('tab', { name: 'Registrados' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await shot(page, '08-documents');
    await page.locator('.lang-switch').getByRole('button', { name: 'EN' }).click();
    await page.getByRole('tab', { name: 'Registered' }).waitFor();
    await shot(page, '09-documents-en');
    await page.locator('.lang-switch').getByRole('button', { name: 'PT' }).click();
  });

  it('switches to an organization where the user is a reader: upload is not offered', async () => {
    await makeOrg(t as TestService, 'Cartório Central', [
      [freshEmail('dono'), 'owner'],
      [email, 'reader'],
    ]);
    await page.reload();
    const select = page.getByTestId('tenant-select');
    await expect.poll(() => select.locator('option').count()).toBe(2);
    const orgValue = await select.locator('option').nth(1).getAttribute('value');
    await select.selectOption(orgValue ?? '');
    await page.getByText('Nenhum documento neste espaço ainda.').waitFor();
    expect(await page.locator('.role-chip').textContent()).toBe('leitor');
    await page.getByRole('link', { name: 'Notarizar' }).click();
    await page.getByText('Seu papel neste espaço (leitor) não permite enviar documentos.').waitFor();
    await shot(page, '09b-organization-reader');
    await select.selectOption('');
    await expect.poll(() => page.getByTestId('document-row').count()).toBe(1);
  });

  it('verifies files publicly without signing in', async () => {
    const anonymous = await browser.newContext({ locale: 'pt-BR', viewport: { width: 1360, height: 860 } });
    const pub = await anonymous.newPage();
    await pub.goto(`${url}/app/`);
    await pub.getByRole('button', { name: 'Verificar um arquivo sem entrar' }).click();
    const pick = async (file: string) => {
      const chooser = pub.waitForEvent('filechooser');
      await pub.getByRole('button', { name: 'Escolher arquivo' }).click();
      await (await chooser).setFiles(file);
    };
    // Dropped, not picked: the drop zone reads the DataTransfer's file.
    // (A string: the test's own TypeScript has no DOM types.)
    const base64 = (await readFile(OTHER)).toString('base64');
    const transfer = await pub.evaluateHandle(`(() => {
      const bytes = Uint8Array.from(atob('${base64}'), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'dropped.pdf', { type: 'application/pdf' }));
      return dt;
    })()`);
    await pub.getByTestId('verify-dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    const result = pub.getByTestId('verify-result');
    await expect.poll(() => result.getAttribute('data-found')).toBe('false');
    expect(await result.textContent()).toContain('dropped.pdf');
    expect(await result.textContent()).toContain('Nenhum registro para este arquivo');
    await pick(UPLOADED);
    await expect.poll(() => result.getAttribute('data-found')).toBe('true');
    expect(await pub.getByTestId('verify-serial').textContent()).toBe(serial);
    await shot(pub, '10-verify-public');
    await anonymous.close();
  });

  it('checks a file against its certificate in the browser (checks 1 to 4 on the devnets): match, then a tampered file', async () => {
    const anonymous = await browser.newContext({ locale: 'pt-BR', viewport: { width: 1360, height: 1400 } });
    const pub = await anonymous.newPage();
    pub.on('pageerror', (e) => pageErrors.push(e.message));
    pub.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401/.test(m.text())) consoleErrors.push(consoleLine(m));
    });
    pub.setDefaultTimeout(30_000);
    await pub.goto(`${url}/app/`);
    await pub.getByRole('button', { name: 'Verificar um arquivo sem entrar' }).click();
    const panel = pub.getByTestId('certificate-check-panel');
    // The endpoints the service announces (GET /api/onchain/info): the devnets' own, on loopback.
    await panel.getByText('Endpoints das blockchains').click();
    await expect
      .poll(() => panel.getByTestId('endpoints-evm').inputValue())
      .toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await panel.getByTestId('endpoints-stacks').inputValue()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const pickInto = async (zone: string, button: string, file: string) => {
      const chooser = pub.waitForEvent('filechooser');
      await pub.getByTestId(zone).getByRole('button', { name: button }).click();
      await (await chooser).setFiles(file);
    };
    await pickInto('verify-dropzone', 'Escolher arquivo', UPLOADED);
    await pickInto('certificate-dropzone', 'Escolher certificado', certificatePath);
    const report = pub.getByTestId('certificate-check');
    await expect.poll(() => report.getAttribute('data-ok'), { timeout: 30_000 }).toBe('true');
    for (const id of [1, 2, 3, 4]) {
      expect(await pub.getByTestId(`check-${id}`).getAttribute('data-status')).toBe('passed');
    }
    // The certificate's signature is checked, its chain not (no trust anchor chosen): the proof is
    // incomplete, not "holds", as notary-verify without --trust-ca exits 3.
    expect(await pub.getByTestId('check-6').getAttribute('data-status')).toBe('partial');
    expect(await report.getAttribute('data-outcome')).toBe('incomplete');
    expect(await report.locator('h3').textContent()).toBe(
      'A prova não pôde ser conferida por inteiro (verificação 6)',
    );
    expect(await pub.getByTestId('check-3').textContent()).toContain('Atestação EVM (EAS)');
    // The checking core's summary in the reader's language, its data (the attestation UID) kept.
    expect(await pub.getByTestId('check-3').locator('.check-summary').textContent()).toMatch(
      /^a atestação 0x[0-9a-f]{8}… guarda a raiz/,
    );
    expect(await pub.getByTestId('verify-result').getAttribute('data-found')).toBe('true');
    await shot(pub, '10b-verify-certificate-match');

    // The same file with one byte changed: no record, and check 1 fails while the proof itself still holds.
    const bytes = await readFile(UPLOADED);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] ?? 0) ^ 0x01;
    const tampered = path.join(workDir, 'tracemonkey.pdf');
    await writeFile(tampered, bytes);
    await pickInto('verify-dropzone', 'Escolher arquivo', tampered);
    await expect.poll(() => report.getAttribute('data-failed-at'), { timeout: 30_000 }).toBe('1');
    expect(await report.getAttribute('data-ok')).toBe('false');
    expect(await pub.getByTestId('check-1').getAttribute('data-status')).toBe('failed');
    for (const id of [2, 3, 4]) {
      expect(await pub.getByTestId(`check-${id}`).getAttribute('data-status')).toBe('passed');
    }
    expect(await report.textContent()).toContain('A prova não confere (verificação 1)');
    await expect.poll(() => pub.getByTestId('verify-result').getAttribute('data-found')).toBe('false');
    await shot(pub, '10c-verify-certificate-tampered');

    // A PDF without a receipt is said so, not reported as a failed proof.
    await pickInto('certificate-dropzone', 'Escolher certificado', OTHER);
    await pub.getByTestId('certificate-unreadable').waitFor();
    expect(await pub.getByTestId('certificate-unreadable').textContent()).toContain('receipt.json');
    await anonymous.close();
  });

  it("checks the timestamp and the certificate's signature (5 and 6) offline: no anchor leaves the chains not checked, the test root picked as a PEM file passes them", async () => {
    // The certificate again, now that the document has its RFC 3161 token (issued when the .tsr was saved):
    // its receipt carries the token for check 5.
    await page.goto(`${url}/app/#/documents/${encodeURIComponent(documentId)}`);
    const download = page.waitForEvent('download', { timeout: CERTIFICATE_WAIT_MS });
    await page.getByTestId('save-certificate').click();
    const stampedCertificate = path.join(workDir, `certificado-${serial}-carimbo.pdf`);
    await (await download).saveAs(stampedCertificate);

    const anonymous = await browser.newContext({ locale: 'pt-BR', viewport: { width: 1360, height: 1600 } });
    const pub = await anonymous.newPage();
    pub.on('pageerror', (e) => pageErrors.push(e.message));
    pub.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401/.test(m.text())) consoleErrors.push(consoleLine(m));
    });
    // Every request the page makes: checks 5 and 6 add none (the chain endpoints are the devnets').
    const requested: string[] = [];
    pub.on('request', (r) => requested.push(r.url()));
    pub.setDefaultTimeout(30_000);
    await pub.goto(`${url}/app/`);
    await pub.getByRole('button', { name: 'Verificar um arquivo sem entrar' }).click();
    const panel = pub.getByTestId('certificate-check-panel');
    await expect
      .poll(() => panel.getByTestId('endpoints-evm').inputValue())
      .toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const evm = await panel.getByTestId('endpoints-evm').inputValue();
    const stacks = await panel.getByTestId('endpoints-stacks').inputValue();
    const pickInto = async (zone: string, button: string, files: string | string[]) => {
      const chooser = pub.waitForEvent('filechooser');
      await pub.getByTestId(zone).getByRole('button', { name: button }).click();
      await (await chooser).setFiles(files);
    };
    await pickInto('verify-dropzone', 'Escolher arquivo', UPLOADED);
    await pickInto('certificate-dropzone', 'Escolher certificado', stampedCertificate);
    const report = pub.getByTestId('certificate-check');
    await expect.poll(() => report.getAttribute('data-ok'), { timeout: 30_000 }).toBe('true');

    // No anchor (the default): the token and the signature are checked, their chains said not checked, so
    // the proof is incomplete (no check failed; notary-verify would exit 3), not "holds".
    expect(await pub.getByTestId('trust-none').isChecked()).toBe(true);
    expect(await report.getAttribute('data-outcome')).toBe('incomplete');
    expect(await report.getAttribute('data-exit-code')).toBe('3');
    expect(await report.locator('h3').textContent()).toBe(
      'A prova não pôde ser conferida por inteiro (verificação 5, 6)',
    );
    for (const id of [5, 6]) {
      const row = pub.getByTestId(`check-${id}`);
      expect(await row.getAttribute('data-status'), (await row.textContent()) ?? '').toBe('partial');
      expect(await pub.getByTestId(`chain-not-checked-${id}`).textContent()).toContain(
        'Cadeia de certificados não conferida',
      );
    }
    expect(await pub.getByTestId('check-5').textContent()).toContain('Carimbo do tempo (RFC 3161)');
    expect(await pub.getByTestId('check-6').textContent()).toContain('Assinatura do certificado (PAdES)');
    expect(await pub.getByTestId('pades-level').getAttribute('data-level')).toMatch(/^B-(T|LT|LTA)$/);
    await shot(pub, '10d-verify-certificate-no-anchor');

    // A picked file that holds no certificate is named, nothing is reported.
    await panel.getByText('Certificados em arquivos PEM').click();
    await pickInto('anchors-dropzone', 'Escolher arquivos PEM', OTHER);
    await expect
      .poll(() => pub.getByTestId('anchor-unusable').textContent())
      .toContain('hello_world_rotated.pdf não traz nenhum certificado em PEM');
    expect(await report.count()).toBe(0);

    // The test PKI's root: both chains are checked and hold.
    await pickInto('anchors-dropzone', 'Escolher arquivos PEM', pki.root.certPath);
    await expect
      .poll(() => pub.getByTestId('check-6').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('passed');
    expect(await pub.getByTestId('check-5').getAttribute('data-status')).toBe('passed');
    for (const id of [1, 2, 3, 4]) {
      expect(await pub.getByTestId(`check-${id}`).getAttribute('data-status')).toBe('passed');
    }
    expect(await report.getAttribute('data-ok')).toBe('true');
    expect(await report.getAttribute('data-outcome')).toBe('passed');
    expect(await report.locator('h3').textContent()).toBe('A prova confere');
    expect(await pub.getByTestId('chain-not-checked-6').count()).toBe(0);
    expect(await panel.getByTestId('anchors-dropzone').textContent()).toContain('root.pem');
    await shot(pub, '10e-verify-certificate-test-root');

    // Judged at a date before the test PKI existed: the signer was not valid then, check 6 fails.
    await pub.getByTestId('judge-at').fill('2001-06-01T12:00');
    // Shown in Brasília time and UTC (June 2001: no daylight saving, UTC−03:00), whatever the browser's zone.
    expect(await pub.getByTestId('judge-at-utc').textContent()).toMatch(
      /^Ou seja: \d\d\/0[56]\/2001 \d\d:\d\d:00 \(horário de Brasília, UTC\u221203:00\) · 2001-0[56]-\d\d \d\d:\d\d:00 UTC$/,
    );
    await pub.getByRole('button', { name: 'Conferir novamente' }).click();
    await expect.poll(() => report.getAttribute('data-failed-at'), { timeout: 30_000 }).toBe('6');
    expect(await pub.getByTestId('check-5').getAttribute('data-status')).toBe('passed');
    expect(await pub.getByTestId('pades-level').textContent()).toMatch(
      /julgado em \d\d\/0[56]\/2001 .*horário de Brasília/,
    );
    await pub.getByTestId('judge-at').fill('');

    // The ICP-Brasil roots (a chunk of the web client, loaded on first use): the test PKI is not under them.
    await pub.getByTestId('trust-icp-brasil').check();
    await expect
      .poll(() => pub.getByTestId('check-5').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('failed');
    expect(await pub.getByTestId('check-6').getAttribute('data-status')).toBe('failed');
    expect(await report.getAttribute('data-failed-at')).toBe('5');

    // Back to no anchor: the chains are not checked again.
    await pub.getByTestId('trust-none').check();
    await expect
      .poll(() => pub.getByTestId('check-6').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('partial');

    const origins = new Set(requested.filter((r) => /^https?:/.test(r)).map((r) => new URL(r).origin));
    expect([...origins].sort()).toEqual(
      [...new Set([url, evm, stacks].map((u) => new URL(u).origin))].sort(),
    );
    await anonymous.close();
  });

  it('says the session expired when the session cookie is gone, and offers to sign in again', async () => {
    await page.getByRole('link', { name: 'Documentos' }).click();
    // The browser loses the 7-day session cookie (as when it expires); the page still holds a JWT, and the
    // next scheduled renewal (at most ~20 s with a 30 s JWT) is refused.
    await context.clearCookies();
    await page.getByTestId('session-expired').waitFor({ timeout: 40_000 });
    expect(await page.getByTestId('session-expired').textContent()).toContain('Sua sessão expirou');
    expect(await page.getByLabel('E-mail').inputValue()).toBe(email);
    await shot(page, '11-session-expired');
    const known = await mailbox(t?.dataDir ?? '');
    await page.getByRole('button', { name: 'Enviar código' }).click();
    await page
      .getByLabel('Código recebido por e-mail')
      .fill(await mailedCode(t?.dataDir ?? '', email, known));
    await page.getByRole('button', { name: 'Entrar', exact: true }).click();
    await expect.poll(() => page.getByTestId('document-row').count()).toBe(1);
    expect(documentId).not.toBe('');
  });

  it('imports from IPFS and captures a web page from the Notarize screen (local checks, consent, record)', async () => {
    await page.getByRole('link', { name: 'Notarizar' }).click();
    const bytes = Buffer.from(`ata da reunião ${Date.now()}`);
    const cid = (await gateway.addFile(bytes, 'v1')).toString();
    await page.getByTestId('ipfs-open').click();
    const ipfs = page.getByTestId('ipfs-import');
    // A path instead of a bare CID: a sentence with the CID to use, and no way to send.
    await ipfs.getByTestId('ipfs-cid').fill(`/ipfs/${cid}`);
    expect(await ipfs.getByTestId('ipfs-cid-help').textContent()).toContain(cid);
    expect(await ipfs.getByTestId('ipfs-submit').isDisabled()).toBe(true);
    await ipfs.getByTestId('ipfs-cid').fill(cid);
    await ipfs.getByTestId('ipfs-name').fill('ata.txt');
    expect(await ipfs.getByTestId('ipfs-submit').isDisabled()).toBe(true);
    await ipfs.getByTestId('ipfs-consent').check();
    await ipfs.getByTestId('ipfs-submit').click();
    await ipfs.getByTestId('ipfs-done').waitFor();
    expect(await ipfs.getByTestId('ipfs-done').textContent()).toMatch(/[A-Z0-9]+-[0-9A-Z]{10}/);
    // Consent is per item: cleared for the next import.
    expect(await ipfs.getByTestId('ipfs-consent').isChecked()).toBe(false);
    await shot(page, '12a-ipfs-import');

    await page.getByTestId('capture-open').click();
    const capture = page.getByTestId('capture-web');
    await capture.getByTestId('capture-url').fill('file:///etc/passwd');
    expect(await capture.getByTestId('capture-url-help').getAttribute('class')).toBe('field-problem');
    await capture.getByTestId('capture-url').fill(`${site.origin}/edital`);
    await capture.getByTestId('capture-consent').check();
    await capture.getByTestId('capture-submit').click();
    await capture.getByTestId('capture-done').waitFor({ timeout: 60_000 });
    expect(await capture.getByTestId('capture-done').textContent()).toContain(`${site.origin}/edital`);
    await expect
      .poll(() =>
        capture
          .getByTestId('capture-screenshot')
          .evaluate((img) => (img as { naturalWidth: number }).naturalWidth),
      )
      .toBeGreaterThan(0);
    await shot(page, '12b-capture-web');
    await page.getByRole('link', { name: 'Documentos' }).click();
    await expect.poll(() => page.getByTestId('document-row').count()).toBe(3);
  });

  it("monitors a page: the operator's minimum refused in a sentence, a run on the timeline, cancel after confirmation, the certidão saved and its chain checked on the Verify screen", async () => {
    await page.getByRole('link', { name: 'Monitoramentos' }).click();
    const form = page.getByTestId('monitor-new');
    await form.getByTestId('monitor-url').fill(`${site.origin}/edital`);
    await form.getByTestId('monitor-intervalAmount').fill('30');
    await form.getByTestId('monitor-intervalUnit').selectOption('minutes');
    await form.getByTestId('monitor-periodAmount').fill('1');
    await form.getByTestId('monitor-periodUnit').selectOption('days');
    await form.getByTestId('monitor-consent').check();
    // MONITOR_MIN_INTERVAL_SECONDS is at its default (3600): the server's refusal, said in human units.
    await form.getByTestId('monitor-submit').click();
    await expect
      .poll(() => form.getByTestId('monitor-error').textContent())
      .toContain('no mínimo 1 hora entre capturas');
    await form.getByTestId('monitor-intervalAmount').fill('6');
    await form.getByTestId('monitor-intervalUnit').selectOption('hours');
    expect(await form.textContent()).toContain('5 capturas planejadas');
    await form.getByTestId('monitor-submit').click();
    const detail = page.getByTestId('monitor-detail');
    await detail.waitFor();
    // The first run is at once: one capture of the page, on the timeline.
    await detail.getByTestId('monitor-run').first().waitFor({ timeout: 60_000 });
    expect(await detail.getByTestId('monitor-run-outcome').first().textContent()).toBe('Disponível');
    expect(await detail.getByTestId('monitor-run').first().textContent()).toMatch(/[A-Z0-9]+-[A-Z0-9]{10}/);
    await shot(page, '12d-monitor');
    await detail.getByTestId('monitor-cancel').click();
    await detail.getByTestId('monitor-cancel-confirm').waitFor();
    expect(await detail.getByTestId('monitor-state').getAttribute('data-state')).toBe('active');
    await detail.getByTestId('monitor-cancel-yes').click();
    await expect.poll(() => detail.getByTestId('monitor-state').getAttribute('data-state')).toBe('cancelled');

    const certidaoDownload = page.waitForEvent('download', { timeout: CERTIFICATE_WAIT_MS });
    await detail.getByTestId('monitor-certidao').click();
    const certidao = await certidaoDownload;
    expect(certidao.suggestedFilename()).toMatch(/^certidao-permanencia-[A-Z0-9]+-[A-Z0-9]{10}\.pdf$/);
    const certidaoPath = path.join(workDir, 'certidao.pdf');
    await certidao.saveAs(certidaoPath);
    expect((await readFile(certidaoPath)).subarray(0, 5).toString('latin1')).toBe('%PDF-');

    await page.getByRole('link', { name: 'Monitoramentos' }).click();
    await expect
      .poll(() => page.getByTestId('monitor-row').first().getAttribute('data-state'))
      .toBe('cancelled');

    // The certidão on the Verify screen: its chain checked in the page, as notary-verify chain does.
    await page.getByRole('link', { name: 'Verificar' }).click();
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Escolher arquivo', exact: true }).click();
    await (await chooser).setFiles(certidaoPath);
    const chain = page.getByTestId('certidao-chain');
    await expect.poll(() => chain.getAttribute('data-holds')).toBe('true');
    expect(await chain.getByTestId('certidao-chain-run').count()).toBe(1);
    expect(await chain.getByTestId('certidao-chain-verdict').textContent()).toBe(
      'cada captura indica o arquivo da anterior',
    );
    await shot(page, '12e-certidao-chain');
  });

  it('pages a large workspace (load more) and searches it on the server', async () => {
    const org = await makeOrg(t as TestService, 'Cartório Paginado', [[email, 'owner']]);
    const token = org.tokens[email] as string;
    // One page and five more: the list shows the first page, "load more" brings the rest.
    for (let i = 1; i <= PAGE_SIZE + 5; i++) {
      await uploadBytes(t as TestService, token, new TextEncoder().encode(`livro ${i}\n`), `livro-${i}.txt`);
    }
    await page.reload();
    const select = page.getByTestId('tenant-select');
    await expect.poll(() => select.locator('option').count()).toBe(3);
    await select.selectOption(org.id);
    const rows = page.getByTestId('document-row');
    await expect.poll(() => rows.count()).toBe(PAGE_SIZE);
    // Newest first: the last upload on top; livro-1 to livro-5 are not loaded yet.
    expect(await rows.first().locator('.file-name').textContent()).toBe(`livro-${PAGE_SIZE + 5}.txt`);
    // A search goes to the server: it finds a document that is not among the loaded ones.
    const search = page.getByPlaceholder('Buscar por nome, número de série, hash ou CID');
    await search.fill('livro-3.');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().locator('.file-name').textContent()).toBe('livro-3.txt');
    await search.fill('');
    await expect.poll(() => rows.count()).toBe(PAGE_SIZE);
    await page.getByTestId('load-more').click();
    await expect.poll(() => rows.count()).toBe(PAGE_SIZE + 5);
    expect(await page.getByTestId('load-more').count()).toBe(0);
    expect(await rows.last().locator('.file-name').textContent()).toBe('livro-1.txt');
    await shot(page, '12c-documents-paged');
    await select.selectOption('');
    // The three notarized earlier, the monitoring's run and its certidão.
    await expect.poll(() => rows.count()).toBe(5);
  });

  it('says clearly when the server is down', async () => {
    await t?.close();
    t = undefined;
    await page.getByRole('button', { name: 'Atualizar' }).click();
    const notice = page.locator('[role=alert][data-kind=offline]');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('Não foi possível contatar o servidor');
    await shot(page, '12-server-down');
  });

  it('never logged a page error or a Content-Security-Policy violation', () => {
    expect(pageErrors).toEqual([]);
    // The server-down step logs failed requests, and the browser logs the 404 with which the Stacks API says
    // it serves Hiro's v3 routes (check 4 asks for the all-zero txid to tell the kind of API); nothing else.
    const probe = /status of 404 .*\[http:\/\/127\.0\.0\.1:\d+\/extended\/v3\/transactions\/0x0{64}\]$/;
    // The monitoring step's interval under the operator's minimum: the server's 400, which the screen words.
    const refusedMonitor = /status of 400 .*\/trpc\/monitors\.create\]$/;
    expect(
      consoleErrors.filter(
        (e) => !/ERR_CONNECTION_REFUSED|Failed to fetch/.test(e) && !probe.test(e) && !refusedMonitor.test(e),
      ),
    ).toEqual([]);
  });
});
