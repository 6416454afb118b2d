/**
 * The tabelião's ICP-Brasil A1 certificate (a `.pfx`/`.p12` file) in the web client: the file is opened in the
 * page with pkijs and WebCrypto, the private key imported non-extractable, and the CAdES signed attributes the
 * service prepared are signed here. Neither the key nor the password leaves the page: the service receives the
 * certificate chain and the signature value only. Failures a person meets are `Pkcs12Error`s with a sentence in
 * Portuguese or English (`pkcs12ErrorSentence`).
 *
 * Sources: RFC 7292 (PKCS#12: PFX, AuthenticatedSafe, SafeBags, MAC), RFC 8018 (PBES2), RFC 8017 8.2
 * (RSASSA-PKCS1-v1_5), RFC 3279 2.2.3 and RFC 5753 (ECDSA in CMS), RFC 5280 4.1.2.5 (validity).
 */
import { errorMessage } from '@notary/shared';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { Bridge, Language, NotarySignedRecord } from '../../common/bridge';
import type { NotaryClient } from '../../common/client';
import { ecdsaRawToDer } from '../../common/ecdsa';
import { ClientError } from '../../common/errors';

/** What went wrong with the A1 file, as a person meets it. */
export type Pkcs12Failure =
  | 'unreadable'
  | 'wrong-password'
  | 'legacy-encryption'
  | 'no-key'
  | 'unsupported-key'
  | 'certificate-expired';

/** A failure opening or using the A1 file. */
export class Pkcs12Error extends Error {
  readonly failure: Pkcs12Failure;
  constructor(failure: Pkcs12Failure, detail: string) {
    super(detail);
    this.name = 'Pkcs12Error';
    this.failure = failure;
  }
}

const SENTENCES: Record<Pkcs12Failure, Record<Language, string>> = {
  unreadable: {
    pt: 'Este arquivo não é um certificado A1 (.pfx/.p12) legível.',
    en: 'This file is not a readable A1 certificate (.pfx/.p12).',
  },
  'wrong-password': {
    pt: 'Senha do certificado incorreta.',
    en: 'Wrong password for the certificate file.',
  },
  'legacy-encryption': {
    pt: 'O arquivo usa uma cifra antiga (RC2/3DES) que o navegador não abre: exporte-o de novo com AES.',
    en: 'The file uses old encryption (RC2/3DES) the browser cannot open: export it again with AES.',
  },
  'no-key': {
    pt: 'O arquivo não tem uma chave privada com o seu certificado.',
    en: 'The file holds no private key with its certificate.',
  },
  'unsupported-key': {
    pt: 'O tipo de chave do certificado não é suportado (use RSA ou ECDSA P-256/P-384/P-521).',
    en: "The certificate's key type is not supported (use RSA or ECDSA P-256/P-384/P-521).",
  },
  'certificate-expired': {
    pt: 'O certificado está vencido: ele não pode mais assinar.',
    en: 'The certificate has expired: it can no longer sign.',
  },
};

/** The sentence a person reads for `error`. */
export function pkcs12ErrorSentence(error: Pkcs12Error, lang: Language): string {
  return SENTENCES[error.failure][lang];
}

/** An opened A1 file: its chain (leaf first, DER) and a signer whose key cannot be exported. */
export interface Pkcs12Signer {
  chain: Uint8Array[];
  notAfter: Date;
  /** The signature of `data` with SHA-256: RSASSA-PKCS1-v1_5 bytes, or an ECDSA DER `Ecdsa-Sig-Value`. */
  sign(data: Uint8Array): Promise<Uint8Array>;
}

/** An A1 file is a few KB; a megabyte bounds a wrong or hostile pick. */
export const MAX_PKCS12_BYTES = 1024 * 1024;

const OID_PKCS8_SHROUDED_KEY_BAG = '1.2.840.113549.1.12.10.1.2';
const OID_CERT_BAG = '1.2.840.113549.1.12.10.1.3';
const OID_X509_CERTIFICATE = '1.2.840.113549.1.9.22.1';
const OID_PBES2 = '1.2.840.113549.1.5.13';
const OID_RSA = '1.2.840.113549.1.1.1';
const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const CURVES: Record<string, string> = {
  '1.2.840.10045.3.1.7': 'P-256',
  '1.3.132.0.34': 'P-384',
  '1.3.132.0.35': 'P-521',
};

