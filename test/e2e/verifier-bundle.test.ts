/**
 * The verifier that travels without the service: `npm run build -w @notary/verify` gives the same bytes twice;
 * `notary-verify.mjs` copied alone into an empty folder runs on the machine's Node 20 (`/usr/bin/node`)
 * against the devnets, one file and `--dir` on a folder; the packed tarball installs with no registry and
 * `npx notary-verify` runs it; `verify.html` opened from `file://` in Chromium checks a certificate and a
 * tampered file in Portuguese and English, and no request goes anywhere but the endpoints typed. The
 * service serves the same files at `/verify/`, and the certificate names them.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DocumentDto } from '@notary/shared';
import type { BatchResult } from '@notary/verify/batch';
import { untranslatedTexts } from '@notary/verify/messages/messages.testing';
import type { VerifyReport } from '@notary/verify/report';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stampDocument, uploadBytes, waitRegistered } from '../harness/anchored';
import { launchChromium } from '../harness/chromium';
import { FIXTURES_DIR } from '../harness/fixtures';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';

const exec = promisify(execFile);
const VERIFIER_DIR = path.resolve(import.meta.dirname, '../../verifier');
/** The machine's own Node 20, not the project's Node 24. */
const NODE_20 = '/usr/bin/node';
/** A PATH where `node`, `npm` and `npx` are the machine's (Node 20), nothing of this repository. */
const SYSTEM_PATH = '/usr/bin:/bin';

let work: string;
let pki: TestPki;
let tsa: TestTsa;
let t: TestService;
let token: string;
let evmRpc: string;
let stacksApi: string;
/** The build under test (`node build/build.ts --out`), and a second one for the comparison. */
let built: string;
let rebuilt: string;
let buildOutput: string;
/** Random bytes, timestamped (check 5), with a signed separate certificate: all six checks apply. */
let single: { doc: DocumentDto; bytes: Uint8Array; certificate: Uint8Array };
/** A PDF whose signed certificate is stamped: the certificate alone holds it. */
let stamped: { doc: DocumentDto; bytes: Uint8Array; certificate: Uint8Array };
/** More random bytes, checked against its receipt. */
let other: { doc: DocumentDto; bytes: Uint8Array; receipt: string };
let caPath: string;

