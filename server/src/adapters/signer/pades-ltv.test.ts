/**
 * PAdES B-LT and B-LTA (`@notary/pdf/ltv`, `signPdfAtLevel`): validation data (/DSS, /VRI) and document
 * timestamps appended as incremental updates to a PDF signed by the file signer with the test PKI
 * (`test/harness/pki.ts`) through the TSA adapter and the loopback TSA (`test/harness/tsa.ts`),
 * checked by third parties: `qpdf --check`, poppler's `pdfsig`, `openssl ts -verify` on the document
 * timestamp, and pikepdf (python3-pikepdf) reading the /DSS independently.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { appendDocumentTimestamp, appendValidationData, vriKey } from '@notary/pdf/ltv';
import { boundedLtvWriter } from '@notary/pdf/ltv-bounded';
import { type GatherValidationData, signPdf, signPdfAtLevel } from '@notary/pdf/pades';
import { sha256HexSync } from '@notary/platform/sha256';
import { gatherValidationMaterial } from '@notary/trust/revocation';
import { PDFDocument, PDFName } from 'pdf-lib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { placeholderPdf } from '../../../../test/harness/pades-pdfs';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import { type RevocationPki, startRevocationPki } from '../../../../test/harness/revocation-pki';
import { startTestTsa, type TestTsa } from '../../../../test/harness/tsa';
import type { DocumentSigner } from '../../ports/signer';
import { HttpTimestampAuthority } from '../tsa/http';
import { loadFileSigner } from './file';

const run = promisify(execFile);
/** Debian's interpreter: python3-pikepdf is installed for it, not for other pythons on the PATH. */
const PYTHON = '/usr/bin/python3';

let pki: TestPki;
let tsaServer: TestTsa;
let tmp: string;
let signer: DocumentSigner;
let tsa: HttpTimestampAuthority;
let fileCount = 0;

beforeAll(async () => {
  pki = await createTestPki();
  tsaServer = await startTestTsa(pki);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-ltv-test-'));
  signer = await loadFileSigner({ pkcs12: pki.rsa.p12, password: pki.p12Password });
  tsa = new HttpTimestampAuthority({ url: tsaServer.url, trustedCertificates: [pki.root.certDer] });
});

afterAll(async () => {
  await tsaServer?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function file(bytes: Uint8Array, ext = 'pdf'): Promise<string> {
  fileCount += 1;
  const p = path.join(tmp, `f${fileCount}.${ext}`);
  await writeFile(p, bytes);
  return p;
}

/** `pdfsig` stdout (it may exit non-zero on a bad signature; stdout still counts). */
async function pdfsig(pdf: Uint8Array, nssDir = pki.nssDir): Promise<string> {
  const result = await run('pdfsig', ['-nssdir', `sql:${nssDir}`, await file(pdf)]).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
  );
  return result.stdout;
}

/**
 * pdfsig on a signed and document-timestamped file. Poppler 22.12 does not verify ETSI.RFC3161 document
 * timestamps ("Signature Type: unknown", "not yet been verified"; `openssl ts -verify` is their judge here),
 * but it does list the field and the TSA as its signer, and it still finds the signature, whose range the
 * later updates leave, valid and trusted.
 */
function expectPdfsigBoth(out: string): void {
  const [, first = '', second = ''] = out.split(/Signature #\d+:/);
  expect(first).toContain('Signature Type: ETSI.CAdES.detached');
  expect(first).toContain('Signature Validation: Signature is Valid.');
  expect(first).toContain('Certificate Validation: Certificate is Trusted.');
  expect(second).toContain('Signature Field Name: DocumentTimestamp');
  expect(second).toContain('Signer Certificate Common Name: Notary Test TSA');
  expect(second).toContain('Signing Hash Algorithm: SHA-256');
  expect(second).not.toMatch(/Invalid|Mismatch/);
}

/** openssl: the token's imprint is SHA-256 of the two byte ranges, and it chains to the test CA. */
async function expectTimestampVerifies(pdf: Uint8Array, byteRange: number[], token: Uint8Array) {
  const [a = 0, b = 0, c = 0, d = 0] = byteRange;
  const ranges = await file(Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]), 'bin');
  const { stdout } = await run('openssl', [
    'ts',
    '-verify',
    '-data',
    ranges,
    '-in',
    await file(token, 'tok'),
    '-token_in',
    '-CAfile',
    pki.caChainPath,
  ]);
  expect(stdout).toContain('Verification: OK');
}

