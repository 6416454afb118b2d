import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../test/harness/pki.ts';
import { toArrayBuffer } from './bytes.ts';
import { certificateDer, certificateFromDer, signedDataOf } from './cms.ts';

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
});
afterAll(async () => {
  await pki?.dispose();
});

/** What `certificateDer` answered before it kept encodings: pkijs' encoding of the parsed certificate. */
const reencoded = (cert: pkijs.Certificate) => new Uint8Array(cert.toSchema().toBER(false));

/** A SignedData (no signer) carrying `certs`, DER ContentInfo. */
function carrying(certs: Uint8Array[]): Uint8Array {
  const signedData = new pkijs.SignedData({
    version: 1,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: '1.2.840.113549.1.7.1' }),
    certificates: certs.map((der) => pkijs.Certificate.fromBER(toArrayBuffer(der))),
  });
  const info = new pkijs.ContentInfo({
    contentType: '1.2.840.113549.1.7.2',
    content: signedData.toSchema(true),
  });
  return new Uint8Array(info.toSchema().toBER(false));
}

describe('certificateDer', () => {
  it('answers the bytes a certificate was read from, the same as its encoding by pkijs, read once', () => {
    const ders = [pki.root.certDer, pki.intermediate.certDer, pki.tsa.certDer];
    for (const der of ders) {
      const cert = certificateFromDer(der);
      expect(Buffer.compare(certificateDer(cert), der)).toBe(0);
      // Read once for the same bytes, wherever they come from.
      expect(certificateFromDer(der.slice())).toBe(cert);
      expect(Buffer.compare(reencoded(cert), der)).toBe(0);
    }
    const carried = signedDataOf(carrying(ders), 'test').certificates ?? [];
    expect(carried).toHaveLength(3);
    carried.forEach((cert, i) => {
      if (!(cert instanceof pkijs.Certificate)) throw new Error('not a certificate');
      expect(Buffer.compare(certificateDer(cert), ders[i] ?? new Uint8Array())).toBe(0);
      expect(Buffer.compare(certificateDer(cert), reencoded(cert))).toBe(0);
      expect(cert).toBe(certificateFromDer(ders[i] ?? new Uint8Array()));
    });
  });

  it('does not keep bytes that run past the certificate: its encoding is computed then', () => {
    const der = pki.root.certDer;
    const trailing = new Uint8Array([...der, 0x05, 0x00]);
    const cert = certificateFromDer(trailing);
    expect(Buffer.compare(certificateDer(cert), der)).toBe(0);
    expect(asn1js.fromBER(toArrayBuffer(trailing)).offset).toBe(der.byteLength);
  });
});
