/**
 * RFC 3161 Time-Stamp Protocol client over HTTP (RFC 3161 section 3.4). The request and every check of the
 * answer are the trust library's (`@notary/trust/tsa-client`, `readTimeStampResponse`, which `notary-verify`
 * uses too): status, message imprint, nonce, CMS signature, certificate chain to the configured anchors, the
 * TSA certificate's critical id-kp-timeStamping EKU (RFC 3161 2.3) and the ESS signing certificate attribute
 * (RFC 3161 2.4.1, RFC 5816), so the service accepts exactly the tokens `notary-verify` accepts. This adapter adds the transport (messages
 * redacted of every piece of the configured URL, `secretsOfUrl`), the genTime skew bound and the service's error
 * (`BAD_GATEWAY`).
 */

import { redactError, redactText, type SecretSet, secretsOfUrl } from '@notary/platform/redact';
import { AppError, evenHex } from '@notary/shared';
import { AnswerTooLarge, readBounded } from '@notary/shared/fetch-body';
import { describeFetchError } from '@notary/shared/fetch-error';
import { parseTrustAnchors } from '@notary/trust/cert-path';
import {
  readTimeStampResponse,
  TSA_MAX_RESPONSE_BYTES,
  TsaError,
  timeStampRequest,
} from '@notary/trust/tsa-client';
import type { TimestampAuthority, TimestampResult } from '../../ports/tsa';

/**
 * Seconds a client is told to wait (`Retry-After` on the 502) when the TSA is away: unreachable, timed out or
 * answering 5xx. Nothing waits on the service's side: timestamps and certificates are made when asked for.
 */
export const TSA_RETRY_AFTER_SECONDS = 30;

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
 * `TimestampAuthority` that POSTs an RFC 3161 `TimeStampReq` (version 1, SHA-256 imprint, random 63-bit
 * nonce, certReq true) to `url` and verifies the `TimeStampResp`.
 *
 * Every failure is `AppError('BAD_GATEWAY', message)` whose message names the cause (with `retryAfterSeconds`
 * when the TSA is away: unreachable, timeout, HTTP 5xx): unreachable / timeout,
 * HTTP status, a redirect (never followed), does not parse, status rejected (with statusString and failInfo),
 * no token, TSTInfo, message imprint, nonce, signature, chain (not trusted), extended key usage, ESS signing
 * certificate, genTime skew.
 */
export class HttpTimestampAuthority implements TimestampAuthority {
  readonly trustAnchors: readonly Uint8Array[];
  private readonly url: string;
  private readonly timeoutMs: number;
  /** What this TSA's messages (answered to clients as 502, and logged) must not show: pieces of its URL. */
  private readonly secrets: SecretSet;
  /** The URL as error messages name it: a key in it redacted. */
  private readonly shownUrl: string;
  private readonly maxClockSkewMs: number;
  private readonly fetchFn: typeof fetch;

  /** @throws Error when a trusted certificate does not parse. */
  constructor(opts: HttpTimestampAuthorityOptions) {
    this.url = opts.url;
    this.secrets = secretsOfUrl(opts.url);
    this.shownUrl = redactText(opts.url, this.secrets);
    this.trustAnchors = opts.trustedCertificates;
    // Parsed now, so a bad TSA_CA_CERTS stops the start, and once (the bundled root store is ~150 certificates).
    parseTrustAnchors(this.trustAnchors);
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
    const request = timeStampRequest(digest);
    const body = await this.post(request.der);
    let stamped: Awaited<ReturnType<typeof readTimeStampResponse>>;
    try {
      stamped = await readTimeStampResponse(body.bytes, request, {
        tsaCa: this.trustAnchors,
        anchorsName: 'TSA_CA_CERTS',
        contentType: body.contentType,
      });
    } catch (e) {
      throw e instanceof TsaError ? this.bad(e.message, e) : e;
    }
    const skew = Math.abs(stamped.genTime.getTime() - Date.now());
    if (skew > this.maxClockSkewMs) {
      throw this.bad(
        `TSA token: genTime ${stamped.genTime.toISOString()} is ${Math.round(skew / 1000)} s away from the local clock`,
      );
    }
    return {
      response: body.bytes,
      token: stamped.token,
      genTime: stamped.genTime,
      // Without the DER sign byte, even length (openssl ts -reply -text shows 0x02 for serial 2).
      serialNumber: evenHex(stamped.serialNumber),
      chain: stamped.chain,
    };
  }

  private async post(query: Uint8Array): Promise<{ bytes: Uint8Array; contentType: string }> {
    let response: Response;
    try {
      response = await this.fetchFn(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
        body: query,
        signal: AbortSignal.timeout(this.timeoutMs),
        // TSA_URL is the endpoint the operator chose: a redirect would send the service's requests wherever
        // the answer says (an internal address, another TSA), so none is followed.
        redirect: 'manual',
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get('location') ?? 'nowhere';
        throw this.bad(
          `TSA ${this.shownUrl} answered HTTP ${response.status} to ${location}: redirects are not followed (set TSA_URL to the final URL)`,
        );
      }
      if (!response.ok) {
        await response.body?.cancel();
        const failed = `TSA ${this.shownUrl} answered HTTP ${response.status} ${response.statusText}`.trim();
        throw response.status >= 500 ? this.away(failed) : this.bad(failed);
      }
      return {
        // A TimeStampResp is a few KB: a TSA (or whoever answers for it over http) cannot make the service hold more.
        bytes: await readBounded(response, TSA_MAX_RESPONSE_BYTES),
        contentType: response.headers.get('content-type') ?? '',
      };
    } catch (e) {
      if (e instanceof AppError) throw e;
      if (e instanceof AnswerTooLarge) throw this.bad(`TSA ${this.shownUrl}: ${e.message}`, e);
      if (e instanceof Error && e.name === 'TimeoutError') {
        throw this.away(`TSA ${this.shownUrl} did not answer within ${this.timeoutMs} ms`, e);
      }
      throw this.away(`TSA ${this.shownUrl} is unreachable: ${describeFetchError(e)}`, e);
    }
  }

  /**
   * The service's error for a failed TSA call, its message and cause redacted of this TSA's secrets (a TSA or a
   * library may echo the URL it was called at, key included).
   */
  private bad(message: string, cause?: unknown, retryAfterSeconds?: number): AppError {
    const redacted = redactText(message, this.secrets);
    return new AppError('BAD_GATEWAY', redacted, {
      ...(cause === undefined ? {} : { cause: redactError(cause, this.secrets) }),
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
  }

  /** `bad` for a TSA that is away (unreachable, timed out, 5xx): the same request may succeed later. */
  private away(message: string, cause?: unknown): AppError {
    return this.bad(message, cause, TSA_RETRY_AFTER_SECONDS);
  }
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
