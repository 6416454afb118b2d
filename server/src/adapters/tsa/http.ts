/**
 * RFC 3161 Time-Stamp Protocol client over HTTP (issue 5; RFC 3161 section 3.4). Every answer is checked
 * before use: status, message imprint, nonce, CMS signature, certificate chain to the configured anchors,
 * the TSA certificate's critical id-kp-timeStamping EKU (RFC 3161 2.3) and the ESS signing certificate
 * attribute (RFC 3161 2.4.1, RFC 5816). pkijs checks neither of the last two.
 */

import { createHash, randomBytes } from 'node:crypto';
import { asn1js, pkijs } from '@notary/pdf/asn1';
import { essCertIdMatches, HASH_BY_OID, OID, readEssCertIds } from '@notary/pdf/cades';
import { redactUrl } from '@notary/platform/redact';
import { AppError } from '@notary/shared';
import { describePkiStatus } from '@notary/verify/tsa-client';
import type { TimestampAuthority, TimestampResult } from '../../ports/tsa';

const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_KP_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

export interface HttpTimestampAuthorityOptions {
  /** The TSA endpoint (HTTP POST of `application/timestamp-query`). */
  url: string;
  /** DER certificates (roots or intermediates) any of which may anchor the TSA certificate's chain. */
  trustedCertificates: Uint8Array[];
  /** Whole request (connect, send, receive), ms. Default 10 000. */
  timeoutMs?: number;
  /** Largest accepted |genTime - local clock|, ms. Default 10 minutes. */
  maxClockSkewMs?: number;
  /** For tests; default `globalThis.fetch`. */
  fetch?: typeof fetch;
}

/**
 * `TimestampAuthority` that POSTs an RFC 3161 `TimeStampReq` (version 1, SHA-256 imprint, random 64-bit
 * nonce, certReq true) to `url` and verifies the `TimeStampResp`.
 *
 * Every failure is `AppError('BAD_GATEWAY', message)` whose message names the cause: unreachable / timeout,
 * HTTP status, does not parse, status rejected (with statusString and failInfo), no token, TSTInfo, message
 * imprint, nonce, signature, chain (not trusted), extended key usage, ESS signing certificate, genTime skew.
 */
export class HttpTimestampAuthority implements TimestampAuthority {
  readonly trustAnchors: readonly Uint8Array[];
  private readonly url: string;
  private readonly trusted: pkijs.Certificate[];
  private readonly timeoutMs: number;
  /** The URL as error messages (answered to clients as 502, and logged) name it: a key in it redacted. */
  private readonly shownUrl: string;
  private readonly maxClockSkewMs: number;
  private readonly fetchFn: typeof fetch;

  /** @throws Error when a trusted certificate does not parse. */
  constructor(opts: HttpTimestampAuthorityOptions) {
    this.url = opts.url;
    this.shownUrl = redactUrl(opts.url);
    this.trustAnchors = opts.trustedCertificates;
    this.trusted = opts.trustedCertificates.map((der) => pkijs.Certificate.fromBER(der));
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxClockSkewMs = opts.maxClockSkewMs ?? 10 * 60_000;
    this.fetchFn = opts.fetch ?? globalThis.fetch;
  }

  /**
   * @param digest SHA-256 of the data to stamp, 32 bytes.
   * @throws AppError('BAD_GATEWAY') as described on the class; AppError('INTERNAL') when `digest` is not 32 bytes.
   */
  async timestamp(digest: Uint8Array): Promise<TimestampResult> {
    if (digest.byteLength !== 32) {
      throw new AppError('INTERNAL', `TSA: digest must be 32 bytes, got ${digest.byteLength}`);
    }
    // Positive 63-bit nonce: a random INTEGER of at most 8 bytes (RFC 3161 2.4.1 asks for a large random number).
    const nonce = asn1js.Integer.fromBigInt(randomBytes(8).readBigUInt64BE() >> 1n);
    const request = new pkijs.TimeStampReq({
      version: 1,
      messageImprint: new pkijs.MessageImprint({
        hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
        hashedMessage: new asn1js.OctetString({ valueHex: digest }),
      }),
      nonce,
      certReq: true,
    });
    const body = await this.post(new Uint8Array(request.toSchema().toBER(false)));
    return this.check(body.bytes, body.contentType, digest, nonce);
  }

