/**
 * ICP-Brasil PAdES profile (DOC-ICP-15.03 v9.1, tables A.14 to A.22): PDFs signed by the test PKI under each
 * of the four policies with the writer's code (PBAD placeholder, CMS with the signature-policy-identifier,
 * the loopback TSA for AD-RT/RC/RA), then given DSS, VRI and document timestamp dictionaries (complete,
 * absent, or broken) with pikepdf. Every row `checkIcpBrasilProfile` reports is compared with a second
 * reading that does not use our code: `openssl cms -cmsout -print` on the /Contents CMS and on the signature
 * timestamp token (cut out at the offsets `openssl asn1parse` gives), pikepdf on the dictionaries, and this
 * file's own transcription of the tables.
 */
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SignaturePolicyReference } from '@notary/pdf/cades';
import {
  currentIcpBrasilPolicy,
  ICP_BRASIL_PADES_POLICIES,
  type IcpBrasilPolicyName,
  icpBrasilSignaturePolicy,
} from '@notary/pdf/icp-brasil';
import { PADES_SIGNATURE_LENGTH, signPdfAtLevel } from '@notary/pdf/pades';
import { addSignaturePlaceholder } from '@notary/pdf/placeholder';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ecCmsSigner, rsaCmsSigner, signedUnderPolicy, tsaClient } from '../../test/harness/icp-brasil.ts';
import { createTestPki, type TestPki } from '../../test/harness/pki.ts';
import { startTestTsa, type TestTsa } from '../../test/harness/tsa.ts';
import { runCli } from './cli.ts';
import {
  checkIcpBrasilProfile,
  type IcpBrasilRow,
  icpBrasilConformance,
  icpBrasilSigningPeriodRow,
  readIcpBrasilDictionaries,
  signerInfoOf,
} from './icp-brasil.ts';
import { ICP_BRASIL_ROOTS_PEM } from './icp-brasil-roots.ts';
import { checkPadesSignature } from './pades/index.ts';

const run = promisify(execFile);
/** Debian's python3 (python3-pikepdf), not whatever python3 comes first on PATH. */
const PYTHON = '/usr/bin/python3';

let pki: TestPki;
let tsa: TestTsa;
let tmp: string;

beforeAll(async () => {
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-icp-brasil-'));
});

