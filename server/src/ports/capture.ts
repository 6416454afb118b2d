import type { Readable } from 'node:stream';

/**
 * Web capture port: loads a page in an isolated browser behind an address-checking proxy and packs what it showed as a
 * WACZ (Webrecorder's web archive package, spec 1.1.1). Implemented by `adapters/capture/` (`service/` in the
 * service; `child/`, Chromium driven by playwright-core, in the capture process).
 */

/** A server the capture connected to: the host as the page named it, and the address actually connected to. */
export interface ServerContact {
  host: string;
  port: number;
  ip: string;
}

/**
 * The rule that refused a request: `private-range` (an address outside the public ranges, or one of this
 * machine's own; for a name, what it resolved to is not said), `metadata-address` (a cloud metadata address
 * named in the URL), `scheme` (not http, https or ws), `port` (a port other than 80 and 443 on a host the allow
 * list does not name), `download`, `local-resource` (`file:` and other local URLs a page may not load).
 */
export type BlockRule =
  | 'private-range'
  | 'metadata-address'
  | 'scheme'
  | 'port'
  | 'download'
  | 'local-resource';

/** A request the capture refused, and why (an address that is not public, a scheme, a download). */
export interface BlockedRequest {
  url: string;
  /**
   * The refused address when the URL itself was that address (an IP literal); null otherwise, also when a
   * name was refused for what it resolved to: that address goes to the operator's log only, so that a capture
   * never tells its user what a name resolves to inside the service's network.
   */
  ip: string | null;
  reason: string;
  /** The rule that refused it; absent in records made before rules were recorded. */
  rule?: BlockRule;
}

/**
 * One answer of the name resolution the capture proxy made (the browser resolves nothing itself): the host as
 * the page named it, the addresses the resolver answered (in its order) and those of them connected to. Only
 * addresses the capture was allowed to reach are ever listed: for a name refused for what it resolved to,
 * `addresses` is empty (the operator's log has them), as it is for a name that did not resolve.
 */
export interface DnsAnswer {
  host: string;
  /** `resolved`: addresses answered and allowed; `refused`: not a public address; `failed`: no answer. */
  outcome: 'resolved' | 'refused' | 'failed';
  addresses: string[];
  /** The addresses of this answer the proxy connected to (empty when none was, yet). */
  connected: string[];
  /** The resolver's error code for `failed` (`ENOTFOUND`, a timeout). */
  error?: string;
  /** When this answer was first got (ISO 8601, UTC). */
  at: string;
}

/**
 * The TLS connection to one origin, as Chromium reported it over the DevTools protocol
 * (`Network.responseReceived` security details and `Network.getCertificate`; see
 * https://chromedevtools.github.io/devtools-protocol/tot/Network/): the summary kept in `capture.json`; the
 * certificates themselves (PEM) and the signed certificate timestamps are in the WACZ's `capture/tls.json`.
 */
export interface OriginTls {
  /** `https://host[:port]`. */
  origin: string;
  /** `TLS 1.3`, `TLS 1.2`, or null when Chromium did not say. */
  protocol: string | null;
  /** The cipher (`AES_128_GCM`, `CHACHA20_POLY1305`), null when not said. */
  cipher: string | null;
  /** The key exchange, or its group for TLS 1.3 (`X25519`, `X25519MLKEM768`), null when not said. */
  keyExchange: string | null;
  /** The leaf certificate's subject and issuer (distinguished names, or Chromium's common names without the chain). */
  subject: string;
  issuer: string;
  /** The leaf's validity, ISO 8601 UTC. */
  validFrom: string;
  validTo: string;
  /** SHA-256 of the leaf's DER, lower-case hex; null when Chromium gave no certificate for the origin. */
  sha256Fingerprint: string | null;
  /** Certificates kept in `capture/tls.json`, leaf first: the path Chromium verified (0: none given). */
  chainLength: number;
  /** Signed certificate timestamps Chromium reported (kept in `capture/tls.json`). */
  scts: number;
  /** Chromium's Certificate Transparency verdict: `compliant`, `not-compliant`, `unknown`; null when not said. */
  ctCompliance: string | null;
}