/** A copy of `bytes` in an ArrayBuffer of its own (what pkijs and WebCrypto take). */
const toBuffer = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;

/** WebCrypto cannot decrypt RC2/3DES: PBES2 (what OpenSSL 3 writes by default) only. */
function assertPbes2(algorithm: pkijs.AlgorithmIdentifier): void {
  if (algorithm.algorithmId !== OID_PBES2) {
    throw new Pkcs12Error('legacy-encryption', `encryption ${algorithm.algorithmId}`);
  }
}

/** The PKCS#8 keys and the certificates of a PFX, the MAC checked with `password`. */
async function readBags(
  der: Uint8Array,
  password: ArrayBuffer,
): Promise<{ keys: Uint8Array[]; certificates: pkijs.Certificate[] }> {
  let pfx: pkijs.PFX;
  try {
    pfx = pkijs.PFX.fromBER(toBuffer(der));
  } catch (e) {
    throw new Pkcs12Error('unreadable', e instanceof Error ? e.message : 'not DER PFX');
  }
  try {
    await pfx.parseInternalValues({ password, checkIntegrity: true });
  } catch (e) {
    const message = errorMessage(e);
    throw new Pkcs12Error(/integrity/i.test(message) ? 'wrong-password' : 'unreadable', message);
  }
  const authSafe = pfx.parsedValue?.authenticatedSafe;
  if (!authSafe) throw new Pkcs12Error('unreadable', 'no AuthenticatedSafe');
  for (const ci of authSafe.safeContents) {
    if (ci.contentType === pkijs.ContentInfo.ENCRYPTED_DATA) {
      // A copy: pkijs's fromSchema consumes the schema object parseInternalValues reads again below.
      const copy = pkijs.EncryptedData.fromBER(new Uint8Array(ci.content.toBER(false)));
      assertPbes2(copy.encryptedContentInfo.contentEncryptionAlgorithm);
    }
  }
  try {
    await authSafe.parseInternalValues({ safeContents: authSafe.safeContents.map(() => ({ password })) });
  } catch (e) {
    throw new Pkcs12Error('unreadable', errorMessage(e));
  }
  const parsed = authSafe.parsedValue as { safeContents: { value: pkijs.SafeContents }[] };
  const keys: Uint8Array[] = [];
  const certificates: pkijs.Certificate[] = [];
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
        keys.push(new Uint8Array(await encrypted.decrypt({ password })));
      } else if (value instanceof pkijs.PrivateKeyInfo) {
        keys.push(new Uint8Array(value.toSchema().toBER()));
      } else if (bag.bagId === OID_CERT_BAG && value instanceof pkijs.CertBag) {
        if (value.certId === OID_X509_CERTIFICATE && value.certValue instanceof asn1js.OctetString) {
          certificates.push(pkijs.Certificate.fromBER(toBuffer(value.certValue.valueBlock.valueHexView)));
        }
      } else if (value instanceof pkijs.SafeContents) {
        await visit(value.safeBags);
      }
    }
  };
  for (const sc of parsed.safeContents) await visit(sc.value.safeBags);
  return { keys, certificates };
}

/** The WebCrypto algorithm of a PKCS#8 key: RSA PKCS#1 v1.5 or ECDSA on a named curve, both with SHA-256. */
function algorithmOf(pkcs8: Uint8Array): RsaHashedImportParams | EcKeyImportParams {
  const info = pkijs.PrivateKeyInfo.fromBER(toBuffer(pkcs8));
  const oid = info.privateKeyAlgorithm.algorithmId;
  if (oid === OID_RSA) return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (oid === OID_EC_PUBLIC_KEY) {
    const params = info.privateKeyAlgorithm.algorithmParams;
    const curve =
      params instanceof asn1js.ObjectIdentifier ? CURVES[params.valueBlock.toString()] : undefined;
    if (curve) return { name: 'ECDSA', namedCurve: curve };
  }
  throw new Pkcs12Error('unsupported-key', `key algorithm ${oid}`);
}

/** `leaf`, then each issuer among `pool` by name, up to a self-issued one (at most 8). */
function chainOf(leaf: pkijs.Certificate, pool: readonly pkijs.Certificate[]): pkijs.Certificate[] {
  const chain = [leaf];
  for (let current = leaf; chain.length < 8 && !current.issuer.isEqual(current.subject); ) {
    const issuer = pool.find((c) => current.issuer.isEqual(c.subject) && !chain.includes(c));
    if (!issuer) break;
    chain.push(issuer);
    current = issuer;
  }
  return chain;
}

