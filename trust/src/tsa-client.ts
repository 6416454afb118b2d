import { errorMessage } from '@notary/shared/error-message';
import { readBounded } from '@notary/shared/fetch-body';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { equalBytes, toArrayBuffer } from './bytes.ts';
import { chainsTo } from './cert-path.ts';
import {
  certificateDer,
  essFinding,
  extendedKeyUsage,
  hasCriticalTimeStampingEku,
  OID,
  type ParsedSignedData,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from './cms.ts';

/**
 * RFC 3161 Time-Stamp Protocol client (RFC 3161 section 3.4, HTTP transport) of the verifier, on `fetch`,
 * WebCrypto and pkijs only, so that it runs in browsers as in Node: it asks a TSA the holder chose for a
 * token over a SHA-256 digest, e.g. the document timestamp `notary-verify extend` adds (ETSI EN 319 142-1
 * 5.4.3, PAdES B-LTA). Every answer is checked before use by `readTimeStampResponse`, which the service's TSA
 * adapter uses too: PKIStatus granted, the token's message imprint and nonce are the request's, its signature,
 * the chain to the given anchors at genTime when some are given, the critical id-kp-timeStamping EKU and the
 * ESS signing certificate.
 */

/** Largest TimeStampResp read, bytes: a token with a 3-certificate RSA-4096 chain is under 10 KB. */
export const TSA_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Default timeout of one request (connect, send, receive), ms. */
export const TSA_TIMEOUT_MS = 15_000;

/** PKIStatus names (RFC 3161 2.4.2, RFC 4210 PKIStatus). */
const STATUS_NAMES = [
  'granted',
  'grantedWithMods',
  'rejection',
  'waiting',
  'revocationWarning',
  'revocationNotification',
];
/** PKIFailureInfo bit names (RFC 3161 2.4.2). */
const FAILURE_INFO: Readonly<Record<number, string>> = {
  0: 'badAlg',
  2: 'badRequest',
  5: 'badDataFormat',
  14: 'timeNotAvailable',
  15: 'unacceptedPolicy',
  16: 'unacceptedExtension',
  17: 'addInfoNotAvailable',
  25: 'systemFailure',
};

/** The TSA could not be reached, refused, or answered something that is not a valid token for the request. */
export class TsaError extends Error {
  override name = 'TsaError';
}

export interface TsaClientOptions {
  /** The TSA endpoint: HTTP POST of `application/timestamp-query` (RFC 3161 3.4). */
  url: string;
  /** DER certificates the TSA certificate must chain to at genTime; none: the chain is not checked. */
  tsaCa?: readonly Uint8Array[];
  /** How a refusal names `tsaCa` (default `--tsa-ca`, the command line's option). */
  anchorsName?: string;
  /** One request, ms (default `TSA_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** Largest answer read, bytes (default `TSA_MAX_RESPONSE_BYTES`); the rest is not read. */
  maxBytes?: number;
  /** `globalThis.fetch` by default. */
  fetch?: typeof fetch;
}

/** A checked token, and what it says. */
export interface TsaTimestamp {
  /** DER `TimeStampToken` (CMS ContentInfo of a SignedData encapsulating a TSTInfo), RFC 3161 2.4.2. */
  token: Uint8Array;
  /** The TSTInfo's genTime. */
  genTime: Date;
  /** The TSA certificate's subject, e.g. `CN=Notary Test TSA, O=...`. */
  tsa: string;
  /** Whether the TSA certificate was found to chain to `tsaCa` (false: no anchors were given). */
  chainChecked: boolean;
  /** DER: the TSA certificate and, when `chainChecked`, its verified path to `tsaCa` (see `CheckedTimeStamp`). */
  chain: Uint8Array[];
}

/**
 * An RFC 3161 client with the shape of `@notary/pdf`'s `SignatureTimestamper` (`timestamp(digest) →
 * { token }`), so the PDF writer can ask it for a signature or document timestamp.
 */
export class TsaClient {
  readonly url: string;
  private readonly tsaCa: Uint8Array[] | undefined;
  private readonly anchorsName: string;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: TsaClientOptions) {
    this.url = options.url;
    this.tsaCa = options.tsaCa && options.tsaCa.length > 0 ? [...options.tsaCa] : undefined;
    this.anchorsName = options.anchorsName ?? '--tsa-ca';
    this.timeoutMs = options.timeoutMs ?? TSA_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? TSA_MAX_RESPONSE_BYTES;
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * Asks the TSA for a token over `digest`: TimeStampReq version 1, SHA-256 message imprint, a random
   * positive 63-bit nonce, certReq true (RFC 3161 2.4.1), POSTed without following redirects.
   *
   * @param digest SHA-256 of the data to stamp, 32 bytes.
   * @throws TsaError naming the cause: unreachable or timed out, HTTP status, answer too large, not a
   *   TimeStampResp, status not granted (with statusString and failInfo), no token, message imprint or nonce
   *   not the request's, or the token's own checks (signature, ESS, EKU, chain to `tsaCa`).
   */
  async timestamp(digest: Uint8Array): Promise<TsaTimestamp> {
    if (digest.byteLength !== 32)
      throw new TsaError(`TSA: the digest must be 32 bytes (SHA-256), got ${digest.byteLength}`);
    const request = timeStampRequest(digest);
    const answer = await this.post(request.der);
    const stamped = await readTimeStampResponse(answer, request, {
      tsaCa: this.tsaCa,
      anchorsName: this.anchorsName,
    });
    return {
      token: stamped.token,
      genTime: stamped.genTime,
      tsa: stamped.tsa,
      chainChecked: stamped.chainChecked,
      chain: stamped.chain,
    };
  }

  private async post(query: Uint8Array): Promise<Uint8Array> {
    let res: Response;
    try {
      res = await this.fetchFn(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
        body: toArrayBuffer(query),
        // The holder named this TSA: an answer from elsewhere is not its answer.
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new TsaError(`TSA ${this.url} ${describe(e, this.timeoutMs)}`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new TsaError(`TSA ${this.url} answered HTTP ${res.status} ${res.statusText}`.trim());
    }
    try {
      return await readBounded(res, this.maxBytes);
    } catch (e) {
      const err = e as Error;
      throw new TsaError(
        `TSA ${this.url}: ${err.name === 'TimeoutError' ? `did not answer within ${this.timeoutMs} ms` : err.message}`,
      );
    }
  }
}

function describe(e: unknown, timeoutMs: number): string {
  if (!(e instanceof Error)) return String(e);
  if (e.name === 'TimeoutError') return `did not answer within ${timeoutMs} ms`;
  // The caller's address policy (`policedFetch`) names the URL and the range itself.
  if (e.name === 'AddressRefusedError') return `is refused: ${e.message}`;
  const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
  if (cause?.message && /redirect/i.test(cause.message))
    return `answered with a redirect: redirects are not followed (give the final URL)`;
  return `is unreachable: ${cause?.code ?? cause?.message ?? e.message}`;
}

/** What a refusing TSA's PKIStatusInfo needs to be told (RFC 3161 2.4.2); structural, for any asn1js copy. */
export interface PkiStatusInfoLike {
  status: number;
  statusStrings?: readonly { valueBlock: { value: string } }[];
  failInfo?: { valueBlock: { valueHexView: Uint8Array; unusedBits: number } };
}

/**
 * A PKIStatusInfo in words (RFC 3161 2.4.2): `status rejection (2), "<statusString>", failInfo badAlg`, the
 * parts present only. Shared with the service's TSA adapter, so both name a refusal alike.
 */
export function describePkiStatus(info: PkiStatusInfoLike): string {
  const text = (info.statusStrings ?? []).map((s) => s.valueBlock.value).join('; ');
  const failInfo = failureInfoNames(info.failInfo);
  return (
    `status ${STATUS_NAMES[info.status] ?? 'unknown'} (${info.status})` +
    (text ? `, "${text}"` : '') +
    (failInfo.length > 0 ? `, failInfo ${failInfo.join(', ')}` : '')
  );
}

function failureInfoNames(bits: PkiStatusInfoLike['failInfo']): string[] {
  if (!bits) return [];
  const view = bits.valueBlock.valueHexView;
  const names: string[] = [];
  for (let i = 0; i < view.length * 8 - bits.valueBlock.unusedBits; i++) {
    if (((view[i >> 3] ?? 0) & (0x80 >> (i & 7))) !== 0) names.push(FAILURE_INFO[i] ?? `bit${i}`);
  }
  return names;
}

/** A `TimeStampReq` and the nonce it carries, to check the answer against (`readTimeStampResponse`). */
export interface TimeStampRequest {
  /** DER `TimeStampReq`: the body of the HTTP POST (`application/timestamp-query`, RFC 3161 3.4). */
  der: Uint8Array;
  /** SHA-256 digest stamped, 32 bytes. */
  digest: Uint8Array;
  /** The request's nonce, a positive 63-bit integer. */
  nonce: bigint;
}

/**
 * An RFC 3161 2.4.1 `TimeStampReq`: version 1, SHA-256 message imprint of `digest`, a random positive 63-bit
 * nonce (RFC 3161 asks for a large random number), certReq true (so the token carries the TSA certificate).
 * @param digest SHA-256 of the data to stamp, 32 bytes (not checked here).
 */
export function timeStampRequest(digest: Uint8Array): TimeStampRequest {
  const random = crypto.getRandomValues(new Uint8Array(8));
  random[0] = (random[0] ?? 0) & 0x7f;
  let nonce = 0n;
  for (const b of random) nonce = (nonce << 8n) | BigInt(b);
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
      hashedMessage: new asn1js.OctetString({ valueHex: toArrayBuffer(digest) }),
    }),
    nonce: asn1js.Integer.fromBigInt(nonce),
    certReq: true,
  });
  return { der: new Uint8Array(request.toSchema().toBER(false)), digest, nonce };
}

