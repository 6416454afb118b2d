/**
 * File-based `DocumentSigner`: the PAdES key and certificate chain come from a PKCS#12 file (RFC 7292) or from PEM
 * files. The key is held as a node:crypto `KeyObject` and never leaves this module.
 */
import { createHash, createPrivateKey, type KeyObject, sign as nodeSign, X509Certificate } from 'node:crypto';
import { errorMessage, evenHex } from '@notary/shared';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { DocumentSigner, SignatureAlgorithm } from '../../ports/signer';

/** Where the signing key and chain come from (see `loadFileSigner`). */
export type FileSignerOptions =
  | { pkcs12: Uint8Array; password?: string }
  | {
      /** PKCS#8 (`BEGIN PRIVATE KEY`), PKCS#1 (`BEGIN RSA PRIVATE KEY`) or SEC1 (`BEGIN EC PRIVATE KEY`), unencrypted. */
      keyPem: string;
      /** One or more `BEGIN CERTIFICATE` blocks: the signer's and its chain, in any order. */
      chainPem: string;
    };

const OID_PKCS8_SHROUDED_KEY_BAG = '1.2.840.113549.1.12.10.1.2';
const OID_KEY_BAG = '1.2.840.113549.1.12.10.1.1';
const OID_CERT_BAG = '1.2.840.113549.1.12.10.1.3';
const OID_X509_CERTIFICATE = '1.2.840.113549.1.9.22.1';
const OID_PBES2 = '1.2.840.113549.1.5.13';
const OID_COMMON_NAME = '2.5.4.3';

/**
 * Loads a signer from a PKCS#12 file or from PEM key + chain.
 *
 * - PKCS#12: parsed with pkijs (`PFX` → `AuthenticatedSafe` → `SafeContents`); the MAC is checked with
 *   `password` (default empty). Supported: what OpenSSL 3 writes by default (PBES2 with PBKDF2-HMAC-SHA256
 *   and AES-256-CBC, HMAC-SHA256 MAC). Legacy PKCS#12 PBE (RC2/3DES, `openssl pkcs12 -legacy`) is refused.
 * - PEM: the key may be PKCS#8, PKCS#1 or SEC1; the chain holds the signer certificate and its CAs.
 *
 * The chain is reordered signer first (the certificate whose public key matches the key), then issuers by
 * name and signature; certificates not on that path are dropped. Keys: RSA (PKCS#1 v1.5 + SHA-256) or EC
 * P-256 (ECDSA + SHA-256, DER `Ecdsa-Sig-Value`).
 *
 * @throws Error with a specific message: wrong PKCS#12 password, unsupported PKCS#12 encryption, no key or
 *   certificate found, no certificate matching the key, unsupported key type or curve.
 */
export async function loadFileSigner(opts: FileSignerOptions): Promise<DocumentSigner> {
  const { key, certificates } =
    'pkcs12' in opts
      ? await readPkcs12(opts.pkcs12, opts.password ?? '')
      : readPem(opts.keyPem, opts.chainPem);
  const algorithm = algorithmOf(key);
  const certificateChain = orderChain(key, certificates);
  return {
    certificateChain,
    algorithm,
    // node:crypto: RSA defaults to PKCS#1 v1.5 padding, ECDSA to the DER signature encoding CMS wants.
    sign: async (data) => new Uint8Array(nodeSign('sha256', data, key)),
  };
}

/** What logs and the README print about a signer certificate. */
export interface CertificateDescription {
  subjectCommonName: string | null;
  issuerCommonName: string | null;
  /** Lower-case hex, even length, without the DER sign byte (as `openssl x509 -serial` shows it). */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** SHA-256 of the certificate DER, 64 lower-case hex. */
  sha256: string;
}

/** Describes a DER certificate (typically `signer.certificateChain[0]`). @throws Error if it does not parse. */
export function describeCertificate(der: Uint8Array): CertificateDescription {
  const cert = pkijs.Certificate.fromBER(der);
  return {
    subjectCommonName: commonName(cert.subject),
    issuerCommonName: commonName(cert.issuer),
    serialNumber: evenHex(cert.serialNumber.toBigInt()),
    notBefore: cert.notBefore.value,
    notAfter: cert.notAfter.value,
    sha256: createHash('sha256').update(der).digest('hex'),
  };
}

function commonName(name: pkijs.RelativeDistinguishedNames): string | null {
  const cn = name.typesAndValues.find((tv) => tv.type === OID_COMMON_NAME);
  return cn ? cn.value.valueBlock.value : null;
}

function algorithmOf(key: KeyObject): SignatureAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RSASSA-PKCS1-v1_5-SHA256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ECDSA-P256-SHA256';
    throw new Error(`signing key: EC curve ${curve ?? 'unknown'} is not supported, only P-256 (prime256v1)`);
  }
  throw new Error(
    `signing key: type ${key.asymmetricKeyType ?? 'unknown'} is not supported, only RSA and EC P-256`,
  );
}

/** Signer certificate first (the one the key belongs to), then its issuers as far as the given set goes. */
function orderChain(key: KeyObject, certificates: Uint8Array[]): Uint8Array[] {
  if (certificates.length === 0) throw new Error('signer: no certificate found');
  const parsed = certificates.map((der) => ({ der, x509: new X509Certificate(der) }));
  const leaf = parsed.find((c) => c.x509.checkPrivateKey(key));
  if (!leaf) {
    const subjects = parsed.map((c) => c.x509.subject.replace(/\n/g, ', ')).join('; ');
    throw new Error(`signer: the private key does not match any certificate of the chain (${subjects})`);
  }
  const chain = [leaf];
  let current = leaf;
  for (;;) {
    if (current.x509.checkIssued(current.x509)) break; // self-signed: the root
    const cur = current;
    const issuer = parsed.find(
      (c) => !chain.includes(c) && cur.x509.checkIssued(c.x509) && cur.x509.verify(c.x509.publicKey),
    );
    if (!issuer) break;
    chain.push(issuer);
    current = issuer;
  }
  return chain.map((c) => c.der);
}