afterAll(async () => {
  await tsa?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------
// pikepdf: adds the PAdES dictionaries (whole-file rewrite: the CMS bytes stay, the ByteRange no longer
// matches, which these dictionary checks do not look at) and reads every dictionary back.
const PIKEPDF = String.raw`
import hashlib, json, sys
import pikepdf
from pikepdf import Name, Array, Dictionary, String

def der_length(b):
    n = b[1]
    if n < 0x80:
        return 2 + n
    k = n & 0x7f
    return 2 + k + int.from_bytes(b[2:2 + k], 'big')

def entries(d):
    return {str(k)[1:]: (str(d[k]) if isinstance(d[k], Name) else 'present') for k in d.keys()}

def signatures(pdf):
    out = []
    for f in pdf.Root.AcroForm.Fields:
        v = f.get('/V')
        if v is not None and '/ByteRange' in v:
            out.append(v)
    return out

def is_doc_ts(v):
    return v.get('/Type') == Name.DocTimeStamp or v.get('/SubFilter') == Name('/ETSI.RFC3161')

mode = sys.argv[1]
pdf = pikepdf.open(sys.argv[2])
sigs = signatures(pdf)
sig = [v for v in sigs if not is_doc_ts(v)][0]
contents = bytes(sig.Contents)
key = hashlib.sha1(contents[:der_length(contents)]).hexdigest().upper()
if mode == 'read':
    dss = pdf.Root.get('/DSS')
    vri = None
    if dss is not None and '/VRI' in dss and Name('/' + key) in dss.VRI:
        vri = entries(dss.VRI[Name('/' + key)])
    print(json.dumps({
        'sig': entries(sig),
        'dss': entries(dss) if dss is not None else None,
        'vri': vri,
        'policyArtifacts': [hashlib.sha256(a.read_bytes()).hexdigest() for a in dss.PBAD_PolicyArtifacts]
            if dss is not None and '/PBAD_PolicyArtifacts' in dss else None,
        'docts': [entries(v) for v in sigs if is_doc_ts(v)],
    }))
else:
    spec = json.loads(sys.argv[4])
    stream = lambda: pdf.make_stream(b'0')
    if spec.get('sigExtra'):
        sig.Cert = String('x'); sig.R = 65541; sig.Prop_AuthType = Name('/PIN')
    if spec.get('dss'):
        dss = Dictionary(Certs=Array([stream()]))
        if spec.get('dssType', True): dss.Type = Name('/DSS')
        if spec.get('dssOcsps', True): dss.OCSPs = Array([stream()])
        if spec.get('pbad'):
            policy_file = spec.get('pbadPolicyFile')
            artifact = pdf.make_stream(open(policy_file, 'rb').read()) if policy_file else stream()
            dss.PBAD_PolicyArtifacts = Array([artifact]); dss.PBAD_LpaArtifacts = Array([stream()])
            dss.PBAD_LpaSignatures = Array([stream()])
        vris = Dictionary()
        if spec.get('vri'):
            v = Dictionary(OCSP=Array([stream()]))
            if spec.get('vriType', True): v.Type = Name('/VRI')
            if spec.get('vriCert', True): v.Cert = Array([stream()])
            if spec.get('vriTuTs'): v.TU = String('D:20261126000000Z'); v.TS = stream()
            if spec.get('pbad'):
                v.PBAD_PolicyArtifact = stream(); v.PBAD_LpaArtifact = stream(); v.PBAD_LpaSignature = stream()
            vris[Name('/' + key)] = v
        dss.VRI = vris
        pdf.Root.DSS = pdf.make_indirect(dss)
    if spec.get('docTs'):
        ts = Dictionary(Type=Name('/DocTimeStamp'), Filter=Name('/Adobe.PPKLite'),
                        SubFilter=Name('/ETSI.RFC3161' if spec['docTs'] == 'ok' else '/ETSI.CAdES.detached'),
                        ByteRange=Array([0, 0, 0, 0]), Contents=String(b'0\x00'))
        field = pdf.make_indirect(Dictionary(FT=Name('/Sig'), T=String('DocTS'), V=pdf.make_indirect(ts)))
        pdf.Root.AcroForm.Fields.append(field)
    pdf.save(sys.argv[3])
`;

interface PdfView {
  sig: Record<string, string>;
  dss: Record<string, string> | null;
  vri: Record<string, string> | null;
  docts: Record<string, string>[];
  /** SHA-256 (hex) of each /PBAD_PolicyArtifacts stream; null without the array. */
  policyArtifacts: string[] | null;
}

interface DictionarySpec {
  sigExtra?: boolean;
  dss?: boolean;
  dssType?: boolean;
  dssOcsps?: boolean;
  pbad?: boolean;
  /** The file whose bytes the /PBAD_PolicyArtifacts stream holds (default: a one-byte stand-in). */
  pbadPolicyFile?: string;
  vri?: boolean;
  vriType?: boolean;
  vriCert?: boolean;
  vriTuTs?: boolean;
  docTs?: 'ok' | 'bad';
}

async function withDictionaries(pdf: Uint8Array, spec: DictionarySpec, name: string): Promise<Uint8Array> {
  const input = path.join(tmp, `${name}-in.pdf`);
  const output = path.join(tmp, `${name}.pdf`);
  await writeFile(input, pdf);
  await run(PYTHON, ['-c', PIKEPDF, 'edit', input, output, JSON.stringify(spec)]);
  return new Uint8Array(await readFile(output));
}

async function pikepdfView(pdf: Uint8Array, name: string): Promise<PdfView> {
  const file = path.join(tmp, `${name}-view.pdf`);
  await writeFile(file, pdf);
  const { stdout } = await run(PYTHON, ['-c', PIKEPDF, 'read', file]);
  return JSON.parse(stdout) as PdfView;
}

// ---------------------------------------------------------------------------------------------------------
// openssl: the signer's attributes, the policy identifier, and the signature timestamp token's attributes.

interface CmsView {
  signed: string[];
  unsigned: string[];
  /** The text openssl prints for the id-aa-ets-sigPolicyId value (an asn1parse dump), '' when absent. */
  policyBlock: string;
  /** ESSCertIDv2 count in signingCertificateV2 (SEQUENCEs at depth 2 of its dump). */
  essCertIds: number;
  token: { signed: string[]; unsigned: string[] } | null;
  /** Where the token was written, DER (null without one). */
  tokenPath: string | null;
  /** The SignerInfo's digestAlgorithm and signatureAlgorithm OIDs. */
  digest: string;
  signature: string;
}

/** OIDs of `object: name (oid)` lines at the attribute indentation of a `signedAttrs:`/`unsignedAttrs:` block. */
function attributeOids(text: string, block: 'signedAttrs' | 'unsignedAttrs'): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `${block}:`);
  if (start === -1) return [];
  const indent = (lines[start]?.length ?? 0) - (lines[start]?.trimStart().length ?? 0);
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const lead = line.length - line.trimStart().length;
    if (line.trim() !== '' && lead <= indent && !/^\s*\d+:d=/.test(line)) break;
    const m = /^\s*object: .*\(([\d.]+)\)$/.exec(line);
    if (m?.[1] && lead === indent + 4) out.push(m[1]);
  }
  return out;
}

function attributeBlock(text: string, oid: string): string {
  const start = text.indexOf(`(${oid})`);
  if (start === -1) return '';
  const rest = text.slice(start);
  const end = rest.search(/\n\s{12}object: |\n\s{8}signatureAlgorithm:/);
  return end === -1 ? rest : rest.slice(0, end);
}