async function qpdfCheck(pdf: Uint8Array): Promise<void> {
  // qpdf exits 0 only without errors and warnings (3 for warnings).
  await run('qpdf', ['--check', await file(pdf)]);
}

/** Every /ByteRange and the DER value of its /Contents, in file order. */
function signatures(pdf: Uint8Array): { byteRange: number[]; contents: Uint8Array }[] {
  const text = Buffer.from(pdf).toString('latin1');
  return [...text.matchAll(/\/ByteRange \[ *(\d+) (\d+) (\d+) (\d+) *\]/g)].map((m) => {
    const byteRange = m.slice(1, 5).map(Number);
    const [a = 0, b = 0, c = 0] = byteRange;
    const hex = text.slice(a + b + 1, c - 1);
    return { byteRange, contents: new Uint8Array(Buffer.from(hex, 'hex')) };
  });
}

/** What pikepdf reads of the /DSS: counts of each array, and per /VRI key the counts of its arrays. */
async function readDss(pdf: Uint8Array): Promise<{
  type: string;
  vriTypes: string[];
  certs: number;
  ocsps: number;
  crls: number;
  certSha256: string[];
  vri: Record<string, { cert: number; ocsp: number; crl: number }>;
}> {
  const script = `
import hashlib, json, sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
dss = pdf.Root.get('/DSS')
count = lambda d, k: len(d.get(k)) if d is not None and k in d else 0
out = {'type': str(dss.get('/Type')), 'vriTypes': sorted({str(e.get('/Type')) for _, e in (dss.get('/VRI') or {}).items()}),
       'certs': count(dss, '/Certs'), 'ocsps': count(dss, '/OCSPs'), 'crls': count(dss, '/CRLs'), 'vri': {},
       'certSha256': [hashlib.sha256(s.read_bytes()).hexdigest() for s in (dss.get('/Certs') or [])]}
for key, entry in (dss.get('/VRI') or {}).items():
    out['vri'][key[1:]] = {'cert': count(entry, '/Cert'), 'ocsp': count(entry, '/OCSP'), 'crl': count(entry, '/CRL')}
print(json.dumps(out))
`;
  const { stdout } = await run(PYTHON, ['-c', script, await file(pdf)]);
  return JSON.parse(stdout);
}

const sha1Upper = (b: Uint8Array) => createHash('sha1').update(b).digest('hex').toUpperCase();

/** Trims the placeholder's zero padding off a /Contents value: the DER length says where it ends. */
function der(contents: Uint8Array): Uint8Array {
  const first = contents[1] ?? 0;
  if (!(first & 0x80)) return contents.subarray(0, 2 + first);
  const n = first & 0x7f;
  let len = 0;
  for (let i = 0; i < n; i += 1) len = len * 256 + (contents[2 + i] ?? 0);
  return contents.subarray(0, 2 + n + len);
}

/** A source that finds nothing and reports nothing missing: the level logic then reaches what is asked. */
const noRevocation: GatherValidationData = async () => ({
  material: { certs: [], ocsps: [], crls: [] },
  missing: [],
});

