/**
 * The tabelião's deferred signature through the real service (PGlite, tRPC's server-side caller): the service
 * signs with its own key (the test PKI), the tabelião's key (the revocation PKI's signer, whose OCSP responder
 * answers on loopback) signs the attributes answered, the way a token would. Checked by pdfsig (the service's
 * signature still valid), by OpenSSL (the tabelião's CMS verifies over its byte range to the tabelião's root,
 * with the AD-RT policy attribute and the signature timestamp), and each refusal leaves the session unsigned.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { asn1js } from '@notary/trust/asn1';
import { pemCertificates } from '@notary/trust/bytes';
import { checkPadesSignature } from '@notary/verify/pades/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../../../test/harness/fixtures';
import { uploadFile } from '../../../../test/harness/http';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import { type RevocationPki, startRevocationPki } from '../../../../test/harness/revocation-pki';
import { startTestService, type TestService } from '../../../../test/harness/service';
import { NotarySignatureSession } from '../../db/entities';
import { createInnerContext } from '../../trpc/context';
import { createCaller } from '../../trpc/router';
import { checkSignerChain } from './notary-signature';

const run = promisify(execFile);
let pki: TestPki;
let rpki: RevocationPki;
let t: TestService;
let tmp: string;
let alice: string;
let bob: string;
let docId: string;

const as = (bearer: string) => createCaller(createInnerContext(t.service.deps, { bearer }));
const b64 = (der: Uint8Array) => Buffer.from(der).toString('base64');
const signWith = (keyPem: string, attributes: string) =>
  cryptoSign('sha256', Buffer.from(attributes, 'base64'), createPrivateKey(keyPem)).toString('base64');

beforeAll(async () => {
  [pki, rpki] = await Promise.all([createTestPki(), startRevocationPki()]);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-signature-'));
  t = await startTestService('pglite', {
    SIGNING_CERT: pki.rsa.p12Path,
    SIGNING_CERT_PASSWORD: pki.p12Password,
    SIGNING_LEVEL: 'B-T',
    TSA_URL: rpki.tsaUrl,
    TSA_CA_CERTS: rpki.caChainPath,
    REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
  });
  alice = await t.token('alice@example.com');
  bob = await t.token('bob@example.com');
  const upload = await uploadFile(t.url, alice, path.join(FIXTURES_DIR, 'files/contrato.txt'));
  expect(upload.status).toBe(201);
  docId = String(upload.body.id);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await rpki?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** A session prepared by alice for the revocation PKI's signer (the tabelião) under `policy`. */
async function prepare(policy: 'icp-brasil-ad-rb' | 'icp-brasil-ad-rt' = 'icp-brasil-ad-rt') {
  return as(alice).documents.notarySignaturePrepare({
    id: docId,
    certificates: pemCertificates(rpki.signer.chainPem).map(b64),
    policy,
  });
}

/** The session's row as stored now. */
async function row(sessionId: string) {
  return t.service.deps.db.fork().findOneOrFail(NotarySignatureSession, { id: sessionId });
}

/** The covered bytes and the CMS (its DER, without the padding) of the file's `index`-th signature. */
function nthSignature(pdf: Uint8Array, index: number): { content: Buffer; cms: Buffer } {
  const buf = Buffer.from(pdf);
  const ranges = [...buf.toString('latin1').matchAll(/\/ByteRange \[(\d+) (\d+) (\d+) (\d+) *\]/g)];
  const m = ranges[index];
  if (!m) throw new Error(`no signature #${index}`);
  const [, b, c, d] = m.slice(1, 5).map(Number) as [number, number, number, number];
  const padded = Buffer.from(buf.subarray(b + 1, c - 1).toString('latin1'), 'hex');
  const parsed = asn1js.fromBER(padded);
  return {
    content: Buffer.concat([buf.subarray(0, b), buf.subarray(c, c + d)]),
    cms: padded.subarray(0, parsed.offset),
  };
}