async function opensslView(cms: Uint8Array, name: string): Promise<CmsView> {
  const file = path.join(tmp, `${name}.cms`);
  await writeFile(file, cms);
  const print = async (f: string) =>
    (await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', f], { maxBuffer: 1 << 24 }))
      .stdout;
  const text = await print(file);
  const essBlock = attributeBlock(text, '1.2.840.113549.1.9.16.2.47');
  const view: CmsView = {
    signed: attributeOids(text, 'signedAttrs'),
    unsigned: attributeOids(text.slice(text.lastIndexOf('signatureAlgorithm:')), 'unsignedAttrs'),
    policyBlock: attributeBlock(text, '1.2.840.113549.1.9.16.2.15'),
    essCertIds: [...essBlock.matchAll(/d=2 +hl=\d+ l= *\d+ cons: +SEQUENCE/g)].length,
    token: null,
    tokenPath: null,
    digest: /\n {8}digestAlgorithm: *\n +algorithm: .*\(([\d.]+)\)/.exec(text)?.[1] ?? '',
    signature: /\n {8}signatureAlgorithm: *\n +algorithm: .*\(([\d.]+)\)/.exec(text)?.[1] ?? '',
  };
  // The token: the SEQUENCE after the id-smime-aa-timeStampToken OID and its SET, cut at openssl's offsets.
  const dump = (await run('openssl', ['asn1parse', '-inform', 'DER', '-in', file], { maxBuffer: 1 << 24 }))
    .stdout;
  const lines = dump.split('\n');
  const at = lines.findIndex((l) => l.includes(':id-smime-aa-timeStampToken'));
  const seq = at === -1 ? undefined : /^\s*(\d+):d=\d+\s+hl=(\d+)\s+l=\s*(\d+)/.exec(lines[at + 2] ?? '');
  if (seq) {
    const [offset, header, length] = [Number(seq[1]), Number(seq[2]), Number(seq[3])];
    const tokenFile = path.join(tmp, `${name}.token`);
    await writeFile(tokenFile, cms.subarray(offset, offset + header + length));
    view.tokenPath = tokenFile;
    const tokenText = await print(tokenFile);
    view.token = {
      signed: attributeOids(tokenText, 'signedAttrs'),
      unsigned: attributeOids(tokenText.slice(tokenText.lastIndexOf('signatureAlgorithm:')), 'unsignedAttrs'),
    };
  }
  return view;
}

// ---------------------------------------------------------------------------------------------------------
// The tables, transcribed here from DOC-ICP-15.03 v9.1 (pp. 31-38) a second time: columns RB RT RC RA.

type Presence = 'O' | 'ND' | 'P';
type Cols = [Presence, Presence, Presence, Presence];
const O: Cols = ['O', 'O', 'O', 'O'];
const ND: Cols = ['ND', 'ND', 'ND', 'ND'];
const RA_ONLY: Cols = ['P', 'P', 'P', 'O'];
const COL: Record<IcpBrasilPolicyName, number> = {
  'icp-brasil-ad-rb': 0,
  'icp-brasil-ad-rt': 1,
  'icp-brasil-ad-rc': 2,
  'icp-brasil-ad-ra': 3,
};
const T14: [string, string, Cols][] = [
  ['id-contentType', '1.2.840.113549.1.9.3', O],
  ['id-messageDigest', '1.2.840.113549.1.9.4', O],
  ['id-aa-signingCertificate', '1.2.840.113549.1.9.16.2.12', ND],
  ['id-aa-signingCertificateV2', '1.2.840.113549.1.9.16.2.47', O],
  ['id-aa-ets-sigPolicyId', '1.2.840.113549.1.9.16.2.15', O],
  ['id-signingTime', '1.2.840.113549.1.9.5', ND],
  ['id-aa-ets-signerLocation', '1.2.840.113549.1.9.16.2.17', ND],
  ['adbe-revocationInfoArchival', '1.2.840.113583.1.1.8', ND],
];
const T15: [string, string, Cols][] = [
  ['id-countersignature', '1.2.840.113549.1.9.6', ND],
  ['id-aa-signatureTimeStampToken', '1.2.840.113549.1.9.16.2.14', ['P', 'O', 'O', 'O']],
  ['id-aa-ets-certificateRefs', '1.2.840.113549.1.9.16.2.21', ND],
  ['id-aa-ets-revocationRefs', '1.2.840.113549.1.9.16.2.22', ND],
  ['id-aa-ets-attrCertificateRefs', '1.2.840.113549.1.9.16.2.44', ND],
  ['id-aa-ets-attrRevocationRefs', '1.2.840.113549.1.9.16.2.45', ND],
  ['id-aa-ets-escTimeStamp', '1.2.840.113549.1.9.16.2.25', ND],
  ['id-aa-ets-certValues', '1.2.840.113549.1.9.16.2.23', ND],
  ['id-aa-ets-revocationValues', '1.2.840.113549.1.9.16.2.24', ND],
  ['id-aa-ets-archiveTimestampV2', '1.2.840.113549.1.9.16.2.48', ND],
];
const T16: [string, string, Cols][] = [
  ['id-contentType', '1.2.840.113549.1.9.3', O],
  ['id-messageDigest', '1.2.840.113549.1.9.4', O],
  ['id-aa-signingCertificate', '1.2.840.113549.1.9.16.2.12', ND],
  ['id-aa-signingCertificateV2', '1.2.840.113549.1.9.16.2.47', O],
  ['id-aa-ets-sigPolicyId', '1.2.840.113549.1.9.16.2.15', ND],
  ['id-aa-ets-signerAttr', '1.2.840.113549.1.9.16.2.18', ND],
  ['id-signingTime', '1.2.840.113549.1.9.5', ND],
  ['id-aa-ets-signerLocation', '1.2.840.113549.1.9.16.2.17', ND],
  ['id-aa-ets-contentTimeStamp', '1.2.840.113549.1.9.16.2.20', ND],
];
const T18: [string, string | null, Cols][] = [
  ['Type', '/Sig', O],
  ['Filter', '/PBAD_PAdES', O],
  ['SubFilter', '/PBAD.PAdES', O],
  ['Contents', null, O],
  ['Cert', null, ND],
  ['ByteRange', null, O],
  ['R', null, ND],
  ['Prop_AuthType', null, ND],
];
const T19: [string, string | null, Cols][] = [
  ['Type', '/DSS', O],
  ['VRI', null, O],
  ['Certs', null, O],
  ['PBAD_PolicyArtifacts', null, RA_ONLY],
  ['PBAD_LpaArtifacts', null, RA_ONLY],
  ['PBAD_LpaSignatures', null, RA_ONLY],
];
const T20: [string, string | null, Cols][] = [
  ['Type', '/VRI', O],
  ['Cert', null, O],
  ['PBAD_PolicyArtifact', null, RA_ONLY],
  ['PBAD_LpaArtifact', null, RA_ONLY],
  ['PBAD_LpaSignature', null, RA_ONLY],
];
const T21: [string, string | null, Cols][] = [
  ['Type', '/DocTimeStamp', O],
  ['SubFilter', '/ETSI.RFC3161', O],
  ['Contents', null, O],
];

/** The rows expected for `policy`, each `ok` decided from the openssl and pikepdf readings only. */
function expectedRows(
  policy: IcpBrasilPolicyName,
  cms: CmsView,
  pdf: PdfView,
): Omit<IcpBrasilRow, 'detail'>[] {
  const col = COL[policy];
  const rows: Omit<IcpBrasilRow, 'detail'>[] = [];
  const attrs = (table: string, lines: [string, string, Cols][], present: string[]) => {
    for (const [name, oid, cols] of lines) {
      const need = cols[col];
      if (need === 'O') rows.push({ table, row: name, ok: present.includes(oid) });
      if (need === 'ND') rows.push({ table, row: name, ok: !present.includes(oid) });
    }
  };
  const dict = (table: string, lines: [string, string | null, Cols][], entries: Record<string, string>) => {
    for (const [key, value, cols] of lines) {
      const need = cols[col];
      const found = entries[key];
      if (need === 'O')
        rows.push({ table, row: `/${key}`, ok: found !== undefined && (value === null || found === value) });
      if (need === 'ND') rows.push({ table, row: `/${key}`, ok: found === undefined });
    }
  };
  attrs('Tabela A.14', T14, cms.signed);
  const p = currentIcpBrasilPolicy(policy);
  const block = cms.policyBlock;
  rows.push({
    table: 'Anexo 1 Nota 2',
    row: 'sigPolicyHash',
    ok: block.includes(`:sha256`) && block.includes(p.hashHex.toUpperCase()),
  });
  rows.push({
    table: 'Anexo 1 Nota 3',
    row: 'sigPolicyHash.hashAlgorithm',
    ok: !/:sha256\s*\n\s*\d+:d=\d+\s+hl=\d+\s+l=\s*0 prim:\s+NULL/.test(block),
  });
  const uris = [...block.matchAll(/:id-smime-spq-ets-sqt-uri\s*\n.*IA5STRING\s*:(\S+)/g)];
  const qualifierCount = [...block.matchAll(/d=2 +hl=\d+ l= *\d+ cons: +SEQUENCE/g)].length - 1;
  rows.push({
    table: 'Anexo 1 Nota 1',
    row: 'sigPolicyQualifiers',
    ok: qualifierCount <= 0 || (qualifierCount === 1 && uris.length === 1),
  });
  rows.push({ table: 'Anexo 2 item 5.2.1.1.4', row: 'id-aa-signingCertificateV2', ok: cms.essCertIds === 1 });
  // Anexo 2 5.2.3.1.1.1 of the current versions: SHA-256/512 with RSA, ECDSA, Ed25519 or Ed448.
  rows.push({
    table: 'Anexo 2 item 5.2.3.1.1.1',
    row: 'signature algorithm',
    ok:
      ['2.16.840.1.101.3.4.2.1', '2.16.840.1.101.3.4.2.3'].includes(cms.digest) &&
      [
        '1.2.840.113549.1.1.1',
        '1.2.840.113549.1.1.11',
        '1.2.840.113549.1.1.13',
        '1.2.840.10045.4.3.2',
        '1.2.840.10045.4.3.4',
        '1.3.101.112',
        '1.3.101.113',
      ].includes(cms.signature),
  });
  attrs('Tabela A.15', T15, cms.unsigned);
  rows.push({
    table: 'Anexo 1 Nota 11',
    row: 'unsigned attributes',
    ok: cms.unsigned.every((o) => o === '1.2.840.113549.1.9.16.2.14'),
  });
  if (cms.token) {
    attrs('Tabela A.16', T16, cms.token.signed);
    rows.push({
      table: 'Tabela A.17',
      row: 'timestamp unsigned attributes',
      ok: cms.token.unsigned.length === 0,
    });
  }
  dict('Tabela A.18', T18, pdf.sig);
  const needDss = col >= 2;
  rows.push({ table: 'Tabela A.22', row: 'DSS dictionary', ok: !needDss || pdf.dss !== null });
  rows.push({
    table: 'Tabela A.22',
    row: 'VRI dictionary',
    ok: !(needDss || pdf.dss !== null) || pdf.vri !== null,
  });
  rows.push({
    table: 'Tabela A.22',
    row: 'Document Time-stamp dictionary',
    ok: !needDss || pdf.docts.length > 0,
  });
  if (pdf.dss) {
    dict('Tabela A.19', T19, pdf.dss);
    rows.push({ table: 'Tabela A.19', row: 'OCSPs or CRLs', ok: 'OCSPs' in pdf.dss || 'CRLs' in pdf.dss });
    if (pdf.policyArtifacts) {
      const want = currentIcpBrasilPolicy(policy).fileSha256Hex;
      rows.push({
        table: 'Tabela A.19',
        row: 'PBAD_PolicyArtifacts digest',
        ok: pdf.policyArtifacts.includes(want),
      });
    }
  }
  if (pdf.vri) {
    dict('Tabela A.20', T20, pdf.vri);
    rows.push({ table: 'Tabela A.20', row: 'OCSP or CRL', ok: 'OCSP' in pdf.vri || 'CRL' in pdf.vri });
    rows.push({ table: 'Tabela A.20', row: 'TU / TS', ok: !('TU' in pdf.vri && 'TS' in pdf.vri) });
  }
  for (const ts of pdf.docts) dict('Tabela A.21', T21, ts);
  return rows;
}

const key = (r: Omit<IcpBrasilRow, 'detail'>) => `${r.table} | ${r.row} | ${r.ok ? 'ok' : 'FAIL'}`;

/** Checks `pdf` both ways and asserts they agree row for row; returns our rows. */
async function agreeOnEveryRow(policy: IcpBrasilPolicyName, pdf: Uint8Array, cms: Uint8Array, name: string) {
  const ours = checkIcpBrasilProfile({
    ...(await readIcpBrasilDictionaries(pdf, cms)),
    signerInfo: signerInfoOf(cms),
  });
  const p = currentIcpBrasilPolicy(policy);
  expect(ours.policy).toBe(`${p.profile} v${p.version} (${p.oid})`);
  const expected = expectedRows(policy, await opensslView(cms, name), await pikepdfView(pdf, name));
  expect(ours.rows.map(key).sort()).toEqual(expected.map(key).sort());
  for (const row of ours.rows) expect(row.detail.length).toBeGreaterThan(0);
  return ours.rows;
}

const failing = (rows: IcpBrasilRow[]) => rows.filter((r) => !r.ok).map((r) => `${r.table}: ${r.detail}`);

/** ITI's AD-RA v1.4 policy file (test/fixtures/icp-brasil/README.md). */
const RA_POLICY_FILE = path.resolve(
  import.meta.dirname,
  '../../test/fixtures/icp-brasil/PA_PAdES_AD_RA_v1_4.der',
);

const POLICIES: IcpBrasilPolicyName[] = [
  'icp-brasil-ad-rb',
  'icp-brasil-ad-rt',
  'icp-brasil-ad-rc',
  'icp-brasil-ad-ra',
];
/** openssl's TSA puts a signingTime in its tokens (PKCS7_dataFinal does), which Tabela A.16 forbids. */
const OPENSSL_TSA_ROW = 'Tabela A.16: timestamp signed attribute id-signingTime must not be present';

describe.each(POLICIES)('%s, signed by the test PKI', (policy) => {
  const col = COL[policy];
  const withTsa = col > 0;
  let signed: { pdf: Uint8Array; cms: Uint8Array };
  beforeAll(async () => {
    signed = await signedUnderPolicy(pki, policy, withTsa ? { tsa: tsaClient(tsa.url) } : {});
  });

  it('the CMS carries the policy OID, its internal hash and spuri; openssl prints the same', async () => {
    const p = currentIcpBrasilPolicy(policy);
    const view = await opensslView(signed.cms, `${policy}-oid`);
    expect(view.policyBlock).toContain(`:${p.oid}\n`);
    expect(view.policyBlock).toContain(p.hashHex.toUpperCase());
    expect(view.policyBlock).not.toContain(p.fileSha256Hex.toUpperCase());
    expect(view.policyBlock).toContain(`IA5STRING         :${p.uri}`);
    expect(view.signed.sort()).toEqual(
      [
        '1.2.840.113549.1.9.3',
        '1.2.840.113549.1.9.4',
        '1.2.840.113549.1.9.16.2.47',
        '1.2.840.113549.1.9.16.2.15',
      ].sort(),
    );
    expect(view.unsigned).toEqual(withTsa ? ['1.2.840.113549.1.9.16.2.14'] : []);
  });

  it('complete dictionaries: every row agrees with openssl and pikepdf; only the TSA token row fails', async () => {
    const pdf = await withDictionaries(
      signed.pdf,
      { dss: true, vri: true, pbad: col === 3, pbadPolicyFile: RA_POLICY_FILE, docTs: 'ok' },
      `${policy}-full`,
    );
    const rows = await agreeOnEveryRow(policy, pdf, signed.cms, `${policy}-full`);
    expect(failing(rows)).toEqual(withTsa ? [OPENSSL_TSA_ROW] : []);
  });

  it.runIf(col === 3)(
    'a /PBAD_PolicyArtifacts stream that is not the policy file is a failing row',
    async () => {
      const pdf = await withDictionaries(
        signed.pdf,
        { dss: true, vri: true, pbad: true, docTs: 'ok' },
        `${policy}-wrong-artifact`,
      );
      const rows = await agreeOnEveryRow(policy, pdf, signed.cms, `${policy}-wrong-artifact`);
      const p = currentIcpBrasilPolicy(policy);
      expect(failing(rows)).toEqual([
        OPENSSL_TSA_ROW,
        `Tabela A.19: must hold the AD-RA v1.4 policy file, SHA-256 ${p.fileSha256Hex} ` +
          `(found ${createHash('sha256').update('0').digest('hex')})`,
      ]);
    },
  );

  it('no DSS, VRI or document timestamp: Tabela A.22 fails for AD-RC and AD-RA only', async () => {
    const rows = await agreeOnEveryRow(policy, signed.pdf, signed.cms, `${policy}-bare`);
    const a22 = rows.filter((r) => r.table === 'Tabela A.22' && !r.ok).map((r) => r.row);
    expect(a22).toEqual(
      col >= 2 ? ['DSS dictionary', 'VRI dictionary', 'Document Time-stamp dictionary'] : [],
    );
  });

  it('broken dictionaries: each forbidden or missing entry is a failing row, both readings agree', async () => {
    const pdf = await withDictionaries(
      signed.pdf,
      {
        sigExtra: true,
        dss: true,
        dssType: false,
        dssOcsps: false,
        vri: true,
        vriType: false,
        vriCert: false,
        vriTuTs: true,
        docTs: 'bad',
      },
      `${policy}-broken`,
    );
    const rows = await agreeOnEveryRow(policy, pdf, signed.cms, `${policy}-broken`);
    const bad = failing(rows);
    expect(bad).toEqual(
      expect.arrayContaining([
        'Tabela A.18: signature dictionary: /Cert must not be present',
        'Tabela A.18: signature dictionary: /R must not be present',
        'Tabela A.18: signature dictionary: /Prop_AuthType must not be present',
        'Tabela A.19: DSS: /Type must be present and be /DSS',
        'Tabela A.19: /OCSPs or /CRLs must be present (its note)',
        'Tabela A.20: VRI: /Type must be present and be /VRI',
        'Tabela A.20: VRI: /Cert must be present',
        'Tabela A.20: /TU and /TS must not both be present (note 2)',
        'Tabela A.21: document timestamp 1: /SubFilter must be /ETSI.RFC3161 (found /ETSI.CAdES.detached)',
      ]),
    );
    if (col === 3) {
      expect(bad).toEqual(
        expect.arrayContaining([
          'Tabela A.19: DSS: /PBAD_PolicyArtifacts must be present',
          'Tabela A.20: VRI: /PBAD_LpaSignature must be present',
        ]),
      );
    }
  });

  it('a forbidden signingTime, an ETSI dictionary and the LPA file hash: each named as a failing row', async () => {
    const p = currentIcpBrasilPolicy(policy);
    const wrongHash = { ...icpBrasilSignaturePolicy(policy), hash: Buffer.from(p.fileSha256Hex, 'hex') };
    const bad = await signedUnderPolicy(pki, policy, {
      signingTime: true,
      etsiDictionary: true,
      policy: wrongHash,
    });
    const view = await opensslView(bad.cms, `${policy}-bad-attrs`);
    expect(view.signed).toContain('1.2.840.113549.1.9.5');
    const rows = await agreeOnEveryRow(policy, bad.pdf, bad.cms, `${policy}-bad-attrs`);
    expect(failing(rows)).toEqual(
      expect.arrayContaining([
        'Tabela A.14: signed attribute id-signingTime must not be present',
        'Tabela A.18: signature dictionary: /Filter must be /PBAD_PAdES (found /Adobe.PPKLite)',
        'Tabela A.18: signature dictionary: /SubFilter must be /PBAD.PAdES (found /ETSI.CAdES.detached)',
        `Anexo 1 Nota 2: must be the hash inside the policy (${p.hashHex}), not the policy file's hash the LPA lists (${p.fileSha256Hex})`,
        ...(withTsa ? ['Tabela A.15: unsigned attribute id-aa-signatureTimeStampToken must be present'] : []),
      ]),
    );
  });
});

describe('signPdfAtLevel with an ICP-Brasil policy (what the service calls)', () => {
  it.each([
    ['icp-brasil-ad-rb', 'B-B'],
    ['icp-brasil-ad-rt', 'B-T'],
  ] as const)('%s at %s: every signature row holds but the openssl TSA token one', async (policy, level) => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([595, 842]);
    addSignaturePlaceholder(doc, [page], {
      signatureLength: PADES_SIGNATURE_LENGTH,
      reason: 'r',
      location: 'l',
      name: 'n',
      contactInfo: 'c',
      dictionary: 'icp-brasil',
    });
    const { pdf } = await signPdfAtLevel(await doc.save({ useObjectStreams: false }), rsaCmsSigner(pki), {
      level,
      tsa: tsaClient(tsa.url),
      policy: icpBrasilSignaturePolicy(policy),
    });
    const m = /\/ByteRange \[(\d+) (\d+) (\d+) (\d+) *\]/.exec(Buffer.from(pdf).toString('latin1'));
    const hex = Buffer.from(pdf.subarray(Number(m?.[2]) + 1, Number(m?.[3]) - 1)).toString('latin1');
    const contents = new Uint8Array(Buffer.from(hex, 'hex'));
    const rows = await agreeOnEveryRow(policy, pdf, contents, `${policy}-level`);
    expect(failing(rows)).toEqual(level === 'B-T' ? [OPENSSL_TSA_ROW] : []);
    // openssl verifies the CMS over the signed ranges with the test root.
    const file = path.join(tmp, `${policy}-level`);
    const [a = 0, b = 0, c = 0, d = 0] = [1, 2, 3, 4].map((i) => Number(m?.[i]));
    const signedBytes = Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]);
    await writeFile(`${file}.data`, signedBytes);
    await writeFile(
      `${file}.cms`,
      contents.subarray(0, 2 + 2 + ((contents[2] ?? 0) << 8) + (contents[3] ?? 0)),
    );
    const verified = await run('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      `${file}.cms`,
      '-content',
      `${file}.data`,
      '-CAfile',
      pki.root.certPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(verified.stderr).toContain('Verification successful');
    // poppler (22.12) does not know the /PBAD.PAdES sub-filter: it lists the signature, untyped, unverified.
    await writeFile(`${file}.pdf`, pdf);
    const out = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, `${file}.pdf`]).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    expect(out.stdout).toContain('Signature Type: unknown');
    expect(out.stdout).toContain('Total document signed');
  });
});