describe('appendValidationData', () => {
  it('adds /DSS with /Certs and a /VRI keyed by SHA-1 of the CMS, as an incremental update', async () => {
    const signed = await signPdf(await placeholderPdf(), signer, tsa);
    const [signature] = signatures(signed);
    expect(signature).toBeDefined();
    const cms = der(signature?.contents ?? new Uint8Array());
    const certs = [...signer.certificateChain, pki.tsa.certDer];
    const extended = await appendValidationData(signed, { certs, ocsps: [], crls: [] }, [
      { signatureContents: cms, certs, ocsps: [], crls: [] },
    ]);

    expect(Buffer.from(extended.subarray(0, signed.length)).equals(Buffer.from(signed))).toBe(true);
    await qpdfCheck(extended);
    const out = await pdfsig(extended);
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('Certificate Validation: Certificate is Trusted.');

    const dss = await readDss(extended);
    expect(dss).toMatchObject({ type: '/DSS', vriTypes: ['/VRI'], certs: 4, ocsps: 0, crls: 0 });
    expect(dss.certSha256.sort()).toEqual(certs.map(sha256HexSync).sort());
    expect(Object.keys(dss.vri)).toEqual([sha1Upper(cms)]);
    expect(vriKey(signature?.contents ?? new Uint8Array())).toBe(sha1Upper(cms));
    expect(dss.vri[sha1Upper(cms)]).toEqual({ cert: 4, ocsp: 0, crl: 0 });
  });

  it('merges into an existing /DSS: identical blobs written once, earlier entries kept', async () => {
    const signed = await signPdf(await placeholderPdf(), signer);
    const cms = der(signatures(signed)[0]?.contents ?? new Uint8Array());
    const firstCerts = [pki.rsa.certDer, pki.intermediate.certDer];
    const once = await appendValidationData(signed, { certs: firstCerts, ocsps: [], crls: [] }, [
      { signatureContents: cms, certs: firstCerts, ocsps: [], crls: [] },
    ]);
    // Fake revocation blobs are fine here: the store holds bytes, it does not judge them.
    const ocsp = new Uint8Array([0x30, 0x03, 0x0a, 0x01, 0x00]);
    const secondCerts = [pki.intermediate.certDer, pki.root.certDer];
    const twice = await appendValidationData(once, { certs: secondCerts, ocsps: [ocsp], crls: [] }, [
      { signatureContents: cms, certs: secondCerts, ocsps: [ocsp], crls: [] },
    ]);
    const thrice = await appendValidationData(twice, { certs: firstCerts, ocsps: [ocsp], crls: [] });

    expect(Buffer.from(twice.subarray(0, once.length)).equals(Buffer.from(once))).toBe(true);
    await qpdfCheck(thrice);
    const dss = await readDss(thrice);
    expect(dss).toMatchObject({ certs: 3, ocsps: 1, crls: 0 });
    expect(dss.certSha256.sort()).toEqual(
      [pki.rsa.certDer, pki.intermediate.certDer, pki.root.certDer].map(sha256HexSync).sort(),
    );
    expect(dss.vri).toEqual({ [sha1Upper(cms)]: { cert: 3, ocsp: 1, crl: 0 } });
    expect(await pdfsig(thrice)).toContain('Signature Validation: Signature is Valid.');
  });
});

