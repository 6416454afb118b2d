/**
 * Certification paths (RFC 5280 6.1): the one path builder of the signer, the anchorer and the verifier, and
 * the small certificate helpers around it. pkijs and WebCrypto only: it runs in browsers as in Node.
 *
 * - `buildPath`: a validated path from a certificate to one of the trust anchors at a time, extended past an
 *   anchor that is not self-signed to its issuer when one is at hand (so that its revocation is looked at too);
 * - `chainsTo`: the same from DER anchors, answering whether a path exists;
 * - `completeChain`: a chain of DER certificates completed with the issuers a list holds, for a signer that
 *   gathers revocation data (every certificate but a root needs its issuer there);
 * - `withoutIssuer`: the certificates of such a chain whose issuer is missing from it;
 * - `signerPath`: the certificate that signed a CMS SignedData (e.g. an RFC 3161 token) and its issuers.
 *
 * An issuer is always found by name and proven by signature: a certificate that merely carries the issuer's
 * name is never taken for it.
 */
import { errorMessage } from '@notary/shared/error-message';
import * as pkijs from 'pkijs';
import { toHex } from './bytes.ts';
import { certificateDer, certificateFromDer, commonName, parseSignedData, signerCertificate } from './cms.ts';
import { type TrustMessage, trustForeign, trustMsg, trustText } from './messages.ts';

/** Most issuers added above a path or a chain: a path of CAs, not a search. */
const MAX_ADDED_ISSUERS = 8;

/** Each certificate of a path with its issuer (the next one), the last (anchor or self-signed) left out. */
export function pairs(path: pkijs.Certificate[]): [pkijs.Certificate, pkijs.Certificate][] {
  const out: [pkijs.Certificate, pkijs.Certificate][] = [];
  for (let i = 0; i + 1 < path.length; i++)
    out.push([path[i] as pkijs.Certificate, path[i + 1] as pkijs.Certificate]);
  return out;
}

/**
 * RFC 5280 6.1 path from `cert` to one of `anchors` at `t` (pkijs' engine: signatures, validity periods,
 * basic constraints), through certificates of `pool`, leaf first; extended past an anchor that is not
 * self-signed to its issuer when `anchors` or `pool` carry it (so that its revocation is looked at too).
 * `anyTime`: ignore validity periods (a path for evidence only). `path` null when there is none, `message`
 * then says why (pkijs' words, or `no anchor`), in English, and `detail` as data.
 */
export async function buildPath(
  cert: pkijs.Certificate,
  pool: pkijs.Certificate[],
  anchors: pkijs.Certificate[],
  t: Date,
  anyTime = false,
): Promise<PathFound | NoPath> {
  if (anchors.length === 0) return noPath(trustMsg('trust.noAnchor'));
  const checkDate = anyTime
    ? new Date(Math.max(cert.notBefore.value.getTime(), Math.min(cert.notAfter.value.getTime(), t.getTime())))
    : t;
  const engine = new pkijs.CertificateChainValidationEngine({
    trustedCerts: anchors,
    certs: [...pool.filter((x) => derKey(x) !== derKey(cert)), cert],
    checkDate,
  });
  const result = await engine.verify({}).catch((e: unknown) => ({
    result: false,
    resultMessage: errorMessage(e),
    certificatePath: undefined,
  }));
  if (!result.result || !result.certificatePath) {
    return noPath(result.resultMessage ? trustForeign(result.resultMessage) : trustMsg('trust.noValidPath'));
  }
  return { path: await extendToRoot([...result.certificatePath], [...anchors, ...pool]), message: '' };
}

/** A path `buildPath` found (`message` empty). */
export interface PathFound {
  path: pkijs.Certificate[];
  message: '';
}

/** No path: `detail` says why as data, `message` in English. */
export interface NoPath {
  path: null;
  message: string;
  detail: TrustMessage;
}

function noPath(detail: TrustMessage): NoPath {
  return { path: null, message: trustText(detail), detail };
}

/**
 * `path` (leaf first) extended, by at most `MAX_ADDED_ISSUERS` certificates, with the issuers `pool` holds
 * until a self-signed one: each found by name and proven by signature, none twice.
 */
async function extendToRoot(
  path: pkijs.Certificate[],
  pool: pkijs.Certificate[],
): Promise<pkijs.Certificate[]> {
  for (let i = 0; i < MAX_ADDED_ISSUERS; i++) {
    const last = path.at(-1) as pkijs.Certificate;
    if (isSelfSigned(last)) break;
    const issuer = await findIssuer(
      last,
      pool.filter((x) => !path.some((p) => sameCertificate(p, x))),
    );
    if (!issuer) break;
    path.push(issuer);
  }
  return path;
}

