/**
 * Check 6 judged at a time T with only what the certificate carries: PAdES files signed with the revocation
 * test PKI (`test/harness/revocation-pki.ts`: AIA OCSP and CRL URLs on loopback, revocation controls, a
 * short-lived signer) at B-B, B-T, B-LT and B-LTA by the writer (`signPdfAtLevel`, `@notary/pdf/ltv`), the
 * validation data gathered by `gatherValidationMaterial` from the PKI's real `openssl ocsp` responder.
 * poppler's `pdfsig` reads the same files independently (signature count, validity, tampering). Every
 * offline judgement is given a fetch that records calls: none may happen.
 */
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SignatureTimestamper, VerifiedTimestamper } from '@notary/pdf/cades';
import { appendDocumentTimestamp, appendValidationData } from '@notary/pdf/ltv';
import { type SignatureLevel, signPdf, signPdfAtLevel } from '@notary/pdf/pades';
import { gatherValidationMaterial } from '@notary/trust/revocation';
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFRef } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedUnderPolicy, trustedTokenChain } from '../../test/harness/icp-brasil.ts';
import { pemCmsSigner, placeholderPdf } from '../../test/harness/pades-pdfs.ts';
import { createTestPki, newKeyRequest, opensslIn, pemToDer, type TestPki } from '../../test/harness/pki.ts';
import { type RevocationPki, startRevocationPki } from '../../test/harness/revocation-pki.ts';
import { parseRfc3339, runCli } from './cli.ts';
import { render } from './messages/index.ts';
import { untranslatedTexts } from './messages/messages.testing.ts';
import { checkPadesSignature } from './pades/index.ts';
import { changesAfter, readPdfSignatures } from './pdf-signatures.ts';
import { parseReceipt } from './receipt.ts';
import type { CheckResult } from './report.ts';
import { verify } from './verify.ts';

const run = promisify(execFile);
const HOUR = 3_600_000;

let tmp: string;
let fileCount = 0;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-pades-at-'));
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function file(bytes: Uint8Array, ext = 'pdf'): Promise<string> {
  fileCount += 1;
  const p = path.join(tmp, `f${fileCount}.${ext}`);
  await writeFile(p, bytes);
  return p;
}

/**
 * A version 1 receipt of a one-byte file, with no Merkle proof, anchor or token: check 6 alone has something
 * to judge. `sha256` defaults to the file's own.
 */
function anchorlessReceipt(id: string, serialNumber: string, file: Uint8Array, sha256?: string) {
  return {
    format: 'notary-receipt',
    version: 1,
    service: { name: 'Notary', url: 'http://localhost:3000' },
    document: {
      id,
      serialNumber,
      sha256: sha256 ?? createHash('sha256').update(file).digest('hex'),
      fileName: 'f.bin',
      fileSize: file.length,
      mimeType: 'application/octet-stream',
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
    merkle: null,
    evm: null,
    stacks: null,
    timestamp: null,
  };
}

/** A fetch that records every call and answers none: offline judgements must not call it. */
function fetchSpy(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  const spy = (async (input: Parameters<typeof fetch>[0]) => {
    calls.push(String(input instanceof Request ? input.url : input));
    throw new Error('no request expected');
  }) as typeof fetch;
  return { fetch: spy, calls };
}

/** A fetch that records every call and forwards it (the `--online` case). */
function recordingFetch(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  const spy = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    calls.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: spy, calls };
}

/**
 * RFC 3161 client made of the openssl CLI (query and token extraction) and fetch, for the loopback TSA;
 * `certReq` false asks for a token without the TSA's certificate.
 */
function opensslTsaClient(url: string, certReq = true): VerifiedTimestamper {
  return {
    timestamp: async (digest) => {
      const query = path.join(tmp, `q${++fileCount}.tsq`);
      await run('openssl', [
        'ts',
        '-query',
        '-digest',
        Buffer.from(digest).toString('hex'),
        '-sha256',
        ...(certReq ? ['-cert'] : []),
        '-out',
        query,
      ]);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query' },
        body: await readFile(query),
      });
      if (!response.ok) throw new Error(`test TSA: HTTP ${response.status}`);
      const reply = await file(new Uint8Array(await response.arrayBuffer()), 'tsr');
      const token = `${reply}.tok`;
      await run('openssl', ['ts', '-reply', '-in', reply, '-token_out', '-out', token]);
      const der = new Uint8Array(await readFile(token));
      return { token: der, chain: trustedTokenChain(der) };
    },
  };
}

