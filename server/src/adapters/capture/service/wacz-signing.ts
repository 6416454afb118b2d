/**
 * Signing of capture archives (Webrecorder, "WACZ Signing and Verification" 0.1.0,
 * https://specs.webrecorder.net/wacz-auth/0.1.0/; webrecorder/specs `wacz-auth/0.1.0/index.html` at commit
 * 09268ee26718fe2da4e76fe43dbc23e0b2f13365): every WACZ the service keeps has a `datapackage-digest.json`
 * holding the SHA-256 of `datapackage.json` and a `signedData` in one of the spec's two forms.
 *
 * - Domain form (`SIGNING_CERT` set): `signature` is the service key's signature over the ASCII of `hash`
 *   (ECDSA with SHA-256, DER `Ecdsa-Sig-Value`, as webrecorder/authsign makes it; an RSA key signs PKCS#1
 *   v1.5 with SHA-256), `domain` the certificate's subject name, `domainCert` its PEM chain (leaf first, a
 *   blank line between certificates as Let's Encrypt's chains have, which ReplayWeb.page splits on),
 *   `timeSignature` the TSA's whole RFC 3161 `TimeStampResp` (DER, base64) over the SHA-256 of the ASCII of
 *   `signature`, `timestampCert` the TSA's PEM chain. A TSA that fails leaves the archive signed without the
 *   last two, and the record says so.
 * - Anonymous form (no `SIGNING_CERT`): the service's own ECDSA key, generated once into `DATA_DIR`;
 *   `publicKey` is its SubjectPublicKeyInfo DER in base64 and `signature` the raw `r || s` (IEEE P1363) over
 *   the ASCII of `hash`, as WebCrypto makes and checks it. The curve is P-384: ArchiveWeb.page signs so, and
 *   ReplayWeb.page (webrecorder/wabac.js `src/wacz/certutils.ts`) imports an anonymous key as P-384 only.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign as nodeSign,
  X509Certificate,
} from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { redactText, secretsOfUrl } from '@notary/platform/redact';
import { sha256HexSync } from '@notary/platform/sha256';
import { errorMessage } from '@notary/shared';
import { signerPath } from '@notary/trust/cert-path';
import type { WaczSignatureFacts } from '../../../ports/capture';
import type { DocumentSigner } from '../../../ports/signer';
import type { TimestampAuthority } from '../../../ports/tsa';

export const WACZ_SIGNING_SPEC = 'WACZ Signing and Verification 0.1.0' as const;
/**
 * The `software` a capture's archive names (its warcinfo record, `datapackage.json`, `signedData`): the same
 * string `createCapturer` gives the capture process.
 */
export function captureSoftware(serviceName: string): string {
  return `${serviceName} web capture (Chromium via playwright-core, warcio)`;
}

/** The `version` of every `signedData`: the spec's (webrecorder/authsign's `SignedHash.version`). */
const SIGNED_DATA_VERSION = '0.1.0';
/** The anonymous key's file under `DATA_DIR` (PKCS#8 PEM, mode 0600). */
export const ANONYMOUS_KEY_FILE = 'wacz-signing-key.pem';
/** The anonymous key's curve (see the module's note: what ReplayWeb.page reads). */
const ANONYMOUS_CURVE = 'secp384r1';

/** The domain form's `signedData` (wacz-auth 4.1.2); without `timeSignature`/`timestampCert` when the TSA failed. */
export interface DomainSignedData {
  hash: string;
  created: string;
  software: string;
  version: string;
  signature: string;
  domain: string;
  domainCert: string;
  timeSignature?: string;
  timestampCert?: string;
}

/** The anonymous form's `signedData` (wacz-auth 4.1.1). */
export interface AnonymousSignedData {
  hash: string;
  created: string;
  software: string;
  version: string;
  signature: string;
  publicKey: string;
}

/** Signs a `datapackage.json` hash in one of the spec's forms. */
export interface WaczSigner {
  /** What the record states before signing (a TSA failure changes `timeSignature`: see `sign`). */
  readonly facts: WaczSignatureFacts;
  /**
   * Signs `hash` (`sha256:<hex>` of `datapackage.json`), `created` being the archive's creation time as
   * written in it. With `facts.timeSignature.status` `included`, the TSA is asked for the time signature; when
   * it fails, nothing is signed and `unavailable` gives the facts to write instead (sign again with them).
   */
  sign(
    hash: string,
    created: string,
    facts: WaczSignatureFacts,
  ): Promise<{ signedData: DomainSignedData | AnonymousSignedData } | { unavailable: WaczSignatureFacts }>;
}

/**
 * The signer of the configuration: the domain form with `signer` (`SIGNING_CERT`) and, when given, `tsa`
 * (`TSA_URL`, shown in records as `tsaUrl` with any key in it redacted); else the anonymous form with the key
 * in `dataDir` (made on first use).
 * @throws Error when the anonymous key file exists but is not an EC private key of the expected curve.
 */
