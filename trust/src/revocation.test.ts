/**
 * Revocation data against real services: the revocation test PKI (`openssl ocsp` per request, `openssl ca
 * -gencrl` CRLs, on loopback), and the answers kept checked again with openssl itself.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RevocationPki, startRevocationPki } from '../../test/harness/revocation-pki.ts';
import { gatherValidationMaterial, revocationStatus, type ValidationMaterial } from './revocation.ts';

const run = promisify(execFile);
const HOUR = 3_600_000;

/** openssl's stdout and stderr together (it reports verification on stderr), and its exit status. */
async function openssl(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('openssl', args, { encoding: 'utf8' });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, out: (err.stdout ?? '') + (err.stderr ?? '') };
  }
}

describe('revocation data from the certificates’ own OCSP and CRL URLs', () => {
  let pki: RevocationPki;
  let tmp: string;
  let chain: Uint8Array[];
  let fileCount = 0;
  const file = async (bytes: Uint8Array, ext: string) => {
    const p = path.join(tmp, `f${++fileCount}.${ext}`);
    await writeFile(p, bytes);
    return p;
  };
  /** The intermediate's OCSP responder's answer about the signer now, asked with an openssl request. */
  const askResponder = async (name: string, digest: string[] = []): Promise<Uint8Array> => {
    const request = path.join(tmp, `${name}.req`);
    await run('openssl', [
      'ocsp',
      ...digest,
      '-issuer',
      pki.caPath('intermediate'),
      '-cert',
      pki.signer.certPath,
      '-reqout',
      request,
      '-no_nonce',
    ]);
    const res = await fetch(pki.ocspUrl('intermediate'), {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: await readFile(request),
    });
    return new Uint8Array(await res.arrayBuffer());
  };
  /** `openssl ocsp -respin` of `answer` about `cert` (the signer unless told), trusting the PKI's CAs. */
  const opensslCheck = async (
    answer: Uint8Array,
    cert = pki.signer.certPath,
    issuer = pki.caPath('intermediate'),
    extra: string[] = [],
  ) =>
    openssl(
      'ocsp',
      '-respin',
      await file(answer, 'der'),
      '-issuer',
      issuer,
      '-cert',
      cert,
      '-CAfile',
      pki.caChainPath,
      ...extra,
      '-no_nonce',
    );

  beforeAll(async () => {
    pki = await startRevocationPki();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-revocation-test-'));
    chain = [pki.signer.certDer, pki.intermediate.certDer, pki.root.certDer];
  });
  afterAll(async () => {
    await pki?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });
  afterEach(() => {
    pki.setOcsp('ok');
    pki.setCrl('ok');
  });

  it('good: one OCSP answer per issued certificate (the root signs its own, a delegated responder the intermediate’s), and openssl agrees', async () => {
    const before = { ...pki.requests };
    const { material, missing } = await gatherValidationMaterial([...chain].reverse());
    expect(missing).toEqual([]);
    expect(material.ocsps).toHaveLength(2);
    expect(material.crls).toHaveLength(0);
    expect(pki.requests.ocsp - before.ocsp).toBe(2);
    expect(pki.requests.crl - before.crl).toBe(0);
    // The chain and the delegated responder's certificate.
    expect(material.certs).toHaveLength(4);
    expect(material.certs.some((c) => Buffer.from(c).equals(Buffer.from(pki.ocspResponder.certDer)))).toBe(
      true,
    );

    const now = new Date();
    const signer = await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, material, now);
    expect(signer).toMatchObject({ status: 'good', source: 'ocsp' });
    if (signer.status !== 'good') throw new Error('unreachable');
    expect(Math.abs(signer.thisUpdate.getTime() - now.getTime())).toBeLessThan(5 * 60_000);
    expect(signer.nextUpdate?.getTime()).toBeGreaterThan(now.getTime());
    expect(signer.producedAt).toBeInstanceOf(Date);
    expect(await revocationStatus(pki.intermediate.certDer, pki.root.certDer, material, now)).toMatchObject({
      status: 'good',
      source: 'ocsp',
    });
    // Asked about a certificate the material does not cover.
    expect(await revocationStatus(pki.tsa.certDer, pki.intermediate.certDer, material, now)).toMatchObject({
      status: 'unknown',
      reason: expect.stringMatching(/none of the 2 OCSP answers and 0 CRLs/),
    });

    // openssl verifies each kept answer: signature, responder authority, certificate ID.
    for (const [der, cert, issuer] of [
      // In the order of the chain given (root first here).
      [material.ocsps[0], pki.intermediate.certPath, pki.caPath('root')],
      [material.ocsps[1], pki.signer.certPath, pki.caPath('intermediate')],
    ] as const) {
      const { code, out } = await opensslCheck(der as Uint8Array, cert, issuer, ['-resp_text']);
      expect(code, out).toBe(0);
      expect(out).toContain('Response verify OK');
      expect(out).toContain(`${cert}: good`);
      expect(out).toMatch(/Hash Algorithm: sha1/);
    }
  });

  it('responder down and no CRL: missing names the certificates and why; nothing throws', async () => {
    pki.setOcsp('down');
    pki.setCrl('down');
    const { material, missing } = await gatherValidationMaterial(chain);
    expect(material.ocsps).toEqual([]);
    expect(material.crls).toEqual([]);
    expect(missing.map((m) => m.subject).sort()).toEqual([
      'O=Notary Test, CN=Notary LTV Intermediate CA',
      'O=Notary Test, CN=Notary LTV Signer',
    ]);
    for (const m of missing) {
      expect(m.reason).toMatch(
        /^OCSP http:\/\/127\.0\.0\.1:\d+\/ocsp\/\w+: HTTP 503; CRL http:.*\.crl: HTTP 503$/,
      );
    }
    pki.setOcsp('refused');
    const refused = await gatherValidationMaterial(chain);
    expect(refused.missing[0]?.reason).toMatch(/OCSP .*: unreachable: /);
    expect(
      await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, material, new Date()),
    ).toEqual({
      status: 'unknown',
      reason: 'none of the 0 OCSP answers and 0 CRLs is about this certificate',
      detail: { code: 'trust.noAnswerAbout', params: { ocsps: 0, crls: 0 } },
    });
  });

  it('CRL fallback when OCSP is down; openssl verifies the CRL kept; each CRL URL is fetched once per call', async () => {
    pki.setOcsp('down');
    const before = { ...pki.requests };
    const { material, missing } = await gatherValidationMaterial([...chain, pki.tsa.certDer]);
    expect(missing).toEqual([]);
    expect(material.ocsps).toEqual([]);
    expect(material.crls).toHaveLength(2);
    // signer and TSA share the intermediate's CRL; the intermediate has the root's.
    expect(pki.requests.crl - before.crl).toBe(2);
    const now = new Date();
    for (const [cert, issuer] of [
      [pki.signer.certDer, pki.intermediate.certDer],
      [pki.tsa.certDer, pki.intermediate.certDer],
      [pki.intermediate.certDer, pki.root.certDer],
    ] as const) {
      expect(await revocationStatus(cert, issuer, material, now)).toMatchObject({
        status: 'good',
        source: 'crl',
      });
    }
    for (const [i, ca] of [
      [0, 'intermediate'],
      [1, 'root'],
    ] as const) {
      const crl = await file(material.crls[i] as Uint8Array, 'crl');
      const { code, out } = await openssl(
        'crl',
        '-in',
        crl,
        '-inform',
        'DER',
        '-CAfile',
        pki.caPath(ca),
        '-verify',
        '-noout',
      );
      expect(code, out).toBe(0);
      expect(out).toContain('verify OK');
    }
  });

  it('a lying OCSP answer (rogue responder, says good) is refused; the CRL is used instead', async () => {
    pki.setOcsp('lying');
    pki.setCrl('down');
    const { material, missing } = await gatherValidationMaterial(chain);
    expect(material.ocsps).toEqual([]);
    expect(missing).toHaveLength(2);
    for (const m of missing)
      expect(m.reason).toMatch(/OCSP .*: not signed by an authority: .*Notary LTV OCSP Responder/);

    // The same answer placed in the material (as a /DSS could carry it) gives no verdict.
    const lying = await askResponder('lying');
    const withLie: ValidationMaterial = {
      certs: [...chain, pki.ocspResponder.certDer],
      ocsps: [lying],
      crls: [],
    };
    const verdict = await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, withLie, new Date());
    expect(verdict).toMatchObject({
      status: 'unknown',
      reason: expect.stringMatching(/not signed by an authority/),
    });
    // openssl refuses it too.
    const { code, out } = await opensslCheck(lying);
    expect(code).not.toBe(0);
    expect(out).toMatch(/Response Verify Failure/);

    pki.setCrl('ok');
    const fallback = await gatherValidationMaterial(chain);
    expect(fallback.missing).toEqual([]);
    expect(fallback.material.crls).toHaveLength(2);
  });

  it('an answer signed by a certificate of the CA without the OCSPSigning EKU is refused, as openssl does', async () => {
    pki.setOcsp('no-eku');
    pki.setCrl('down');
    const { material, missing } = await gatherValidationMaterial(chain);
    expect(material.ocsps).toEqual([]);
    expect(missing.map((m) => m.reason).sort()).toEqual([
      expect.stringMatching(
        /OCSP .*: responder O=Notary Test, CN=Notary LTV TSA lacks the id-kp-OCSPSigning EKU/,
      ),
      expect.stringMatching(
        /OCSP .*: responder O=Notary Test, CN=Notary LTV Intermediate CA lacks the id-kp-OCSPSigning EKU/,
      ),
    ]);
    const answer = await askResponder('no-eku');
    const { code, out } = await opensslCheck(answer);
    expect(code).not.toBe(0);
    expect(out).toMatch(/Response Verify Failure/);
    expect(
      await revocationStatus(
        pki.signer.certDer,
        pki.intermediate.certDer,
        { ...material, ocsps: [answer] },
        new Date(),
      ),
    ).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/lacks the id-kp-OCSPSigning EKU/) });
  });

  it('answers past their nextUpdate at the time asked for are not kept', async () => {
    const { material, missing } = await gatherValidationMaterial(chain, {
      now: new Date(Date.now() + 8 * 24 * HOUR),
    });
    expect(material.ocsps).toEqual([]);
    expect(material.crls).toEqual([]);
    expect(missing).toHaveLength(2);
    for (const m of missing)
      expect(m.reason).toMatch(/OCSP .*: stale: nextUpdate .* has passed; CRL .*: stale: nextUpdate/);
  });

  it('an answer over the size bound, past the timeout or past the request budget is not kept', async () => {
    const small = await gatherValidationMaterial(chain, { maxBytes: 64 });
    expect(small.material.ocsps).toEqual([]);
    expect(small.missing[0]?.reason).toMatch(/larger than 64 bytes/);

    // A server that accepts and never answers.
    const hanging: Server = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    hanging.unref();
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`;
      const slow = await gatherValidationMaterial(chain, {
        timeoutMs: 200,
        fetch: (_input, init) => globalThis.fetch(url, init),
      });
      expect(slow.missing).toHaveLength(2);
      expect(slow.missing[0]?.reason).toMatch(
        /OCSP .*: unreachable: timed out; CRL .*: unreachable: timed out/,
      );
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }

    const budget = await gatherValidationMaterial(chain, { maxRequests: 1 });
    expect(budget.material.ocsps).toHaveLength(1);
    expect(budget.missing).toHaveLength(1);
    expect(budget.missing[0]?.reason).toMatch(/request budget of this look-up spent/);
  });

  it('a SHA-256 CertID answer is understood; hostile blobs give unknown, not a crash', async () => {
    const answer = await askResponder('sha256', ['-sha256']);
    const text = await openssl('ocsp', '-respin', await file(answer, 'der'), '-resp_text', '-noverify');
    expect(text.out).toMatch(/Hash Algorithm: sha256/);
    const material = { certs: chain, ocsps: [answer], crls: [] };
    expect(
      await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, material, new Date()),
    ).toMatchObject({ status: 'good', source: 'ocsp' });

    const junk = {
      certs: [new Uint8Array([0x30, 0x03, 1, 2, 3])],
      ocsps: [new Uint8Array(40)],
      crls: [new Uint8Array([0x30, 0x80])],
    };
    expect(
      await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, junk, new Date()),
    ).toMatchObject({
      status: 'unknown',
    });
    const gathered = await gatherValidationMaterial([new Uint8Array([1, 2, 3]), ...chain]);
    expect(gathered.missing).toEqual([
      {
        subject: 'a certificate of the chain',
        reason: 'it does not parse',
        detail: { code: 'trust.certificateDoesNotParse' },
      },
    ]);
  });

  describe('after a revocation', () => {
    const revokedAt = new Date(Math.floor((Date.now() - HOUR) / 1000) * 1000);

    beforeAll(async () => {
      await pki.revoke('signer', { at: revokedAt, reason: 'keyCompromise' });
    });

    it('OCSP says revoked, with the revocation time and reason; before that time the certificate was good', async () => {
      const { material, missing } = await gatherValidationMaterial(chain);
      expect(missing).toEqual([]);
      expect(material.ocsps).toHaveLength(2);
      expect(
        await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, material, new Date()),
      ).toEqual({
        status: 'revoked',
        source: 'ocsp',
        revokedAt,
        reason: 'keyCompromise',
      });
      const before = await revocationStatus(
        pki.signer.certDer,
        pki.intermediate.certDer,
        material,
        new Date(revokedAt.getTime() - 1000),
      );
      expect(before).toMatchObject({ status: 'good', source: 'ocsp' });
      const { code, out } = await opensslCheck(material.ocsps[0] as Uint8Array);
      expect(code, out).toBe(0);
      expect(out).toContain('Response verify OK');
      expect(out).toContain(`${pki.signer.certPath}: revoked`);
      expect(out).toContain('Reason: keyCompromise');
    });

    it('the CRL has the revoked entry (time and reason), and openssl reads the same', async () => {
      pki.setOcsp('down');
      const { material, missing } = await gatherValidationMaterial(chain);
      expect(missing).toEqual([]);
      expect(material.crls).toHaveLength(2);
      expect(
        await revocationStatus(pki.signer.certDer, pki.intermediate.certDer, material, new Date()),
      ).toEqual({
        status: 'revoked',
        source: 'crl',
        revokedAt,
        reason: 'keyCompromise',
      });
      const crl = await file(material.crls[0] as Uint8Array, 'crl');
      const { code, out } = await openssl(
        'crl',
        '-in',
        crl,
        '-inform',
        'DER',
        '-CAfile',
        pki.caPath('intermediate'),
        '-verify',
        '-text',
        '-noout',
      );
      expect(code, out).toBe(0);
      expect(out).toContain('verify OK');
      const serial = (await openssl('x509', '-in', pki.signer.certPath, '-noout', '-serial')).out
        .trim()
        .replace(/^serial=/, '');
      expect(out).toContain(`Serial Number: ${serial}`);
      expect(out).toContain('Key Compromise');
      // The intermediate is not revoked: the root's CRL says good.
      expect(
        await revocationStatus(pki.intermediate.certDer, pki.root.certDer, material, new Date()),
      ).toMatchObject({
        status: 'good',
        source: 'crl',
      });
    });
  });
});