/** What `readTimeStampResponse` found in an answer that passed every check. */
export interface CheckedTimeStamp {
  /** DER `TimeStampToken` (the CMS ContentInfo inside the answer): what a PAdES signature timestamp embeds. */
  token: Uint8Array;
  /** The TSTInfo's genTime. */
  genTime: Date;
  /** The TSTInfo's serial number. */
  serialNumber: bigint;
  /** The TSA certificate's subject, e.g. `CN=Notary Test TSA, O=...`. */
  tsa: string;
  /** Whether the TSA certificate was found to chain to `tsaCa` (false: no anchors were given). */
  chainChecked: boolean;
  /**
   * DER certificates the token's signature vouches for: the TSA certificate (named by the signed ESS signing
   * certificate attribute) and, when `chainChecked`, the rest of its verified path to `tsaCa`, the anchor
   * included. Other certificates the token carries are not here: its certificate set is outside the signature,
   * so anyone on the way may add to it. These are the certificates whose revocation data a signer gathers.
   */
  chain: Uint8Array[];
}

/** Options of `readTimeStampResponse`. */
export interface ReadTimeStampOptions {
  /** DER certificates the TSA certificate must chain to at genTime; none or empty: the chain is not checked. */
  tsaCa?: readonly Uint8Array[];
  /** How a refusal names `tsaCa`: the command line's `--tsa-ca`, the service's `TSA_CA_CERTS`. */
  anchorsName?: string;
  /** The answer's HTTP content type, only reported when it does not parse (some TSAs send octet-stream). */
  contentType?: string;
}

