/**
 * The A1 file opened as the web client opens it (pkijs and WebCrypto, here Node's WebCrypto): PKCS#12 files
 * OpenSSL 3 wrote (PBES2/AES, RSA and EC P-256), the signature checked by node:crypto against the leaf; a wrong
 * password, a legacy RC2/3DES file, a file that is not PKCS#12 and an expired certificate are each refused with
 * their sentence.
 */

import { verify, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import { openPkcs12, Pkcs12Error, pkcs12ErrorSentence } from './web-pkcs12';

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
}, 120_000);
afterAll(async () => {
  await pki?.dispose();
});

/** The `Pkcs12Error` `work` rejects with. */
async function refusal(work: Promise<unknown>): Promise<Pkcs12Error> {
  const e = await work.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(e instanceof Pkcs12Error)) throw new Error(`expected a Pkcs12Error, got ${String(e)}`);
  return e;
}

describe('an A1 file opened in the page', () => {
  it.each(['rsa', 'ec'] as const)(
    'signs with the %s key; the leaf comes first, then its issuers',
    async (kind) => {
      const signer = await openPkcs12(pki[kind].p12, pki.p12Password);
      const leaf = new X509Certificate(signer.chain[0] as Uint8Array);
      expect(leaf.raw.equals(Buffer.from(pki[kind].certDer))).toBe(true);
      expect(signer.chain).toHaveLength(3);
      const data = new TextEncoder().encode('signed attributes');
      const signature = await signer.sign(data);
      // node:crypto reads RSA PKCS#1 v1.5 and DER ECDSA, what CMS carries.
      expect(verify('sha256', data, leaf.publicKey, signature)).toBe(true);
    },
  );

  it('refuses a wrong password, a legacy file, a file that is not PKCS#12, an expired certificate', async () => {
    const wrong = await refusal(openPkcs12(pki.rsa.p12, 'not the password'));
    expect(wrong.failure).toBe('wrong-password');
    expect(pkcs12ErrorSentence(wrong, 'pt')).toBe('Senha do certificado incorreta.');
    const legacy = await refusal(openPkcs12(await readFile(pki.rsa.legacyP12Path), pki.p12Password));
    expect(legacy.failure).toBe('legacy-encryption');
    const pdf = await refusal(openPkcs12(new TextEncoder().encode('%PDF-1.7'), ''));
    expect(pdf.failure).toBe('unreadable');
    const expired = await refusal(
      openPkcs12(pki.rsa.p12, pki.p12Password, new Date(Date.now() + 50 * 365 * 86_400_000)),
    );
    expect(expired.failure).toBe('certificate-expired');
    expect(pkcs12ErrorSentence(expired, 'en')).toBe('The certificate has expired: it can no longer sign.');
  });
});
