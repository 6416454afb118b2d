import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip, gzipSync } from 'node:zlib';
import { CDXIndexer, WARCParser, WARCRecord, WARCSerializer } from 'warcio';
import { CAPTURE_FILES, type MissingBody } from '../process-protocol';

/** One HTTP exchange as the browser recorded it (Playwright's HAR, `content: 'embed'`). */
export interface HarEntry {
  startedDateTime: string;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    headers: Array<{ name: string; value: string }>;
    postData?: { mimeType?: string; text?: string };
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    headers: Array<{ name: string; value: string }>;
    /**
     * The body as the browser handed it over, decoded: `text` (base64 when `encoding` says so) and its length
     * in `size`. Without `text` (`size` -1) the browser did not hand the body over.
     */
    content: { size: number; mimeType?: string; text?: string; encoding?: string };
    redirectURL?: string;
    /** Playwright: the exchange failed (before a response: status -1; else while its body was coming). */
    _failureText?: string;
    /** Chrome DevTools' spelling of the same. */
    _error?: string;
  };
}

/** What `writeWarcFiles` archives. */
export interface WarcInput {
  entries: HarEntry[];
  /** The address each `host:port` was connected to (the proxy's), for `WARC-IP-Address`. */
  addressOf: (host: string, port: number) => string | undefined;
  /** Who wrote the archive (`software` of the warcinfo record). */
  software: string;
}

/** Headers of the bytes on the wire: the HAR body is already decoded, and under them a replayer would misread it. */
const WIRE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding']);
/** Headers of the connection to the capture proxy, not of the origin's answer. */
const PROXY_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection']);

/**
 * Writes the capture's WARC and its index into `dir` (`CAPTURE_FILES`): `data.warc.gz` with a warcinfo record
 * and a response and a request record per exchange (WARC 1.1, one gzip member per record, `WARC-IP-Address`
 * from the proxy), and `index.cdxj` (CDXJ, made by warcio's indexer over that file, sorted, each line with the
 * `recordDigest` of its record: the SHA-256 of the record's bytes as stored, as the CDXJ spec's example and
 * Webrecorder's indexers give it). The service packs both into the WACZ it signs (`archive/data.warc.gz`,
 * `indexes/index.cdx`), adding its own records after these.
 * @returns the size of each file, bytes.
 */
export async function writeWarcFiles(
  dir: string,
  input: WarcInput,
): Promise<{ warc: number; index: number }> {
  const warcPath = path.join(dir, CAPTURE_FILES.warc);
  const warc = await writeWarc(warcPath, input);
  const cdx = Buffer.from(await indexWarc(warcPath, warc.records));
  await writeFile(path.join(dir, CAPTURE_FILES.index), cdx);
  return { warc: warc.bytes, index: cdx.length };
}

/**
 * Writes and indexes the WARC of one made-up exchange in `dir` (a directory of its own, removed after), so that
 * the archive writer's code (warcio, its WebAssembly digests, zlib, the indexer) is compiled and warm before a
 * capture needs it: the capture process does this while it waits for its request, which saves the capture's
 * WARC writing most of what a cold start adds to it.
 */
