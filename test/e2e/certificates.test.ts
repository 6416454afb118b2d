import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type HardhatDevnet, startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import type { DocumentDto } from '@notary/shared';
import { essCertIdMatches, OID, parseSignedData, readEssCertIds, signerCertificate } from '@notary/trust/cms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFiles } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';

/**
 * Certificates and timestamps end to end: the real service over HTTP, outputs checked with third-party validators
 * (qpdf, pdftoppm, pdftotext, pdfsig with an NSS database, zbarimg, openssl ts).
 */

const exec = promisify(execFile);

/** Originals whose structure is sound: their certificate must be stamped with the original as exact prefix. */
const STAMPABLE = new Set([
  '90ms_rksj_h_sample.pdf',
  'ArabicCIDTrueType.pdf',
  'TAMReview.pdf',
  'alphatrans.pdf',
  'asciihexdecode.pdf',
  'attachment.pdf',
  'bad-PageLabels.pdf',
  'bigboundingbox.pdf',
  'file_pdfjs_form.pdf',
  'form_two_pages.pdf',
  'hello_world_rotated.pdf',
  'issue_cff_unsigned_bbox.pdf',
  'libtasn1.pdf',
  'rotated.pdf',
  'shared-mime-info-spec.pdf',
  'signed_verified.pdf',
  'tracemonkey.pdf',
  'empty.pdf',
  'freeculture.pdf',
  'rotation.pdf',
  'xfa_issue14315.pdf',
  // Declare PDF/A (1b and 2b): stamped and kept PDF/A (certificates-pdfa.test.ts).
  'bug886717.pdf',
  'issue13242.pdf',
]);

/** Encrypted originals: always a separate certificate. */
const ENCRYPTED = new Set(['empty_protected.pdf', 'encrypted-attachment.pdf']);

let work: string;
const FIXTURES = await fixtureFiles();