  private async post(query: Uint8Array): Promise<{ bytes: Uint8Array; contentType: string }> {
    let response: Response;
    try {
      response = await this.fetchFn(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
        body: query,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw bad(`TSA ${this.shownUrl} answered HTTP ${response.status} ${response.statusText}`.trim());
      }
      return {
        bytes: new Uint8Array(await response.arrayBuffer()),
        contentType: response.headers.get('content-type') ?? '',
      };
    } catch (e) {
      if (e instanceof AppError) throw e;
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError') {
        throw bad(`TSA ${this.shownUrl} did not answer within ${this.timeoutMs} ms`, e);
      }
      const detail = err.cause?.code ?? err.cause?.message ?? err.message;
      throw bad(`TSA ${this.shownUrl} is unreachable: ${detail}`, e);
    }
  }

  private async check(
    body: Uint8Array,
    contentType: string,
    digest: Uint8Array,
    nonce: asn1js.Integer,
  ): Promise<TimestampResult> {
    // Parse. The content type is only reported: some TSAs send application/octet-stream.
    let response: pkijs.TimeStampResp;
    let tokenDer: Uint8Array;
    try {
      const asn = asn1js.fromBER(body);
      if (asn.offset !== body.byteLength) {
        throw new Error(asn.offset === -1 ? asn.result.error : 'trailing bytes');
      }
      response = new pkijs.TimeStampResp({ schema: asn.result });
      const tokenAsn = asn.result instanceof asn1js.Sequence ? asn.result.valueBlock.value[1] : undefined;
      tokenDer = tokenAsn ? new Uint8Array(tokenAsn.valueBeforeDecodeView) : new Uint8Array();
    } catch (e) {
      throw bad(
        `TSA answer does not parse as an RFC 3161 TimeStampResp (${body.byteLength} bytes, content-type ` +
          `'${contentType}'): ${(e as Error).message}`,
        e,
      );
    }

    // PKIStatus: granted (0) or grantedWithMods (1) carry a token (RFC 3161 2.4.2).
    const status = response.status.status;
    if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
      throw bad(`TSA rejected the request: ${describePkiStatus(response.status)}`);
    }
    const token = response.timeStampToken;
    if (!token || tokenDer.byteLength === 0) throw bad('TSA answer has status granted but no timeStampToken');

    // Token: ContentInfo(SignedData) encapsulating a TSTInfo.
    let signedData: pkijs.SignedData;
    let tst: pkijs.TSTInfo;
    let tstDer: Uint8Array;
    try {
      if (token.contentType !== OID.signedData) throw new Error(`content type ${token.contentType}`);
      signedData = new pkijs.SignedData({ schema: token.content });
      if (signedData.encapContentInfo.eContentType !== OID.tstInfo) {
        throw new Error(`eContentType ${signedData.encapContentInfo.eContentType}`);
      }
      const eContent = signedData.encapContentInfo.eContent;
      if (!eContent) throw new Error('no eContent');
      tstDer = new Uint8Array(eContent.getValue());
      tst = pkijs.TSTInfo.fromBER(tstDer);
    } catch (e) {
      throw bad(`TSA token: the TSTInfo (or its SignedData) does not parse: ${(e as Error).message}`, e);
    }

    // The token answers our request (RFC 3161 2.4.2): same imprint, same nonce.
    const imprint = tst.messageImprint;
    if (
      imprint.hashAlgorithm.algorithmId !== OID.sha256 ||
      !Buffer.from(imprint.hashedMessage.valueBlock.valueHexView).equals(Buffer.from(digest))
    ) {
      throw bad('TSA token: the message imprint differs from the one requested');
    }
    if (!tst.nonce || tst.nonce.toBigInt() !== nonce.toBigInt()) {
      throw bad('TSA token: the nonce differs from the one requested (or is missing)');
    }

    const signerCert = await this.verifySignature(signedData, tstDer);
    await this.verifyChain(signedData, signerCert, tst.genTime);
    checkTimeStampingEku(signerCert);
    checkEssSigningCertificate(signedData, signerCert);

    const skew = Math.abs(tst.genTime.getTime() - Date.now());
    if (skew > this.maxClockSkewMs) {
      throw bad(
        `TSA token: genTime ${tst.genTime.toISOString()} is ${Math.round(skew / 1000)} s away from the local clock`,
      );
    }
    return {
      response: body,
      token: tokenDer,
      genTime: tst.genTime,
      // Without the DER sign byte, even length (openssl ts -reply -text shows 0x02 for serial 2).
      serialNumber: evenHex(tst.serialNumber.toBigInt()),
    };
  }

  /** RFC 5652 5.6: signed attributes present, contentType and messageDigest right, signature valid. */
  private async verifySignature(
    signedData: pkijs.SignedData,
    tstDer: Uint8Array,
  ): Promise<pkijs.Certificate> {
    const signerInfo = signedData.signerInfos[0];
    if (!signerInfo || signedData.signerInfos.length !== 1)
      throw bad('TSA token: expected exactly one SignerInfo');
    const signerCert = findSignerCertificate(signedData, signerInfo);
    if (!signerCert) throw bad('TSA token does not include the TSA certificate (certReq was true)');
    const attrs = signerInfo.signedAttrs?.attributes ?? [];
    const contentType = attrs.find((a) => a.type === OID.contentType)?.values[0];
    const messageDigest = attrs.find((a) => a.type === OID.messageDigest)?.values[0];
    if (
      !(contentType instanceof asn1js.ObjectIdentifier) ||
      contentType.valueBlock.toString() !== OID.tstInfo
    ) {
      throw bad('TSA token signature: the contentType signed attribute is missing or not id-ct-TSTInfo');
    }
    const hashName = HASH_BY_OID[signerInfo.digestAlgorithm.algorithmId];
    if (!hashName)
      throw bad(`TSA token signature: unsupported digest ${signerInfo.digestAlgorithm.algorithmId}`);
    const webCryptoHash = `SHA-${hashName === 'sha1' ? '1' : hashName.slice(3)}`;
    const actualDigest = createHash(hashName).update(tstDer).digest();
    if (
      !(messageDigest instanceof asn1js.OctetString) ||
      !Buffer.from(messageDigest.valueBlock.valueHexView).equals(actualDigest)
    ) {
      throw bad('TSA token signature: the messageDigest signed attribute does not match the TSTInfo');
    }
    let valid = false;
    try {
      valid = await pkijs
        .getCrypto(true)
        .verifyWithPublicKey(
          signerInfo.signedAttrs?.encodedValue ?? new ArrayBuffer(0),
          signerInfo.signature,
          signerCert.subjectPublicKeyInfo,
          signerInfo.signatureAlgorithm,
          webCryptoHash,
        );
    } catch (e) {
      throw bad(`TSA token signature cannot be verified: ${(e as Error).message}`, e);
    }
    if (!valid) throw bad('TSA token signature is invalid');
    return signerCert;
  }

  /** The TSA certificate chains (with the token's certificates) to one of `trustedCertificates` at genTime. */
  private async verifyChain(
    signedData: pkijs.SignedData,
    signerCert: pkijs.Certificate,
    at: Date,
  ): Promise<void> {
    const certs = (signedData.certificates ?? []).filter(
      (c): c is pkijs.Certificate => c instanceof pkijs.Certificate && pkijs.checkCA(c, signerCert) !== null,
    );
    const engine = new pkijs.CertificateChainValidationEngine({
      trustedCerts: this.trusted,
      certs: [...certs, signerCert],
      checkDate: at,
    });
    const result = await engine.verify({}).catch((e: unknown) => ({
      result: false,
      resultMessage: e instanceof Error ? e.message : String(e),
    }));
    if (!result.result) {
      throw bad(`TSA certificate chain is not trusted (no path to TSA_CA_CERTS): ${result.resultMessage}`);
    }
  }
}

