/**
 * File signer against the test PKI (`test/harness/pki.ts`, made by the openssl CLI): PKCS#12 as OpenSSL 3
 * writes it, PEM in PKCS#8 and traditional forms, and the errors a misconfigured key must produce.
 */
import { createPublicKey, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import { describeCertificate, loadFileSigner } from './file';

let pki: TestPki;

beforeAll(async () => {
  pki = await createTestPki();
});

afterAll(async () => {
  await pki?.dispose();
});

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const data = new TextEncoder().encode('signed attributes stand-in');

describe('loadFileSigner', () => {
  it('reads an RSA PKCS#12 (OpenSSL 3 defaults) and signs PKCS#1 v1.5 SHA-256', async () => {
    const signer = await loadFileSigner({ pkcs12: pki.rsa.p12, password: pki.p12Password });
    expect(signer.algorithm).toBe('RSASSA-PKCS1-v1_5-SHA256');
    expect(signer.certificateChain.map(hex)).toEqual(
      [pki.rsa.certDer, pki.intermediate.certDer, pki.root.certDer].map(hex),
    );
    const signature = await signer.sign(data);
    expect(signature.byteLength).toBe(256);
    expect(verify('sha256', data, createPublicKey(pki.rsa.certPem), signature)).toBe(true);

    const description = describeCertificate(signer.certificateChain[0] as Uint8Array);
    expect(description.subjectCommonName).toBe('Notary Test Signer');
    expect(description.issuerCommonName).toBe('Notary Test Intermediate CA');
    expect(description.notAfter.getTime()).toBeGreaterThan(Date.now());
    expect(description.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads an EC P-256 PEM key (SEC1 and PKCS#8) with its chain in any order, signing DER ECDSA', async () => {
    for (const keyPem of [pki.ec.traditionalKeyPem, pki.ec.keyPem]) {
      // Root first, signer in the middle: the signer is found by its key, then the issuers follow.
      const chainPem = pki.root.certPem + pki.ec.certPem + pki.intermediate.certPem;
      const signer = await loadFileSigner({ keyPem, chainPem });
      expect(signer.algorithm).toBe('ECDSA-P256-SHA256');
      expect(signer.certificateChain.map(hex)).toEqual(
        [pki.ec.certDer, pki.intermediate.certDer, pki.root.certDer].map(hex),
      );
      const signature = await signer.sign(data);
      expect(signature[0]).toBe(0x30); // Ecdsa-Sig-Value SEQUENCE, not raw r||s
      expect(verify('sha256', data, createPublicKey(pki.ec.certPem), signature)).toBe(true);
    }
    expect(pki.ec.traditionalKeyPem).toContain('BEGIN EC PRIVATE KEY');
  });

  it('reads a PEM file holding both the key and the chain, and a traditional RSA key', async () => {
    const combined = await loadFileSigner({
      keyPem: pki.rsa.chainPem + pki.rsa.keyPem,
      chainPem: pki.rsa.chainPem + pki.rsa.keyPem,
    });
    expect(combined.algorithm).toBe('RSASSA-PKCS1-v1_5-SHA256');
    expect(hex(combined.certificateChain[0] as Uint8Array)).toBe(hex(pki.rsa.certDer));
    expect(pki.rsa.traditionalKeyPem).toContain('BEGIN RSA PRIVATE KEY');
    const traditional = await loadFileSigner({
      keyPem: pki.rsa.traditionalKeyPem,
      chainPem: pki.rsa.chainPem,
    });
    expect(traditional.certificateChain).toHaveLength(3);
  });

  it('refuses a wrong PKCS#12 password clearly', async () => {
    await expect(loadFileSigner({ pkcs12: pki.rsa.p12, password: 'not the password' })).rejects.toThrow(
      /wrong PKCS#12 password/,
    );
  });

  it('refuses a legacy (RC2/3DES) PKCS#12 clearly', async () => {
    const legacy = new Uint8Array(await readFile(pki.rsa.legacyP12Path));
    await expect(loadFileSigner({ pkcs12: legacy, password: pki.p12Password })).rejects.toThrow(
      /legacy encryption/,
    );
  });

  it('refuses a key that matches no certificate of the chain', async () => {
    await expect(loadFileSigner({ keyPem: pki.rsa.keyPem, chainPem: pki.ec.chainPem })).rejects.toThrow(
      /private key does not match any certificate/,
    );
  });

  it('refuses a key PEM without a key and a chain PEM without a certificate', async () => {
    await expect(loadFileSigner({ keyPem: pki.rsa.certPem, chainPem: pki.rsa.chainPem })).rejects.toThrow(
      /no PRIVATE KEY block/,
    );
    await expect(loadFileSigner({ keyPem: pki.rsa.keyPem, chainPem: 'nothing here' })).rejects.toThrow(
      /no CERTIFICATE block/,
    );
  });
});