describe('signature algorithms (Anexo 2 item 5.2.3.1.1.1)', () => {
  it('ECDSA P-256 is allowed by AD-RB v1.3 and refused by AD-RB v1.1', async () => {
    const rowOf = async (policy: SignaturePolicyReference) => {
      const { cms } = await signedUnderPolicy(pki, 'icp-brasil-ad-rb', { signer: ecCmsSigner(pki), policy });
      const facts = { signatureDictionary: {}, dss: null, vri: null, documentTimestamps: [] };
      return checkIcpBrasilProfile({ ...facts, signerInfo: signerInfoOf(cms) }).rows.find(
        (r) => r.row === 'signature algorithm',
      );
    };
    expect((await rowOf(icpBrasilSignaturePolicy('icp-brasil-ad-rb')))?.ok).toBe(true);
    const v11 = ICP_BRASIL_PADES_POLICIES.find((p) => p.oid === '2.16.76.1.7.1.11.1.1');
    if (!v11) throw new Error('AD-RB v1.1 missing');
    const old = await rowOf({
      oid: v11.oid,
      hashAlgorithm: v11.hashAlgorithm,
      hash: Buffer.from(v11.hashHex, 'hex'),
    });
    expect(old).toMatchObject({ ok: false, table: 'Anexo 2 item 5.2.3.1.1.1' });
    expect(old?.detail).toContain('AD-RB v1.1 allows SHA-256/SHA-512 with RSA (found 1.2.840.10045.4.3.2');
  });
});