/**
 * Opens an A1 file: checks its MAC with `password`, decrypts its key (PBES2 only) and imports it into
 * WebCrypto non-extractable for signing; the leaf is the certificate whose public key verifies a probe signed
 * by that key, followed by its issuers found in the file. The decrypted PKCS#8 bytes and the password's bytes
 * are zeroed once imported.
 * @throws Pkcs12Error `unreadable`, `wrong-password`, `legacy-encryption`, `no-key` (no key, or no
 *   certificate of it), `unsupported-key`, `certificate-expired` (at `now`).
 */
export async function openPkcs12(der: Uint8Array, password: string, now = new Date()): Promise<Pkcs12Signer> {
  const passwordBytes = new TextEncoder().encode(password);
  let key: CryptoKey;
  let algorithm: RsaHashedImportParams | EcKeyImportParams;
  let certificates: pkijs.Certificate[];
  try {
    const bags = await readBags(der, passwordBytes.buffer);
    certificates = bags.certificates;
    const [pkcs8, ...others] = bags.keys;
    if (!pkcs8 || others.length > 0) throw new Pkcs12Error('no-key', `${bags.keys.length} private keys`);
    try {
      algorithm = algorithmOf(pkcs8);
      key = await crypto.subtle.importKey('pkcs8', toBuffer(pkcs8), algorithm, false, ['sign']);
    } finally {
      pkcs8.fill(0);
    }
  } finally {
    passwordBytes.fill(0);
  }
  const params = algorithm.name === 'ECDSA' ? { name: 'ECDSA', hash: 'SHA-256' } : algorithm;
  const probe = new TextEncoder().encode('notary: which certificate is this key');
  const probeSignature = await crypto.subtle.sign(params, key, probe);
  let leaf: pkijs.Certificate | undefined;
  for (const certificate of certificates) {
    const spki = new Uint8Array(certificate.subjectPublicKeyInfo.toSchema().toBER());
    const publicKey = await crypto.subtle
      .importKey('spki', toBuffer(spki), algorithm, false, ['verify'])
      .catch(() => null);
    if (publicKey && (await crypto.subtle.verify(params, publicKey, probeSignature, probe))) {
      leaf = certificate;
      break;
    }
  }
  if (!leaf) throw new Pkcs12Error('no-key', 'no certificate matches the key');
  const notAfter = leaf.notAfter.value;
  if (notAfter.getTime() < now.getTime()) {
    throw new Pkcs12Error('certificate-expired', `valid until ${notAfter.toISOString()}`);
  }
  return {
    chain: chainOf(leaf, certificates).map((c) => new Uint8Array(c.toSchema().toBER())),
    notAfter,
    async sign(data) {
      const value = new Uint8Array(await crypto.subtle.sign(params, key, toBuffer(data)));
      return algorithm.name === 'ECDSA' ? ecdsaRawToDer(value) : value;
    },
  };
}

const base64 = (bytes: Uint8Array): string => {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
};
const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/**
 * The web bridge's A1 signing (`Bridge.signWithPkcs12`): the file is read and opened here, the service
 * prepares the session with the chain, the attributes are signed here, the service completes.
 */
export function webPkcs12Signing(client: NotaryClient): Pick<Bridge, 'signWithPkcs12'> {
  return {
    signWithPkcs12: async ({ documentId, file, password, policy, language }): Promise<NotarySignedRecord> => {
      if (file.size > MAX_PKCS12_BYTES) {
        throw new ClientError({ kind: 'signing', message: SENTENCES.unreadable[language] });
      }
      const der = new Uint8Array(await file.arrayBuffer());
      let signer: Pkcs12Signer;
      try {
        signer = await openPkcs12(der, password);
      } catch (e) {
        if (e instanceof Pkcs12Error) {
          throw new ClientError({ kind: 'signing', message: pkcs12ErrorSentence(e, language) }, { cause: e });
        }
        throw e;
      } finally {
        der.fill(0);
      }
      const prepared = await client.prepareNotarySignature({
        id: documentId,
        certificates: signer.chain.map(base64),
        policy,
        lang: language,
      });
      const signature = await signer.sign(fromBase64(prepared.signedAttributes));
      return client.completeNotarySignature({
        id: documentId,
        sessionId: prepared.sessionId,
        signature: base64(signature),
      });
    },
  };
}