describe('the tabelião signs too (deferred signing)', () => {
  it('AD-RT: prepared, signed elsewhere, completed once; both signatures hold', async () => {
    const prepared = await prepare();
    expect(prepared.digestAlgorithm).toBe('SHA-256');
    expect(new Date(prepared.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const record = await as(alice).documents.notarySignatureComplete({
      id: docId,
      sessionId: prepared.sessionId,
      signature: signWith(rpki.signer.keyPem, prepared.signedAttributes),
    });
    expect(record.signers.map((s) => s.role)).toEqual(['service', 'notary']);
    expect(record.signers[1]).toMatchObject({ policy: 'icp-brasil-ad-rt' });
    const stored = await row(prepared.sessionId);
    expect(stored.completedAt).not.toBeNull();
    const pdf = new Uint8Array(stored.signedPdf as Buffer);
    expect(pdf.length).toBe(record.size);

    const file = path.join(tmp, 'both.pdf');
    await writeFile(file, pdf);
    const sig = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    expect(sig.stdout).toContain('Signature Field Name: NotarySignature');
    // The service's own signature (ETSI field, its root in the NSS database) is still valid after the update.
    expect(sig.stdout.split('Signature #2')[0]).toContain('Signature Validation: Signature is Valid.');

    // The service's signature first, then the tabelião's, then the document timestamp.
    const { content, cms } = nthSignature(pdf, 1);
    await writeFile(path.join(tmp, 'content.bin'), content);
    await writeFile(path.join(tmp, 'notary.p7s'), cms);
    await run('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      path.join(tmp, 'notary.p7s'),
      '-content',
      path.join(tmp, 'content.bin'),
      '-CAfile',
      rpki.caChainPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    const printed = await run('openssl', [
      'cms',
      '-cmsout',
      '-print',
      '-inform',
      'DER',
      '-in',
      path.join(tmp, 'notary.p7s'),
    ]);
    expect(printed.stdout).toContain('2.16.76.1.7.1.12.1');
    expect(printed.stdout).toContain('id-smime-aa-timeStampToken');

    // notary-verify's check 6 judges the last signature of the file: the tabelião's, to its own root. Its
    // signature, policy, chain and revocation hold; the one row it fails is Tabela A.16 on this test TSA's own
    // tokens (`openssl ts` signs a signingTime attribute), not on the signature.
    const check6 = await checkPadesSignature(pdf, {
      at: new Date(),
      trustCa: [pemCertificates(rpki.signer.chainPem).at(-1) as Uint8Array],
      tsaCa: pemCertificates(rpki.caChainPem),
    });
    const evidence = (label: string) => check6.evidence.filter((e) => e.label === label);
    expect(evidence('signature')).toEqual([expect.objectContaining({ value: 'valid', ok: true })]);
    expect(evidence('signature policy')[0]?.value).toMatch(/^AD-RT/);
    expect(evidence('chain to --trust-ca')).toEqual([expect.objectContaining({ ok: true })]);
    expect(evidence('signer revocation')[0]?.value).toMatch(/Notary LTV Signer: good/);
    expect(check6.evidence.filter((e) => e.ok === false).map((e) => e.label)).toEqual([
      'Tabela A.16 id-signingTime',
    ]);

    // A replayed completion: refused, the record unchanged.
    await expect(
      as(alice).documents.notarySignatureComplete({
        id: docId,
        sessionId: prepared.sessionId,
        signature: signWith(rpki.signer.keyPem, prepared.signedAttributes),
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await row(prepared.sessionId)).signedPdfSha256).toBe(record.sha256);
  }, 60_000);

  it('refuses another key, another tenant, an expired session; nothing is written', async () => {
    const prepared = await prepare('icp-brasil-ad-rb');
    const complete = (bearer: string, signature: string) =>
      as(bearer).documents.notarySignatureComplete({ id: docId, sessionId: prepared.sessionId, signature });
    await expect(complete(alice, signWith(pki.rsa.keyPem, prepared.signedAttributes))).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(
      complete(bob, signWith(rpki.signer.keyPem, prepared.signedAttributes)),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await t.service.deps.db
      .fork()
      .nativeUpdate(
        NotarySignatureSession,
        { id: prepared.sessionId },
        { expiresAt: new Date(Date.now() - 1000) },
      );
    await expect(
      complete(alice, signWith(rpki.signer.keyPem, prepared.signedAttributes)),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      cause: { code: 'GONE' },
    });
    const stored = await row(prepared.sessionId);
    expect(stored.completedAt).toBeNull();
    expect(stored.signedPdf).toBeNull();
  }, 60_000);

  it('refuses an incomplete chain and an expired signer when preparing', async () => {
    await expect(
      as(alice).documents.notarySignaturePrepare({
        id: docId,
        certificates: [b64(rpki.signer.certDer)],
        policy: 'icp-brasil-ad-rb',
      }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/chain is incomplete/) });
    const later = new Date(Date.now() + 3 * 3600_000);
    await expect(checkSignerChain(pemCertificates(rpki.shortLived.chainPem), later)).rejects.toThrow(
      /expired on/,
    );
  });

  it('is served over REST and in the OpenAPI document', async () => {
    const openapi = (await (await fetch(`${t.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(openapi.paths['/api/documents/{id}/notary-signature']?.post).toBeDefined();
    expect(openapi.paths['/api/documents/{id}/notary-signature/{sessionId}']?.put).toBeDefined();
    const res = await fetch(`${t.url}/api/documents/${docId}/notary-signature`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ certificates: [b64(rpki.signer.certDer)], policy: 'icp-brasil-ad-rb' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/chain is incomplete/);
  });

  it('refuses a revoked signer (its OCSP responder says so); nothing is written', async () => {
    // A signer of its own: the service keeps OCSP answers until their nextUpdate, and the other tests' signer
    // was judged good moments ago.
    const prepared = await as(alice).documents.notarySignaturePrepare({
      id: docId,
      certificates: pemCertificates(rpki.shortLived.chainPem).map(b64),
      policy: 'icp-brasil-ad-rb',
    });
    await rpki.revoke('shortLived');
    await expect(
      as(alice).documents.notarySignatureComplete({
        id: docId,
        sessionId: prepared.sessionId,
        signature: signWith(rpki.shortLived.keyPem, prepared.signedAttributes),
      }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/revoked/) });
    expect((await row(prepared.sessionId)).completedAt).toBeNull();
  }, 60_000);
});