describe('appendValidationData with the ICP-Brasil AD-RA artifacts', () => {
  it('writes each artifact once into the /DSS PBAD arrays and references it from every /VRI entry written', async () => {
    const signed = await signPdf(await placeholderPdf(), signer);
    const cms = der(signatures(signed)[0]?.contents ?? new Uint8Array());
    // Stand-in bytes: the writer stores the artifacts, it does not judge them (the service checks them at start).
    const artifacts = {
      policy: new Uint8Array([0x30, 0x01, 0x01]),
      lpa: new Uint8Array([0x30, 0x01, 0x02]),
      lpaSignature: new Uint8Array([0x30, 0x01, 0x03]),
    };
    const certs = [pki.rsa.certDer];
    const once = await appendValidationData(
      signed,
      { certs, ocsps: [], crls: [] },
      [{ signatureContents: cms, certs, ocsps: [], crls: [] }],
      artifacts,
    );
    // A second update for another signature (as the document timestamp's) finds the artifacts already there.
    const other = new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x07]);
    const twice = await boundedLtvWriter.appendValidationData(
      once,
      { certs, ocsps: [], crls: [] },
      [{ signatureContents: other, certs, ocsps: [], crls: [] }],
      artifacts,
    );
    await qpdfCheck(twice);
    const script = `
import hashlib, json, sys, pikepdf
dss = pikepdf.open(sys.argv[1]).Root.DSS
out = {'dss': {k[1:]: [(hashlib.sha256(s.read_bytes()).hexdigest(), s.objgen[0]) for s in dss[k]]
               for k in ('/PBAD_PolicyArtifacts', '/PBAD_LpaArtifacts', '/PBAD_LpaSignatures')},
       'vri': {name[1:]: {k[1:]: e[k].objgen[0] for k in ('/PBAD_PolicyArtifact', '/PBAD_LpaArtifact', '/PBAD_LpaSignature')}
               for name, e in dss.VRI.items()}}
print(json.dumps(out))
`;
    const read = JSON.parse((await run(PYTHON, ['-c', script, await file(twice)])).stdout) as {
      dss: Record<string, [string, number][]>;
      vri: Record<string, Record<string, number>>;
    };
    const arrays = {
      PBAD_PolicyArtifacts: artifacts.policy,
      PBAD_LpaArtifacts: artifacts.lpa,
      PBAD_LpaSignatures: artifacts.lpaSignature,
    };
    const objects: Record<string, number> = {};
    for (const [key, bytes] of Object.entries(arrays)) {
      expect(read.dss[key]?.map(([d]) => d)).toEqual([sha256HexSync(bytes)]);
      objects[key.slice(0, -1)] = read.dss[key]?.[0]?.[1] ?? -1;
    }
    expect(Object.keys(read.vri).sort()).toEqual([sha1Upper(cms), sha1Upper(other)].sort());
    for (const entry of Object.values(read.vri)) expect(entry).toEqual(objects);
    expect(await pdfsig(twice)).toContain('Signature Validation: Signature is Valid.');
  });
});

describe('appendDocumentTimestamp', () => {
  it('adds a /DocTimeStamp over the whole file that openssl and pdfsig accept', async () => {
    const signed = await signPdf(await placeholderPdf(), signer, tsa);
    const { pdf, token } = await appendDocumentTimestamp(signed, tsa);
    expect(Buffer.from(pdf.subarray(0, signed.length)).equals(Buffer.from(signed))).toBe(true);
    await qpdfCheck(pdf);

    const all = signatures(pdf);
    expect(all).toHaveLength(2);
    const stamp = all[1];
    const [a = 0, , c = 0, d = 0] = stamp?.byteRange ?? [];
    expect(a).toBe(0);
    expect(c + d).toBe(pdf.length);
    expect(Buffer.from(der(stamp?.contents ?? new Uint8Array())).equals(Buffer.from(token))).toBe(true);
    const text = Buffer.from(pdf).toString('latin1');
    expect(text).toMatch(/\/Type \/DocTimeStamp/);
    expect(text).toMatch(/\/SubFilter \/ETSI\.RFC3161/);

    await expectTimestampVerifies(pdf, stamp?.byteRange ?? [], token);

    const out = await pdfsig(pdf);
    expectPdfsigBoth(out);
    expect(out.split('Signature #2:')[1]).toContain('Total document signed');
  });
});

