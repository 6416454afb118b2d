/**
 * The trust library's problems and verdicts as data: a `TrustMessage` is a code of `TRUST_EN` and its
 * parameters, so that a reader can show them in its own language (the verifier's report tables hold every
 * code, in English and Portuguese). The English of each is also the plain `message`/`reason` text the
 * library's errors and results carry, which the service logs and throws as it is. A parameter named `error`
 * is a library's or the runtime's own text (pkijs, a fetch cause), `answer` an endpoint's own words: both
 * shown as they are in every language. Browser-safe: no Node module.
 */
import { errorMessage } from '@notary/shared/error-message';
import { AnswerTooLarge } from '@notary/shared/fetch-body';
import { fetchFailureOf } from '@notary/shared/fetch-error';
import { fillMessage, type TemplateParams } from '@notary/shared/message-template';

/** The English template of every trust code, `{name}` marking a parameter. */
export const TRUST_EN = {
  // A library's or the runtime's own text, and several problems at once (joined by `; `).
  'trust.foreign': '{error}',
  'trust.problems': '{problems}',
  'trust.at': '{route}: {problem}',
  // A request that failed (http.ts, the revocation fetcher, stacks-api.ts).
  'trust.timedOut': 'timed out',
  'trust.redirectCause': '{error}: redirects are not followed',
  'trust.tooLarge': 'the answer is larger than {max} bytes',
  'trust.tooLargeDeclared': 'the answer is larger than {max} bytes (content-length {declared})',
  'trust.unreachable': 'unreachable: {problem}',
  'trust.http': 'HTTP {status}',
  'trust.httpThen': 'HTTP {status}: {problem}',
  'trust.httpAnswer': 'HTTP {status}: {answer}',
  'trust.httpRedirectAskFinal': 'HTTP {status}: redirects are not followed (ask the final endpoint directly)',
  'trust.httpRedirectGiveFinal': 'HTTP {status}: redirects are not followed (give the final URL)',
  'trust.httpNotJson': 'HTTP {status}, not JSON: {answer}',
  'trust.httpUnexpected': 'HTTP {status}, not the expected answer: {answer}',
  'trust.httpUnexpectedAt': 'HTTP {status}, not the expected answer ({field}): {answer}',
  'trust.http410': 'HTTP 410 Gone: {answer}',
  'trust.http429': 'HTTP 429 (rate-limited; Retry-After {seconds} s)',
  'trust.budgetWait': 'rate-limited: the request budget accepts the next request in {seconds} s',
  'trust.endpointWait': 'rate-limited: the endpoint accepts the next request in {seconds} s',
  'trust.rpcError': '{method}: JSON-RPC error {error}',
  'trust.rpcHttp': '{method}: HTTP {status}',
  // The Stacks API reader (stacks-api.ts).
  'trust.kindHiroV3': 'a Hiro API with /extended/v3 routes (hiro-v3)',
  'trust.kindHiroV1': 'a Hiro API with only the deprecated /extended/v1 routes (hiro-v1)',
  'trust.kindNode': 'a stacks-node without a Hiro API (node)',
  'trust.notHiroStatus': 'HTTP {status}, not a Hiro API status',
  'trust.noSuchRoute': 'HTTP 404, no such route on this endpoint',
  'trust.nodeNoIndex': 'a stacks-node has no transaction index (/extended)',
  'trust.hiroWithoutTxRoutes':
    'a Hiro API (GET /extended) without transaction routes (/extended/v3/transactions, /extended/v1/tx)',
  'trust.neitherKind':
    'neither a Hiro API (GET /extended: HTTP {extended}) nor a stacks-node (GET /v2/info: HTTP {info})',
  'trust.v1GoneNoV3':
    'GET /extended/v1/tx answers 410 Gone: this Hiro API has disabled its deprecated v1 routes and it has no /extended/v3 routes',
  'trust.v1GoneV3Answers':
    'GET /extended/v1/tx answers 410 Gone: this Hiro API has disabled its deprecated v1 routes (its /extended/v3 routes answer)',
  'trust.getAnchorFailed': 'call-read get-anchor failed: {answer}',
  'trust.getAnchorUndecodable': 'get-anchor: undecodable Clarity value: {error}',
  'trust.getAnchorUnexpected': 'get-anchor: unexpected {value}',
  // Certification paths (cert-path.ts).
  'trust.noAnchor': 'no anchor',
  'trust.noValidPath': 'no valid path',
  'trust.anchorDoesNotParse': 'a trust anchor does not parse: {error}',
  // Revocation data (revocation.ts): gathering it, then each answer.
  'trust.certificateDoesNotParse': 'it does not parse',
  'trust.noResponderNorCrl': 'the certificate names no OCSP responder nor CRL (AIA, CRL DP)',
  'trust.ocspAt': 'OCSP {url}: {problem}',
  'trust.caIssuersAt': 'caIssuers {url}: {problem}',
  'trust.notTheIssuer': 'the answer holds no certificate that issued this one',
  'trust.noCaIssuers': 'the certificate names no caIssuers URL (AIA)',
  'trust.crlAt': 'CRL {url}: {problem}',
  'trust.budgetSpent': 'request budget of this look-up spent',
  'trust.responderDoesNotKnow': 'the responder does not know the certificate',
  'trust.thisUpdateFuture': 'thisUpdate {at} is in the future',
  'trust.stale': 'stale: nextUpdate {at} has passed',
  'trust.ocspStatus': 'response status {status}',
  'trust.notBasicOcsp': 'not a basic OCSP response',
  'trust.doesNotParse': 'does not parse: {error}',
  'trust.noResponseForCertificate': 'no response for this certificate',
  'trust.responderNotInAnswer': 'the responder certificate is not in the answer',
  'trust.revokedWithoutTime': 'revoked status without a revocation time',
  'trust.ocspSignature': 'its signature does not verify',
  'trust.notAnAuthority':
    'not signed by an authority: {name} is neither the issuer nor a responder the issuer certified',
  'trust.noOcspSigningEku': 'responder {name} lacks the id-kp-OCSPSigning EKU',
  'trust.responderNotValid': 'responder {name} was not valid when the answer was produced ({at})',
  'trust.crlOtherIssuer': 'not issued by the certificate issuer',
  'trust.noCrlSign': 'the issuer may not sign CRLs (no cRLSign key usage)',
  'trust.crlSignature': 'its signature does not verify with the issuer key',
  'trust.deltaCrl': 'a delta CRL (not complete)',
  'trust.partialCrl': 'a partial CRL (issuing distribution point scope)',
  'trust.crlScope': 'the CRL does not cover this kind of certificate',
  'trust.anOcspAnswer': 'an OCSP answer: {problem}',
  'trust.ocspSaysUnknown': 'an OCSP answer says unknown',
  'trust.aCrl': 'a CRL: {problem}',
  'trust.noAnswerAbout': 'none of the {ocsps} OCSP answers and {crls} CRLs is about this certificate',
} as const;