async function signAt(
  pki: RevocationPki,
  level: SignatureLevel,
  who: 'signer' | 'shortLived' = 'signer',
  tsa: VerifiedTimestamper = opensslTsaClient(pki.tsaUrl),
): Promise<Uint8Array> {
  const files = pki[who];
  const signed = await signPdfAtLevel(await placeholderPdf(), pemCmsSigner(files.keyPem, files.chainPem), {
    level,
    tsa,
    gather: (chain) => gatherValidationMaterial(chain),
  });
  expect(signed.shortfall).toEqual([]);
  expect(signed.level).toBe(level);
  return signed.pdf;
}

/**
 * A TSA certificate (critical id-kp-timeStamping, the PKI's AIA and CRL URLs) issued by the PKI's intermediate
 * for [notBefore, notAfter] with `openssl ca` (recorded in its index, so the OCSP responder answers for it), and
 * a timestamper signing with it through `openssl ts -reply`.
 */
async function shortLivedTsa(
  pki: RevocationPki,
  notBefore: Date,
  notAfter: Date,
): Promise<{ certDer: Uint8Array; tsa: VerifiedTimestamper }> {
  const dir = await mkdtemp(path.join(tmp, 'short-tsa-'));
  const generalized = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  const cnf = path.join(pki.dir, 'openssl.cnf');
  const at = (name: string) => path.join(dir, name);
  await newKeyRequest(opensslIn(dir), cnf, 'tsa', '/O=Notary Test/CN=Notary LTV Short-Lived TSA');
  await run('openssl', [
    'ca',
    '-batch',
    '-config',
    cnf,
    '-name',
    'intermediate_ca',
    '-rand_serial',
    '-extensions',
    'v_tsa',
    '-startdate',
    generalized(notBefore),
    '-enddate',
    generalized(notAfter),
    '-notext',
    '-in',
    at('tsa.csr'),
    '-out',
    at('tsa.pem'),
  ]);
  await writeFile(at('serial'), '01\n');
  await writeFile(
    at('tsa.cnf'),
    `[tsa]\ndefault_tsa = t\n[t]\nserial = ${at('serial')}\ncrypto_device = builtin\n` +
      `signer_cert = ${at('tsa.pem')}\ncerts = ${pki.caChainPath}\nsigner_key = ${at('tsa.key')}\n` +
      'signer_digest = sha256\ndefault_policy = 1.2.3.4.1\ndigests = sha256\nordering = yes\n' +
      'ess_cert_id_chain = no\ness_cert_id_alg = sha256\n',
  );
  let n = 0;
  const tsa: VerifiedTimestamper = {
    timestamp: async (digest) => {
      n += 1;
      await run('openssl', [
        'ts',
        '-query',
        '-digest',
        Buffer.from(digest).toString('hex'),
        '-sha256',
        '-cert',
        '-out',
        at(`${n}.tsq`),
      ]);
      await run('openssl', [
        'ts',
        '-reply',
        '-config',
        at('tsa.cnf'),
        '-section',
        't',
        '-queryfile',
        at(`${n}.tsq`),
        '-token_out',
        '-out',
        at(`${n}.tok`),
      ]);
      const token = new Uint8Array(await readFile(at(`${n}.tok`)));
      return { token, chain: trustedTokenChain(token) };
    },
  };
  return { certDer: pemToDer(await readFile(at('tsa.pem'), 'utf8')), tsa };
}

/** `pdfsig` stdout trusting the PKI's root (it may exit non-zero on a bad signature; stdout still counts). */
async function pdfsig(pki: RevocationPki, pdf: Uint8Array): Promise<string> {
  const result = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, await file(pdf)]).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
  );
  return result.stdout;
}

const failedLabels = (r: CheckResult) => r.evidence.filter((e) => e.ok === false).map((e) => e.label);
const evidenceText = (r: CheckResult) => r.evidence.map((e) => `${e.label}: ${e.value}`).join('\n');