describe('signing period (Anexo 2 item 5.1)', () => {
  it('a signature timestamped inside the period passes, one dated after 2037-10-22 fails', async () => {
    const { pdf, cms } = await signedUnderPolicy(pki, 'icp-brasil-ad-rt', { tsa: tsaClient(tsa.url) });
    // The time the token states, read by openssl (ts -reply -token_in -text).
    const view = await opensslView(cms, 'period');
    if (!view.tokenPath) throw new Error('no token');
    const { stdout } = await run('openssl', ['ts', '-reply', '-token_in', '-in', view.tokenPath, '-text']);
    const genTime = new Date(/Time stamp: (.*)/.exec(stdout)?.[1] ?? '');
    expect(Number.isNaN(genTime.getTime())).toBe(false);
    const row = async (at: Date) =>
      (await icpBrasilConformance(pdf, cms, signerInfoOf(cms), at)).rows.find(
        (r) => r.row === 'signing period',
      );
    expect(await row(genTime)).toMatchObject({ ok: true, table: 'Anexo 2 item 5.1' });
    expect((await row(new Date('2037-10-23T00:00:00Z')))?.detail).toContain(
      'is for signatures from 2025-07-23 to 2037-10-22: outside it',
    );
    expect(
      (await icpBrasilConformance(pdf, cms, signerInfoOf(cms))).rows.some((r) => r.row === 'signing period'),
    ).toBe(false);
    // The same row alone, as check 6 asks for it once the signature timestamp is judged valid.
    expect(icpBrasilSigningPeriodRow(signerInfoOf(cms), genTime)).toEqual(await row(genTime));
    const plain = await signedUnderPolicy(pki, 'icp-brasil-ad-rb', { policy: null });
    expect(icpBrasilSigningPeriodRow(signerInfoOf(plain.cms), genTime)).toBeNull();
  });
});

