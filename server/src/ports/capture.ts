import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

/**
 * Web capture port: loads a page in an isolated browser behind an address-checking proxy and packs what it showed as a
 * WACZ (Webrecorder's web archive package, spec 1.1.1). Implemented by `adapters/capture/` (Chromium driven by
 * playwright-core).
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
 * named in the URL), `scheme` (not http, https or ws), `download`, `local-resource` (`file:` and other local
 * URLs a page may not load).
 */
export type BlockRule = 'private-range' | 'metadata-address' | 'scheme' | 'download' | 'local-resource';

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
 * screenshot (see `withCaptureRecord`). Times are ISO 8601 UTC.
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
   * Captures `url` (http or https). Waits for a free browser slot (at most `CAPTURE_CONCURRENCY` at once).
   * @throws AppError SERVICE_UNAVAILABLE without a usable Chromium (the message says how to install it or
   *   set CHROMIUM_PATH); RATE_LIMITED when the queue of waiting captures is full; BAD_REQUEST when the
   *   destination (or a redirect of the main document) is not allowed; BAD_GATEWAY when the site cannot be
   *   reached (DNS, TCP, TLS); GATEWAY_TIMEOUT when the capture did not finish within `CAPTURE_TIMEOUT_MS`;
   *   PAYLOAD_TOO_LARGE past the archive's bound. `signal`'s reason once it aborts.
   */
  capture(url: URL, options?: { signal?: AbortSignal }): Promise<WebCapture>;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The iTXt keyword under which a screenshot carries its capture's record. */
const RECORD_KEYWORD = 'capture.json';

/**
 * `png` with the record added as an uncompressed iTXt chunk (PNG spec, 11.3.4.5) keyworded `capture.json`,
 * placed before IEND (in place of a record chunk it already carries: the service writes the record again
 * once the archive is signed): the screenshot carries what the certificate states about its capture, and its
 * SHA-256 in the WACZ's `datapackage.json` covers both. @throws Error when `png` is not a PNG.
 */
export function withCaptureRecord(original: Buffer, record: CaptureRecord): Buffer {
  if (!original.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG');
  const png = stripCaptureRecord(original);
  const iend = png.length - 12;
  if (png.toString('latin1', iend + 4, iend + 8) !== 'IEND') throw new Error('PNG does not end with IEND');
  // keyword NUL, compression flag 0, method 0, language tag "" NUL, translated keyword "" NUL, UTF-8 text.
  const data = Buffer.concat([
    Buffer.from(RECORD_KEYWORD, 'latin1'),
    Buffer.from([0, 0, 0, 0, 0]),
    Buffer.from(JSON.stringify(record), 'utf8'),
  ]);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write('iTXt', 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([png.subarray(0, iend), head, data, crc, png.subarray(iend)]);
}

/**
 * `png` without its `capture.json` iTXt chunks: the image as the browser rendered it, byte for byte, when the
 * chunk was added by `withCaptureRecord` (its SHA-256 is the one the provenance summary states). A PNG without
 * such a chunk, or not a PNG, comes back as it is.
 */
export function stripCaptureRecord(png: Uint8Array): Buffer {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!buf.subarray(0, 8).equals(PNG_SIGNATURE)) return Buffer.from(buf);
  const kept: Buffer[] = [buf.subarray(0, 8)];
  let at = 8;
  // Chunks are walked by their lengths up to IEND; anything else (a length past the end, bytes after IEND)
  // leaves the PNG as it is.
  while (at + 12 <= buf.length) {
    const length = buf.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > buf.length) break;
    const type = buf.toString('latin1', at + 4, at + 8);
    const isRecord =
      type === 'iTXt' &&
      buf.toString('latin1', at + 8, at + 8 + RECORD_KEYWORD.length + 1) === `${RECORD_KEYWORD}\0`;
    if (!isRecord) kept.push(buf.subarray(at, end));
    at = end;
    if (type === 'IEND') break;
  }
  return Buffer.concat(at === buf.length ? kept : [buf]);
}

/** The record a screenshot carries (`withCaptureRecord`), or undefined when it has none or is not a PNG. */
export function readCaptureRecord(png: Uint8Array): CaptureRecord | undefined {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (!buf.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  let at = 8;
  while (at + 12 <= buf.length) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (type === 'iTXt' && data.toString('latin1', 0, RECORD_KEYWORD.length + 1) === `${RECORD_KEYWORD}\0`) {
      const text = data.subarray(RECORD_KEYWORD.length + 5);
      try {
        return JSON.parse(text.toString('utf8')) as CaptureRecord;
      } catch {
        return undefined;
      }
    }
    if (type === 'IEND') return undefined;
    at += 12 + length;
  }
  return undefined;
}