describe("other writers' files", () => {
  it('a file with object and cross-reference streams gets both updates as cross-reference streams', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    const original = await doc.save({ useObjectStreams: true });
    expect(Buffer.from(original).toString('latin1')).toContain('/Type /XRef');
    const withDss = await appendValidationData(original, { certs: [pki.root.certDer], ocsps: [], crls: [] });
    const { pdf } = await appendDocumentTimestamp(withDss, tsa);
    expect(Buffer.from(pdf.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
    await qpdfCheck(pdf);
    expect((await readDss(pdf)).certs).toBe(1);
    const [stamp] = signatures(pdf);
    await expectTimestampVerifies(pdf, stamp?.byteRange ?? [], der(stamp?.contents ?? new Uint8Array()));
  });

  it('a token larger than the first placeholder is placed by a second request sized to it', async () => {
    const calls: number[] = [];
    // A stand-in TSA answering 20 000 bytes of DER (the writer does not read the token, it places it).
    const big = new Uint8Array(20_004);
    big.set([0x04, 0x82, 0x4e, 0x20]);
    const stub = {
      timestamp: async (digest: Uint8Array) => {
        calls.push(digest.length);
        return { token: big };
      },
    };
    const signed = await signPdf(await placeholderPdf(), signer);
    const { pdf, token } = await appendDocumentTimestamp(signed, stub);
    expect(calls).toEqual([32, 32]);
    expect(token).toBe(big);
    await qpdfCheck(pdf);
    const [, stamp] = signatures(pdf);
    expect(Buffer.from(der(stamp?.contents ?? new Uint8Array())).equals(Buffer.from(big))).toBe(true);
  });

  it('a /DSS of Flate bombs is refused past the decoding budget, not inflated without end', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    // 40 MiB of zeros each, about 40 KB compressed: past the per-stream bound, and five pass the total.
    const bomb = deflateSync(Buffer.alloc(40 * 1024 * 1024));
    const refs = Array.from({ length: 5 }, () =>
      doc.context.register(doc.context.stream(bomb, { Filter: 'FlateDecode' })),
    );
    doc.catalog.set(PDFName.of('DSS'), doc.context.obj({ Certs: refs }));
    const hostile = await doc.save({ useObjectStreams: false });
    await expect(
      appendValidationData(hostile, { certs: [pki.root.certDer], ocsps: [], crls: [] }),
    ).rejects.toThrow(/the \/DSS streams decode to more than/);
    // The same in the service's bounded worker: refused, the calling thread untouched.
    await expect(
      boundedLtvWriter.appendValidationData(hostile, { certs: [pki.root.certDer], ocsps: [], crls: [] }),
    ).rejects.toThrow(/the \/DSS streams decode to more than|past a bound/);
  });

  it('an encrypted file is refused with a reason, before any TSA request', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    const plain = await file(await doc.save());
    const encrypted = `${plain}.enc.pdf`;
    await run('qpdf', ['--encrypt', 'user', 'owner', '256', '--', plain, encrypted]);
    const bytes = new Uint8Array(await readFile(encrypted));
    const requests = tsaServer.requests;
    await expect(appendDocumentTimestamp(bytes, tsa)).rejects.toThrow(/encrypted PDF/);
    await expect(
      appendValidationData(bytes, { certs: [pki.root.certDer], ocsps: [], crls: [] }),
    ).rejects.toThrow(/encrypted PDF/);
    expect(tsaServer.requests).toBe(requests);
  });
});

