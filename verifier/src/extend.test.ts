/**
 * `notary-verify extend` end to end: a PAdES B-T file signed by `@notary/pdf`'s `signPdf` with the revocation
 * test PKI (certificates naming loopback OCSP and CRL URLs, test/harness/revocation-pki.ts) is extended with
 * fresh validation data and a document timestamp, and judged by third parties: `qpdf --check`, poppler's
 * `pdfsig` (it lists ETSI.RFC3161 document timestamps but does not verify them), `openssl ts -verify` on
 * each document timestamp token over its byte ranges. Also a file we did not sign
 * (shared/fixtures/pdfs/signed_verified.pdf), a second extension, and every refusal with its exit status.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { signPdf } from '@notary/pdf/pades';
import { policedFetch } from '@notary/platform/net/policed-fetch';
import { TsaClient } from '@notary/trust/tsa-client';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pemCmsSigner, placeholderPdf } from '../../test/harness/pades-pdfs.ts';
import { type RevocationPki, startRevocationPki } from '../../test/harness/revocation-pki.ts';
import { countingListener, rogueCertificates } from '../../test/harness/rogue-certificates.ts';
import { runCli } from './cli.ts';
import { checkPadesSignature } from './pades/index.ts';
import { readPdfSignatures } from './pdf-signatures.ts';

const run = promisify(execFile);
const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/pdfs/signed_verified.pdf');

let pki: RevocationPki;
let tmp: string;
let rootPem: string;
let signed: string;

beforeAll(async () => {
  pki = await startRevocationPki();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-extend-test-'));
  rootPem = path.join(tmp, 'root.pem');
  await writeFile(rootPem, pki.root.certPem);
  const signer = pemCmsSigner(pki.signer.keyPem, pki.signer.chainPem);
  // PAdES B-T, as the service signs a certificate with a TSA configured.
  const bt = await signPdf(
    await placeholderPdf(),
    signer,
    new TsaClient({ url: pki.tsaUrl, tsaCa: [pki.root.certDer] }),
  );
  signed = path.join(tmp, 'certificate.pdf');
  await writeFile(signed, bt);
});

afterAll(async () => {
  await pki?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const isPrefix = (prefix: Uint8Array, of: Uint8Array) =>
  of.length > prefix.length && Buffer.from(of.subarray(0, prefix.length)).equals(Buffer.from(prefix));

/** `pdfsig` stdout split per signature (it may exit non-zero; stdout still counts). */
async function pdfsig(file: string): Promise<string[]> {
  const result = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
  );
  return result.stdout.split(/Signature #\d+:/).slice(1);
}

/** `openssl ts -verify` of every document timestamp of `file` over its own byte ranges; their count. */
async function opensslVerifiesDocumentTimestamps(file: string): Promise<number> {
  const pdf = new Uint8Array(await readFile(file));
  const { signatures } = await readPdfSignatures(pdf);
  const timestamps = signatures.filter((s) => s.documentTimestamp);
  for (const [i, ts] of timestamps.entries()) {
    const [a, b, c, d] = ts.byteRange;
    const data = path.join(tmp, `ranges-${i}.bin`);
    const token = path.join(tmp, `token-${i}.tok`);
    await writeFile(data, Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]));
    await writeFile(token, ts.cms);
    const { stdout } = await run('openssl', [
      'ts',
      '-verify',
      '-data',
      data,
      '-in',
      token,
      '-token_in',
      '-CAfile',
      pki.caChainPath,
    ]);
    expect(stdout).toContain('Verification: OK');
  }
  return timestamps.length;
}