describe('check 6 on an AD-RT signature', () => {
  it('reports the policy, the table rows and, with the valid signature timestamp, the signing period', async () => {
    const { pdf } = await signedUnderPolicy(pki, 'icp-brasil-ad-rt', { tsa: tsaClient(tsa.url) });
    const result = await checkPadesSignature(pdf, {
      trustCa: [pki.root.certDer],
      tsaCa: [pki.root.certDer],
      at: new Date(),
    });
    const labels = result.evidence.map((e) => `${e.label}: ${e.value}`);
    expect(labels).toContain('signature policy: AD-RT v1.3 (2.16.76.1.7.1.12.1.3)');
    expect(
      labels.some((l) =>
        l.startsWith('Tabela A.18 /SubFilter: signature dictionary: /SubFilter /PBAD.PAdES'),
      ),
    ).toBe(true);
    const period = result.evidence.find((e) => e.label === 'Anexo 2 item 5.1 signing period');
    expect(period).toMatchObject({ ok: true });
    expect(period?.value).toContain('AD-RT v1.3 is for signatures from 2025-07-23 to 2037-10-22');
  });
});

describe('icpBrasilConformance (what check 6 calls)', () => {
  it('gives the same rows as the two steps, and nothing for a signature without a policy', async () => {
    const signed = await signedUnderPolicy(pki, 'icp-brasil-ad-rb');
    const info = signerInfoOf(signed.cms);
    const both = checkIcpBrasilProfile({
      ...(await readIcpBrasilDictionaries(signed.pdf, signed.cms)),
      signerInfo: info,
    });
    expect(await icpBrasilConformance(signed.pdf, signed.cms, info)).toEqual(both);
    const plain = await signedUnderPolicy(pki, 'icp-brasil-ad-rb', { policy: null });
    expect(await icpBrasilConformance(plain.pdf, plain.cms, signerInfoOf(plain.cms))).toEqual({
      policy: null,
      rows: [],
    });
    const elsewhere = await icpBrasilConformance(
      new TextEncoder().encode('%PDF-1.7 nothing'),
      signed.cms,
      info,
    );
    expect(elsewhere.policy).toBe(both.policy);
    expect(elsewhere.rows).toHaveLength(1);
    expect(elsewhere.rows[0]?.ok).toBe(false);
  });
});

