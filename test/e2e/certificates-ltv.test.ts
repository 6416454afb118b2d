/**
 * Signed certificates at the default level with a TSA, PAdES B-LTA, through the running service: the
 * revocation test PKI (`test/harness/revocation-pki.ts`) signs (`SIGNING_CERT` PEM chain + `SIGNING_KEY`) and
 * timestamps (`TSA_URL`), and its loopback OCSP responder and CRLs answer the service's revocation source.
 * Checked with qpdf, pdfsig (NSS trusting the PKI's root), pikepdf reading the /DSS and pdftotext reading
 * the level the page states.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DocumentDto } from '@notary/shared';
import type { VerifyReport } from '@notary/verify';
import { runCli } from '@notary/verify/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { type RevocationPki, startRevocationPki } from '../harness/revocation-pki';
import { startTestService, type TestService } from '../harness/service';

const exec = promisify(execFile);
/** Debian's interpreter: python3-pikepdf is installed for it (`.ci/install-tools.sh`). */
const PYTHON = '/usr/bin/python3';

describe('signed certificates at PAdES B-LTA (PGlite, PEM key, revocation test PKI)', () => {
  let rpki: RevocationPki;
  let t: TestService;
  let token: string;
  let work: string;
  let doc: DocumentDto;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-ltv-'));
    rpki = await startRevocationPki();
    t = await startTestService('pglite', {
      SIGNING_CERT: rpki.signer.chainPath,
      SIGNING_KEY: rpki.signer.keyPath,
      TSA_URL: rpki.tsaUrl,
      TSA_CA_CERTS: rpki.caChainPath,
      REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
    });
    token = await t.token('ltv@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    doc = up.body as unknown as DocumentDto;
  });

  afterAll(async () => {
    await t?.close();
    await rpki?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function signedCertificate(name: string): Promise<{ file: string; level: string | null }> {
    const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-signed')).toBe('pades');
    const file = path.join(work, name);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return { file, level: res.headers.get('x-signature-level') };
  }

  /** /DSS counts and /VRI keys as pikepdf reads them. */
  async function dss(file: string): Promise<{ certs: number; ocsps: number; crls: number; vri: number }> {
    const script = `
import json, sys, pikepdf
dss = pikepdf.open(sys.argv[1]).Root.DSS
n = lambda k: len(dss.get(k)) if k in dss else 0
print(json.dumps({'certs': n('/Certs'), 'ocsps': n('/OCSPs'), 'crls': n('/CRLs'), 'vri': len(dss.VRI.keys())}))
`;
    return JSON.parse((await exec(PYTHON, ['-c', script, file])).stdout);
  }

  it('is B-LTA by default with a TSA: /DSS with OCSP answers, a document timestamp, the level stated', async () => {
    const { file, level } = await signedCertificate('b-lta.pdf');
    expect(level).toBe('B-LTA');
    await exec('qpdf', ['--check', file]);
    const store = await dss(file);
    // Signer, TSA and intermediate answered by OCSP; a /VRI for the signature and one for the document timestamp.
    expect(store.ocsps).toBeGreaterThanOrEqual(3);
    expect(store.certs).toBeGreaterThanOrEqual(4);
    expect(store.vri).toBe(2);

    const out = (
      await exec('pdfsig', ['-nssdir', `sql:${rpki.nssDir}`, file]).catch((e: { stdout?: string }) => ({
        stdout: e.stdout ?? '',
      }))
    ).stdout;
    const [, signature = '', stamp = ''] = out.split(/Signature #\d+:/);
    expect(signature).toContain('Signature Validation: Signature is Valid.');
    expect(signature).toContain('Certificate Validation: Certificate is Trusted.');
    expect(stamp).toContain('Signer Certificate Common Name: Notary LTV TSA');

    const text = (await exec('pdftotext', ['-layout', file, '-'])).stdout.replace(/\s+/g, ' ');
    expect(text).toContain('Assinatura PAdES B-LTA (ETSI EN 319 142-1)');
  });

  it('a signed PDF original stays a byte prefix, its signature reading as before and ours valid after B-LTA', async () => {
    const source = path.join(FIXTURES_DIR, 'pdfs', 'signed_verified.pdf');
    const up = await uploadFile(t.url, token, source);
    expect(up.status).toBe(201);
    const id = (up.body as unknown as DocumentDto).id;
    const res = await fetch(`${t.url}/api/documents/${id}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-signature-level')).toBe('B-LTA');
    const bytes = Buffer.from(await res.arrayBuffer());
    const original = await readFile(source);
    expect(bytes.subarray(0, original.length).equals(original)).toBe(true);
    const file = path.join(work, 'stamped-b-lta.pdf');
    await writeFile(file, bytes);
    await exec('qpdf', ['--check', file]);
    const pdfsig = async (f: string) =>
      (
        await exec('pdfsig', ['-nssdir', `sql:${rpki.nssDir}`, f]).catch((e: { stdout?: string }) => ({
          stdout: e.stdout ?? '',
        }))
      ).stdout;
    const parts = (await pdfsig(file)).split(/Signature #\d+:/).slice(1);
    expect(parts).toHaveLength(3);
    // The original's signature reads as it does in the original alone (pdfsig 22.12 reports this fixture's
    // SHA-1/SHA-256 mix as a digest mismatch either way): the updates changed nothing it covers.
    const verdict = (text: string) => /Signature Validation: .*/.exec(text)?.[0];
    const alone = (await pdfsig(source)).split(/Signature #\d+:/).slice(1);
    expect(verdict(parts[0] ?? '')).toBe(verdict(alone[0] ?? ''));
    expect(parts[1]).toContain('Signature Validation: Signature is Valid.');
    expect(parts[1]).toContain('Certificate Validation: Certificate is Trusted.');
    expect(parts[2]).toContain('Signer Certificate Common Name: Notary LTV TSA');
    expect((await dss(file)).vri).toBe(2);
  });

  it('keeps B-LTA while the responders are down: the answers are cached until their nextUpdate', async () => {
    const before = { ...rpki.requests };
    rpki.setOcsp('down');
    rpki.setCrl('down');
    try {
      const { file, level } = await signedCertificate('cached.pdf');
      expect(level).toBe('B-LTA');
      expect(rpki.requests.ocsp).toBe(before.ocsp);
      expect(rpki.requests.crl).toBe(before.crl);
      expect((await dss(file)).ocsps).toBeGreaterThanOrEqual(3);
    } finally {
      rpki.setOcsp('ok');
      rpki.setCrl('ok');
    }
  });

  it('a fresh instance with the responders down signs at B-T and says so in X-Signature-Level', async () => {
    const fresh = await startTestService('pglite', {
      SIGNING_CERT: rpki.signer.chainPath,
      SIGNING_KEY: rpki.signer.keyPath,
      TSA_URL: rpki.tsaUrl,
      TSA_CA_CERTS: rpki.caChainPath,
      REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
    });
    rpki.setOcsp('down');
    rpki.setCrl('down');
    try {
      const freshToken = await fresh.token('ltv-down@example.com');
      const up = await uploadFile(fresh.url, freshToken, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
      expect(up.status).toBe(201);
      const id = (up.body as unknown as DocumentDto).id;
      const res = await fetch(`${fresh.url}/api/documents/${id}/certificate?signed=1`, {
        headers: { authorization: `Bearer ${freshToken}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-signed')).toBe('pades');
      expect(res.headers.get('x-signature-level')).toBe('B-T');
      const file = path.join(work, 'down.pdf');
      await writeFile(file, Buffer.from(await res.arrayBuffer()));
      await exec('qpdf', ['--check', file]);
      expect(await dss(file)).toMatchObject({ ocsps: 0, crls: 0 });
      // The signer's chain had no revocation data before signing: the page states what the header says.
      const text = (await exec('pdftotext', ['-layout', file, '-'])).stdout.replace(/\s+/g, ' ');
      expect(text).toContain('Assinatura PAdES B-T (ETSI EN 319 142-1)');
      expect(text).not.toContain('B-LTA');
    } finally {
      rpki.setOcsp('ok');
      rpki.setCrl('ok');
      await fresh.close();
    }
  });
});

describe('a B-LTA certificate judged years later, offline (PGlite, short-lived signer, revocation test PKI)', () => {
  let rpki: RevocationPki;
  let t: TestService;
  let token: string;
  let work: string;
  let doc: DocumentDto;
  let certificate: string;
  const env = (): Record<string, string> => ({
    SIGNING_CERT: rpki.shortLived.chainPath,
    SIGNING_KEY: rpki.shortLived.keyPath,
    TSA_URL: rpki.tsaUrl,
    TSA_CA_CERTS: rpki.caChainPath,
    REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
  });

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-years-'));
    rpki = await startRevocationPki();
    t = await startTestService('pglite', env());
    token = await t.token('years@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    doc = up.body as unknown as DocumentDto;
    const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-signature-level')).toBe('B-LTA');
    certificate = path.join(work, 'certificate.pdf');
    await writeFile(certificate, Buffer.from(await res.arrayBuffer()));
    await writeFile(path.join(work, 'root.pem'), rpki.root.certPem);
  });

  afterAll(async () => {
    await t?.close();
    await rpki?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** Every /DSS stream of `key` written to files, as pikepdf reads them. */
  async function dssFiles(key: '/OCSPs' | '/CRLs'): Promise<string[]> {
    const script = `
import sys, pikepdf
dss = pikepdf.open(sys.argv[1]).Root.DSS
for i, s in enumerate(dss.get(sys.argv[2], [])):
    out = f"{sys.argv[3]}-{i}.der"
    open(out, 'wb').write(s.read_bytes())
    print(out)
`;
    const { stdout } = await exec(PYTHON, ['-c', script, certificate, key, path.join(work, key.slice(1))]);
    return stdout.split('\n').filter((line) => line !== '');
  }

  /** The last signature dictionary's /ByteRange data and /Contents token, written to files by pikepdf. */
  async function lastDocumentTimestamp(): Promise<{ data: string; token: string; subFilter: string }> {
    const script = `
import sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
raw = open(sys.argv[1], 'rb').read()
sigs = [f.V for f in pdf.Root.AcroForm.Fields if '/V' in f and '/ByteRange' in f.V]
last = max(sigs, key=lambda v: int(v.ByteRange[2]) + int(v.ByteRange[3]))
a, b, c, d = (int(x) for x in last.ByteRange)
open(sys.argv[2], 'wb').write(raw[a:a + b] + raw[c:c + d])
open(sys.argv[3], 'wb').write(bytes(last.Contents).rstrip(b'\\0'))
print(str(last.SubFilter))
`;
    const data = path.join(work, 'doc-ts.data');
    const tokenFile = path.join(work, 'doc-ts.tst');
    const { stdout } = await exec(PYTHON, ['-c', script, certificate, data, tokenFile]);
    return { data, token: tokenFile, subFilter: stdout.trim() };
  }

  /** `notary-verify` check 6 at `at`, offline: a fetch that fails the test if anything is requested. */
  async function judge(at: Date, extra: string[] = []) {
    let requests = 0;
    const noNetwork: typeof fetch = async () => {
      requests += 1;
      throw new Error('offline');
    };
    const cli = await runCli(
      [
        path.join(FIXTURES_DIR, 'files', 'contrato.txt'),
        '--certificate',
        certificate,
        '--trust-ca',
        path.join(work, 'root.pem'),
        '--tsa-ca',
        rpki.caChainPath,
        '--at',
        at.toISOString(),
        '--json',
        ...extra,
      ],
      { fetch: noNetwork },
    );
    const report = JSON.parse(cli.stdout) as VerifyReport;
    const check6 = report.checks.find((c) => c.id === 6);
    return { requests, check6, code: cli.code };
  }

  it('carries OCSP answers openssl verifies against the CA and a document timestamp openssl ts -verify accepts', async () => {
    const ocsps = await dssFiles('/OCSPs');
    expect(ocsps.length).toBeGreaterThanOrEqual(3);
    for (const file of ocsps) {
      const { stdout, stderr } = await exec('openssl', [
        'ocsp',
        '-respin',
        file,
        '-CAfile',
        rpki.caChainPath,
        '-resp_text',
      ]);
      expect(stderr).toContain('Response verify OK');
      expect(stdout).toContain('Cert Status: good');
    }
    for (const file of await dssFiles('/CRLs')) {
      const { stderr } = await exec('openssl', [
        'crl',
        '-inform',
        'DER',
        '-in',
        file,
        '-CAfile',
        rpki.caChainPath,
        '-verify',
        '-noout',
      ]);
      expect(stderr).toContain('verify OK');
    }
    const stamp = await lastDocumentTimestamp();
    expect(stamp.subFilter).toBe('/ETSI.RFC3161');
    const { stdout } = await exec('openssl', [
      'ts',
      '-verify',
      '-data',
      stamp.data,
      '-in',
      stamp.token,
      '-token_in',
      '-CAfile',
      rpki.caChainPath,
    ]);
    expect(stdout).toContain('Verification: OK');
  });

  it('passes offline at B-LTA now and a year after the signer expired, making no request', async () => {
    const signerExpiry = new Date(
      (await exec('openssl', ['x509', '-in', rpki.shortLived.certPath, '-noout', '-enddate'])).stdout
        .trim()
        .replace('notAfter=', ''),
    );
    for (const at of [new Date(), new Date(signerExpiry.getTime() + 365 * 24 * 3600 * 1000)]) {
      const { requests, check6, code } = await judge(at);
      expect(check6?.status, JSON.stringify(check6?.evidence)).toBe('passed');
      expect(check6?.pades?.level).toBe('B-LTA');
      expect(code).toBe(0);
      expect(requests).toBe(0);
    }
  });

  it('refuses to sign once the signing certificate is revoked, and names it (503)', async () => {
    await rpki.revoke('shortLived', { reason: 'keyCompromise' });
    // A fresh instance: the first one keeps its good OCSP answer until the answer's nextUpdate, as relying
    // parties do.
    const fresh = await startTestService('pglite', env());
    try {
      const freshToken = await fresh.token('years-revoked@example.com');
      const up = await uploadFile(fresh.url, freshToken, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
      expect(up.status).toBe(201);
      const id = (up.body as unknown as DocumentDto).id;
      const res = await fetch(`${fresh.url}/api/documents/${id}/certificate?signed=1`, {
        headers: { authorization: `Bearer ${freshToken}` },
      });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { message?: string; error?: { message?: string } };
      expect(JSON.stringify(body)).toContain('Notary LTV Short-Lived Signer');
      expect(JSON.stringify(body)).toContain('revoked');
    } finally {
      await fresh.close();
    }
  });
});