/** The certificate among `pool` whose subject is `cert`'s issuer and whose key verifies `cert`'s signature. */
export async function findIssuer(
  cert: pkijs.Certificate,
  pool: readonly pkijs.Certificate[],
): Promise<pkijs.Certificate | undefined> {
  for (const candidate of pool) {
    if (candidate === cert || !candidate.subject.isEqual(cert.issuer)) continue;
    if (await signedBy(cert, candidate)) return candidate;
  }
  return undefined;
}

/** Most verdicts `signedBy` keeps; past it the memo starts over (a service sees a few CAs, not thousands). */
const SIGNED_BY_MEMO_ENTRIES = 512;
const signedByMemo = new Map<string, Promise<boolean>>();

/**
 * Whether `issuer`'s key verifies `cert`'s signature (false, never a throw, when it cannot be checked).
 * The verdict depends on the two DER encodings alone, so it is kept per pair: one signing at B-LTA asks it of
 * the same chains many times over (completing them, naming the uncovered ones, checking each OCSP answer).
 */
export function signedBy(cert: pkijs.Certificate, issuer: pkijs.Certificate): Promise<boolean> {
  const key = `${derKey(cert)} ${derKey(issuer)}`;
  const known = signedByMemo.get(key);
  if (known) return known;
  const verdict = (async () => {
    try {
      return await cert.verify(issuer);
    } catch {
      return false;
    }
  })();
  if (signedByMemo.size >= SIGNED_BY_MEMO_ENTRIES) signedByMemo.clear();
  signedByMemo.set(key, verdict);
  return verdict;
}

/** Whether the certificate's subject is its issuer (a root, or a certificate that claims to be one). */
export function isSelfSigned(cert: pkijs.Certificate): boolean {
  return cert.subject.isEqual(cert.issuer);
}

/** Key usage bits (RFC 5280 4.2.1.3) a signature of a document may rest on: digitalSignature, nonRepudiation. */
const SIGNATURE_KEY_USAGE = 0x80 | 0x40;

/**
 * Whether the certificate's key usage (RFC 5280 4.2.1.3) allows signing documents: digitalSignature or
 * nonRepudiation (contentCommitment) set; true when it has no key usage extension (no restriction stated).
 */
export function allowsSignatures(cert: pkijs.Certificate): boolean {
  const ext = cert.extensions?.find((x) => x.extnID === '2.5.29.15');
  if (!ext) return true;
  const bits = (ext.parsedValue as { valueBlock?: { valueHexView?: Uint8Array } } | undefined)?.valueBlock
    ?.valueHexView;
  return ((bits?.[0] ?? 0) & SIGNATURE_KEY_USAGE) !== 0;
}

/** Whether two certificates are the same one (same DER). */
export function sameCertificate(x: pkijs.Certificate, y: pkijs.Certificate): boolean {
  return derKey(x) === derKey(y);
}

const derKeys = new WeakMap<pkijs.Certificate, string>();
/** The certificate's DER as hex, computed once per object (pools are compared often). */
export function derKey(cert: pkijs.Certificate): string {
  let key = derKeys.get(cert);
  if (key === undefined) {
    key = toHex(certificateDer(cert));
    derKeys.set(cert, key);
  }
  return key;
}

const parsedCerts = new WeakMap<Uint8Array, pkijs.Certificate | null>();

/** The certificate of a DER blob, or null when it does not parse (parsed once per blob). */
export function parseCertificate(der: Uint8Array): pkijs.Certificate | null {
  const known = parsedCerts.get(der);
  if (known !== undefined) return known;
  let out: pkijs.Certificate | null;
  try {
    out = certificateFromDer(der);
  } catch {
    out = null;
  }
  parsedCerts.set(der, out);
  return out;
}

const parsedAnchors = new WeakMap<readonly Uint8Array[], pkijs.Certificate[]>();

/**
 * The certificates of a list of DER trust anchors, parsed once per list (a service's anchors may be a whole
 * root store, used for every token it asks for).
 * @throws Error when one does not parse.
 */
export function parseTrustAnchors(trusted: readonly Uint8Array[]): pkijs.Certificate[] {
  let anchors = parsedAnchors.get(trusted);
  if (!anchors) {
    anchors = trusted.map(certificateFromDer);
    parsedAnchors.set(trusted, anchors);
  }
  return anchors;
}