describe('checkIcpBrasilProfile, policies it does not know', () => {
  it('no signature-policy-identifier: no policy, no rows', async () => {
    const { cms } = await signedUnderPolicy(pki, 'icp-brasil-ad-rb', { policy: null });
    const facts = { signatureDictionary: {}, dss: null, vri: null, documentTimestamps: [] };
    expect(checkIcpBrasilProfile({ ...facts, signerInfo: signerInfoOf(cms) })).toEqual({
      policy: null,
      rows: [],
    });
  });

  it('an OID that is not an ICP-Brasil PAdES policy: one failing row naming it', async () => {
    const { cms } = await signedUnderPolicy(pki, 'icp-brasil-ad-rb', {
      policy: { oid: '1.2.3.4', hashAlgorithm: '2.16.840.1.101.3.4.2.1', hash: new Uint8Array(32) },
    });
    const facts = { signatureDictionary: {}, dss: null, vri: null, documentTimestamps: [] };
    expect(checkIcpBrasilProfile({ ...facts, signerInfo: signerInfoOf(cms) })).toEqual({
      policy: '1.2.3.4',
      rows: [
        {
          table: 'Anexo 2',
          row: 'policy OID',
          ok: false,
          detail: '1.2.3.4 is not an ICP-Brasil PAdES policy of DOC-ICP-15.03 v9.1',
          rowMessage: { code: 'icp.rowPolicyOid' },
          detailMessage: { code: 'icp.notIcpPolicy', params: { oid: '1.2.3.4' } },
        },
      ],
    });
  });
});