describe('notary-verify extend', () => {
  it('adds validation data and a document timestamp to a B-T file; third-party tools accept it', async () => {
    const result = await runCli([
      'extend',
      signed,
      '--tsa',
      pki.tsaUrl,
      '--tsa-ca',
      rootPem,
      '--allow-private',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = path.join(tmp, 'certificate.extended.pdf');
    expect(result.stdout).toContain(`-> ${out}`);
    expect(result.stdout).toMatch(/read: 1 signature, 0 document timestamps/);
    expect(result.stdout).toMatch(
      /document timestamp: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d Brasília time \(UTC[\u2212+]\d\d:\d\d\) · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by .*CN=Notary LTV TSA.*chain to the anchors checked/,
    );
    expect(result.stdout).toContain('revocation data: complete');
    const added = /added to \/DSS: (\d+) certificates?, (\d+) OCSP responses?, (\d+) CRLs?/.exec(
      result.stdout,
    );
    // Root, intermediate, signer, TSA; an OCSP answer for each non-root certificate.
    expect(Number(added?.[1])).toBeGreaterThanOrEqual(4);
    expect(Number(added?.[2]) + Number(added?.[3])).toBeGreaterThanOrEqual(3);

    const input = new Uint8Array(await readFile(signed));
    const output = new Uint8Array(await readFile(out));
    expect(isPrefix(input, output)).toBe(true);
    await run('qpdf', ['--check', out]);
    const [signature = '', timestamp = ''] = await pdfsig(out);
    expect(signature).toContain('Signature Validation: Signature is Valid.');
    expect(signature).toContain('Certificate Validation: Certificate is Trusted.');
    expect(timestamp).toContain('Signer Certificate Common Name: Notary LTV TSA');
    expect(timestamp).not.toMatch(/Invalid|Mismatch/);
    expect(await opensslVerifiesDocumentTimestamps(out)).toBe(1);

    const read = await readPdfSignatures(output);
    expect(read.dss?.ocsps.length).toBeGreaterThanOrEqual(3);
    // A /VRI entry for the signature and for the document timestamp.
    expect(read.dss?.vri.size).toBe(2);

    // notary-verify's own check 6, offline: the B-T input, the B-LTA output.
    const anchors = { trustCa: [pki.root.certDer], tsaCa: [pki.root.certDer], at: new Date() };
    const before = await checkPadesSignature(input, anchors);
    expect(before.status).toBe('passed');
    expect(before.pades?.level).toBe('B-T');
    const after = await checkPadesSignature(output, anchors);
    expect(after.status, after.summary).toBe('passed');
    expect(after.pades?.level).toBe('B-LTA');
    expect(after.pades?.validDocumentTimestamps).toBe(1);
  });

  it('extends an extended file again (as `augment`, the same command): both document timestamps kept and valid, the first file a prefix', async () => {
    const once = path.join(tmp, 'once.pdf');
    const twice = path.join(tmp, 'twice.pdf');
    expect(
      (await runCli(['extend', signed, '--tsa', pki.tsaUrl, '--out', once, '--allow-private'])).code,
    ).toBe(0);
    const again = await runCli([
      'augment',
      once,
      '--tsa',
      pki.tsaUrl,
      '--out',
      twice,
      '--json',
      '--allow-private',
    ]);
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as {
      read: { signatures: number; documentTimestamps: number };
      timestamp: { chainChecked: boolean };
      missing: unknown[];
    };
    expect(report.read).toEqual({ signatures: 1, documentTimestamps: 1 });
    expect(report.timestamp.chainChecked).toBe(false);
    expect(report.missing).toEqual([]);
    expect(isPrefix(new Uint8Array(await readFile(once)), new Uint8Array(await readFile(twice)))).toBe(true);
    await run('qpdf', ['--check', twice]);
    const listed = await pdfsig(twice);
    expect(listed).toHaveLength(3);
    expect(listed[0]).toContain('Signature Validation: Signature is Valid.');
    for (const ts of listed.slice(1)) expect(ts).toContain('Signer Certificate Common Name: Notary LTV TSA');
    expect(await opensslVerifiesDocumentTimestamps(twice)).toBe(2);
    const judged = await checkPadesSignature(new Uint8Array(await readFile(twice)), {
      trustCa: [pki.root.certDer],
      tsaCa: [pki.root.certDer],
      at: new Date(),
    });
    expect(judged.pades).toMatchObject({ level: 'B-LTA', documentTimestamps: 2, validDocumentTimestamps: 2 });
  });

  it('extends a PAdES file signed elsewhere, listing the revocation data it could not seek', async () => {
    const input = path.join(tmp, 'elsewhere.pdf');
    await writeFile(input, await readFile(FIXTURE));
    const result = await runCli(['extend', input, '--tsa', pki.tsaUrl, '--allow-private']);
    // Nothing to ask for that certificate: listed, and the run is complete (0).
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /missing: CN=test-pdf-signer: its issuer certificate is in neither the file/,
    );
    const out = path.join(tmp, 'elsewhere.extended.pdf');
    expect(isPrefix(new Uint8Array(await readFile(FIXTURE)), new Uint8Array(await readFile(out)))).toBe(true);
    await run('qpdf', ['--check', out]);
    const listed = await pdfsig(out);
    expect(listed).toHaveLength(2);
    expect(listed[1]).toContain('Signer Certificate Common Name: Notary LTV TSA');
    expect(await opensslVerifiesDocumentTimestamps(out)).toBe(1);
  });

  it("with the CA's responders down, still timestamps and lists every certificate left without data", async () => {
    pki.setOcsp('down');
    pki.setCrl('down');
    try {
      const out = path.join(tmp, 'responders-down.pdf');
      const result = await runCli(['extend', signed, '--tsa', pki.tsaUrl, '--out', out, '--allow-private']);
      // The responders gave no usable answer: written, but incomplete (3; extend again later).
      expect(result.code).toBe(3);
      expect(result.stdout).toMatch(/revocation data: missing for \d+ certificates/);
      expect(result.stderr).toMatch(/missing: .*CN=Notary LTV Signer: .*HTTP 503/);
      expect(result.stderr).toMatch(/missing: .*CN=Notary LTV TSA: /);
      expect(await opensslVerifiesDocumentTimestamps(out)).toBe(1);
    } finally {
      pki.setOcsp('ok');
      pki.setCrl('ok');
    }
  });

  it('by default asks no loopback address: the responders and the TSA refused, no request sent, nothing written', async () => {
    const before = { ...pki.requests };
    const out = path.join(tmp, 'refused.pdf');
    const result = await runCli(['extend', signed, '--tsa', pki.tsaUrl, '--out', out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /TSA http:\/\/127\.0\.0\.1:\d+\/tsa is refused: .*refused by the address policy \(a loopback address\)/,
    );
    expect(existsSync(out)).toBe(false);
    expect(pki.requests).toEqual(before);
  });

  it('a PDF whose certificates name a loopback listener and a metadata address: neither asked, both listed as refused', async () => {
    const listener = await countingListener();
    try {
      const rogue = await rogueCertificates({
        ocsp: listener.url,
        crl: 'http://169.254.169.254/latest/meta-data/',
      });
      const input = path.join(tmp, 'rogue.pdf');
      await writeFile(
        input,
        await signPdf(
          await placeholderPdf(),
          pemCmsSigner(rogue.leaf.keyPem, rogue.leaf.chainPem, 'ECDSA-P256-SHA256'),
        ),
      );
      // The test TSA is on loopback too: it alone is reached directly, every other URL through the default policy.
      const policed = policedFetch();
      const fetch: typeof globalThis.fetch = (url, init) =>
        String(url) === pki.tsaUrl ? globalThis.fetch(url, init) : policed(url, init);
      const out = path.join(tmp, 'rogue.extended.pdf');
      const result = await runCli(['extend', input, '--tsa', pki.tsaUrl, '--out', out, '--json'], { fetch });
      expect(listener.requests).toBe(0);
      const report = JSON.parse(result.stdout) as { missing: { subject: string; reason: string }[] };
      const leaf = report.missing.find((m) => m.subject === 'CN=Rogue Leaf');
      expect(leaf?.reason).toBe(
        `OCSP ${listener.url}: ${listener.url}: refused by the address policy (a loopback address); ` +
          'CRL http://169.254.169.254/latest/meta-data/: http://169.254.169.254/latest/meta-data/: refused by ' +
          'the address policy (a cloud metadata address)',
      );
      expect(result.stderr).toContain('missing: CN=Rogue Leaf: OCSP');

      // --allow-private reaches the loopback listener (a private CA's responder), never the metadata address.
      const allowed = await runCli([
        'extend',
        input,
        '--tsa',
        pki.tsaUrl,
        '--out',
        out,
        '--json',
        '--allow-private',
      ]);
      expect(listener.requests).toBeGreaterThan(0);
      expect(allowed.stdout).toContain('refused by the address policy (a cloud metadata address)');
    } finally {
      await listener.stop();
    }
  });

  it('runs as the bin does (Node, tsx registered for extend)', async () => {
    const bin = path.resolve(import.meta.dirname, '../bin/notary-verify.js');
    const out = path.join(tmp, 'bin.pdf');
    const { stdout } = await run(process.execPath, [
      bin,
      'extend',
      signed,
      '--tsa',
      pki.tsaUrl,
      '--out',
      out,
      '--allow-private',
    ]);
    expect(stdout).toMatch(/document timestamp: .* by .*CN=Notary LTV TSA/);
    expect(existsSync(out)).toBe(true);
  });

  it('exit 1 and nothing written when the TSA fails; exit 2 for unusable input', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(500);
      res.end('down');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`;
    try {
      const out = path.join(tmp, 'never.pdf');
      const failed = await runCli(['extend', signed, '--tsa', down, '--out', out, '--allow-private']);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/answered HTTP 500.*\nnothing written/);
      expect(existsSync(out)).toBe(false);
      // The test TSA is not ICP-Brasil: with those roots as anchors its token is refused.
      const foreign = await runCli([
        'extend',
        signed,
        '--tsa',
        pki.tsaUrl,
        '--trust',
        'icp-brasil',
        '--out',
        out,
        '--allow-private',
      ]);
      expect(foreign.code).toBe(1);
      expect(foreign.stderr).toMatch(/TSA certificate chain is not trusted \(no path to --tsa-ca\)/);
      expect(existsSync(out)).toBe(false);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }

    const notPdf = path.join(tmp, 'not.pdf');
    await writeFile(notPdf, 'hello');
    const unsigned = path.join(tmp, 'unsigned.pdf');
    const doc = await PDFDocument.create();
    doc.addPage();
    await writeFile(unsigned, await doc.save());
    // A signature whose /Contents is not a CMS: nothing to extend, said so.
    const text = Buffer.from(await readFile(signed)).toString('latin1');
    const at = text.indexOf('<', text.lastIndexOf('/ByteRange')) + 1;
    const broken = path.join(tmp, 'broken-cms.pdf');
    await writeFile(broken, Buffer.from(`${text.slice(0, at)}deadbeef${text.slice(at + 8)}`, 'latin1'));
    const cases: [string[], RegExp][] = [
      [[broken, '--tsa', pki.tsaUrl], /none of the PDF signatures has a readable CMS/],
      [[notPdf, '--tsa', pki.tsaUrl], /not a readable PDF/],
      [[unsigned, '--tsa', pki.tsaUrl], /no signature or document timestamp/],
      [[signed], /--tsa URL is required/],
      [[signed, '--tsa', pki.tsaUrl, '--trust', 'everyone'], /--trust: only icp-brasil/],
      [[signed, '--tsa', 'file:///etc/passwd'], /not an http\(s\) URL/],
      [[path.join(tmp, 'absent.pdf'), '--tsa', pki.tsaUrl], /cannot read .*ENOENT/],
      [[signed, '--tsa', pki.tsaUrl, '--out', signed], /must not be the input/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['extend', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