export async function warmUpWarcWriting(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  try {
    const body = { size: 2, mimeType: 'text/plain', text: 'ok' };
    const headers = [{ name: 'Content-Type', value: 'text/plain' }];
    const entry: HarEntry = {
      startedDateTime: new Date().toISOString(),
      request: { method: 'GET', url: 'http://warm-up.invalid/', httpVersion: 'HTTP/1.1', headers: [] },
      response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers, content: body },
    };
    await writeWarcFiles(dir, { entries: [entry], addressOf: () => undefined, software: 'warm-up' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Writes the exchanges as WARC 1.1 records, one gzip member each; returns the file's size, and the SHA-256 of
 * each record's stored bytes by its offset (the index's `recordDigest`).
 */
async function writeWarc(
  file: string,
  input: WarcInput,
): Promise<{ bytes: number; records: Map<number, string> }> {
  const out = createWriteStream(file);
  const records = new Map<number, string>();
  let bytes = 0;
  const write = async (record: WARCRecord) => {
    const data = await gzipMember(await WARCSerializer.serialize(record));
    records.set(bytes, `sha256:${createHash('sha256').update(data).digest('hex')}`);
    bytes += data.length;
    if (!out.write(data)) await once(out, 'drain');
  };
  await write(
    WARCRecord.createWARCInfo(
      { filename: CAPTURE_FILES.warc, warcVersion: 'WARC/1.1' },
      { software: input.software, format: 'WARC File Format 1.1', isPartOf: 'web capture' },
    ),
  );
  for (const entry of input.entries) {
    const url = archivedUrl(entry);
    if (!url) continue;
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const ip = input.addressOf(url.hostname, port);
    const date = new Date(entry.startedDateTime).toISOString();
    const body = bodyOf(entry.response.content);
    const gap = bodyGap(entry);
    const responseHeaders = entry.response.headers
      .filter((h) => {
        const name = h.name.toLowerCase();
        return !name.startsWith(':') && !WIRE_HEADERS.has(name) && !PROXY_HEADERS.has(name);
      })
      .map((h): [string, string] => [h.name, h.value]);
    responseHeaders.push(['Content-Length', String(body.length)]);
    const response = WARCRecord.create(
      {
        url: url.href,
        date,
        type: 'response',
        warcVersion: 'WARC/1.1',
        statusline: `HTTP/1.1 ${entry.response.status} ${entry.response.statusText || 'OK'}`,
        httpHeaders: responseHeaders,
        warcHeaders: {
          ...(ip ? { 'WARC-IP-Address': ip } : {}),
          // WARC 1.1, WARC-Truncated: "When a 'response' is known to have been truncated, this shall be
          // noted"; `unspecified` as the browser does not say why it kept the body back. The extension field
          // tells a missing body from a partial one.
          ...(gap ? { 'WARC-Truncated': 'unspecified', [BODY_FIELD]: gap.kind } : {}),
        },
      },
      [body],
    );
    const requestHeaders = entry.request.headers
      .filter((h) => !h.name.startsWith(':'))
      .map((h): [string, string] => [h.name, h.value]);
    if (!requestHeaders.some(([n]) => n.toLowerCase() === 'host')) requestHeaders.unshift(['Host', url.host]);
    const requestBody = entry.request.postData?.text ? Buffer.from(entry.request.postData.text) : undefined;
    const request = WARCRecord.create(
      {
        url: url.href,
        date,
        type: 'request',
        warcVersion: 'WARC/1.1',
        statusline: `${entry.request.method} ${url.pathname}${url.search} HTTP/1.1`,
        httpHeaders: requestHeaders,
        warcHeaders: { 'WARC-Concurrent-To': response.warcHeaders.headers.get('WARC-Record-ID') ?? '' },
      },
      requestBody ? [requestBody] : [],
    );
    await write(response);
    await write(request);
  }
  out.end();
  await once(out, 'finish');
  return { bytes, records };
}

/** Records up to this size (bytes) are compressed at once; larger ones in Node's thread pool. */
const INLINE_GZIP_MAX = 1024 * 1024;
const gzipAsync = promisify(gzip);

/**
 * One serialized record as a gzip member of its own (RFC 1952), by Node's zlib: warcio's own compression goes
 * through web streams at about a millisecond a record, most of a page's WARC writing. A large record is
 * compressed off the event loop, so that the capture's deadline still fires while it is.
 */
async function gzipMember(record: Uint8Array): Promise<Buffer> {
  return record.length <= INLINE_GZIP_MAX ? gzipSync(record) : gzipAsync(record);
}

/** The body of a HAR response: base64 or text, decoded. */
function bodyOf(content: HarEntry['response']['content']): Buffer {
  if (!content.text) return Buffer.alloc(0);
  return content.encoding === 'base64' ? Buffer.from(content.text, 'base64') : Buffer.from(content.text);
}

/**
 * The WARC extension field on a response record whose body the browser did not hand over whole (beside
 * `WARC-Truncated`): `missing` (no byte of it) or `incomplete` (fewer bytes than the response announced).
 */
export const BODY_FIELD = 'WARC-Notary-Body';

/**
 * Responses that have no content by definition (RFC 9110 sections 6.4.1, 15.3.5, 15.3.6, 15.4.5 and 9.3.2:
 * 1xx, 204, 205, 304, and any answer to HEAD): an empty body is their whole body.
 */
function hasNoContent(entry: HarEntry): boolean {
  const status = entry.response.status;
  return (
    entry.request.method.toUpperCase() === 'HEAD' ||
    (status >= 100 && status < 200) ||
    status === 204 ||
    status === 205 ||
    status === 304
  );
}

/**
 * What is missing of one exchange's body, or undefined when the browser handed it over whole (or it has none
 * by definition, or announced none: `Content-Length: 0`). Missing: no `text` (the browser kept it back: a
 * redirect, whose body Chromium never keeps, a body evicted from its buffers, or an exchange that failed while
 * the body was coming). Incomplete: fewer bytes than the HAR's own `size`, or than the `Content-Length` of a
 * response sent without `Content-Encoding` (the browser hands bodies over decoded, so an encoded one cannot be
 * compared), or an exchange that failed after its body came.
 */
function bodyGap(entry: HarEntry): Omit<MissingBody, 'url'> | undefined {
  if (hasNoContent(entry)) return undefined;
  const { content, status } = entry.response;
  const failure = entry.response._failureText ?? entry.response._error;
  const header = (name: string) =>
    entry.response.headers.find((h) => h.name.toLowerCase() === name)?.value.trim();
  const encoding = header('content-encoding')?.toLowerCase();
  const declared = header('content-length');
  const length = declared !== undefined && /^\d{1,15}$/.test(declared) ? Number(declared) : undefined;
  const comparable = encoding === undefined || encoding === '' || encoding === 'identity';
  if (content.text === undefined) {
    // Announced empty (a redirect's usual `Content-Length: 0`) and not cut: there was nothing to hand over.
    if (comparable && length === 0 && !failure) return undefined;
    const reason =
      failure ??
      (status >= 300 && status < 400
        ? 'the browser does not keep the body of a redirect'
        : 'the browser did not hand the body over');
    return { status, kind: 'missing', reason };
  }
  const bytes = Buffer.byteLength(content.text, content.encoding === 'base64' ? 'base64' : 'utf8');
  if (content.size >= 0 && bytes !== content.size) {
    return { status, kind: 'incomplete', reason: `${bytes} of ${content.size} bytes handed over` };
  }
  if (comparable && length !== undefined && bytes < length) {
    return { status, kind: 'incomplete', reason: `${bytes} of ${length} bytes (Content-Length) handed over` };
  }
  if (failure) return { status, kind: 'incomplete', reason: failure };
  return undefined;
}

/**
 * The exchanges `writeWarcFiles` archives whose body the browser did not hand over whole, in HAR order: for the
 * capture's record (`CaptureRecord.missingBodies`), written before the archive. Each of their response records
 * in the WARC carries `WARC-Truncated: unspecified` and `WARC-Notary-Body: missing | incomplete` (`BODY_FIELD`),
 * so neither the record nor the archive passes an absent body off as an empty one.
 */
export function missingBodies(entries: HarEntry[]): MissingBody[] {
  const out: MissingBody[] = [];
  for (const entry of entries) {
    const url = archivedUrl(entry);
    if (!url) continue;
    const gap = bodyGap(entry);
    if (gap) out.push({ url: url.href, ...gap });
  }
  return out;
}

/** The URL an exchange is archived under, or undefined when `writeWarcFiles` leaves it out (no response, not http). */
function archivedUrl(entry: HarEntry): URL | undefined {
  if (!entry.response || entry.response.status <= 0) return undefined;
  let url: URL;
  try {
    url = new URL(entry.request.url);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/**
 * The CDXJ index of a WARC file (warcio's indexer: SURT key, timestamp, JSON with offset and length), each
 * line with its record's `recordDigest` from `records` (by offset), sorted.
 */
async function indexWarc(file: string, records: Map<number, string>): Promise<string> {
  const indexer = new CDXIndexer({ format: 'cdxj' });
  const lines: string[] = [];
  for await (const cdx of indexer.iterIndex([
    { reader: createReadStream(file), filename: CAPTURE_FILES.warc },
  ])) {
    const recordDigest = records.get(Number(cdx.offset));
    if (recordDigest) cdx.recordDigest = recordDigest;
    lines.push(indexer.serializeCDXJ(cdx));
  }
  return lines.sort().join('');
}

/** Re-exported for tests that read an archive back: warcio's parser. */
export { WARCParser };