describe('check 6 at a time T, offline (one PKI)', () => {
  let pki: RevocationPki;
  let anchors: { trustCa: Uint8Array[]; tsaCa: Uint8Array[] };
  let blta: Uint8Array;

  beforeAll(async () => {
    pki = await startRevocationPki();
    anchors = { trustCa: [pki.root.certDer], tsaCa: [pki.root.certDer] };
    blta = await signAt(pki, 'B-LTA');
  });

  afterAll(async () => {
    await pki?.stop();
  });

  const judge = async (pdf: Uint8Array, at: Date): Promise<{ result: CheckResult; calls: string[] }> => {
    const spy = fetchSpy();
    const result = await checkPadesSignature(pdf, { ...anchors, at, fetch: spy.fetch });
    return { result, calls: spy.calls };
  };

  it('reads every signature, its coverage and the /DSS as pdfsig sees them', async () => {
    const read = await readPdfSignatures(blta);
    expect(read.signatures.map((s) => [s.type, s.subFilter, s.coverage.wellFormed])).toEqual([
      ['Sig', 'ETSI.CAdES.detached', true],
      ['DocTimeStamp', 'ETSI.RFC3161', true],
    ]);
    const [sig, dt] = read.signatures;
    expect(sig?.coverage.wholeFile).toBe(false);
    expect(dt?.coverage.end).toBeGreaterThan(sig?.coverage.end ?? 0);
    expect(read.revisions.at(-1)).toBe(blta.length);
    expect(read.dss?.ocsps.length).toBeGreaterThan(0);
    expect(read.dss?.vri.size).toBe(2);
    const later = await changesAfter(blta, sig?.coverage.end ?? 0);
    expect(later.refused).toEqual([]);
    const out = await pdfsig(pki, blta);
    expect(out).toContain('Signature #2');
    expect(out).not.toContain('Signature #3');
  });

  it('B-LTA judged now passes at level B-LTA without any request', async () => {
    const { result, calls } = await judge(blta, new Date());
    expect(result.status, evidenceText(result)).toBe('passed');
    expect(result.pades).toMatchObject({ level: 'B-LTA', notHigher: [], validDocumentTimestamps: 1 });
    expect(evidenceText(result)).toMatch(/signer revocation: .*Notary LTV Signer: good/);
    expect(calls).toEqual([]);
    expect(untranslatedTexts([{ checks: [result] }])).toEqual([]);
  });

  it('a second document timestamp over the first (an archive renewal) keeps B-LTA; both are judged', async () => {
    const renewed = await appendDocumentTimestamp(blta, opensslTsaClient(pki.tsaUrl));
    const read = await readPdfSignatures(renewed.pdf);
    expect(read.signatures.filter((x) => x.documentTimestamp)).toHaveLength(2);
    expect((await pdfsig(pki, renewed.pdf)).match(/Signature #\d+:/g)).toHaveLength(3);
    const { result, calls } = await judge(renewed.pdf, new Date());
    expect(result.status, evidenceText(result)).toBe('passed');
    expect(result.pades).toMatchObject({ level: 'B-LTA', documentTimestamps: 2, validDocumentTimestamps: 2 });
    expect(calls).toEqual([]);
  });

  it('a TSA certificate expired at T passes only when a later document timestamp covers it', async () => {
    // A TSA certificate of the same PKI valid for two hours (issued with the intermediate's `openssl ca`, so its
    // OCSP responder knows it), signing tokens with `openssl ts -reply` in-process.
    const now = Date.now();
    const short = await shortLivedTsa(pki, new Date(now - HOUR), new Date(now + HOUR));
    const first = await signAt(pki, 'B-LTA', 'signer', short.tsa);
    const afterExpiry = new Date(now + 25 * HOUR);
    const alone = (await judge(first, afterExpiry)).result;
    expect(alone.status).toBe('failed');
    expect(failedLabels(alone)).toEqual([
      expect.stringMatching(/^document timestamp .*: chain to --tsa-ca$/),
      'signature timestamp: chain to --tsa-ca',
    ]);
    // Renewed before that TSA certificate expired: a document timestamp from the long-lived TSA, and its data.
    const renewed = await appendDocumentTimestamp(first, opensslTsaClient(pki.tsaUrl));
    const { material } = await gatherValidationMaterial([
      pki.tsa.certDer,
      pki.intermediate.certDer,
      pki.root.certDer,
    ]);
    const archived = await appendValidationData(renewed.pdf, material);
    const { result, calls } = await judge(archived, afterExpiry);
    expect(result.status, evidenceText(result)).toBe('passed');
    expect(result.pades).toMatchObject({ level: 'B-LTA', validDocumentTimestamps: 2 });
    expect(evidenceText(result)).toMatch(
      /signature timestamp: chain to --tsa-ca: trusted at .*proven by a timestamp/,
    );
    expect(calls).toEqual([]);
    expect(untranslatedTexts([{ checks: [alone, result] }])).toEqual([]);
  });

  it('levels B-B, B-T and B-LT are reported with why not higher', async () => {
    const now = new Date();
    const bb = (await judge(await signAt(pki, 'B-B'), now)).result;
    expect(bb.status, evidenceText(bb)).toBe('passed');
    expect(bb.pades).toMatchObject({ level: 'B-B', notHigher: ['no valid signature timestamp'] });
    const bt = (await judge(await signAt(pki, 'B-T'), now)).result;
    expect(bt.pades?.level).toBe('B-T');
    expect(bt.pades?.notHigher.join('\n')).toMatch(/no revocation data in the \/DSS for .*Notary LTV Signer/);
    const blt = (await judge(await signAt(pki, 'B-LT'), now)).result;
    expect(blt.status, evidenceText(blt)).toBe('passed');
    expect(blt.pades).toMatchObject({ level: 'B-LT', notHigher: ['no valid document timestamp'] });
    // Every text of these reports has its Portuguese (messages, not English sentences as data).
    expect(untranslatedTexts([{ checks: [bb, bt, blt] }])).toEqual([]);
  });

  it('the short-lived signer at B-LTA passes after its expiry (timestamps prove it signed before); at B-B it fails', async () => {
    const expiry = new X509Certificate(pki.shortLived.certPem).validToDate;
    const later = new Date(expiry.getTime() + 24 * HOUR);
    const lta = await signAt(pki, 'B-LTA', 'shortLived');
    const { result, calls } = await judge(lta, later);
    expect(result.status, evidenceText(result)).toBe('passed');
    expect(result.pades?.level).toBe('B-LTA');
    expect(evidenceText(result)).toMatch(/chain to --trust-ca: trusted at .*proven by a timestamp/);
    expect(calls).toEqual([]);
    const bb = (await judge(await signAt(pki, 'B-B', 'shortLived'), later)).result;
    expect(bb.status).toBe('failed');
    expect(failedLabels(bb)).toEqual(['chain to --trust-ca']);
  });

  it('a byte changed after signing fails, as pdfsig says', async () => {
    const tampered = new Uint8Array(blta);
    const at = Buffer.from(blta).indexOf('Notarization certificate');
    tampered[at] = 'n'.charCodeAt(0);
    const { result } = await judge(tampered, new Date());
    expect(result.status).toBe('failed');
    expect(failedLabels(result)).toContain('signed messageDigest');
    expect(result.pades?.level).toBeNull();
    expect(await pdfsig(pki, tampered)).toMatch(/Signature Validation: Digest Mismatch/);
  });

  it('a document timestamp whose token is over other bytes fails its message imprint', async () => {
    const real = opensslTsaClient(pki.tsaUrl);
    const wrong: SignatureTimestamper = {
      timestamp: (digest) => real.timestamp(digest.map((b, i) => (i === 0 ? b ^ 1 : b))),
    };
    const blt = await signAt(pki, 'B-LT');
    const { pdf } = await appendDocumentTimestamp(blt, wrong);
    const { result, calls } = await judge(pdf, new Date());
    expect(result.status).toBe('failed');
    expect(failedLabels(result).some((l) => /^document timestamp .*: message imprint$/.test(l))).toBe(true);
    expect(result.pades?.level).toBeNull();
    expect(calls).toEqual([]);
  });

  it('a document timestamp without its TSA certificate is checked with the /DSS copy of it', async () => {
    // B-T: neither the CMS nor a /DSS carries the TSA certificate.
    const bt = await signAt(pki, 'B-T');
    const { pdf, token } = await appendDocumentTimestamp(bt, opensslTsaClient(pki.tsaUrl, false));
    expect(Buffer.from(token).includes(Buffer.from(pki.tsa.certDer))).toBe(false);
    const bare = (await judge(pdf, new Date())).result;
    expect(bare.status).toBe('failed');
    expect(failedLabels(bare).some((l) => /^document timestamp .*: TSA certificate$/.test(l))).toBe(true);
    const withDss = await appendValidationData(pdf, { certs: [pki.tsa.certDer], ocsps: [], crls: [] });
    const { result, calls } = await judge(withDss, new Date());
    expect(result.status, evidenceText(result)).toBe('passed');
    expect(result.pades?.validDocumentTimestamps).toBe(1);
    expect(calls).toEqual([]);
  });

  it('bytes appended, and a later revision that changes the page, fail', async () => {
    const appended = new Uint8Array([...blta, ...new TextEncoder().encode('\n% appended\n')]);
    const a = (await judge(appended, new Date())).result;
    expect(a.status).toBe('failed');
    expect(a.evidence.find((e) => e.ok === false)?.value).toMatch(/bytes were added after signing/);

    // An incremental update (ISO 32000-1 7.5.6) that redefines the page's content stream after the signature.
    const doc = await PDFDocument.load(blta);
    const direct = doc.getPage(0).node.get(PDFName.of('Contents'));
    const contents = direct instanceof PDFArray ? direct.get(0) : direct;
    expect(contents).toBeInstanceOf(PDFRef);
    const text = Buffer.from(blta).toString('latin1');
    const prev = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)?.[1];
    const fonts = doc.getPage(0).node.Resources()?.lookup(PDFName.of('Font'));
    const font = fonts instanceof PDFDict ? fonts.keys()[0]?.toString() : undefined;
    const body = `BT ${font} 18 Tf 50 700 Td (Forged) Tj ET`;
    const obj = `${(contents as PDFRef).objectNumber} 0 obj\n<< /Length ${body.length} >>\nstream\n${body}\nendstream\nendobj\n`;
    const objOffset = blta.length + 1;
    const update =
      `\n${obj}xref\n${(contents as PDFRef).objectNumber} 1\n${String(objOffset).padStart(10, '0')} 00000 n \n` +
      `trailer\n<< /Size ${doc.context.largestObjectNumber + 1} /Root ${String(doc.context.trailerInfo.Root)} /Prev ${prev} >>\n` +
      `startxref\n${objOffset + obj.length}\n%%EOF\n`;
    const forged = new Uint8Array([...blta, ...new TextEncoder().encode(update)]);
    // A sound file that shows the forged text (qpdf and poppler read the update as intended).
    const forgedPath = await file(forged);
    await run('qpdf', ['--check', forgedPath]);
    expect((await run('pdftotext', [forgedPath, '-'])).stdout).toContain('Forged');
    const f = (await judge(forged, new Date())).result;
    expect(f.status, evidenceText(f)).toBe('failed');
    expect(failedLabels(f)).toEqual(['later revisions']);
  });

  it('--online fetches what a B-T file lacks; without it nothing is fetched', async () => {
    const bt = await signAt(pki, 'B-T');
    const offline = fetchSpy();
    const off = await checkPadesSignature(bt, { ...anchors, at: new Date(), fetch: offline.fetch });
    expect(off.status).toBe('passed');
    expect(evidenceText(off)).toMatch(/signer revocation: .*Notary LTV Signer: unknown/);
    expect(offline.calls).toEqual([]);
    const online = recordingFetch();
    const on = await checkPadesSignature(bt, {
      ...anchors,
      at: new Date(),
      online: true,
      fetch: online.fetch,
    });
    expect(on.status, evidenceText(on)).toBe('passed');
    expect(evidenceText(on)).toMatch(/signer revocation: .*Notary LTV Signer: good/);
    expect(online.calls.some((u) => u.startsWith(pki.baseUrl))).toBe(true);
    // The level counts only what the file carries.
    expect(on.pades).toMatchObject({ level: 'B-T', online: true });
  });

  it('the command line asks the URLs a certificate names at public addresses only, unless --allow-private', async () => {
    // The receipt travels in the certificate, as the service's do, so the command line takes the PDF alone.
    const original = new Uint8Array([0]);
    const receipt = anchorlessReceipt('6f1c1d2e-0000-4000-8000-000000000002', 'ABC-2', original);
    const unsigned = await placeholderPdf({
      attach: {
        name: 'receipt.json',
        bytes: new TextEncoder().encode(JSON.stringify(receipt)),
        mimeType: 'application/json',
        description: 'receipt',
        relationship: 'Data',
        modified: new Date(),
      },
    });
    const signed = await signPdfAtLevel(unsigned, pemCmsSigner(pki.signer.keyPem, pki.signer.chainPem), {
      level: 'B-T',
      tsa: opensslTsaClient(pki.tsaUrl),
      gather: (chain) => gatherValidationMaterial(chain),
    });
    const certificate = await file(signed.pdf);
    const filePath = await file(original, 'bin');
    const root = await file(new TextEncoder().encode(pki.root.certPem), 'pem');
    const args = [filePath, '--certificate', certificate, '--trust-ca', root, '--tsa-ca', root, '--json'];
    const check6 = (stdout: string): CheckResult =>
      (JSON.parse(stdout) as { checks: CheckResult[] }).checks[5] as CheckResult;

    const before = { ...pki.requests };
    const refused = await runCli([...args, '--online']);
    expect(pki.requests.ocsp).toBe(before.ocsp);
    expect(pki.requests.crl).toBe(before.crl);
    expect(refused.code, refused.stdout + refused.stderr).toBe(3);
    const partial = check6(refused.stdout);
    expect(partial.status).toBe('partial');
    expect(partial.reason).toBe('unavailable');
    expect(evidenceText(partial)).toMatch(/loopback/);

    const allowed = await runCli([...args, '--online', '--allow-private']);
    expect(pki.requests.ocsp + pki.requests.crl).toBeGreaterThan(before.ocsp + before.crl);
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(evidenceText(check6(allowed.stdout))).toMatch(/signer revocation: .*Notary LTV Signer: good/);

    const alone = await runCli([...args, '--allow-private']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--allow-private goes with --online/);
  });

  it('--online with the responders unreachable or refusing: the signature still holds, check 6 is partial (unavailable), never failed', async () => {
    const bt = await signAt(pki, 'B-T');
    const down = (async () => {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    }) as unknown as typeof fetch;
    const busy = (async () =>
      new Response('Service Unavailable', {
        status: 503,
        headers: { 'content-type': 'text/plain' },
      })) as typeof fetch;
    for (const failing of [down, busy]) {
      const r = await checkPadesSignature(bt, { ...anchors, at: new Date(), online: true, fetch: failing });
      expect(r.status, evidenceText(r)).toBe('partial');
      expect(r.reason).toBe('unavailable');
      expect(r.evidence.filter((e) => e.ok === false)).toEqual([]);
      expect(r.summary).toMatch(
        /not checked: the revocation of .*Notary LTV Signer.* \(--online\) \(http:\/\/127\.0\.0\.1:\d+\/.*: OCSP http/,
      );
      expect(r.evidence).toContainEqual(expect.objectContaining({ label: 'source unavailable' }));
      expect(r.pades).toMatchObject({ level: 'B-T', online: true });
    }
  });

  it('in Portuguese, a responder unreachable, one that does not know the certificate and a path not found leave no English', async () => {
    const bt = await signAt(pki, 'B-T');
    const down = (async () => {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    }) as typeof fetch;
    const unreachable = await checkPadesSignature(bt, {
      ...anchors,
      at: new Date(),
      online: true,
      fetch: down,
    });
    pki.setOcsp('unknown');
    pki.setCrl('down');
    let unknown: CheckResult;
    try {
      unknown = await checkPadesSignature(bt, { ...anchors, at: new Date(), online: true });
    } finally {
      pki.setOcsp('ok');
      pki.setCrl('ok');
    }
    // The signer's own certificate as the only anchor: no path from the TSA's certificate to it.
    const noPath = await checkPadesSignature(bt, {
      trustCa: anchors.trustCa,
      tsaCa: [pki.signer.certDer],
      at: new Date(),
    });
    const english = (r: CheckResult) =>
      [r.summary, ...r.evidence.map((e) => `${e.label}: ${e.value}`)].join('\n');
    expect(english(unreachable)).toMatch(/OCSP http:\/\/127\.0\.0\.1:\d+\/\S+: unreachable: ECONNREFUSED/);
    expect(english(unknown)).toMatch(/the responder does not know the certificate/);
    expect(noPath.status, english(noPath)).toBe('failed');
    expect(english(noPath)).toMatch(/chain to --tsa-ca: /);
    const pt = (r: CheckResult) =>
      [r.summaryMessage, ...r.evidence.map((e) => e.valueMessage)]
        .map((m) => (m ? render(m, 'pt') : ''))
        .join('\n');
    expect(pt(unreachable)).toMatch(/inalcançável: ECONNREFUSED/);
    expect(pt(unknown)).toMatch(/o respondedor não conhece o certificado/);
    // pkijs' own words for the path not found are shown as they are; the revocation verdicts are translated.
    expect(pt(noPath)).toMatch(/Notary LTV TSA: No valid certificate paths found/);
    expect(pt(noPath)).toMatch(
      /desconhecido \(nenhuma das 0 respostas OCSP e 0 LCRs trata deste certificado\)/,
    );
    expect(untranslatedTexts([{ checks: [unreachable, unknown, noPath] }])).toEqual([]);
  });

  it('verify() and the command line take --at and --online', async () => {
    const receipt = parseReceipt(
      anchorlessReceipt('6f1c1d2e-0000-4000-8000-000000000001', 'ABC-1', new Uint8Array([0]), '0'.repeat(64)),
    );
    const spy = fetchSpy();
    const at = new Date(Date.now() + HOUR);
    const report = await verify({
      file: new Uint8Array([0]),
      receipt,
      certificate: blta,
      ...anchors,
      at,
      fetch: spy.fetch,
      checks: [6],
    });
    expect(report.checks[5]?.pades).toMatchObject({ at: at.toISOString(), level: 'B-LTA', online: false });
    expect(spy.calls).toEqual([]);

    expect(parseRfc3339('2031-05-01T12:00:00Z')?.toISOString()).toBe('2031-05-01T12:00:00.000Z');
    expect(parseRfc3339('2031-05-01t14:00:00.5+02:00')?.toISOString()).toBe('2031-05-01T12:00:00.500Z');
    for (const bad of ['2031-02-30T00:00:00Z', '2031-05-01', 'tomorrow', '2031-05-01T12:00:00']) {
      expect(parseRfc3339(bad)).toBeNull();
    }
    const receiptPath = await file(new TextEncoder().encode(JSON.stringify(receipt)), 'json');
    const filePath = await file(new Uint8Array([0]), 'bin');
    const bad = await runCli([filePath, '--receipt', receiptPath, '--at', 'tomorrow']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--at: an RFC 3339 date-time/);
  });
});

describe('check 6 at a time T: revocation (a PKI of its own, its signer revoked)', () => {
  let pki: RevocationPki;
  let anchors: { trustCa: Uint8Array[]; tsaCa: Uint8Array[] };

  beforeAll(async () => {
    pki = await startRevocationPki();
    anchors = { trustCa: [pki.root.certDer], tsaCa: [pki.root.certDer] };
  });

  afterAll(async () => {
    await pki?.stop();
  });

  it('a signer revoked before signing fails after the revocation and passes before it', async () => {
    // T0: every certificate of the chains is valid; the revocation comes one second later, then signing.
    const notBefore = (pem: string) => new X509Certificate(pem).validFromDate.getTime();
    const t0 = new Date(
      Math.max(
        notBefore(pki.signer.certPem),
        notBefore(pki.tsa.certPem),
        notBefore(pki.intermediate.certPem),
      ),
    );
    const revokedAt = new Date(t0.getTime() + 1000);
    const wait = revokedAt.getTime() + 1000 - Date.now();
    // The signature must come after the revocation time (second precision): wait for the clock, once.
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await pki.revoke('signer', { at: revokedAt, reason: 'keyCompromise' });
    const pdf = await signAt(pki, 'B-LTA');
    const read = await readPdfSignatures(pdf);
    expect(read.dss?.ocsps.length).toBeGreaterThan(0);

    const spy = fetchSpy();
    const after = await checkPadesSignature(pdf, { ...anchors, at: new Date(), fetch: spy.fetch });
    expect(after.status, evidenceText(after)).toBe('failed');
    expect(failedLabels(after)).toEqual(['chain to --trust-ca']);
    expect(evidenceText(after)).toMatch(/Notary LTV Signer revoked at /);
    const before = await checkPadesSignature(pdf, { ...anchors, at: t0, fetch: spy.fetch });
    expect(before.status, evidenceText(before)).toBe('passed');
    expect(spy.calls).toEqual([]);
  });

  it('a lying OCSP answer (rogue responder) in the /DSS gives no verdict: not B-LT', async () => {
    const signer = pemCmsSigner(pki.shortLived.keyPem, pki.shortLived.chainPem);
    const bt = await signPdf(await placeholderPdf(), signer, opensslTsaClient(pki.tsaUrl));
    pki.setOcsp('lying');
    try {
      const ocsp = async (cert: string, ca: 'root' | 'intermediate') => {
        const req = path.join(tmp, `ocsp${++fileCount}.req`);
        await run('openssl', ['ocsp', '-issuer', pki.caPath(ca), '-cert', cert, '-reqout', req, '-no_nonce']);
        const res = await fetch(pki.ocspUrl(ca), {
          method: 'POST',
          headers: { 'content-type': 'application/ocsp-request' },
          body: await readFile(req),
        });
        return new Uint8Array(await res.arrayBuffer());
      };
      const material = {
        certs: [pki.shortLived.certDer, pki.tsa.certDer, pki.intermediate.certDer, pki.root.certDer],
        ocsps: [
          await ocsp(pki.shortLived.certPath, 'intermediate'),
          await ocsp(pki.tsa.certPath, 'intermediate'),
          await ocsp(pki.intermediate.certPath, 'root'),
        ],
        crls: [],
      };
      const lying = await appendValidationData(bt, material);
      const spy = fetchSpy();
      const result = await checkPadesSignature(lying, { ...anchors, at: new Date(), fetch: spy.fetch });
      expect(result.pades?.level, evidenceText(result)).toBe('B-T');
      expect(evidenceText(result)).toMatch(/signer revocation: .*Notary LTV Short-Lived Signer: unknown/);
      expect(spy.calls).toEqual([]);
    } finally {
      pki.setOcsp('ok');
    }
  });
});

describe('hostile signature dictionaries and /DSS give a failed check with the reason, never a crash', () => {
  /** A one-page PDF whose objects `dress` adds (as a hostile writer would). */
  async function hostile(dress: (doc: PDFDocument) => void): Promise<Uint8Array> {
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    dress(doc);
    return doc.save({ useObjectStreams: false });
  }
  const at = new Date();

  it('a /ByteRange of three numbers, a /Contents that is not a string, too many signatures', async () => {
    const cases: [string, (doc: PDFDocument) => void, RegExp][] = [
      [
        'three numbers',
        (doc) => {
          doc.context.register(
            doc.context.obj({ Type: 'Sig', ByteRange: [0, 1, 2], Contents: PDFHexString.of('3000') }),
          );
        },
        /\/ByteRange is not four non-negative integers/,
      ],
      [
        'contents a number',
        (doc) => {
          doc.context.register(doc.context.obj({ Type: 'Sig', ByteRange: [0, 1, 2, 3], Contents: 7 }));
        },
        /\/Contents is not a string/,
      ],
      [
        'sixty-five signatures',
        (doc) => {
          for (let i = 0; i < 65; i++) {
            doc.context.register(
              doc.context.obj({ Type: 'Sig', ByteRange: [0, 1, 2, 3], Contents: PDFHexString.of('30') }),
            );
          }
        },
        /more than 64 signature dictionaries/,
      ],
      [
        'a /DSS /Certs entry that is not a stream',
        (doc) => {
          doc.catalog.set(PDFName.of('DSS'), doc.context.obj({ Certs: [5] }));
          doc.context.register(
            doc.context.obj({ Type: 'Sig', ByteRange: [0, 1, 2, 3], Contents: PDFHexString.of('30') }),
          );
        },
        /\/DSS \/Certs entry 0 is not a stream/,
      ],
    ];
    for (const [what, dress, reason] of cases) {
      const result = await checkPadesSignature(await hostile(dress), { at });
      expect(result.status, what).toBe('failed');
      expect(result.evidence.find((e) => e.ok === false)?.value, what).toMatch(reason);
    }
  });

  it('a /ByteRange whose gap is not its /Contents, or that starts elsewhere, fails at ByteRange', async () => {
    const pdf = await hostile((doc) => {
      doc.context.register(
        doc.context.obj({ Type: 'Sig', ByteRange: [0, 10, 20, 30], Contents: PDFHexString.of('3000') }),
      );
    });
    const result = await checkPadesSignature(pdf, { at });
    expect(result.status).toBe('failed');
    expect(failedLabels(result)).toEqual(['ByteRange']);
    expect(result.evidence.find((e) => e.ok === false)?.value).toMatch(/the gap is not a <hex> string/);
    const notPdf = await checkPadesSignature(new TextEncoder().encode('%PDF-1.7\n garbage'), { at });
    expect(['failed', 'not-run']).toContain(notPdf.status);
  });
});

describe('check 6 of a signature under an ICP-Brasil policy (DOC-ICP-15.03)', () => {
  let pki: TestPki;

  beforeAll(async () => {
    pki = await createTestPki();
  });

  afterAll(async () => {
    await pki?.dispose();
  });

  it('AD-RB: the policy is reported and its table rows hold; a forbidden signingTime fails check 6', async () => {
    const options = { trustCa: [pki.root.certDer], at: new Date() };
    const { pdf } = await signedUnderPolicy(pki, 'icp-brasil-ad-rb');
    const read = await readPdfSignatures(pdf);
    expect(read.signatures.map((x) => [x.filter, x.subFilter])).toEqual([['PBAD_PAdES', 'PBAD.PAdES']]);
    const good = await checkPadesSignature(pdf, options);
    expect(good.status, evidenceText(good)).toBe('passed');
    expect(good.pades?.policy).toMatch(/^AD-RB v[\d.]+ \(2\.16\.76\.1\.7\.1\./);
    expect(good.pades?.level).toBe('B-B');
    expect(good.evidence.some((e) => e.label.startsWith('Tabela A.14') && e.ok === true)).toBe(true);
    const { pdf: timed } = await signedUnderPolicy(pki, 'icp-brasil-ad-rb', { signingTime: true });
    const bad = await checkPadesSignature(timed, options);
    expect(bad.status).toBe('failed');
    expect(failedLabels(bad).length).toBeGreaterThan(0);
    expect(failedLabels(bad).every((l) => l.startsWith('Tabela A.14'))).toBe(true);
    const plain = await checkPadesSignature(
      (await signedUnderPolicy(pki, 'icp-brasil-ad-rb', { policy: null })).pdf,
      options,
    );
    expect(plain.pades?.policy).toBeNull();
  });
});