async function fetchCertificate(
  t: TestService,
  token: string | undefined,
  id: string,
  query = '',
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${t.url}/api/documents/${id}/certificate${query}`, {
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function postTimestamp(
  t: TestService,
  token: string,
  id: string,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${t.url}/api/documents/${id}/timestamp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function save(name: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, bytes);
  return file;
}

/** `qpdf --check`: exit 0 only (3 means warnings). */
async function qpdfCheck(file: string): Promise<void> {
  await exec('qpdf', ['--check', file], { maxBuffer: 16 * 1024 * 1024 });
}

async function pageCount(file: string): Promise<number> {
  const { stdout } = await exec('qpdf', ['--show-npages', file]);
  return Number(stdout.trim());
}

async function pdfText(file: string, first: number, last: number): Promise<string> {
  const { stdout } = await exec('pdftotext', ['-f', String(first), '-l', String(last), '-layout', file, '-']);
  return stdout;
}

/** The DER CMS in the hex string that starts at the first `<` from `from`, cut to its DER length (no padding). */
function cmsAt(pdf: Buffer, from: number): Buffer {
  const open = pdf.indexOf('<', from);
  const close = pdf.indexOf('>', open);
  const der = Buffer.from(pdf.subarray(open + 1, close).toString('latin1'), 'hex');
  // DER SEQUENCE length: short or long form.
  const first = der[1] ?? 0;
  const lenBytes = first & 0x80 ? first & 0x7f : 0;
  let len = lenBytes ? 0 : first;
  for (let i = 0; i < lenBytes; i += 1) len = len * 256 + (der[2 + i] ?? 0);
  return der.subarray(0, 2 + lenBytes + len);
}

const BYTE_RANGE = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/;

/** The CMS of the last signature: the hex string between the two parts of its ByteRange. */
function lastSignatureCms(pdf: Buffer): Buffer {
  const at = pdf.lastIndexOf('/ByteRange');
  const m = BYTE_RANGE.exec(pdf.subarray(at, at + 120).toString('latin1'));
  if (!m) throw new Error('no ByteRange');
  return cmsAt(pdf, Number(m[2]) - 1);
}

/**
 * Whether the first signature of `pdf` still signs what it says: the SHA-256 of its ByteRange equals the
 * messageDigest signed attribute of its CMS (the part of signature validity that stamping could break).
 */
function originalSignatureDigestHolds(pdf: Buffer): boolean {
  const m = BYTE_RANGE.exec(pdf.toString('latin1'));
  if (!m) return false;
  const [a, b, c, d] = m.slice(1, 5).map(Number) as [number, number, number, number];
  // This fixture's first range ends one byte late (it includes the `<`): search from just before its end.
  const { signerInfo } = parseSignedData(cmsAt(pdf, a + b - 1), 'CMS');
  const digest = signerInfo.signedAttrs?.attributes.find((x) => x.type === '1.2.840.113549.1.9.4');
  const value = digest?.values[0] as { valueBlock?: { valueHexView?: Uint8Array } } | undefined;
  const signed = createHash('sha256')
    .update(pdf.subarray(a, a + b))
    .update(pdf.subarray(c, c + d))
    .digest('hex');
  return Buffer.from(value?.valueBlock?.valueHexView ?? []).toString('hex') === signed;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-e2e-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('certificates without signing key or TSA (PostgreSQL, anchoring off)', () => {
  let t: TestService;
  let token: string;
  let otherToken: string;
  const docs = new Map<string, DocumentDto>();

  beforeAll(async () => {
    t = await startTestService('postgresql');
    token = await t.token('cert-owner@example.com');
    otherToken = await t.token('cert-other@example.com');
    for (const file of FIXTURES) {
      const up = await uploadFile(t.url, token, file);
      expect(up.status).toBe(201);
      docs.set(path.basename(file), up.body as unknown as DocumentDto);
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each(FIXTURES.map((f) => [path.basename(f), f]))(
    '%s: a certificate that passes qpdf --check and renders; PDF originals are an exact prefix',
    async (name, file) => {
      const doc = docs.get(name);
      if (!doc) throw new Error(`not uploaded: ${name}`);
      const res = await fetchCertificate(t, token, doc.id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toMatch(
        /^attachment; filename="?certificado-.+\.pdf"?$/,
      );
      expect(res.headers.get('x-service-signed')).toBe('none');
      const out = await save(`${doc.id}.pdf`, res.bytes);
      await qpdfCheck(out);
      const pages = await pageCount(out);
      await exec('pdftoppm', [
        '-r',
        '20',
        '-png',
        '-f',
        String(pages),
        '-l',
        String(pages),
        out,
        path.join(work, doc.id),
      ]);
      const original = await readFile(file);
      const prefixed = original.length > 0 && res.bytes.subarray(0, original.length).equals(original);
      if (STAMPABLE.has(name)) {
        expect(prefixed).toBe(true);
        expect(pages).toBeGreaterThan(await pageCount(file));
        // Every original page carries the mark naming the service and the serial.
        expect(await pdfText(out, 1, 1)).toContain(doc.serialNumber);
      } else {
        expect(prefixed).toBe(false);
      }
      if (ENCRYPTED.has(name)) expect(prefixed).toBe(false);
      expect(await pdfText(out, pages, pages)).toMatch(/Certificado|certificado/);
      // The stored original is never modified: its download still hashes to the recorded SHA-256.
      const dl = await api<{ downloadUrl: string }>(t.url, `/api/documents/${doc.id}/download`, { token });
      const stored = Buffer.from(await (await fetch(dl.body.downloadUrl)).arrayBuffer());
      expect(createHash('sha256').update(stored).digest('hex')).toBe(doc.sha256Hash);
    },
  );

  it('states pending anchors as pending, never inventing a transaction', async () => {
    const doc = docs.get('contrato.txt');
    if (!doc) throw new Error('missing');
    const out = await save('pending.pdf', (await fetchCertificate(t, token, doc.id)).bytes);
    const text = await pdfText(out, 1, await pageCount(out));
    expect(text).toContain('Pendente');
    expect(text).toContain(doc.sha256Hash);
    expect(text).toContain(doc.serialNumber);
    expect(text).not.toMatch(/0x[0-9a-f]{64}/);
  });

  it('speaks English with lang=en or Accept-Language, Portuguese by default', async () => {
    const doc = docs.get('contrato.txt');
    if (!doc) throw new Error('missing');
    const en = await save('en.pdf', (await fetchCertificate(t, token, doc.id, '?lang=en')).bytes);
    expect(await pdfText(en, 1, 1)).toContain('Notarization Certificate');
    const negotiated = await fetchCertificate(t, token, doc.id, '', { 'accept-language': 'en-US,en;q=0.9' });
    expect(negotiated.headers.get('content-disposition')).toMatch(/filename="?certificate-/);
    expect(await pdfText(await save('neg.pdf', negotiated.bytes), 1, 1)).toContain(
      'Notarization Certificate',
    );
    const pt = await save(
      'pt.pdf',
      (await fetchCertificate(t, token, doc.id, '', { 'accept-language': 'fr' })).bytes,
    );
    expect(await pdfText(pt, 1, 1)).toContain('Certificado de Notarização');
    expect((await fetchCertificate(t, token, doc.id, '?lang=de')).status).toBe(400);
  });

  it('answers signed=1 unsigned (X-Service-Signed: none) when no signing certificate is configured', async () => {
    const doc = docs.get('contrato.txt');
    if (!doc) throw new Error('missing');
    const res = await fetchCertificate(t, token, doc.id, '?signed=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-signed')).toBe('none');
    expect(res.bytes.includes('/ByteRange')).toBe(false);
  });

  it('answers 503 for a timestamp when no TSA is configured', async () => {
    const doc = docs.get('contrato.txt');
    if (!doc) throw new Error('missing');
    const res = await postTimestamp(t, token, doc.id);
    expect(res.status).toBe(503);
    expect(JSON.parse(res.bytes.toString()).code).toBe('SERVICE_UNAVAILABLE');
  });

  it('refuses another tenant (403), no session (401) and unknown documents (404)', async () => {
    const doc = docs.get('contrato.txt');
    if (!doc) throw new Error('missing');
    expect((await fetchCertificate(t, otherToken, doc.id)).status).toBe(403);
    expect((await postTimestamp(t, otherToken, doc.id)).status).toBe(403);
    expect((await fetchCertificate(t, undefined, doc.id)).status).toBe(401);
    expect((await fetchCertificate(t, token, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await postTimestamp(t, token, 'not-a-uuid')).status).toBe(404);
  });
});

describe('signed certificates and timestamps (PGlite, devnet anchoring, PKCS#12 key, loopback TSA)', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let t: TestService;
  let token: string;
  let signedDoc: DocumentDto;
  let textDoc: DocumentDto;
  const pick = (name: string) => FIXTURES.find((f) => path.basename(f) === name) ?? '';

  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    t = await startTestService('pglite', {
      ANCHORING: 'devnet',
      ...signingEnv(pki, tsa),
      // These tests read a B-T file (the signature is the last revision); B-LTA is tested in @notary/pdf.
      SIGNING_LEVEL: 'B-T',
      // The timestamp limit below is the app-wide limiter's (spec, Limits); the harness turns limits off.
      RATE_LIMITS: 'on',
    });
    token = await t.token('signer@example.com');
    signedDoc = (await uploadFile(t.url, token, pick('signed_verified.pdf'))).body as unknown as DocumentDto;
    textDoc = (await uploadFile(t.url, token, pick('contrato.txt'))).body as unknown as DocumentDto;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const list = await api<{ documents: DocumentDto[] }>(t.url, '/api/documents', { token });
      // Polls count against the global limit (120 a minute): a 429 is just another poll.
      const all = list.status === 200 ? list.body.documents : [];
      if (
        all.length > 0 &&
        all.every((d) => d.onchainStatus === 'registered' && d.stacksStatus === 'registered')
      ) {
        signedDoc = all.find((d) => d.id === signedDoc.id) ?? signedDoc;
        textDoc = all.find((d) => d.id === textDoc.id) ?? textDoc;
        break;
      }
      if (Date.now() > deadline) throw new Error('documents not registered in time');
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  afterAll(async () => {
    await t?.close();
    await tsa?.stop();
    await pki?.dispose();
  });

  it('signs with PAdES B-T: pdfsig finds both signatures valid, ours trusted and covering the whole file', async () => {
    const res = await fetchCertificate(t, token, signedDoc.id, '?signed=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-signed')).toBe('pades');
    expect(res.headers.get('x-signature-level')).toBe('B-T');
    const out = await save('signed.pdf', res.bytes);
    await qpdfCheck(out);
    const { stdout } = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, out]);
    const parts = stdout.split(/Signature #\d+:/).slice(1);
    expect(parts).toHaveLength(2);
    // The original's own signature is untouched by stamping (incremental update). This fixture's CMS lists only
    // SHA-1 in digestAlgorithms while its SignerInfo uses SHA-256, so pdfsig 22.12 (and openssl cms) already
    // report a digest mismatch on the original: the verdict must be the same before and after, and the
    // messageDigest must still equal the SHA-256 of the ranges it signs, byte for byte, in our output.
    const verdict = (text: string) => /Signature Validation: .*/.exec(text)?.[0];
    const original = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, pick('signed_verified.pdf')]);
    expect(verdict(parts[0] ?? '')).toBe(verdict(original.stdout));
    expect(originalSignatureDigestHolds(res.bytes)).toBe(true);
    const ours = parts[1] ?? '';
    expect(ours).toContain('Signature Validation: Signature is Valid.');
    expect(ours).toContain('Certificate Validation: Certificate is Trusted.');
    expect(ours).toContain('Total document signed');
    expect(ours).toContain('ETSI.CAdES.detached');

    // signing-certificate-v2 names our certificate (pdfsig does not check it); no signingTime; B-T timestamp.
    const cms = lastSignatureCms(res.bytes);
    const parsed = parseSignedData(cms, 'CMS');
    const { signerInfo } = parsed;
    const v2 = signerInfo.signedAttrs?.attributes.find((a) => a.type === OID.signingCertificateV2);
    const [first] = v2 ? readEssCertIds(v2) : [];
    const signerCert = signerCertificate(parsed);
    if (!first || !signerCert) throw new Error('no signingCertificateV2 or no signer certificate');
    expect(Buffer.from(first.certHash).toString('hex')).toBe(
      createHash('sha256').update(pki.rsa.certDer).digest('hex'),
    );
    expect((await essCertIdMatches(first, signerCert)).issuerSerial).not.toBe(false);
    expect(signerInfo.signedAttrs?.attributes.map((a) => a.type)).not.toContain('1.2.840.113549.1.9.5');
    expect(signerInfo.unsignedAttrs?.attributes.map((a) => a.type)).toContain('1.2.840.113549.1.9.16.2.14');

    // The certificate page states the anchors as recorded.
    const text = await pdfText(out, 2, await pageCount(out));
    expect(text).toContain(signedDoc.onchainAttestationUid ?? 'missing uid');
    expect(text).toContain(signedDoc.onchainTxHash ?? 'missing tx');
    expect(text).toContain((signedDoc.stacksTxId ?? 'missing txid').replace(/^0x/, ''));

    // Tampering one byte inside the signed range breaks our signature.
    const tampered = Buffer.from(res.bytes);
    const at = tampered.lastIndexOf('/ByteRange') - 200;
    tampered[at] = (tampered[at] ?? 0) ^ 0x01;
    const bad = await save('tampered.pdf', tampered);
    const check = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, bad]).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    const last = check.stdout.split(/Signature #\d+:/).pop() ?? '';
    expect(last).not.toContain('Signature is Valid.');
  });

  it('puts a QR code on the certificate that decodes to the record (devnet: no attestation explorer)', async () => {
    const res = await fetchCertificate(t, token, textDoc.id);
    const out = await save('qr.pdf', res.bytes);
    await exec('pdftoppm', ['-r', '200', '-png', '-f', '1', '-l', '1', out, path.join(work, 'qr')]);
    const png = (await exec('ls', [work])).stdout
      .split('\n')
      .find((f) => f.startsWith('qr') && f.endsWith('.png'));
    const { stdout } = await exec('zbarimg', ['--raw', '-q', path.join(work, png ?? '')]);
    expect(stdout.trim()).toBe(`${t.url}/api/public/documents/${textDoc.serialNumber}`);
  });

  it('returns an RFC 3161 token that openssl ts -verify accepts for the document digest', async () => {
    const res = await postTimestamp(t, token, textDoc.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
    expect(res.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="?${textDoc.serialNumber}\\.tsr"?$`),
    );
    const tsr = await save('doc.tsr', res.bytes);
    const { stdout } = await exec('openssl', [
      'ts',
      '-verify',
      '-digest',
      textDoc.sha256Hash,
      '-in',
      tsr,
      '-CAfile',
      pki.caChainPath,
    ]);
    expect(stdout).toContain('Verification: OK');
  });

  it.each([
    ['wrong-nonce', /nonce/i],
    ['wrong-imprint', /imprint/i],
    ['no-eku', /key usage|EKU/i],
    ['fail-500', /500/],
  ] as const)('refuses a TSA answer with %s: 502', async (mode, message) => {
    tsa.setMode(mode);
    try {
      const res = await postTimestamp(t, token, textDoc.id);
      expect(res.status).toBe(502);
      const body = JSON.parse(res.bytes.toString()) as { code: string; message: string };
      expect(body.code).toBe('BAD_GATEWAY');
      expect(body.message).toMatch(message);
    } finally {
      tsa.setMode('ok');
    }
  });

  it('limits timestamps to 10 a minute per user (429), without touching other users', async () => {
    // Five requests were made by the tests above; the limiter counts failed answers too.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await postTimestamp(t, token, textDoc.id)).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.at(-1)).toBe(429);
    const other = await t.token('other-ts@example.com');
    // Another user is not limited by the first one's requests (403: not their document, but not 429).
    expect((await postTimestamp(t, other, textDoc.id)).status).toBe(403);
  });
});