function findSignerCertificate(
  signedData: pkijs.SignedData,
  signerInfo: pkijs.SignerInfo,
): pkijs.Certificate | null {
  const certs = (signedData.certificates ?? []).filter(
    (c): c is pkijs.Certificate => c instanceof pkijs.Certificate,
  );
  const sid: unknown = signerInfo.sid;
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    return (
      certs.find((c) => c.issuer.isEqual(sid.issuer) && c.serialNumber.isEqual(sid.serialNumber)) ?? null
    );
  }
  // subjectKeyIdentifier [0]: compare with the certificates' SKI extension.
  if (sid instanceof asn1js.Constructed || sid instanceof asn1js.Primitive) {
    const keyId =
      sid instanceof asn1js.Constructed
        ? (sid.valueBlock.value[0] as asn1js.OctetString | undefined)?.valueBlock.valueHexView
        : sid.valueBlock.valueHexView;
    if (!keyId) return null;
    return (
      certs.find((c) => {
        const ski = c.extensions?.find((x) => x.extnID === '2.5.29.14')?.parsedValue;
        return (
          ski instanceof asn1js.OctetString &&
          Buffer.from(ski.valueBlock.valueHexView).equals(Buffer.from(keyId))
        );
      }) ?? null
    );
  }
  return null;
}