/** Every trust code. */
export type TrustCode = keyof typeof TRUST_EN;

/** Every trust code, in `TRUST_EN`'s order. */
export const TRUST_CODES = Object.keys(TRUST_EN) as TrustCode[];

/** The parameters code `K` takes: those its template names. */
export type TrustParamsOf<K extends TrustCode> = TemplateParams<(typeof TRUST_EN)[K]>;

/** A parameter: data shown as it is, another trust message, or several (shown as `a; b`). */
export type TrustParam = string | number | TrustMessage | readonly TrustMessage[];

/** A problem or verdict of the trust library: a code and, when its template has parameters, each of them. */
export type TrustMessage = {
  [K in TrustCode]: [TrustParamsOf<K>] extends [never]
    ? { code: K; params?: undefined }
    : { code: K; params: { readonly [P in TrustParamsOf<K>]: TrustParam } };
}[TrustCode];

type TrustParamsArg<K extends TrustCode> = [TrustParamsOf<K>] extends [never]
  ? []
  : [params: { readonly [P in TrustParamsOf<K>]: TrustParam }];

/**
 * The trust message of `code` with `params` (every parameter its template names: a missing one is a compile
 * error). @example trustMsg('trust.http', { status: 503 })
 */
export function trustMsg<K extends TrustCode>(code: K, ...params: TrustParamsArg<K>): TrustMessage {
  const [p] = params;
  return (p === undefined ? { code } : { code, params: p }) as TrustMessage;
}

/** `message` in English (`TRUST_EN`): the text the library's errors and results carry. */
export function trustText(message: TrustMessage): string {
  return fillMessage(message, (code) =>
    Object.hasOwn(TRUST_EN, code) ? TRUST_EN[code as TrustCode] : undefined,
  );
}

/** A library's or the runtime's own text (an exception's message): shown as it is in every language. */
export function trustForeign(text: string): TrustMessage {
  return trustMsg('trust.foreign', { error: text });
}

/**
 * A failed request as a trust message (what `describeFetchError` of `@notary/shared` says in English, and
 * `readBounded`'s refusal of a large answer): timed out, a refused redirect, an answer too large, else the
 * cause's own text.
 */
export function fetchProblem(e: unknown): TrustMessage {
  if (e instanceof AnswerTooLarge) {
    return e.declared === undefined
      ? trustMsg('trust.tooLarge', { max: e.max })
      : trustMsg('trust.tooLargeDeclared', { max: e.max, declared: e.declared });
  }
  const failure = fetchFailureOf(e);
  if (failure.kind === 'timeout') return trustMsg('trust.timedOut');
  if (failure.kind === 'redirect') return trustMsg('trust.redirectCause', { error: failure.cause });
  return trustForeign(failure.text);
}

/** An error of the trust library: `detail` says it as data, `message` in English. */
export class TrustError extends Error {
  override name = 'TrustError';
  readonly detail: TrustMessage;

  constructor(detail: TrustMessage) {
    super(trustText(detail));
    this.detail = detail;
  }
}

/** What `e` says as a trust message: a `TrustError`'s detail, anything else's text as the library's own. */
export function problemOf(e: unknown): TrustMessage {
  return e instanceof TrustError ? e.detail : trustForeign(errorMessage(e));
}