/** The capture's own settings that shaped what it recorded (the provenance summary lists them). */
export interface CaptureSettingsRecord {
  /** `CAPTURE_TIMEOUT_MS`. */
  timeoutMs: number;
  /** Scrolling for lazy content: at most `maxSteps` steps of about a screen, for at most `maxMs`. */
  scroll: { maxSteps: number; maxMs: number };
  /** The screenshot's height cap, CSS pixels. */
  screenshotMaxHeight: number;
  /** Exceptions to the public-addresses-only rule configured (`CAPTURE_ALLOW_HOSTS` entries; not named). */
  allowExceptions: number;
  /** Private certificate authorities trusted as anchors (`CAPTURE_CA_CERTS`): subject and SHA-256 of the DER. */
  trustedCas: Array<{ subject: string; sha256Fingerprint: string }>;
}

/**
 * A response whose body the browser did not hand over whole. Its WARC response record holds what there is
 * (nothing, for `missing`) and says so with `WARC-Truncated: unspecified` and `WARC-Notary-Body: <kind>`.
 */
export interface MissingBody {
  url: string;
  /** The response's HTTP status. */
  status: number;
  /** `missing`: no byte of the body; `incomplete`: fewer bytes than the response announced. */
  kind: 'missing' | 'incomplete';
  /** Why, as far as known: the browser's error text (`net::ERR_…`), a redirect, a length short of the announced. */
  reason: string;
}

/** The main document's TLS server certificate, as the browser saw it. */
export interface CapturedTls {
  protocol: string | null;
  subject: string;
  issuer: string;
  /** ISO 8601, UTC. */
  validFrom: string;
  validTo: string;
  /** SHA-256 of the certificate's DER, lower-case hex (what `openssl x509 -fingerprint -sha256` shows). */
  sha256Fingerprint: string;
}

/**
 * The technical record of one capture: `capture.json` in the WACZ, and the `capture.json` iTXt chunk of the
 * screenshot (the capture adapter writes it there; `CaptureRecordReader` reads it back). Times are ISO 8601 UTC.
 */
export interface CaptureRecord {
  format: 'notary-web-capture/1';
  requestedUrl: string;
  finalUrl: string;
  /** HTTP status of the final response of the main document (a 404 or 500 page is captured as shown). */
  status: number;
  /** Every hop of the main document's redirect chain, in order, with its status and `Location`. */
  redirects: Array<{ url: string; status: number; location: string }>;
  /** Address the main document was fetched from (the proxy's connection), null when unknown. */
  serverIp: string | null;
  tls: CapturedTls | null;
  /** The main document's response headers as received (name, value), in order. */
  responseHeaders: Array<[string, string]>;
  servers: ServerContact[];
  blocked: BlockedRequest[];
  /** Requests the browser gave up on for another reason (unreachable, reset), with the browser's error text. */
  failed: Array<{ url: string; reason: string }>;
  /** Requests still running when the capture's time ran out: cut, their bodies incomplete or absent. */
  unfinished: string[];
  /**
   * Archived responses whose body the browser did not hand over whole (a redirect's, one evicted from the
   * browser's buffers, one cut while it came): never passed off as empty. Absent in records made before
   * bodies were checked.
   */
  missingBodies?: MissingBody[];
  /**
   * Every origin reached over TLS, in the order first seen, up to the bound (`tlsOriginsOmitted` counts the
   * rest); chains and timestamps in the WACZ's `capture/tls.json`. Absent in records made before.
   */
  tlsOrigins?: OriginTls[];
  tlsOriginsOmitted?: number;
  /** Each name the capture's proxy resolved, up to the bound (`dnsOmitted` counts the rest). Absent before. */
  dns?: DnsAnswer[];
  dnsOmitted?: number;
  /** The public address captures leave from, as the operator declared it (`CAPTURE_EGRESS_IP`); never looked up. */
  egressIp?: string;
  /** The service that captured: its name and version. */
  service?: { name: string; version: string };
  settings?: CaptureSettingsRecord;
  startedAt: string;
  finishedAt: string;
  browser: { name: string; version: string };
  userAgent: string;
  locale: string;
  timezone: string;
  viewport: { width: number; height: number };
  /** The screenshot's size in CSS pixels; `truncated` when the page was taller than the height cap. */
  screenshot: { width: number; height: number; truncated: boolean };
  /** The page's title as the browser had it at the end. */
  title: string;
  /**
   * The page's visible text as the browser rendered it at the end (`innerText` of the body), at most
   * 100 000 characters (`visibleTextTruncated` then). Absent in records made before.
   */
  visibleText?: string;
  visibleTextTruncated?: boolean;
  /**
   * A monitoring's run (the certidão de permanência): written by the service into the signed record, so the
   * link to the previous run is inside what is signed, hashed and anchored. Absent for a single capture.
   */
  monitoring?: CaptureMonitoring;
  /**
   * How the service signed the WACZ (Webrecorder's WACZ Signing and Verification 0.1.0), written by the
   * service after the capture; absent in records made before archives were signed.
   */
  signature?: WaczSignatureFacts;
}