describe('signPdfAtLevel', () => {
  it('B-LTA with the test PKI (no AIA): DSS gets the certificates, level B-T with the shortfall', async () => {
    const original = await placeholderPdf();
    const gathered: (readonly Uint8Array[])[] = [];
    const gather: GatherValidationData = async (chain) => {
      gathered.push(chain);
      return {
        material: { certs: [], ocsps: [], crls: [] },
        missing: [{ subject: 'Notary Test Signer', reason: 'no OCSP or CRL URL in the certificate' }],
      };
    };
    const result = await signPdfAtLevel(original, signer, { level: 'B-LTA', tsa, gather });
    expect(result.level).toBe('B-T');
    expect(result.shortfall).toEqual([
      'no revocation data for certificate "Notary Test Signer": no OCSP or CRL URL in the certificate',
    ]);
    expect(gathered).toHaveLength(2);
    // The signer chain and the signature timestamp's TSA chain, once each.
    expect(gathered[0]?.map(sha256HexSync).sort()).toEqual(
      [pki.rsa.certDer, pki.intermediate.certDer, pki.root.certDer, pki.tsa.certDer]
        .map(sha256HexSync)
        .sort(),
    );
    await qpdfCheck(result.pdf);
    const dss = await readDss(result.pdf);
    expect(dss).toMatchObject({ certs: 4, ocsps: 0, crls: 0 });
    const [signature, stamp] = signatures(result.pdf);
    expect(Object.keys(dss.vri).sort()).toEqual(
      [signature, stamp].map((s) => sha1Upper(der(s?.contents ?? new Uint8Array()))).sort(),
    );
    await expectTimestampVerifies(
      result.pdf,
      stamp?.byteRange ?? [],
      der(stamp?.contents ?? new Uint8Array()),
    );
    // Four revisions: the signed file (its signature covers it all), the /DSS, the document timestamp (its
    // range ends where the last /DSS update starts) and the /DSS of the timestamp's chain.
    const text = Buffer.from(result.pdf).toString('latin1');
    expect(text.match(/%%EOF/g)).toHaveLength(4);
    const [, , c = 0, d = 0] = signature?.byteRange ?? [];
    expect(text.slice(0, c + d).endsWith('%%EOF')).toBe(true);
    const [, , sc = 0, sd = 0] = stamp?.byteRange ?? [];
    expect(text.slice(0, sc + sd).endsWith('%%EOF\n')).toBe(true);
    expectPdfsigBoth(await pdfsig(result.pdf));
  });

  it('B-LTA reached when every certificate is covered', async () => {
    const result = await signPdfAtLevel(await placeholderPdf(), signer, {
      level: 'B-LTA',
      tsa,
      gather: noRevocation,
    });
    expect(result).toMatchObject({ level: 'B-LTA', shortfall: [] });
    await qpdfCheck(result.pdf);
  });

  it('in a bounded worker thread (what the service uses): the same B-LTA file structure', async () => {
    const result = await signPdfAtLevel(await placeholderPdf(), signer, {
      level: 'B-LTA',
      tsa,
      gather: noRevocation,
      writer: boundedLtvWriter,
    });
    expect(result).toMatchObject({ level: 'B-LTA', shortfall: [] });
    await qpdfCheck(result.pdf);
    expect(Buffer.from(result.pdf).toString('latin1').match(/%%EOF/g)).toHaveLength(4);
    const dss = await readDss(result.pdf);
    expect(dss.certs).toBe(4);
    expect(Object.keys(dss.vri)).toHaveLength(2);
    const [, stamp] = signatures(result.pdf);
    await expectTimestampVerifies(
      result.pdf,
      stamp?.byteRange ?? [],
      der(stamp?.contents ?? new Uint8Array()),
    );
  });

  it('B-B and B-T are plain signatures; a missing TSA or revocation source is an error', async () => {
    const bb = await signPdfAtLevel(await placeholderPdf(), signer, { level: 'B-B' });
    expect(bb.level).toBe('B-B');
    expect(signatures(bb.pdf)).toHaveLength(1);
    const bt = await signPdfAtLevel(await placeholderPdf(), signer, { level: 'B-T', tsa });
    expect(bt.level).toBe('B-T');
    await expect(signPdfAtLevel(await placeholderPdf(), signer, { level: 'B-T' })).rejects.toThrow(/TSA/);
    await expect(signPdfAtLevel(await placeholderPdf(), signer, { level: 'B-LT', tsa })).rejects.toThrow(
      /revocation/,
    );
  });
});

/**
 * With real revocation services: the revocation test PKI's certificates name its loopback OCSP responder and
 * CRLs, and `@notary/verify`'s `gatherValidationMaterial` fetches and checks them (what the service's
 * revocation adapter wraps). `openssl ocsp` re-reads what the /DSS holds.
 */