function readPem(keyPem: string, chainPem: string): { key: KeyObject; certificates: Uint8Array[] } {
  // The key may share a file with the certificates: take its block only.
  const block = /-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/.exec(keyPem);
  if (!block) throw new Error('signer: the key PEM holds no PRIVATE KEY block');
  if (block[1] === 'ENCRYPTED PRIVATE KEY') {
    throw new Error('signer: encrypted PEM keys are not supported; use a PKCS#12 file with a password');
  }
  let key: KeyObject;
  try {
    // createPrivateKey reads PKCS#8, PKCS#1 and SEC1 PEM alike.
    key = createPrivateKey({ key: block[0], format: 'pem' });
  } catch (e) {
    throw new Error(`signer: the private key PEM does not parse: ${errorMessage(e)}`, { cause: e });
  }
  const certificates = [
    ...chainPem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g),
  ].map((m) => new Uint8Array(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64')));
  if (certificates.length === 0) throw new Error('signer: the chain PEM holds no CERTIFICATE block');
  return { key, certificates };
}

async function readPkcs12(
  der: Uint8Array,
  password: string,
): Promise<{ key: KeyObject; certificates: Uint8Array[] }> {
  // pkijs turns these UTF-8 bytes into the BMPString the PKCS#12 MAC KDF wants; PBES2 uses them as they are.
  const passwordBytes = new TextEncoder().encode(password).buffer;
  let pfx: pkijs.PFX;
  try {
    pfx = pkijs.PFX.fromBER(der);
  } catch (e) {
    throw new Error('signer: the PKCS#12 file does not parse (not DER PFX)', { cause: e });
  }
  try {
    await pfx.parseInternalValues({ password: passwordBytes, checkIntegrity: true });
  } catch (e) {
    const message = errorMessage(e);
    if (/integrity/i.test(message)) {
      throw new Error('signer: wrong PKCS#12 password (the MAC check failed)', { cause: e });
    }
    throw new Error(`signer: the PKCS#12 file cannot be read: ${message}`, { cause: e });
  }
  const authSafe = pfx.parsedValue?.authenticatedSafe;
  if (!authSafe) throw new Error('signer: the PKCS#12 file has no AuthenticatedSafe');

  // Each ContentInfo of the AuthenticatedSafe is plain (Data) or password-encrypted (EncryptedData). Parsed
  // from a copy: pkijs's fromSchema consumes the schema object that parseInternalValues parses again below.
  for (const ci of authSafe.safeContents) {
    if (ci.contentType === pkijs.ContentInfo.ENCRYPTED_DATA) {
      const copy = pkijs.EncryptedData.fromBER(new Uint8Array(ci.content.toBER(false)));
      assertPbes2(copy.encryptedContentInfo.contentEncryptionAlgorithm);
    }
  }
  await authSafe.parseInternalValues({
    safeContents: authSafe.safeContents.map(() => ({ password: passwordBytes })),
  });
  const parsed = authSafe.parsedValue as { safeContents: { value: pkijs.SafeContents }[] };

  const keys: Uint8Array[] = [];
  const certificates: Uint8Array[] = [];
  const visit = async (bags: pkijs.SafeBag[]): Promise<void> => {
    for (const bag of bags) {
      const value = bag.bagValue;
      if (bag.bagId === OID_PKCS8_SHROUDED_KEY_BAG && value instanceof pkijs.PKCS8ShroudedKeyBag) {
        assertPbes2(value.encryptionAlgorithm);
        const encrypted = new pkijs.EncryptedData({
          encryptedContentInfo: new pkijs.EncryptedContentInfo({
            contentType: pkijs.ContentInfo.DATA,
            contentEncryptionAlgorithm: value.encryptionAlgorithm,
            encryptedContent: value.encryptedData,
          }),
        });
        keys.push(new Uint8Array(await encrypted.decrypt({ password: passwordBytes })));
      } else if (bag.bagId === OID_KEY_BAG && value instanceof pkijs.PrivateKeyInfo) {
        keys.push(new Uint8Array(value.toSchema().toBER()));
      } else if (bag.bagId === OID_CERT_BAG && value instanceof pkijs.CertBag) {
        if (value.certId === OID_X509_CERTIFICATE && value.certValue instanceof asn1js.OctetString) {
          certificates.push(new Uint8Array(value.certValue.valueBlock.valueHexView));
        }
      } else if (value instanceof pkijs.SafeContents) {
        await visit(value.safeBags); // nested SafeContents bag
      }
    }
  };
  for (const sc of parsed.safeContents) await visit(sc.value.safeBags);

  if (keys.length !== 1) {
    throw new Error(`signer: the PKCS#12 file must hold exactly one private key, found ${keys.length}`);
  }
  const key = createPrivateKey({ key: Buffer.from(keys[0] as Uint8Array), format: 'der', type: 'pkcs8' });
  return { key, certificates };
}

/** pkijs decrypts PBES2 only (WebCrypto has neither RC2 nor 3DES): name the problem and the fix. */
function assertPbes2(algorithm: pkijs.AlgorithmIdentifier): void {
  if (algorithm.algorithmId !== OID_PBES2) {
    throw new Error(
      `signer: the PKCS#12 file uses legacy encryption (${algorithm.algorithmId}, e.g. RC2/3DES from ` +
        '`openssl pkcs12 -legacy`); re-export it with OpenSSL 3 defaults (PBES2, AES-256-CBC, PBKDF2-SHA256)',
    );
  }
}