/** RFC 3161 2.3: the TSA certificate MUST have exactly one EKU, id-kp-timeStamping, and it MUST be critical. */
function checkTimeStampingEku(cert: pkijs.Certificate): void {
  const eku = cert.extensions?.find((x) => x.extnID === OID_EXT_KEY_USAGE);
  const purposes = eku?.parsedValue instanceof pkijs.ExtKeyUsage ? eku.parsedValue.keyPurposes : [];
  if (!eku?.critical || purposes.length !== 1 || purposes[0] !== OID_KP_TIME_STAMPING) {
    throw bad(
      'TSA certificate extended key usage is not exactly a critical id-kp-timeStamping (RFC 3161 2.3): ' +
        (eku ? `${eku.critical ? 'critical' : 'not critical'}, [${purposes.join(', ')}]` : 'no extension'),
    );
  }
}

/**
 * RFC 3161 2.4.1 / RFC 5816: the token's signed attributes carry ESS SigningCertificate (SHA-1) or
 * SigningCertificateV2 whose first ESSCertID names the TSA certificate (hash, and issuerSerial if present).
 */
function checkEssSigningCertificate(signedData: pkijs.SignedData, cert: pkijs.Certificate): void {
  const attrs = signedData.signerInfos[0]?.signedAttrs?.attributes ?? [];
  const attribute =
    attrs.find((a) => a.type === OID.signingCertificateV2) ??
    attrs.find((a) => a.type === OID.signingCertificate);
  if (!attribute) throw bad('TSA token has no ESS signing certificate attribute (RFC 3161 2.4.1, RFC 5816)');
  let match: { hash: boolean; issuerSerial: boolean | null };
  try {
    const first = readEssCertIds(attribute)[0];
    if (!first) throw new Error('no ESSCertID');
    match = essCertIdMatches(first, new Uint8Array(cert.toSchema().toBER(false)));
  } catch (e) {
    throw bad(`TSA token ESS signing certificate attribute: ${(e as Error).message}`, e);
  }
  if (!match.hash || match.issuerSerial === false) {
    throw bad(
      `TSA token ESS signing certificate does not name the TSA certificate (${match.hash ? 'issuerSerial' : 'hash'} differs)`,
    );
  }
}

const evenHex = (n: bigint): string => {
  const hex = n.toString(16);
  return hex.length % 2 ? `0${hex}` : hex;
};

function bad(message: string, cause?: unknown): AppError {
  return new AppError('BAD_GATEWAY', message, cause === undefined ? undefined : { cause });
}

/**
 * DER certificates of every `BEGIN CERTIFICATE` block of `pem` (e.g. `TSA_CA_CERTS`, or `tls.rootCertificates`
 * joined), in order. Other blocks are ignored; an empty array when there is none.
 */
export function trustedCertificatesFromPem(pem: string): Uint8Array[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map(
    (m) => new Uint8Array(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64')),
  );
}