describe('the shipped ICP-Brasil roots', () => {
  const dir = new URL('../trust/icp-brasil/', import.meta.url);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.pem'))
    .sort();

  it('notary-verify --trust takes icp-brasil only', async () => {
    const bad = await runCli(['file.pdf', '--certificate', 'cert.pdf', '--trust', 'eu-lotl']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--trust: only icp-brasil');
    expect((await runCli(['--help'])).stdout).toContain('--trust icp-brasil');
  });

  it('icp-brasil-roots.ts holds exactly the PEM files (regenerate with write-icp-brasil-roots.ts)', () => {
    expect(ICP_BRASIL_ROOTS_PEM.map((p) => p.trim())).toEqual(
      files.map((f) => readFileSync(new URL(f, dir), 'utf8').trim()),
    );
  });

  it('each is a self-signed ICP-Brasil root with the fingerprint and dates the README states (openssl agrees)', async () => {
    const readme = readFileSync(new URL('README.md', dir), 'utf8');
    for (const f of files) {
      const cert = new X509Certificate(readFileSync(new URL(f, dir)));
      expect(cert.subject).toContain('O=ICP-Brasil');
      expect(cert.verify(cert.publicKey)).toBe(true);
      const day = (d: string) => new Date(d).toISOString().slice(0, 10);
      const cn = /CN=(.*)/.exec(cert.subject)?.[1];
      expect(readme).toContain(
        `| ${f} | ${cn} | ${cert.fingerprint256} | ${day(cert.validFrom)} | ${day(cert.validTo)} |`,
      );
      // -no_check_time: v2 expired in 2023 and is kept for older signatures.
      const pem = new URL(f, dir).pathname;
      const { stdout } = await run('openssl', ['verify', '-no_check_time', '-CAfile', pem, pem]);
      expect(stdout).toContain(': OK');
    }
    expect(files).toEqual([
      'ac-raiz-brasileira-v12.pem',
      'ac-raiz-brasileira-v2.pem',
      'ac-raiz-brasileira-v5.pem',
    ]);
  });
});
