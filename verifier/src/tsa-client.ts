import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { equalBytes, toArrayBuffer } from './bytes.ts';
import { OID, subjectName } from './cms.ts';
import { readBounded } from './http.ts';
import { CheckBuilder } from './report.ts';
import { verifyTimestampToken } from './timestamp.ts';

/**
 * RFC 3161 Time-Stamp Protocol client of the verifier (RFC 3161 section 3.4, HTTP transport), on `fetch`,
 * WebCrypto and pkijs only, so that it runs in browsers as in Node: it asks a TSA the holder chose for a
 * token over a SHA-256 digest, e.g. the document timestamp `notary-verify extend` adds (ETSI EN 319 142-1
 * 5.4.3, PAdES B-LTA). Every answer is checked before use: PKIStatus granted, the token's message imprint and
 * nonce are the request's, and the token itself passes the verifier's own RFC 3161 checks
 * (`verifyTimestampToken`: signature, ESS signing certificate, critical id-kp-timeStamping EKU, and the chain
 * to the given anchors at genTime when some are given).
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
}

/**
 * An RFC 3161 client with the shape of `@notary/pdf`'s `SignatureTimestamper` (`timestamp(digest) →
 * { token }`), so the PDF writer can ask it for a signature or document timestamp.
 */
export class TsaClient {
  readonly url: string;
  private readonly tsaCa: Uint8Array[] | undefined;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly fetchFn: typeof fetch;

  constructor(options: TsaClientOptions) {
    this.url = options.url;
    this.tsaCa = options.tsaCa && options.tsaCa.length > 0 ? [...options.tsaCa] : undefined;
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
    const random = crypto.getRandomValues(new Uint8Array(8));
    random[0] = (random[0] ?? 0) & 0x7f;
    let nonceValue = 0n;
    for (const b of random) nonceValue = (nonceValue << 8n) | BigInt(b);
    const nonce = asn1js.Integer.fromBigInt(nonceValue);
    const request = new pkijs.TimeStampReq({
      version: 1,
      messageImprint: new pkijs.MessageImprint({
        hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
        hashedMessage: new asn1js.OctetString({ valueHex: toArrayBuffer(digest) }),
      }),
      nonce,
      certReq: true,
    });
    const answer = await this.post(new Uint8Array(request.toSchema().toBER(false)));
    return this.check(answer, digest, nonceValue);
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

  private async check(body: Uint8Array, digest: Uint8Array, nonce: bigint): Promise<TsaTimestamp> {
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
      throw new TsaError(
        `TSA answer (${body.byteLength} bytes) is not an RFC 3161 TimeStampResp: ${(e as Error).message}`,
      );
    }
    const status = response.status.status;
    if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
      throw new TsaError(`TSA refused: ${describePkiStatus(response.status)}`);
    }
    if (!response.timeStampToken || token.byteLength === 0)
      throw new TsaError('TSA answer has status granted but no timeStampToken');

    // RFC 3161 2.4.2: the token answers this request, its imprint and nonce are ours.
    let tst: pkijs.TSTInfo;
    try {
      const signedData = new pkijs.SignedData({ schema: response.timeStampToken.content });
      const eContent = signedData.encapContentInfo.eContent;
      if (signedData.encapContentInfo.eContentType !== OID.tstInfo || !eContent)
        throw new Error('no TSTInfo');
      tst = pkijs.TSTInfo.fromBER(toArrayBuffer(new Uint8Array(eContent.getValue())));
    } catch (e) {
      throw new TsaError(`TSA token does not parse: ${(e as Error).message}`);
    }
    const hashed = new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
    if (tst.messageImprint.hashAlgorithm.algorithmId !== OID.sha256 || !equalBytes(hashed, digest))
      throw new TsaError('TSA token: the message imprint is not the one requested');
    if (!tst.nonce || tst.nonce.toBigInt() !== nonce)
      throw new TsaError('TSA token: the nonce is not the one requested (or is missing)');

    const c = new CheckBuilder(5);
    const stamped = await verifyTimestampToken(c, token, digest, 'requested SHA-256', this.tsaCa);
    const failures = c.evidence.filter((e) => e.ok === false);
    if (!stamped || failures.length > 0)
      throw new TsaError(`TSA token: ${failures.map((e) => `${e.label}: ${e.value}`).join('; ')}`);
    const tsa = stamped.tsa ? subjectName(stamped.tsa) : 'unknown TSA';
    return { token, genTime: stamped.genTime, tsa, chainChecked: this.tsaCa !== undefined };
  }
}

function describe(e: unknown, timeoutMs: number): string {
  if (!(e instanceof Error)) return String(e);
  if (e.name === 'TimeoutError') return `did not answer within ${timeoutMs} ms`;
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