/**
 * Checks a DER `TimeStampResp` (RFC 3161 2.4.2) against the request it answers, in this order, and stops at
 * the first failure: it parses (no trailing bytes); PKIStatus granted or grantedWithMods; a token, a CMS
 * SignedData (one SignerInfo) encapsulating a TSTInfo; the message imprint is SHA-256 of the request's
 * digest and the nonce is the request's; the token carries the certificate its SignerInfo names (certReq);
 * the signed attributes hold contentType id-ct-TSTInfo and the messageDigest of the TSTInfo, and the
 * signature verifies (RFC 5652 5.4, 5.6); the TSA certificate chains to `tsaCa` at genTime (when given);
 * its extended key usage is exactly a critical id-kp-timeStamping (RFC 3161 2.3); the ESS signing
 * certificate attribute names it by hash and, when present, issuerSerial (RFC 3161 2.4.1, RFC 5816).
 *
 * The verifier's `TsaClient` and the service's TSA adapter both read answers through this function.
 * @throws TsaError whose message names the failed check, e.g. `TSA token: the nonce differs from the one
 *   requested (or is missing)`.
 */
export async function readTimeStampResponse(
  body: Uint8Array,
  request: Pick<TimeStampRequest, 'digest' | 'nonce'>,
  options: ReadTimeStampOptions = {},
): Promise<CheckedTimeStamp> {
  let response: pkijs.TimeStampResp;
  let token: Uint8Array;
  try {
    const asn = asn1js.fromBER(toArrayBuffer(body));
    if (asn.offset === -1) throw new Error(asn.result.error);
    if (asn.offset !== body.byteLength) throw new Error('trailing bytes');
    response = new pkijs.TimeStampResp({ schema: asn.result });
    const tokenAsn = asn.result instanceof asn1js.Sequence ? asn.result.valueBlock.value[1] : undefined;
    token = tokenAsn ? new Uint8Array(tokenAsn.valueBeforeDecodeView) : new Uint8Array();
  } catch (e) {
    const type = options.contentType === undefined ? '' : `, content-type '${options.contentType}'`;
    throw new TsaError(
      `TSA answer does not parse as an RFC 3161 TimeStampResp (${body.byteLength} bytes${type}): ${errorMessage(e)}`,
    );
  }
  // PKIStatus: granted (0) or grantedWithMods (1) carry a token (RFC 3161 2.4.2).
  const status = response.status.status;
  if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
    throw new TsaError(`TSA rejected the request: ${describePkiStatus(response.status)}`);
  }
  if (!response.timeStampToken || token.byteLength === 0)
    throw new TsaError('TSA answer has status granted but no timeStampToken');

  let parsed: ParsedSignedData;
  let tst: pkijs.TSTInfo;
  let tstDer: Uint8Array;
  try {
    parsed = parseSignedData(token, 'timestamp token');
    const encap = parsed.signedData.encapContentInfo;
    if (encap.eContentType !== OID.tstInfo) throw new Error(`eContentType ${encap.eContentType}`);
    if (!encap.eContent) throw new Error('no eContent');
    tstDer = new Uint8Array(encap.eContent.getValue());
    tst = pkijs.TSTInfo.fromBER(toArrayBuffer(tstDer));
  } catch (e) {
    throw new TsaError(`TSA token: the TSTInfo (or its SignedData) does not parse: ${errorMessage(e)}`);
  }

  // The token answers this request (RFC 3161 2.4.2): same imprint, same nonce.
  const hashed = new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (tst.messageImprint.hashAlgorithm.algorithmId !== OID.sha256 || !equalBytes(hashed, request.digest))
    throw new TsaError('TSA token: the message imprint differs from the one requested');
  if (!tst.nonce || tst.nonce.toBigInt() !== request.nonce)
    throw new TsaError('TSA token: the nonce differs from the one requested (or is missing)');

  const cert = signerCertificate(parsed);
  if (!cert) throw new TsaError('TSA token does not include the TSA certificate (certReq was true)');
  let sig: Awaited<ReturnType<typeof verifySignerInfo>>;
  try {
    sig = await verifySignerInfo(parsed, cert, tstDer, OID.tstInfo);
  } catch (e) {
    throw new TsaError(`TSA token signature cannot be verified: ${errorMessage(e)}`);
  }
  if (!sig.contentType)
    throw new TsaError(
      'TSA token signature: the contentType signed attribute is missing or not id-ct-TSTInfo',
    );
  if (!sig.messageDigest)
    throw new TsaError('TSA token signature: the messageDigest signed attribute does not match the TSTInfo');
  if (!sig.signature) throw new TsaError('TSA token signature is invalid');

  const tsaCa = options.tsaCa && options.tsaCa.length > 0 ? options.tsaCa : undefined;
  let path: pkijs.Certificate[] = [cert];
  if (tsaCa) {
    const trusted = await chainsTo(cert, parsed.certificates, tsaCa, tst.genTime);
    if (!trusted.ok) {
      throw new TsaError(
        `TSA certificate chain is not trusted (no path to ${options.anchorsName ?? 'the trust anchors'}): ${trusted.message}`,
      );
    }
    path = trusted.path ?? path;
  }
  if (!hasCriticalTimeStampingEku(cert)) {
    const eku = extendedKeyUsage(cert);
    throw new TsaError(
      'TSA certificate extended key usage is not exactly a critical id-kp-timeStamping (RFC 3161 2.3): ' +
        (eku
          ? `${eku.critical ? 'critical' : 'not critical'}, [${eku.purposes.join(', ')}]`
          : 'no extension'),
    );
  }
  const ess = await essFinding(parsed, cert);
  if (ess.kind === 'absent')
    throw new TsaError('TSA token has no ESS signing certificate attribute (RFC 3161 2.4.1, RFC 5816)');
  if (ess.kind === 'malformed')
    throw new TsaError(`TSA token ESS signing certificate attribute: ${ess.message}`);
  if (!ess.hash || ess.issuerSerial === false) {
    throw new TsaError(
      `TSA token ESS signing certificate does not name the TSA certificate (${ess.hash ? 'issuerSerial' : 'hash'} differs)`,
    );
  }
  return {
    token,
    genTime: tst.genTime,
    serialNumber: tst.serialNumber.toBigInt(),
    tsa: subjectName(cert),
    chainChecked: tsaCa !== undefined,
    chain: uniqueCertificates([cert, ...path]),
  };
}

/** The DER of each certificate once, in order. */
function uniqueCertificates(certs: readonly pkijs.Certificate[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const c of certs) {
    const der = certificateDer(c);
    if (!out.some((x) => equalBytes(x, der))) out.push(der);
  }
  return out;
}
