/**
 * Certificates signed under an ICP-Brasil policy through the running service (`SIGNING_POLICY`), with the
 * revocation test PKI as signer, TSA and OCSP/CRL source: AD-RB at B-B, AD-RC and AD-RA at B-LTA (AD-RA with
 * ITI's policy file and list of approved policies, and a stand-in signature of the list made here by the test
 * PKI, as the operator's ICP_BRASIL_ARTIFACTS_DIR). The PDF is read
 * by pikepdf (the signature dictionary, /Filter /PBAD_PAdES /SubFilter /PBAD.PAdES, DOC-ICP-15.03 Tabela
 * A.18) and openssl (the signature-policy-identifier: the policy OID, its internal hash, the spuri; no
 * signingTime, Tabela A.14), and judged by the verifier's profile check, row by row.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { currentIcpBrasilPolicy } from '@notary/pdf/icp-brasil';
import type { DocumentDto } from '@notary/shared';
import { icpBrasilConformance, signerInfoOf } from '@notary/verify/icp-brasil';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { type RevocationPki, startRevocationPki } from '../harness/revocation-pki';
import { startTestService, type TestService } from '../harness/service';

const exec = promisify(execFile);
/** Debian's interpreter: python3-pikepdf is installed for it (`.ci/install-tools.sh`). */
const PYTHON = '/usr/bin/python3';

/**
 * The one row the service cannot meet with the test TSA: openssl adds a signingTime to its tokens, which
 * Tabela A.16 forbids in a signature timestamp (an ICP-Brasil ACT is expected not to). Everything else holds.
 */
const KNOWN_GAPS = new Set(['Tabela A.16: timestamp signed attribute id-signingTime must not be present']);

/** ITI's AD-RA policy file and list of approved policies (test/fixtures/icp-brasil/README.md). */
const ARTIFACT_FIXTURES = path.resolve(import.meta.dirname, '../fixtures/icp-brasil');

/**
 * An `ICP_BRASIL_ARTIFACTS_DIR` under `work`: ITI's two files, and `LPA_PAdES.p7s` signed here by the test
 * PKI's signer (a detached CMS SignedData standing in for ITI's, which is not available offline).
 */
async function artifactsDir(work: string, rpki: RevocationPki): Promise<string> {
  const dir = path.join(work, 'icp-brasil-artifacts');
  await mkdir(dir);
  for (const f of ['PA_PAdES_AD_RA_v1_4.der', 'LPA_PAdES.der']) {
    await copyFile(path.join(ARTIFACT_FIXTURES, f), path.join(dir, f));
  }
  await exec('openssl', [
    'cms',
    '-sign',
    '-binary',
    '-outform',
    'DER',
    '-in',
    path.join(dir, 'LPA_PAdES.der'),
    '-signer',
    rpki.signer.certPath,
    '-inkey',
    rpki.signer.keyPath,
    '-out',
    path.join(dir, 'LPA_PAdES.p7s'),
  ]);
  return dir;
}