describe('certificate of a configured EVM network with an attestation explorer (PostgreSQL)', () => {
  let devnet: HardhatDevnet;
  let t: TestService;
  let token: string;

  beforeAll(async () => {
    // A real EVM node with the EAS contracts, reached as a configured network would be (not the in-process
    // devnet mode), so that the explorer prefixes apply as in production.
    devnet = await startHardhatDevnet();
    t = await startTestService('postgresql', {
      ANCHORING: 'configured',
      ANCHOR_BATCH_SECONDS: '1',
      EVM_RPC_URL: devnet.rpcUrl,
      EVM_PRIVATE_KEY: devnet.funderPrivateKey,
      EVM_CHAIN_ID: String(devnet.chainId),
      EVM_NETWORK: 'notary-testnet',
      EAS_ADDRESS: devnet.easAddress,
      EAS_SCHEMA_REGISTRY_ADDRESS: devnet.schemaRegistryAddress,
      EVM_CONFIRMATIONS: '1',
      EVM_EXPLORER_TX_PREFIX: 'https://explorer.notary.test/tx',
      EAS_SCAN_PREFIX: 'https://easscan.notary.test/attestation/view',
    });
    token = await t.token('explorer@example.com');
  });

  afterAll(async () => {
    await t?.close();
    await devnet?.stop();
  });

  it('puts a QR code to <EAS_SCAN_PREFIX>/<uid> and prints the explorer links and the contract used', async () => {
    const up = await uploadFile(t.url, token, FIXTURES.find((f) => f.endsWith('contrato.txt')) ?? '');
    const id = (up.body as unknown as DocumentDto).id;
    let doc: DocumentDto | undefined;
    const deadline = Date.now() + 60_000;
    while (!doc?.onchainAttestationUid) {
      if (Date.now() > deadline) throw new Error('not attested in time');
      await new Promise((r) => setTimeout(r, 200));
      doc = (await api<{ document: DocumentDto }>(t.url, `/api/documents/${id}`, { token })).body.document;
    }
    const attestationUrl = `https://easscan.notary.test/attestation/view/${doc.onchainAttestationUid}`;
    const res = await fetchCertificate(t, token, id, '?lang=en');
    const out = await save('explorer.pdf', res.bytes);
    await qpdfCheck(out);
    await exec('pdftoppm', ['-r', '200', '-png', '-f', '1', '-l', '1', out, path.join(work, 'explorer')]);
    const png = (await exec('ls', [work])).stdout
      .split('\n')
      .find((f) => f.startsWith('explorer') && f.endsWith('.png'));
    const { stdout } = await exec('zbarimg', ['--raw', '-q', path.join(work, png ?? '')]);
    // The attestation's QR code, and the public record's beside the access code for ITI's VALIDAR.
    expect(stdout.trim().split('\n').sort()).toEqual(
      [attestationUrl, `${t.url}/api/public/documents/${encodeURIComponent(doc.serialNumber)}`].sort(),
    );
    const text = (await pdfText(out, 1, await pageCount(out))).replace(/\s+/g, '');
    expect(text).toContain(`https://explorer.notary.test/tx/${doc.onchainTxHash}`);
    expect(text).toContain('notary-testnet');
    expect(text.toLowerCase()).toContain(devnet.easAddress.toLowerCase());
    // Stacks is not configured here: the certificate does not pretend it is pending on a chain it never uses.
    expect(text).not.toContain('Stacks');
  });
});