describe('signPdfAtLevel with OCSP and CRLs', () => {
  let rpki: RevocationPki;
  let rsigner: DocumentSigner;
  let rtsa: HttpTimestampAuthority;
  const gather: GatherValidationData = (chain) => gatherValidationMaterial(chain, { timeoutMs: 5_000 });

  beforeAll(async () => {
    rpki = await startRevocationPki();
    rsigner = await loadFileSigner(rpki.signerFiles);
    rtsa = new HttpTimestampAuthority({ url: rpki.tsaUrl, trustedCertificates: [rpki.root.certDer] });
  });
  afterAll(async () => {
    await rpki?.stop();
  });
  afterEach(() => {
    rpki.setOcsp('ok');
    rpki.setCrl('ok');
  });

  /** Each /DSS OCSP response as `openssl ocsp -respin` reads it (no verification: the status lines). */
  async function dssOcspStatuses(pdf: Uint8Array): Promise<string[]> {
    const script = `
import sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
for i, s in enumerate(pdf.Root.DSS.get('/OCSPs') or []):
    open(f'{sys.argv[2]}-{i}.der', 'wb').write(s.read_bytes())
print(len(pdf.Root.DSS.get('/OCSPs') or []))
`;
    const prefix = path.join(tmp, `ocsp${++fileCount}`);
    const { stdout } = await run(PYTHON, ['-c', script, await file(pdf), prefix]);
    const statuses: string[] = [];
    for (let i = 0; i < Number(stdout.trim()); i += 1) {
      const text = await run('openssl', ['ocsp', '-respin', `${prefix}-${i}.der`, '-resp_text', '-noverify']);
      statuses.push(...[...text.stdout.matchAll(/Cert Status: (\w+)/g)].map((m) => m[1] ?? ''));
    }
    return statuses;
  }

  it('B-LTA: OCSP answers for the signer, the TSA and the intermediate in the /DSS and in each /VRI', async () => {
    const result = await signPdfAtLevel(await placeholderPdf(), rsigner, {
      level: 'B-LTA',
      tsa: rtsa,
      gather,
    });
    expect(result).toMatchObject({ level: 'B-LTA', shortfall: [] });
    await qpdfCheck(result.pdf);
    const dss = await readDss(result.pdf);
    // Signer, TSA (delegated responder of the intermediate) and intermediate (the root answers); the root has
    // none. The document timestamp's TSA is the same: its answer is the stored one if unchanged.
    expect(dss.ocsps).toBeGreaterThanOrEqual(3);
    expect(dss.crls).toBe(0);
    expect(dss.certSha256).toEqual(
      expect.arrayContaining(
        [rpki.signer.certDer, rpki.intermediate.certDer, rpki.root.certDer, rpki.tsa.certDer].map(
          sha256HexSync,
        ),
      ),
    );
    expect(await dssOcspStatuses(result.pdf)).toEqual(Array(dss.ocsps).fill('good'));
    expectPdfsigRevocationPki(await pdfsig(result.pdf, rpki.nssDir));
    const [signature, stamp] = signatures(result.pdf);
    const signatureKey = sha1Upper(der(signature?.contents ?? new Uint8Array()));
    expect(dss.vri[signatureKey]?.ocsp).toBe(3);
    expect(dss.vri[sha1Upper(der(stamp?.contents ?? new Uint8Array()))]?.ocsp).toBe(2);
    await run('openssl', [
      'ts',
      '-verify',
      '-data',
      await file(
        (() => {
          const [a = 0, b = 0, c = 0, d = 0] = stamp?.byteRange ?? [];
          return Buffer.concat([result.pdf.subarray(a, a + b), result.pdf.subarray(c, c + d)]);
        })(),
        'bin',
      ),
      '-in',
      await file(der(stamp?.contents ?? new Uint8Array()), 'tok'),
      '-token_in',
      '-CAfile',
      rpki.caChainPath,
    ]);
  });

  it('a chain given without its CAs: the gap is named, and `issuers` completes the chain', async () => {
    // The other test PKI's signer, alone: its intermediate is neither in its chain nor in the LTV TSA's token.
    const bare: DocumentSigner = { ...signer, certificateChain: [pki.rsa.certDer] };
    const seen: (readonly Uint8Array[])[] = [];
    const recording: GatherValidationData = (chain) => {
      seen.push(chain);
      return gather(chain);
    };
    const alone = await signPdfAtLevel(await placeholderPdf(), bare, {
      level: 'B-LT',
      tsa: rtsa,
      gather: recording,
    });
    expect(alone.level).toBe('B-T');
    expect(alone.shortfall).toContain(
      'no issuer certificate for "Notary Test Signer" in its chain: its revocation data cannot be gathered',
    );

    seen.length = 0;
    const completed = await signPdfAtLevel(await placeholderPdf(), bare, {
      level: 'B-LT',
      tsa: rtsa,
      gather: recording,
      issuers: [rpki.root.certDer, pki.root.certDer, pki.intermediate.certDer],
    });
    // Completed up to its root; still B-T, now for the reason that remains (that PKI names no OCSP or CRL).
    expect(seen[0]?.map(sha256HexSync)).toEqual(
      expect.arrayContaining(
        [pki.rsa.certDer, pki.intermediate.certDer, pki.root.certDer].map(sha256HexSync),
      ),
    );
    expect(completed.level).toBe('B-T');
    expect(completed.shortfall.join('\n')).not.toContain('no issuer certificate');
    expect(completed.shortfall.join('\n')).toMatch(/CN=Notary Test Signer/);
  });

  it('B-LT with the OCSP responder down: CRLs instead', async () => {
    rpki.setOcsp('down');
    const result = await signPdfAtLevel(await placeholderPdf(), rsigner, {
      level: 'B-LT',
      tsa: rtsa,
      gather,
    });
    expect(result).toMatchObject({ level: 'B-LT', shortfall: [] });
    await qpdfCheck(result.pdf);
    const dss = await readDss(result.pdf);
    // One CRL per issuer: the intermediate's (signer, TSA) and the root's (intermediate).
    expect(dss).toMatchObject({ ocsps: 0, crls: 2 });
    expect(signatures(result.pdf)).toHaveLength(1);
  });

  it('OCSP and CRLs down: B-T with the certificates named, the validation data there is still stored', async () => {
    rpki.setOcsp('down');
    rpki.setCrl('down');
    const result = await signPdfAtLevel(await placeholderPdf(), rsigner, {
      level: 'B-LTA',
      tsa: rtsa,
      gather,
    });
    expect(result.level).toBe('B-T');
    // Each certificate once (the document timestamp's TSA chain repeats two of them), with both failures.
    expect(result.shortfall).toHaveLength(3);
    for (const name of ['Notary LTV Signer', 'Notary LTV TSA', 'Notary LTV Intermediate CA']) {
      expect(result.shortfall.join('\n')).toMatch(
        new RegExp(
          `no revocation data for certificate "[^"]*CN=${name}": OCSP \\S+: HTTP 503; CRL \\S+: HTTP 503`,
        ),
      );
    }
    await qpdfCheck(result.pdf);
    const dss = await readDss(result.pdf);
    expect(dss).toMatchObject({ ocsps: 0, crls: 0 });
    expect(dss.certs).toBeGreaterThanOrEqual(4);
    // pdfsig (NSS asks the same responders itself) still finds the signature intact.
    expect(await pdfsig(result.pdf, rpki.nssDir)).toContain('Signature Validation: Signature is Valid.');
  });
});

/**
 * pdfsig with the revocation PKI's NSS database (NSS checks revocation online through the certificates' AIA):
 * the signature stays valid and trusted after the updates.
 */
function expectPdfsigRevocationPki(out: string): void {
  const [, first = ''] = out.split(/Signature #\d+:/);
  expect(first).toContain('Signature Validation: Signature is Valid.');
  expect(first).toContain('Certificate Validation: Certificate is Trusted.');
}
