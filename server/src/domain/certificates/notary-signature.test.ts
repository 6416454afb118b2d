/**
 * The tabelião's deferred signature through the real service (PGlite, tRPC's server-side caller): the service
 * signs with its own key (the test PKI), the tabelião's key (the revocation PKI's signer, whose OCSP responder
 * answers on loopback) signs the attributes answered, the way a token would. Checked by pdfsig (the service's
 * signature still valid), by OpenSSL (the tabelião's CMS verifies over its byte range to the tabelião's root,
 * with the AD-RT policy attribute and the signature timestamp), and each refusal leaves the session unsigned.
 */
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pemCertificates } from '@notary/trust/bytes';
import { runCli } from '@notary/verify/cli';
import { checkPadesSignature } from '@notary/verify/pades/index';
import type { VerifyReport } from '@notary/verify/report';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../../../test/harness/fixtures';
import { uploadFile } from '../../../../test/harness/http';
import { nthSignature, opensslVerifySignature } from '../../../../test/harness/pdf-cms';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import {
  notarySigningEnv,
  type RevocationPki,
  startRevocationPki,
} from '../../../../test/harness/revocation-pki';
import { startTestService, type TestService } from '../../../../test/harness/service';
import { freshEmail, makeOrg } from '../../../../test/harness/tenants';
import { Document, NotarySignatureSession } from '../../db/entities';
import { certificateContext } from '../../deps';
import { createInnerContext } from '../../trpc/context';
import { createCaller } from '../../trpc/router';
import { authenticate } from '../tenancy/authenticate';
import { checkSignerChain, completeNotarySignature, NOTARY_SESSION_MINUTES } from './notary-signature';
import { validarAccessCode } from './validar';

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
    ...notarySigningEnv(pki, rpki),
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
    const printed = await opensslVerifySignature(pdf, 1, rpki.caChainPath, tmp);
    expect(printed).toContain('2.16.76.1.7.1.12.1');
    expect(printed).toContain('id-smime-aa-timeStampToken');

    // notary-verify's check 6 judges both signatures, each to its own root. The tabelião's signature, policy,
    // chain and revocation hold; the one row it fails is Tabela A.16 on this test TSA's own tokens (`openssl ts`
    // signs a signingTime attribute), not on the signature; the service's signature is untouched by it.
    const check6 = await checkPadesSignature(pdf, {
      at: new Date(),
      trustCa: [pki.root.certDer, pemCertificates(rpki.signer.chainPem).at(-1) as Uint8Array],
      tsaCa: pemCertificates(rpki.caChainPem),
    });
    const notaryLabel = (label: string) => `signature 2 (Notary LTV Signer): ${label}`;
    const evidence = (label: string) => check6.evidence.filter((e) => e.label === notaryLabel(label));
    expect(evidence('signature')).toEqual([expect.objectContaining({ value: 'valid', ok: true })]);
    expect(evidence('signature policy')[0]?.value).toMatch(/^AD-RT/);
    expect(evidence('chain to --trust-ca')).toEqual([expect.objectContaining({ ok: true })]);
    expect(evidence('signer revocation')[0]?.value).toMatch(/Notary LTV Signer: good/);
    expect(check6.evidence.filter((e) => e.ok === false).map((e) => e.label)).toEqual([
      notaryLabel('Tabela A.16 id-signingTime'),
    ]);
    expect(check6.pades?.signers?.map((x) => [x.name, x.status])).toEqual([
      ['Notary Test Signer', 'passed'],
      ['Notary LTV Signer', 'failed'],
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
    // The test PKI's signer names no caIssuers URL: its issuer cannot be fetched.
    await expect(
      as(alice).documents.notarySignaturePrepare({
        id: docId,
        certificates: [b64(pki.rsa.certDer)],
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
      body: JSON.stringify({ certificates: [b64(pki.rsa.certDer)], policy: 'icp-brasil-ad-rb' }),
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
  it('AD-RB: the certificate route serves the signed file; notary-verify passes both signers, a tampered one fails alone', async () => {
    const prepared = await prepare('icp-brasil-ad-rb');
    const record = await as(alice).documents.notarySignatureComplete({
      id: docId,
      sessionId: prepared.sessionId,
      signature: signWith(rpki.signer.keyPem, prepared.signedAttributes),
    });
    const res = await fetch(`${t.url}/api/documents/${docId}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-notary-signed')).toBe('pades');
    expect(res.headers.get('x-signature-level')).toBe(record.level);
    const pdf = new Uint8Array(await res.arrayBuffer());
    expect(createHash('sha256').update(pdf).digest('hex')).toBe(record.sha256);
    // VALIDAR downloads the same file through the public route, with the access code printed on it, and only so.
    const { serialNumber } = await t.service.deps.db.fork().findOneOrFail(Document, { id: docId });
    const publicUrl = (code: string) =>
      `${t.url}/api/public/documents/${encodeURIComponent(serialNumber)}/certificate?_secretCode=${code}`;
    const pub = await fetch(publicUrl(validarAccessCode(t.service.deps.secret, serialNumber)));
    expect(pub.status).toBe(200);
    expect(pub.headers.get('x-notary-signed')).toBe('pades');
    expect(pub.headers.get('content-disposition')).toMatch(/^inline/);
    expect(
      createHash('sha256')
        .update(new Uint8Array(await pub.arrayBuffer()))
        .digest('hex'),
    ).toBe(record.sha256);
    expect((await fetch(publicUrl('WRONG-CODE'))).status).toBe(401);

    const certificatePath = path.join(tmp, 'ad-rb.pdf');
    const anchors = path.join(tmp, 'anchors.pem');
    await writeFile(certificatePath, pdf);
    await writeFile(anchors, `${pki.root.certPem}\n${rpki.root.certPem}`);
    const argv = [
      path.join(FIXTURES_DIR, 'files/contrato.txt'),
      '--certificate',
      certificatePath,
      '--trust-ca',
      anchors,
      '--tsa-ca',
      rpki.caChainPath,
    ];
    const json = await runCli([...argv, '--json']);
    const report = JSON.parse(json.stdout) as VerifyReport;
    const check = (id: number) => report.checks.find((c) => c.id === id);
    // Check 5 is the receipt's own RFC 3161 token (none here, it is asked for apart); each signature's
    // timestamps are judged within check 6.
    expect(check(5)?.status).not.toBe('failed');
    expect(check(6)).toMatchObject({ status: 'passed', pades: { level: record.level } });
    expect(
      check(6)?.pades?.signers?.map((x) => ({
        name: x.name,
        status: x.status,
        policy: x.policy?.slice(0, 5),
      })),
    ).toEqual([
      { name: 'Notary Test Signer', status: 'passed', policy: undefined },
      { name: 'Notary LTV Signer', status: 'passed', policy: 'AD-RB' },
    ]);
    const text = await runCli(argv);
    expect(text.stdout).toMatch(/signature 1 \(Notary Test Signer\)/);
    expect(text.stdout).toMatch(/signature 2 \(Notary LTV Signer\)/);

    // The tabelião's revision with one byte of its signature value changed (AD-RB: the CMS ends with it),
    // without the later validation data and document timestamp that cover it.
    const notary = nthSignature(pdf, 1);
    const tampered = Buffer.from(pdf.subarray(0, notary.end));
    const digit = notary.hexAt + 2 * (notary.cms.length - 1);
    tampered[digit] = tampered[digit] === 0x30 ? 0x31 : 0x30;
    const bad = await checkPadesSignature(tampered, {
      at: new Date(),
      trustCa: pemCertificates(await readFile(anchors, 'utf8')),
      tsaCa: pemCertificates(rpki.caChainPem),
    });
    expect(bad.status).toBe('failed');
    expect(bad.pades?.signers?.map((x) => x.status)).toEqual(['passed', 'failed']);
    expect(bad.evidence.filter((e) => e.ok === false).map((e) => e.label)).toEqual([
      'signature 2 (Notary LTV Signer): signature',
    ]);
  }, 90_000);

  it('fetches a missing intermediate from the signer AIA caIssuers URL, proven by its signature', async () => {
    const asked = rpki.requests.caIssuers;
    const prepared = await as(alice).documents.notarySignaturePrepare({
      id: docId,
      certificates: [b64(rpki.signer.certDer), b64(rpki.root.certDer)],
      policy: 'icp-brasil-ad-rb',
    });
    expect(rpki.requests.caIssuers).toBe(asked + 1);
    expect((await row(prepared.sessionId)).certificates).toEqual(
      [rpki.signer.certDer, rpki.root.certDer, rpki.intermediate.certDer].map(b64),
    );
  }, 60_000);

  it('refuses a reader preparing, another member of the organization completing, an expired session', async () => {
    const [owner, editor, reader] = [freshEmail('owner'), freshEmail('editor'), freshEmail('reader')];
    const org = await makeOrg(t, 'Cartório', [
      [owner, 'owner'],
      [editor, 'editor'],
      [reader, 'reader'],
    ]);
    const token = (email: string) => org.tokens[email] as string;
    const upload = await uploadFile(t.url, token(owner), path.join(FIXTURES_DIR, 'files/contrato.txt'));
    expect(upload.status).toBe(201);
    const id = String(upload.body.id);
    const request = {
      id,
      certificates: pemCertificates(rpki.signer.chainPem).map(b64),
      policy: 'icp-brasil-ad-rb' as const,
    };
    await expect(as(token(reader)).documents.notarySignaturePrepare(request)).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const prepared = await as(token(owner)).documents.notarySignaturePrepare(request);
    const input = {
      id,
      sessionId: prepared.sessionId,
      signature: signWith(rpki.signer.keyPem, prepared.signedAttributes),
    };
    for (const other of [editor, reader]) {
      await expect(as(token(other)).documents.notarySignatureComplete(input)).rejects.toMatchObject({
        code: 'FORBIDDEN',
      });
    }
    // The session's clock: one second past its expiry, refused; one second before it, completed, once.
    const em = t.service.deps.db.fork();
    const actor = await authenticate(em, t.service.deps, token(owner), null);
    const expiresAt = Date.parse(prepared.expiresAt);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(NOTARY_SESSION_MINUTES * 60_000);
    const at = (ms: number) => ({ ...certificateContext(t.service.deps), now: () => new Date(ms) });
    await expect(completeNotarySignature(em, at(expiresAt + 1000), actor, input)).rejects.toMatchObject({
      code: 'GONE',
    });
    expect((await row(prepared.sessionId)).completedAt).toBeNull();
    const record = await completeNotarySignature(em, at(expiresAt - 1000), actor, input);
    await expect(completeNotarySignature(em.fork(), at(expiresAt - 500), actor, input)).rejects.toMatchObject(
      {
        code: 'CONFLICT',
      },
    );
    expect((await row(prepared.sessionId)).signedPdfSha256).toBe(record.sha256);
  }, 90_000);
});