describe.each([
  ['icp-brasil-ad-rb', 'B-B'],
  ['icp-brasil-ad-rc', 'B-LTA'],
  ['icp-brasil-ad-ra', 'B-LTA'],
] as const)('SIGNING_POLICY=%s at %s (PGlite, revocation test PKI)', (policy, level) => {
  let rpki: RevocationPki;
  let t: TestService;
  let work: string;
  let file: string;
  let pdf: Uint8Array;
  let cms: Uint8Array;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-icp-'));
    rpki = await startRevocationPki();
    t = await startTestService('pglite', {
      SIGNING_CERT: rpki.signer.chainPath,
      SIGNING_KEY: rpki.signer.keyPath,
      SIGNING_POLICY: policy,
      SIGNING_LEVEL: level,
      ...(policy === 'icp-brasil-ad-ra' ? { ICP_BRASIL_ARTIFACTS_DIR: await artifactsDir(work, rpki) } : {}),
      TSA_URL: rpki.tsaUrl,
      TSA_CA_CERTS: rpki.caChainPath,
      REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
    });
    const token = await t.token('icp@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    const doc = up.body as unknown as DocumentDto;
    const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-signature-level')).toBe(level);
    file = path.join(work, 'certificate.pdf');
    pdf = new Uint8Array(await res.arrayBuffer());
    await writeFile(file, pdf);
    // The signature's /Contents (the first /ByteRange: later ones are the document timestamp's), DER cut.
    const m = /\/ByteRange \[(\d+) (\d+) (\d+) (\d+) *\]/.exec(Buffer.from(pdf).toString('latin1'));
    const hex = Buffer.from(pdf.subarray(Number(m?.[2]) + 1, Number(m?.[3]) - 1)).toString('latin1');
    const contents = Buffer.from(hex, 'hex');
    cms = new Uint8Array(contents.subarray(0, 4 + contents.readUInt16BE(2)));
  });

  afterAll(async () => {
    await t?.close();
    await rpki?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('pikepdf reads the PBAD signature dictionary (Tabela A.18)', async () => {
    const script = `
import json, sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
for v in pdf.objects:
    if isinstance(v, pikepdf.Dictionary) and v.get('/Type') == pikepdf.Name.Sig:
        print(json.dumps({'Filter': str(v.Filter), 'SubFilter': str(v.SubFilter), 'keys': sorted(str(k) for k in v.keys())}))
`;
    const dict = JSON.parse((await exec(PYTHON, ['-c', script, file])).stdout);
    expect(dict).toMatchObject({ Filter: '/PBAD_PAdES', SubFilter: '/PBAD.PAdES' });
    for (const forbidden of ['/Cert', '/R', '/Prop_AuthType']) expect(dict.keys).not.toContain(forbidden);
    await exec('qpdf', ['--check', file]);
  });

  it('openssl reads the policy OID, its internal hash and spuri, and no signingTime (Tabela A.14)', async () => {
    const p = currentIcpBrasilPolicy(policy);
    const cmsFile = path.join(work, 'signature.cms');
    await writeFile(cmsFile, cms);
    const out = (await exec('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', cmsFile]))
      .stdout;
    const signed = out.slice(out.indexOf('signedAttrs:'), out.lastIndexOf('signatureAlgorithm:'));
    expect(signed).toContain('id-smime-aa-ets-sigPolicyId (1.2.840.113549.1.9.16.2.15)');
    expect(signed).toContain(`:${p.oid}\n`);
    expect(signed).toContain(p.hashHex.toUpperCase());
    expect(signed).toContain(`IA5STRING         :${p.uri}`);
    expect(signed).not.toContain('signingTime');
    expect(signed).toContain('id-smime-aa-signingCertificateV2');
  });

  it('the profile check names the policy and every row holds but the known gaps', async () => {
    const p = currentIcpBrasilPolicy(policy);
    const result = await icpBrasilConformance(pdf, cms, signerInfoOf(cms));
    expect(result.policy).toBe(`${p.profile} v${p.version} (${p.oid})`);
    const failing = result.rows.filter((r) => !r.ok).map((r) => `${r.table}: ${r.detail}`);
    expect(failing.filter((f) => !KNOWN_GAPS.has(f))).toEqual([]);
    // AD-RC: the DSS, the VRI and the document timestamp are there (Tabela A.22).
    const a22 = result.rows.filter((r) => r.table === 'Tabela A.22');
    expect(a22.every((r) => r.ok)).toBe(true);
    if (level === 'B-LTA') expect(a22.map((r) => r.detail)).toContain('present for this signature');
    expect((await readFile(file)).length).toBe(pdf.length);
  });

  it.runIf(policy === 'icp-brasil-ad-ra')(
    'pikepdf reads the AD-RA artifacts once in the /DSS and referenced from each /VRI (Tabelas A.19, A.20)',
    async () => {
      const script = `
import hashlib, json, sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
dss = pdf.Root.DSS
out = {'dss': {}, 'vri': {}}
for k in ('/PBAD_PolicyArtifacts', '/PBAD_LpaArtifacts', '/PBAD_LpaSignatures'):
    out['dss'][k] = [(hashlib.sha256(s.read_bytes()).hexdigest(), s.objgen[0]) for s in dss[k]]
for name, entry in dss.VRI.items():
    out['vri'][name] = {k: entry[k].objgen[0] for k in ('/PBAD_PolicyArtifact', '/PBAD_LpaArtifact', '/PBAD_LpaSignature') if k in entry}
print(json.dumps(out))
`;
      const read = JSON.parse((await exec(PYTHON, ['-c', script, file])).stdout) as {
        dss: Record<string, [string, number][]>;
        vri: Record<string, Record<string, number>>;
      };
      const dir = path.join(work, 'icp-brasil-artifacts');
      const sha = async (f: string) =>
        createHash('sha256')
          .update(await readFile(path.join(dir, f)))
          .digest('hex');
      const expected = {
        '/PBAD_PolicyArtifacts': await sha('PA_PAdES_AD_RA_v1_4.der'),
        '/PBAD_LpaArtifacts': await sha('LPA_PAdES.der'),
        '/PBAD_LpaSignatures': await sha('LPA_PAdES.p7s'),
      };
      expect(expected['/PBAD_PolicyArtifacts']).toBe(currentIcpBrasilPolicy(policy).fileSha256Hex);
      const objects: Record<string, number> = {};
      for (const [key, digest] of Object.entries(expected)) {
        // Written once, though two /DSS updates (signature, document timestamp) carried them.
        expect(read.dss[key]?.map(([d]) => d)).toEqual([digest]);
        objects[key.slice(0, -1)] = read.dss[key]?.[0]?.[1] ?? -1;
      }
      // Two /VRI entries: the signature's and the document timestamp's, each referencing the same streams.
      expect(Object.keys(read.vri)).toHaveLength(2);
      for (const entry of Object.values(read.vri)) expect(entry).toEqual(objects);
      await exec('qpdf', ['--check', file]);
    },
  );
});

describe('SIGNING_POLICY=icp-brasil-ad-rc without revocation data (PGlite, revocation test PKI)', () => {
  let rpki: RevocationPki;
  let t: TestService;

  beforeAll(async () => {
    rpki = await startRevocationPki();
    t = await startTestService('pglite', {
      SIGNING_CERT: rpki.signer.chainPath,
      SIGNING_KEY: rpki.signer.keyPath,
      SIGNING_POLICY: 'icp-brasil-ad-rc',
      TSA_URL: rpki.tsaUrl,
      TSA_CA_CERTS: rpki.caChainPath,
      REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
    });
  });

  afterAll(async () => {
    await t?.close();
    await rpki?.stop();
  });

  it('answers 502 naming what is missing instead of a file that declares AD-RC without its /DSS', async () => {
    rpki.setOcsp('down');
    rpki.setCrl('down');
    const token = await t.token('icp-rc-down@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    const doc = up.body as unknown as DocumentDto;
    const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(502);
    const body = JSON.stringify(await res.json());
    expect(body).toContain('AD-RC');
    expect(body).toContain('Notary LTV Signer');
  });
});
