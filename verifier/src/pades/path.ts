/**
 * Certification paths of the certificates a PAdES signature relies on (RFC 5280 6.1), and the small
 * certificate helpers the judging of check 6 shares.
 */
import * as pkijs from 'pkijs';
import { toArrayBuffer, toHex } from '../bytes.ts';
import { certificateDer } from '../cms.ts';
import { errorMessage } from '../error-message.ts';

/** Each certificate of a path with its issuer (the next one), the last (anchor or self-signed) left out. */
export function pairs(path: pkijs.Certificate[]): [pkijs.Certificate, pkijs.Certificate][] {
  const out: [pkijs.Certificate, pkijs.Certificate][] = [];
  for (let i = 0; i + 1 < path.length; i++)
    out.push([path[i] as pkijs.Certificate, path[i + 1] as pkijs.Certificate]);
  return out;
}

/**
 * RFC 5280 6.1 path from `cert` to one of `anchors` at `t` (pkijs' engine: signatures, validity periods,
 * basic constraints), extended past an anchor that is not self-signed to its issuer when the file or the
 * anchors carry it (so that its revocation is looked at too). `anyTime`: ignore validity periods (a path
 * for evidence only). `path` null when there is none, `message` then says why.
 */
export async function buildPath(
  cert: pkijs.Certificate,
  pool: pkijs.Certificate[],
  anchors: pkijs.Certificate[],
  t: Date,
  anyTime = false,
): Promise<{ path: pkijs.Certificate[] | null; message: string }> {
  if (anchors.length === 0) return { path: null, message: 'no anchor' };
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
    return { path: null, message: result.resultMessage || 'no valid path' };
  }
  return { path: await extendPastAnchor([...result.certificatePath], anchors, pool), message: '' };
}

/** `path` extended, up to 8 certificates, by the issuers `anchors` and `pool` carry until a self-signed one. */
async function extendPastAnchor(
  path: pkijs.Certificate[],
  anchors: pkijs.Certificate[],
  pool: pkijs.Certificate[],
): Promise<pkijs.Certificate[]> {
  for (let i = 0; i < 8; i++) {
    const last = path.at(-1) as pkijs.Certificate;
    if (isSelfSigned(last)) break;
    let issuer: pkijs.Certificate | undefined;
    for (const x of [...anchors, ...pool]) {
      if (!x.subject.isEqual(last.issuer) || path.some((p) => sameCertificate(p, x))) continue;
      if (await last.verify(x).catch(() => false)) {
        issuer = x;
        break;
      }
    }
    if (!issuer) break;
    path.push(issuer);
  }
  return path;
}

/** Whether the certificate's subject is its issuer (a root, or a certificate that claims to be one). */
export function isSelfSigned(cert: pkijs.Certificate): boolean {
  return cert.subject.isEqual(cert.issuer);
}

function sameCertificate(x: pkijs.Certificate, y: pkijs.Certificate): boolean {
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

/** The certificate of a DER blob, or null when it does not parse. */
export function parseCertificate(der: Uint8Array): pkijs.Certificate | null {
  try {
    return pkijs.Certificate.fromBER(toArrayBuffer(der));
  } catch {
    return null;
  }
}
