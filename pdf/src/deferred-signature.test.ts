/**
 * Deferred signing of a file the service already signed: the second signer's field as an incremental update,
 * the signed attributes answered, the signature value made elsewhere (node:crypto with the test PKI's EC key,
 * standing for a token), the CMS built around it; then B-LTA over both. Checked by pdfsig (both signatures
 * valid, the first still covering its part) and by OpenSSL (the CMS and its policy attribute).
 */
import { execFile } from 'node:child_process';
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pemCertificates } from '@notary/trust/bytes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tsaClient } from '../../test/harness/icp-brasil';
import { pemCmsSigner, placeholderPdf } from '../../test/harness/pades-pdfs';
import { createTestPki, type TestPki } from '../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../test/harness/tsa';
import type { VerifiedTimestamper } from './cades';
import {
  completeDeferredSignature,
  extendToLta,
  prepareDeferredSignature,
  signatureAlgorithmOf,
  signatureVerifies,
} from './deferred-signature';
import { icpBrasilSignaturePolicy } from './icp-brasil';
import { signWithCms } from './pades';

const run = promisify(execFile);
let pki: TestPki;
let tsaServer: TestTsa;
let tsa: VerifiedTimestamper;
let dir: string;

beforeAll(async () => {
  pki = await createTestPki();
  tsaServer = await startTestTsa(pki);
  tsa = tsaClient(tsaServer.url);
  dir = await mkdtemp(join(tmpdir(), 'deferred-'));
});

afterAll(async () => {
  await tsaServer?.stop();
  await pki?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The service's B-B signature, then the tabelião's field prepared over it. */
async function prepared(dictionary: 'etsi' | 'icp-brasil' = 'icp-brasil') {
  const service = pemCmsSigner(pki.rsa.keyPem, pki.rsa.chainPem);
  const { pdf: signed, cms: serviceCms } = await signWithCms(await placeholderPdf(), service, undefined);
  const certificates = pemCertificates(pki.ec.chainPem);
  const policy = icpBrasilSignaturePolicy('icp-brasil-ad-rt');
  const prep = await prepareDeferredSignature(signed, {
    dictionary,
    name: 'Tabeliã de Teste',
    reason: 'Ata notarial',
    signingTime: new Date(),
    signerCertificate: certificates[0] as Uint8Array,
    policy,
  });
  return { signed, serviceCms, service, certificates, policy, prep };
}

describe('deferred signature', () => {
  it('keeps the first signature, verifies the value, and gives a file pdfsig and OpenSSL accept', async () => {
    // pdfsig judges ETSI.CAdES.detached only (PBAD.PAdES is "unknown" to it): the same CMS in an ETSI field.
    const { signed, serviceCms, service, certificates, policy, prep } = await prepared('etsi');
    expect(Buffer.compare(prep.pdf.subarray(0, signed.length), signed)).toBe(0);
    expect(signatureAlgorithmOf(certificates[0] as Uint8Array)).toBe('ECDSA-P256-SHA256');
    const value = new Uint8Array(
      cryptoSign('sha256', prep.signedAttributes, createPrivateKey(pki.ec.keyPem)),
    );
    expect(signatureVerifies(prep.signedAttributes, value, certificates[0] as Uint8Array)).toBe(true);
    // Another key's value over the same attributes, and the value over other bytes, do not verify.
    const other = new Uint8Array(
      cryptoSign('sha256', prep.signedAttributes, createPrivateKey(pki.rsa.keyPem)),
    );
    expect(signatureVerifies(prep.signedAttributes, other, certificates[0] as Uint8Array)).toBe(false);
    expect(signatureVerifies(new Uint8Array([1, 2, 3]), value, certificates[0] as Uint8Array)).toBe(false);

    const done = await completeDeferredSignature(prep.pdf, {
      certificates,
      signature: value,
      signedAttributes: prep.signedAttributes,
      policy,
      tsa,
    });
    expect(done.pdf.length).toBe(prep.pdf.length);
    const lta = await extendToLta(
      done.pdf,
      [
        { cms: serviceCms, chain: service.certificateChain },
        { cms: done.cms, chain: certificates },
      ],
      {
        tsa,
        gather: async () => ({ material: { certs: [], ocsps: [], crls: [] }, missing: [] }),
      },
    );
    const file = join(dir, 'both.pdf');
    await writeFile(file, lta.pdf);
    const { stdout } = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]);
    // The service's and the tabelião's; pdfsig does not judge document timestamps (`openssl ts` does elsewhere).
    expect(stdout.match(/Signature is Valid\./g)?.length).toBe(2);
    expect(stdout.match(/Certificate is Trusted\./g)?.length).toBe(2);
    expect(lta.level).toBe('B-LTA');
    expect(stdout).toContain('Signature Field Name: NotarySignature');

    const cmsFile = join(dir, 'notary.p7s');
    await writeFile(cmsFile, done.cms);
    const printed = await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', cmsFile]);
    expect(printed.stdout).toContain(policy.oid);
    expect(printed.stdout).toContain('id-smime-aa-signingCertificateV2');
  });

  it('refuses a file that is not the one prepared', async () => {
    const { certificates, policy, prep } = await prepared();
    const value = new Uint8Array(
      cryptoSign('sha256', prep.signedAttributes, createPrivateKey(pki.ec.keyPem)),
    );
    const changed = Buffer.from(prep.pdf);
    // A byte of the service's signed part: inside the tabelião's range too.
    changed.writeUInt8(changed.readUInt8(20) ^ 1, 20);
    await expect(
      completeDeferredSignature(new Uint8Array(changed), {
        certificates,
        signature: value,
        signedAttributes: prep.signedAttributes,
        policy,
      }),
    ).rejects.toThrow(/not the one whose attributes were signed/);
  });
});