/**
 * What `capture.json` and the certificate state about the WACZ's signature (`datapackage-digest.json`,
 * `signedData`): its form, who signed, and whether an RFC 3161 time signature is in it.
 */
export interface WaczSignatureFacts {
  spec: 'WACZ Signing and Verification 0.1.0';
  /**
   * `domain`: signed with the service's certificate (`SIGNING_CERT`), its chain in `domainCert`;
   * `anonymous`: signed with the service's own key (generated once into `DATA_DIR`), the key in `publicKey`.
   */
  form: 'domain' | 'anonymous';
  /** Domain form: the certificate's subject name as `signedData.domain` gives it, and SHA-256 of its DER (hex). */
  domain?: string;
  certificateSha256?: string;
  /** Anonymous form: SHA-256 (hex) of the public key's SubjectPublicKeyInfo DER (the bytes of `publicKey`). */
  publicKeySha256?: string;
  /**
   * The RFC 3161 time signature over the signature (`timeSignature`, domain form only): `included` (from the
   * TSA named), `unavailable` (the TSA failed at capture time: the archive is signed without it, and `reason`
   * and `at` say why and when), `not-configured` (no `TSA_URL`), `not-applicable` (the anonymous form has none).
   */
  timeSignature:
    | { status: 'included'; tsa: string }
    | { status: 'unavailable'; tsa: string; reason: string; at: string }
    | { status: 'not-configured' }
    | { status: 'not-applicable' };
}

/**
 * What a monitoring run's record states: the monitoring, the run's number, and the SHA-256 (hex) of the WACZ of
 * the last run that saw the page before it (null for the first): each run names the one before, so the runs
 * form a chain nobody can reorder or shorten without a link breaking.
 */
export interface CaptureMonitoring {
  monitorId: string;
  run: number;
  previousWaczSha256: string | null;
}

/** What a capture is asked besides its URL. */
export interface CaptureOptions {
  signal?: AbortSignal;
  /** Set for a monitoring's run: stated in the signed record (`CaptureRecord.monitoring`). */
  monitoring?: CaptureMonitoring;
}

/** One finished capture, on local disk until `dispose`. */
export interface WebCapture {
  /** The WACZ (a zip), read once: a stream of its bytes. */
  openWacz(): Readable;
  /** Its size in bytes. */
  waczBytes: number;
  /** The full-page screenshot (PNG) exactly as the WACZ holds it, record chunk included. */
  screenshot: Buffer;
  record: CaptureRecord;
  /** Removes the local files (and closes the archive if it was not read). */
  dispose(): Promise<void>;
}

export interface WebCapturer {
  /**
   * Captures `url` (http or https) at once: how many run together is the caller's capture queue's business
   * (at most `CAPTURE_CONCURRENCY`, shared fairly across tenants).
   * @throws AppError SERVICE_UNAVAILABLE without a usable Chromium (the message says how to install it or
   *   set CHROMIUM_PATH); BAD_REQUEST when the
   *   destination (or a redirect of the main document) is not allowed; BAD_GATEWAY when the site cannot be
   *   reached (DNS, TCP, TLS); GATEWAY_TIMEOUT when the capture did not finish within `CAPTURE_TIMEOUT_MS`;
   *   PAYLOAD_TOO_LARGE past the archive's bound. `signal`'s reason once it aborts.
   */
  capture(url: URL, options?: CaptureOptions): Promise<WebCapture>;
}

/**
 * Reads back the record a capture's screenshot carries (its `capture.json` chunk, written by the capture
 * adapter): what the certificate of a web capture states, from the stored screenshot alone.
 */
export interface CaptureRecordReader {
  /** The record `screenshot` (PNG bytes) carries; undefined when it carries none or is not a PNG. */
  readRecord(screenshot: Uint8Array): CaptureRecord | undefined;
}