export async function createWaczSigner(options: {
  signer: DocumentSigner | undefined;
  tsa: TimestampAuthority | undefined;
  tsaUrl: string | undefined;
  dataDir: string;
  software: string;
}): Promise<WaczSigner> {
  if (options.signer) {
    return domainSigner(options.signer, options.tsa, options.tsaUrl, options.software);
  }
  return anonymousSigner(await anonymousKey(options.dataDir), options.software);
}

/**
 * The service's anonymous signing key: read from `dataDir/wacz-signing-key.pem`, or generated (ECDSA P-384)
 * and written there with mode 0600 on first use (a file another start wrote meanwhile wins). A file readable
 * by others is set to 0600.
 * @throws Error naming the file when it holds something else than an EC P-384 private key.
 */
export async function anonymousKey(dataDir: string): Promise<KeyObject> {
  const file = path.join(dataDir, ANONYMOUS_KEY_FILE);
  let pem = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (pem === undefined) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: ANONYMOUS_CURVE });
    const fresh = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await writeFile(file, fresh, { mode: 0o600, flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    pem = await readFile(file, 'utf8');
  }
  const { mode } = await stat(file);
  if ((mode & 0o077) !== 0) await chmod(file, 0o600);
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    throw new Error(`${file}: not a private key (${errorMessage(e)}); remove it to have a new one made`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== ANONYMOUS_CURVE) {
    throw new Error(`${file}: not an ECDSA P-384 key; remove it to have a new one made`);
  }
  return key;
}

function anonymousSigner(key: KeyObject, software: string): WaczSigner {
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const facts: WaczSignatureFacts = {
    spec: WACZ_SIGNING_SPEC,
    form: 'anonymous',
    publicKeySha256: sha256HexSync(spki),
    timeSignature: { status: 'not-applicable' },
  };
  return {
    facts,
    sign: async (hash, created) => {
      const signature = nodeSign('sha256', Buffer.from(hash, 'ascii'), { key, dsaEncoding: 'ieee-p1363' });
      return {
        signedData: {
          hash,
          created,
          software,
          version: SIGNED_DATA_VERSION,
          signature: signature.toString('base64'),
          publicKey: spki.toString('base64'),
        },
      };
    },
  };
}

/** PEM of DER certificates, a blank line between them. */
function pemChain(ders: readonly Uint8Array[]): string {
  return ders
    .map((der) => {
      const b64 = Buffer.from(der).toString('base64');
      return `-----BEGIN CERTIFICATE-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
    })
    .join('\n');
}

/** The subject name webrecorder/authsign compares `domain` with: the common name, else the first DNS name. */
export function certificateSubjectName(der: Uint8Array): string {
  const cert = new X509Certificate(der);
  const cn = cert.subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice(3);
  if (cn) return cn;
  const dns = /(?:^|, )DNS:([^,]+)/.exec(cert.subjectAltName ?? '')?.[1];
  return dns ?? '';
}

function domainSigner(
  key: DocumentSigner,
  tsa: TimestampAuthority | undefined,
  tsaUrl: string | undefined,
  software: string,
): WaczSigner {
  const leaf = key.certificateChain[0];
  if (!leaf) throw new Error('SIGNING_CERT: no certificate');
  const domain = certificateSubjectName(leaf);
  const domainCert = pemChain(key.certificateChain);
  const shownTsa = tsaUrl ? redactText(tsaUrl, secretsOfUrl(tsaUrl)) : 'the TSA';
  const facts: WaczSignatureFacts = {
    spec: WACZ_SIGNING_SPEC,
    form: 'domain',
    domain,
    certificateSha256: sha256HexSync(leaf),
    timeSignature: tsa ? { status: 'included', tsa: shownTsa } : { status: 'not-configured' },
  };
  return {
    facts,
    sign: async (hash, created, current) => {
      const signature = Buffer.from(await key.sign(Buffer.from(hash, 'ascii'))).toString('base64');
      const signedData: DomainSignedData = {
        hash,
        created,
        software,
        version: SIGNED_DATA_VERSION,
        signature,
        domain,
        domainCert,
      };
      if (!tsa || current.timeSignature.status !== 'included') return { signedData };
      try {
        const stamp = await tsa.timestamp(createHash('sha256').update(signature, 'ascii').digest());
        return {
          signedData: {
            ...signedData,
            timeSignature: Buffer.from(stamp.response).toString('base64'),
            // The TSA's chain for `timestampCert`: the certificate that signed the token, then its issuers.
            timestampCert: pemChain(await signerPath(stamp.token, tsa.trustAnchors ?? [])),
          },
        };
      } catch (e) {
        return {
          unavailable: {
            ...current,
            timeSignature: {
              status: 'unavailable',
              tsa: shownTsa,
              reason: errorMessage(e),
              at: new Date().toISOString(),
            },
          },
        };
      }
    },
  };
}