/**
 * Whether `cert` chains (through the `intermediates` a signature carries) to one of `trusted` (DER) at `at`
 * (RFC 5280 6.1, `buildPath`). Returns the engine's message when it does not (English `message`, `detail` as
 * data); when it does, `path`: the certificates of the path found, leaf first, the anchor (and its issuers at
 * hand) included.
 */
export async function chainsTo(
  cert: pkijs.Certificate,
  intermediates: pkijs.Certificate[],
  trusted: readonly Uint8Array[],
  at: Date,
): Promise<
  | { ok: true; message: ''; path: pkijs.Certificate[] }
  | { ok: false; message: string; detail: TrustMessage; path?: undefined }
> {
  let anchors: pkijs.Certificate[];
  try {
    anchors = parseTrustAnchors(trusted);
  } catch (e) {
    const detail = trustMsg('trust.anchorDoesNotParse', { error: errorMessage(e) });
    return { ok: false, message: trustText(detail), detail };
  }
  const found = await buildPath(cert, intermediates, anchors, at);
  if (found.path) return { ok: true, message: '', path: found.path };
  return { ok: false, message: found.message, detail: found.detail };
}

/**
 * `chain` (DER, any order: e.g. a signer's chain and its TSA's) completed with certificates of `issuers`
 * (DER): while a certificate of the chain that is not self-signed has no issuer in it, its issuer from
 * `issuers` (by name, proven by signature) is added, at most `MAX_ADDED_ISSUERS` in all. No validity period
 * is judged: the chain is what revocation data is gathered for (RFC 6960 4.1.1 and RFC 5280 6.3 check
 * answers against the issuer's key). Certificates that do not parse are kept as given.
 */
export async function completeChain(
  chain: readonly Uint8Array[],
  issuers: readonly Uint8Array[],
): Promise<Uint8Array[]> {
  const out = [...chain];
  if (issuers.length === 0) return out;
  // A TSA's anchors may be the whole bundled root store: parsed once per list, not per signature.
  const pool = parseTrustAnchors(issuers);
  const certs = out.map(parseCertificate).filter((c): c is pkijs.Certificate => c !== null);
  for (let added = 0; added < MAX_ADDED_ISSUERS; added += 1) {
    let found: pkijs.Certificate | undefined;
    for (const c of certs) {
      if (isSelfSigned(c) || (await findIssuer(c, certs))) continue;
      found = await findIssuer(
        c,
        pool.filter((p) => !certs.some((k) => sameCertificate(k, p))),
      );
      if (found) break;
    }
    if (!found) break;
    certs.push(found);
    out.push(certificateDer(found));
  }
  return out;
}

/**
 * The certificates of `chain` (DER, any order) that are not self-signed and whose issuer (by name, proven by
 * signature) is not in `chain`, each with its common name: their revocation data cannot be gathered (OCSP
 * answers and CRLs are checked against the issuer's key, RFC 6960 4.1.1, RFC 5280 6.3).
 * @throws Error when a certificate of `chain` does not parse.
 */
export async function withoutIssuer(
  chain: readonly Uint8Array[],
): Promise<{ der: Uint8Array; commonName: string }[]> {
  const certs = chain.map((der) => {
    const cert = parseCertificate(der);
    if (!cert) throw new Error('a certificate of the chain does not parse');
    return { der, cert };
  });
  const all = certs.map((c) => c.cert);
  const out: { der: Uint8Array; commonName: string }[] = [];
  for (const { der, cert } of certs) {
    if (isSelfSigned(cert) || (await findIssuer(cert, all))) continue;
    out.push({ der, commonName: commonName(cert) });
  }
  return out;
}

/**
 * The certificate that signed `signedData` (DER CMS `ContentInfo(SignedData)`, e.g. an RFC 3161
 * `TimeStampToken`), named by its SignerInfo's `sid`, then its issuers among the certificates it carries and
 * `anchors` (DER), up to a self-signed one or as far as they go (`extendToRoot`), as DER, leaf first. When the
 * signer's certificate is not carried: the carried certificates as they are.
 * @throws Error when `signedData` is not a SignedData with one SignerInfo (`parseSignedData`).
 */
export async function signerPath(
  signedData: Uint8Array,
  anchors: readonly Uint8Array[],
): Promise<Uint8Array[]> {
  const parsed = parseSignedData(signedData, 'signed data');
  const leaf = signerCertificate(parsed);
  if (!leaf) return parsed.certificates.map(certificateDer);
  const pool = [...parsed.certificates, ...parseTrustAnchors(anchors)];
  return (await extendToRoot([leaf], pool)).map(certificateDer);
}