async function certificateOf(doc: DocumentDto, query: string): Promise<Uint8Array> {
  const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`certificate: HTTP ${res.status} ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** A new empty folder under the test's work directory. */
async function emptyFolder(name: string): Promise<string> {
  const dir = path.join(work, name);
  await mkdir(dir);
  return dir;
}

/** Runs `command` and returns its output and exit status (a non-zero status is not an error here). */
async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await exec(command, args, { ...options, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout: out.stdout, stderr: out.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    if (typeof err.code !== 'number') throw e;
    return { code: err.code, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-verifier-bundle-'));
  built = path.join(work, 'build-1');
  rebuilt = path.join(work, 'build-2');
  // Both builds at once: the second must not depend on the first.
  const [first] = await Promise.all([
    exec(process.execPath, ['build/build.ts', '--out', built], { cwd: VERIFIER_DIR }),
    exec(process.execPath, ['build/build.ts', '--out', rebuilt], { cwd: VERIFIER_DIR }),
  ]);
  buildOutput = first.stdout;
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  caPath = path.join(work, 'ca.pem');
  await writeFile(caPath, pki.caChainPem);
  t = await startTestService('pglite', {
    ANCHORING: 'devnet',
    ...signingEnv(pki, tsa),
  });
  token = await t.token('bundle@example.com');
  const devnets = t.service.anchoring?.devnets;
  if (!devnets) throw new Error('no devnets');
  evmRpc = devnets.evm.rpcUrl;
  stacksApi = devnets.stacks.url;

  const singleBytes = new Uint8Array(randomBytes(2345));
  const otherBytes = new Uint8Array(randomBytes(777));
  const pdfBytes = new Uint8Array(await readFile(path.join(FIXTURES_DIR, 'pdfs/hello_world_rotated.pdf')));
  const uploaded = [
    await uploadBytes(t, token, singleBytes, 'single.bin'),
    await uploadBytes(t, token, otherBytes, 'other.bin'),
    await uploadBytes(t, token, pdfBytes, 'contrato.pdf'),
  ];
  const [s, o, p] = await Promise.all(uploaded.map((d) => waitRegistered(t, token, d.id)));
  if (!s || !o || !p) throw new Error('not registered');
  await stampDocument(t, token, s.id);
  single = { doc: s, bytes: singleBytes, certificate: await certificateOf(s, '?signed=1&lang=en') };
  stamped = { doc: p, bytes: pdfBytes, certificate: await certificateOf(p, '?signed=1') };
  const receipt = await fetch(`${t.url}/api/documents/${o.id}/receipt`, {
    headers: { authorization: `Bearer ${token}` },
  });
  other = { doc: o, bytes: otherBytes, receipt: await receipt.text() };
}, 240_000);

afterAll(async () => {
  await t?.close();
  await tsa?.stop();
  await pki?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the build', () => {
  it('gives the same bytes twice, prints their SHA-256 and lists them in SHA256SUMS', async () => {
    const names = ['notary-verify.mjs', 'verify.html', 'SHA256SUMS'];
    expect((await readdir(built)).sort()).toEqual([...names].sort());
    for (const name of names) {
      expect(
        Buffer.compare(await readFile(path.join(built, name)), await readFile(path.join(rebuilt, name))),
        name,
      ).toBe(0);
    }
    const sums = await readFile(path.join(built, 'SHA256SUMS'), 'utf8');
    const check = await exec('sha256sum', ['-c', 'SHA256SUMS'], { cwd: built });
    expect(check.stdout).toBe('notary-verify.mjs: OK\nverify.html: OK\n');
    for (const line of sums.trim().split('\n')) {
      const [sum, name] = line.split('  ');
      expect(buildOutput).toContain(`${sum}  ${name}`);
    }
    // Nothing of the machine that built it: no absolute path of this checkout.
    const bundle = await readFile(path.join(built, 'notary-verify.mjs'), 'utf8');
    expect(bundle).not.toContain(VERIFIER_DIR);
    expect(bundle.startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('the page is one file: no external script, style, font or image, and its policy allows none', async () => {
    const html = await readFile(path.join(built, 'verify.html'), 'utf8');
    // One inline script and one inline style; the markup around them loads nothing (no src, no href).
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(html.match(/<style\b/g)).toHaveLength(1);
    const markup = html.replace(/<script>[\s\S]*<\/script>/, '').replace(/<style>[\s\S]*<\/style>/, '');
    expect(markup).not.toMatch(/\b(src|href|srcset|action)\s*=|<link\b|<iframe\b|<object\b/i);
    const styles = /<style>([\s\S]*)<\/style>/.exec(html)?.[1] ?? '';
    expect(styles).not.toMatch(/@import|@font-face|url\(/i);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).toContain('connect-src https: http://127.0.0.1:* http://localhost:*');
    expect(csp).not.toContain('unsafe');
  });
});

describe('notary-verify.mjs alone, on Node 20', () => {
  it('is Node 20', async () => {
    expect((await exec(NODE_20, ['--version'])).stdout).toMatch(/^v20\./);
  });

  it('verifies a file against its signed certificate, all six checks, with nothing else in the folder', async () => {
    const dir = await emptyFolder('alone');
    await copyFile(path.join(built, 'notary-verify.mjs'), path.join(dir, 'notary-verify.mjs'));
    await writeFile(path.join(dir, 'single.bin'), single.bytes);
    await writeFile(path.join(dir, 'cert.pdf'), single.certificate);
    await copyFile(caPath, path.join(dir, 'ca.pem'));
    const args = ['notary-verify.mjs', 'single.bin', '--certificate', 'cert.pdf', '--evm-rpc', evmRpc];
    const trust = ['--stacks-api', stacksApi, '--trust-ca', 'ca.pem', '--tsa-ca', 'ca.pem'];
    const out = await run(NODE_20, [...args, ...trust], { cwd: dir, env: { PATH: SYSTEM_PATH } });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toContain('[6] certificate signature (PAdES): PASSED');
    const json = await run(NODE_20, [...args, ...trust, '--json'], { cwd: dir, env: { PATH: SYSTEM_PATH } });
    const report = JSON.parse(json.stdout) as VerifyReport;
    expect(report.checks.map((c) => c.status)).toEqual([
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
    ]);
    expect(report).toMatchObject({ outcome: 'passed', exitCode: 0 });
    // The same file with a byte changed: failed at check 1, exit 1.
    const tampered = new Uint8Array(single.bytes);
    tampered[10] = (tampered[10] ?? 0) ^ 0x01;
    await writeFile(path.join(dir, 'single.bin'), tampered);
    const failed = await run(NODE_20, [...args, ...trust], { cwd: dir, env: { PATH: SYSTEM_PATH } });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('[1] file SHA-256: FAILED');
    // Without endpoints the chains cannot be checked: incomplete, exit 3; unusable input, exit 2.
    await writeFile(path.join(dir, 'single.bin'), single.bytes);
    const offline = await run(NODE_20, ['notary-verify.mjs', 'single.bin', '--certificate', 'cert.pdf'], {
      cwd: dir,
      env: { PATH: SYSTEM_PATH },
    });
    expect(offline.code, offline.stdout).toBe(3);
    const unusable = await run(NODE_20, ['notary-verify.mjs', 'single.bin', '--certificate', 'ca.pem'], {
      cwd: dir,
      env: { PATH: SYSTEM_PATH },
    });
    expect(unusable.code).toBe(2);
  });

  it('verifies a stamped certificate with nothing but notary-verify.mjs beside it (the certificate holds the file)', async () => {
    const dir = await emptyFolder('only-two');
    await copyFile(path.join(built, 'notary-verify.mjs'), path.join(dir, 'notary-verify.mjs'));
    await writeFile(path.join(dir, 'certificado.pdf'), stamped.certificate);
    // The trust anchors stay outside the folder: it holds exactly the two files.
    expect((await readdir(dir)).sort()).toEqual(['certificado.pdf', 'notary-verify.mjs']);
    const args = ['notary-verify.mjs', '--dir', '.', '--evm-rpc', evmRpc, '--stacks-api', stacksApi];
    const out = await run(NODE_20, [...args, '--trust-ca', caPath, '--tsa-ca', caPath, '--csv', '-'], {
      cwd: dir,
      env: { PATH: SYSTEM_PATH },
    });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stderr).toMatch(/^VERIFIED +certificado\.pdf {2}\(stamped certificate\)/m);
    expect(out.stderr).toMatch(/^SKIPPED +notary-verify\.mjs: no certificate or receipt beside it$/m);
    expect(out.stdout).toContain(
      `certificado.pdf,certificado.pdf,stamped-certificate,passed,0,,${stamped.doc.serialNumber},${stamped.doc.sha256Hash},passed,passed,passed,passed,not-run:not-applicable,passed,`,
    );
  });

  it('extend runs in the bundle (no TypeScript loader needed): a signed PDF gets a document timestamp', async () => {
    const dir = await emptyFolder('extend');
    await copyFile(path.join(built, 'notary-verify.mjs'), path.join(dir, 'notary-verify.mjs'));
    await writeFile(path.join(dir, 'cert.pdf'), stamped.certificate);
    await copyFile(caPath, path.join(dir, 'ca.pem'));
    const out = await run(
      NODE_20,
      // The test TSA and CA answer on loopback, which extend refuses unless told otherwise.
      [
        'notary-verify.mjs',
        'extend',
        'cert.pdf',
        '--tsa',
        tsa.url,
        '--tsa-ca',
        'ca.pem',
        '--out',
        'x.pdf',
        '--allow-private',
      ],
      { cwd: dir, env: { PATH: SYSTEM_PATH } },
    );
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const extended = await readFile(path.join(dir, 'x.pdf'));
    expect(
      Buffer.compare(extended.subarray(0, stamped.certificate.length), Buffer.from(stamped.certificate)),
    ).toBe(0);
  });

  it('--dir checks every file beside its proof, writes a CSV and a summary, and says which failed', async () => {
    const dir = await emptyFolder('batch');
    const folder = path.join(dir, 'evidence');
    await mkdir(folder);
    await copyFile(path.join(built, 'notary-verify.mjs'), path.join(dir, 'notary-verify.mjs'));
    await copyFile(caPath, path.join(dir, 'ca.pem'));
    await writeFile(path.join(folder, 'single.bin'), single.bytes);
    await writeFile(path.join(folder, 'single.bin.certificate.pdf'), single.certificate);
    await writeFile(path.join(folder, 'other.bin'), other.bytes);
    await writeFile(path.join(folder, 'other.bin.receipt.json'), other.receipt);
    // The stamped certificate alone, under the name the service gives it: it holds the original.
    await writeFile(path.join(folder, `certificado-${stamped.doc.serialNumber}.pdf`), stamped.certificate);
    await writeFile(path.join(folder, 'notes.txt'), 'no proof for this one');
    const common = [
      '--evm-rpc',
      evmRpc,
      '--stacks-api',
      stacksApi,
      '--trust-ca',
      'ca.pem',
      '--tsa-ca',
      'ca.pem',
    ];
    const ok = await run(NODE_20, ['notary-verify.mjs', '--dir', 'evidence', ...common], {
      cwd: dir,
      env: { PATH: SYSTEM_PATH },
    });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^VERIFIED +single\.bin {2}\(certificate single\.bin\.certificate\.pdf\)/m);
    expect(ok.stdout).toMatch(/^VERIFIED +other\.bin {2}\(receipt other\.bin\.receipt\.json\)/m);
    expect(ok.stdout).toMatch(/^VERIFIED +certificado-.*\.pdf {2}\(stamped certificate\)/m);
    expect(ok.stdout).toMatch(/^SKIPPED +notes\.txt: no certificate or receipt beside it$/m);
    expect(ok.stdout).toContain('3 checked: 3 verified, 0 failed, 0 incomplete, 0 unusable; 1 skipped');
    expect(ok.stderr).toBe('CSV: notary-verify.csv\n');
    const csv = (await readFile(path.join(dir, 'notary-verify.csv'), 'utf8')).split('\r\n');
    expect(csv[0]).toBe(
      'file,proof,proof_kind,outcome,exit_code,failed_at,serial_number,sha256,check_1,check_2,check_3,check_4,check_5,check_6,problem',
    );
    expect(csv).toContain(
      `single.bin,single.bin.certificate.pdf,certificate,passed,0,,${single.doc.serialNumber},${single.doc.sha256Hash},passed,passed,passed,passed,passed,passed,`,
    );
    expect(csv).toContain('notes.txt,,,skipped:no-proof,,,,,,,,,,,');

    // A tampered file beside its certificate: that item fails at 1, the batch exits 1.
    const tampered = new Uint8Array(single.bytes);
    tampered[0] = (tampered[0] ?? 0) ^ 0xff;
    await writeFile(path.join(folder, 'single.bin'), tampered);
    const failed = await run(NODE_20, ['notary-verify.mjs', '--dir', 'evidence', ...common, '--json'], {
      cwd: dir,
      env: { PATH: SYSTEM_PATH },
    });
    expect(failed.code).toBe(1);
    const result = JSON.parse(failed.stdout) as BatchResult;
    expect(result).toMatchObject({ outcome: 'failed', exitCode: 1 });
    expect(result.items.map((i) => [i.file, i.outcome, i.report?.failedAt ?? null])).toEqual([
      [`certificado-${stamped.doc.serialNumber}.pdf`, 'passed', null],
      ['other.bin', 'passed', null],
      ['single.bin', 'failed', 1],
    ]);
    // Everything the page would show of these reports is in Portuguese too.
    expect(untranslatedTexts(result.items.flatMap((i) => (i.report ? [i.report] : [])))).toEqual([]);
  });
});

describe('the packed tarball', () => {
  it('installs with no registry in an empty folder, and npx notary-verify runs it on Node 20', async () => {
    const packDir = await emptyFolder('pack');
    const packed = await exec(
      'npm',
      ['pack', '-w', '@notary/verify', '--pack-destination', packDir, '--json'],
      {
        cwd: path.resolve(VERIFIER_DIR, '..'),
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    if (!info) throw new Error('npm pack printed nothing');
    expect(info.files.map((f) => f.path).sort()).toEqual([
      'README.md',
      'bin/notary-verify.js',
      'dist/SHA256SUMS',
      'dist/notary-verify.mjs',
      'dist/verify.html',
      'package.json',
    ]);
    const dir = await emptyFolder('installed');
    // No registry: an address nothing answers at, and an empty cache.
    const env = {
      PATH: SYSTEM_PATH,
      HOME: dir,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_cache: path.join(dir, '.npm-cache'),
      npm_config_update_notifier: 'false',
    };
    const install = await run('npm', ['install', path.join(packDir, info.filename)], { cwd: dir, env });
    expect(install.code, install.stdout + install.stderr).toBe(0);
    expect(install.stdout).toContain('added 1 package');
    await writeFile(path.join(dir, 'single.bin'), single.bytes);
    await writeFile(path.join(dir, 'cert.pdf'), single.certificate);
    const out = await run(
      'npx',
      [
        'notary-verify',
        'single.bin',
        '--certificate',
        'cert.pdf',
        '--evm-rpc',
        evmRpc,
        '--stacks-api',
        stacksApi,
      ],
      { cwd: dir, env },
    );
    // Without trust anchors checks 5 and 6 are partial: incomplete, exit 3, nothing failed.
    expect(out.code, out.stdout + out.stderr).toBe(3);
    expect(out.stdout).toContain('[4] Stacks anchor: PASSED');
    expect(out.stdout).toContain('[5] RFC 3161 timestamp: PARTIAL');
  });
});

describe('verify.html from file:// in Chromium', () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const dir = await emptyFolder('page');
    await copyFile(path.join(built, 'verify.html'), path.join(dir, 'verify.html'));
    await writeFile(path.join(dir, 'single.bin'), single.bytes);
    await writeFile(path.join(dir, 'single.bin.certificate.pdf'), single.certificate);
    const tampered = new Uint8Array(single.bytes);
    tampered[5] = (tampered[5] ?? 0) ^ 0x10;
    await writeFile(path.join(dir, 'copia.bin'), tampered);
    await writeFile(path.join(dir, 'copia.bin.certificate.pdf'), single.certificate);
    await writeFile(path.join(dir, 'contrato-certificado.pdf'), stamped.certificate);
    browser = await launchChromium();
    const context = await browser.newContext({ locale: 'pt-BR' });
    page = await context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // Errors of the page and policy violations; a chain endpoint's 404 (a route a reader tries) is not one.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
    });
    page.setDefaultTimeout(60_000);
    await page.goto(`file://${path.join(dir, 'verify.html')}`);
    await page
      .getByTestId('files')
      .setInputFiles(
        [
          'single.bin',
          'single.bin.certificate.pdf',
          'copia.bin',
          'copia.bin.certificate.pdf',
          'contrato-certificado.pdf',
        ].map((f) => path.join(dir, f)),
      );
    await page.getByTestId('trust-files').check();
    await page.getByTestId('anchor-files').setInputFiles(caPath);
    await page.getByTestId('evm').fill(evmRpc);
    await page.getByTestId('stacks').fill(stacksApi);
    await page.getByTestId('run').click();
    await page.getByTestId('summary').waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('checks the certificate (all six passed), the stamped certificate alone, and fails the tampered file at 1', async () => {
    expect(pageErrors).toEqual([]);
    const summary = page.getByTestId('summary');
    expect(await summary.getAttribute('data-outcome')).toBe('failed');
    expect(await summary.getAttribute('data-exit-code')).toBe('1');
    const item = (file: string) => page.locator(`[data-testid="item"][data-file="${file}"]`);
    expect(await item('single.bin').getAttribute('data-outcome')).toBe('passed');
    const statuses = await item('single.bin')
      .locator('[data-testid^="check-"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-status')));
    expect(statuses).toEqual(['passed', 'passed', 'passed', 'passed', 'passed', 'passed']);
    expect(await item('contrato-certificado.pdf').getAttribute('data-outcome')).toBe('passed');
    expect(await item('copia.bin').getAttribute('data-outcome')).toBe('failed');
    expect(await item('copia.bin').getAttribute('data-failed-at')).toBe('1');
  });

  it('shows everything in Portuguese, evidence included, then in English', async () => {
    const single = page.locator('[data-testid="item"][data-file="single.bin"]');
    expect(await single.locator('.badge').first().textContent()).toBe('Verificado');
    expect(await single.getByTestId('check-4').textContent()).toContain('Registro na Stacks');
    const evidence = await single.getByTestId('evidence').allTextContents();
    expect(evidence.join('\n')).toContain('anexo receipt.json');
    expect(evidence.join('\n')).toContain('raiz recalculada');
    expect(evidence.join('\n')).not.toContain('recomputed root');
    await page.getByTestId('lang-en').click();
    expect(await single.locator('.badge').first().textContent()).toBe('Verified');
    expect(await page.locator('h1').textContent()).toBe('Verify without us');
    expect((await single.getByTestId('evidence').allTextContents()).join('\n')).toContain('recomputed root');
  });

  it('made no request but to the page itself and the endpoints typed', async () => {
    const allowed = [evmRpc, stacksApi].map((u) => u.replace(/\/+$/, ''));
    const elsewhere = requests.filter(
      (u) => !u.startsWith('file://') && !u.startsWith('blob:') && !allowed.some((a) => u.startsWith(a)),
    );
    expect(elsewhere).toEqual([]);
    expect(requests.some((u) => u.startsWith(allowed[0] ?? '-'))).toBe(true);
    expect(requests.some((u) => u.startsWith(allowed[1] ?? '-'))).toBe(true);
  });
});

describe('the service', () => {
  it('serves the same two files at /verify/, and the certificate names them', async () => {
    const dist = path.join(VERIFIER_DIR, 'dist');
    const page = await fetch(`${t.url}/verify/`);
    expect(page.status).toBe(200);
    expect(
      Buffer.compare(Buffer.from(await page.arrayBuffer()), await readFile(path.join(dist, 'verify.html'))),
    ).toBe(0);
    const mjs = await fetch(`${t.url}/verify/notary-verify.mjs`);
    expect(
      Buffer.compare(
        Buffer.from(await mjs.arrayBuffer()),
        await readFile(path.join(dist, 'notary-verify.mjs')),
      ),
    ).toBe(0);
    const certPath = path.join(work, 'named.pdf');
    await writeFile(certPath, await certificateOf(other.doc, '?lang=en'));
    const text = (await exec('pdftotext', [certPath, '-'])).stdout.replace(/\s+/g, ' ');
    expect(text).toContain('node notary-verify.mjs');
    expect(text).toContain(`${t.service.deps.publicUrl}/verify/notary-verify.mjs`);
  });
});
