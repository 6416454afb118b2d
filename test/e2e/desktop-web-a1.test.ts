/**
 * The tabelião's A1 file in the web client (`/app/`, served by the real service), driven in Debian's Chromium by
 * Playwright: a `.p12` the suite made with `openssl pkcs12 -export` (OpenSSL 3 defaults: PBES2, AES-256-CBC)
 * from the ICP-Brasil-like revocation PKI's signer is opened in the page, which signs the attributes the service
 * prepared and completes the session. The service accepts it (pdfsig shows both signatures, the service's valid;
 * OpenSSL verifies the tabelião's CMS to the PKI's root with its policy), and no request body the page sent holds
 * the password, the file or the private key. A wrong password is refused in the page, before anything is sent.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotarySignatureSession } from '../../server/src/db/entities';
import { launchChromium } from '../harness/chromium';
import { mailbox, mailedCode } from '../harness/dev-mailbox';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { opensslVerifySignature } from '../harness/pdf-cms';
import { createTestPki, type TestPki } from '../harness/pki';
import { notarySigningEnv, type RevocationPki, startRevocationPki } from '../harness/revocation-pki';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

const run = promisify(execFile);
const PASSWORD = 'senha-do-A1-7391';

describe('the A1 file signs in the web client (Chromium) against the real service', () => {
  let pki: TestPki;
  let rpki: RevocationPki;
  let t: TestService;
  let tmp: string;
  let browser: Browser;
  let page: Page;
  let p12Path: string;
  let docId: string;
  /** Every request the page sent: method, URL and body (latin1, so binary bodies are kept byte for byte). */
  const sent: { method: string; url: string; body: string }[] = [];
  const email = freshEmail('a1');

  beforeAll(async () => {
    [pki, rpki] = await Promise.all([createTestPki(), startRevocationPki()]);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'desktop-web-a1-'));
    p12Path = path.join(tmp, 'tabeliao.p12');
    await run('openssl', [
      'pkcs12',
      '-export',
      '-inkey',
      rpki.signer.keyPath,
      '-in',
      rpki.signer.chainPath,
      '-name',
      'Tabelião de Teste',
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      p12Path,
    ]);
    t = await startTestService('pglite', {
      ...notarySigningEnv(pki, rpki),
      MAIL_DEV: '1',
    });
    const bearer = await t.token(email);
    const upload = await uploadFile(t.url, bearer, path.join(FIXTURES_DIR, 'files/contrato.txt'));
    docId = String(upload.body.id);
    browser = await launchChromium(['--disable-quic']);
    const context = await browser.newContext({ locale: 'pt-BR' });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('request', (r) => {
      sent.push({ method: r.method(), url: r.url(), body: r.postDataBuffer()?.toString('latin1') ?? '' });
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await rpki?.stop();
    await pki?.dispose();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('signs in, refuses a wrong password in the page, then signs with the right one', async () => {
    await page.goto(`${t.url}/app/`);
    await page.getByLabel('E-mail').fill(email);
    const known = await mailbox(t.dataDir);
    await page.getByRole('button', { name: 'Enviar código' }).click();
    const code = await mailedCode(t.dataDir, email, known);
    await page.getByLabel('Código recebido por e-mail').fill(code);
    await page.getByRole('button', { name: 'Entrar', exact: true }).click();
    await page.getByTestId('user-email').waitFor();
    await page.goto(`${t.url}/app/#/documents/${docId}`);
    const card = page.getByTestId('notary-signature');
    await card.waitFor();

    await card.getByTestId('sign-file').setInputFiles(p12Path);
    await card.getByTestId('sign-password').fill('not-the-password');
    await card.getByTestId('sign-submit').click();
    await expect
      .poll(() => card.getByRole('alert').textContent())
      .toContain('Senha do certificado incorreta.');
    expect(sent.filter((r) => r.url.includes('notarySignature'))).toEqual([]);

    await card.getByTestId('sign-password').fill(PASSWORD);
    await card.getByTestId('sign-submit').click();
    await card.getByTestId('sign-result').waitFor({ timeout: 60_000 });
    expect(await card.getByTestId('sign-result').textContent()).toContain('Notary LTV Signer');
  }, 120_000);

  it("the service completed the session: pdfsig shows both signatures, OpenSSL verifies the tabelião's CMS", async () => {
    const rows = await t.service.deps.db.fork().find(NotarySignatureSession, { document: docId });
    const completed = rows.filter((r) => r.completedAt !== null);
    expect(completed).toHaveLength(1);
    const pdf = Buffer.from(completed[0]?.signedPdf as Buffer);
    const pdfPath = path.join(tmp, 'both.pdf');
    await writeFile(pdfPath, pdf);
    const sig = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, pdfPath]).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    // The service's, the tabelião's, then the service's document timestamp (the long-term work after completion).
    expect(sig.stdout.match(/^Signature #\d+:/gm)?.slice(0, 2)).toEqual(['Signature #1:', 'Signature #2:']);
    expect(sig.stdout.split('Signature #2')[0]).toContain('Signature Validation: Signature is Valid.');
    expect(sig.stdout).toContain('Signature Field Name: NotarySignature');

    // The tabelião's CMS over its byte range, to the ICP-Brasil-like root, with the policy attribute.
    const printed = await opensslVerifySignature(pdf, 1, rpki.caChainPath, tmp);
    // AD-RT, the policy the form starts on.
    expect(printed).toContain('2.16.76.1.7.1.12.1');
  });

  it('no request body holds the password, the file or the private key; the chain and value went', async () => {
    const p12 = await readFile(p12Path);
    const { stdout: pkcs8 } = await run('openssl', ['pkey', '-in', rpki.signer.keyPath, '-outform', 'DER'], {
      encoding: 'buffer',
    });
    const middle = (b: Buffer) => b.subarray(Math.floor(b.length / 2) - 24, Math.floor(b.length / 2) + 24);
    const forbidden = [
      PASSWORD,
      middle(p12).toString('latin1'),
      middle(p12).toString('base64'),
      middle(p12).toString('hex'),
      middle(pkcs8).toString('latin1'),
      middle(pkcs8).toString('base64'),
      middle(pkcs8).toString('hex'),
      rpki.signer.keyPem.split('\n')[5] ?? 'no such line',
    ];
    const bodies = sent.map((r) => r.body).join('\n');
    for (const secret of forbidden) expect(bodies.includes(secret)).toBe(false);
    const calls = sent.filter((r) => r.url.includes('notarySignature'));
    expect(calls.map((r) => r.url.match(/notarySignature\w+/)?.[0])).toEqual([
      'notarySignaturePrepare',
      'notarySignatureComplete',
    ]);
    // What did go: the chain (the signer's certificate, base64 DER) and the signature value.
    const leafBase64 = rpki.signer.certPem.split('\n').slice(1, 3).join('');
    expect(calls[0]?.body).toContain(leafBase64.slice(0, 60));
    expect(calls[1]?.body).toMatch(/"signature":"[A-Za-z0-9+/=]{300,}"/);
  });

  it('the verify screen lists both signers of the certificate the tabelião signed', async () => {
    const pdfPath = path.join(tmp, 'both.pdf');
    const anonymous = await browser.newContext({ locale: 'pt-BR' });
    const pub = await anonymous.newPage();
    pub.setDefaultTimeout(30_000);
    await pub.goto(`${t.url}/app/`);
    await pub.getByRole('button', { name: 'Verificar um arquivo sem entrar' }).click();
    const pickInto = async (zone: string, button: string, file: string) => {
      const chooser = pub.waitForEvent('filechooser');
      await pub.getByTestId(zone).getByRole('button', { name: button }).click();
      await (await chooser).setFiles(file);
    };
    await pickInto('verify-dropzone', 'Escolher arquivo', path.join(FIXTURES_DIR, 'files/contrato.txt'));
    await pickInto('certificate-dropzone', 'Escolher certificado', pdfPath);
    const signers = pub.getByTestId('pades-signer');
    await expect.poll(() => signers.count(), { timeout: 60_000 }).toBe(2);
    expect(await signers.nth(1).textContent()).toContain('Notary LTV Signer');
    expect(await signers.nth(1).textContent()).toMatch(/AD-R[BT]/);
    await anonymous.close();
  }, 120_000);
});
