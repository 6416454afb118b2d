import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { Zip, ZipPassThrough } from 'fflate';
import { CDXIndexer, WARCParser, WARCRecord, WARCSerializer } from 'warcio';
import type { MissingBody } from '../process-protocol';
import { datapackageJson, WACZ_PATHS, type WaczResource, waczDate } from './wacz-layout';

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

/** What `writeWacz` packs besides the exchanges. */
export interface WaczInput {
  entries: HarEntry[];
  /** The address each `host:port` was connected to (the proxy's), for `WARC-IP-Address`. */
  addressOf: (host: string, port: number) => string | undefined;
  page: { url: string; title: string; ts: string };
  screenshot: Buffer;
  pdf: Buffer | undefined;
  record: Buffer;
  /** Who wrote the archive (`software` of datapackage.json and the warcinfo record). */
  software: string;
  created: Date;
  /**
   * More files of the capture, packed after the PDF and listed in `datapackage.json` like every file (paths
   * outside `archive/`, `indexes/` and `pages/`, one directory deep, e.g. `capture/...`).
   */
  files?: Array<{ path: string; data: Buffer }>;
  /**
   * Pages the capture made itself (its provenance summary), replayed from the archive beside the captured
   * page: each a WARC `resource` record at its URL (dated `created`) and a line of `pages/pages.jsonl`.
   */
  generatedPages?: Array<{ url: string; title: string; html: Buffer }>;
}

/** Headers of the bytes on the wire: the HAR body is already decoded, and under them a replayer would misread it. */
const WIRE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding']);
/** Headers of the connection to the capture proxy, not of the origin's answer. */
const PROXY_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection']);

/**
 * Writes a WACZ (Webrecorder WACZ 1.1.1: https://specs.webrecorder.net/wacz/1.1.1/) at `file`:
 * `archive/data.warc.gz` with a warcinfo record and a request and a response record per exchange (WARC 1.1,
 * one gzip member per record, `WARC-IP-Address` from the proxy), `indexes/index.cdx` (CDXJ, made by warcio's
 * indexer over that file, each line with the `recordDigest` of its record: the SHA-256 of the record's bytes
 * as stored, as the CDXJ spec's example and Webrecorder's indexers give it), `pages/pages.jsonl`, the
 * capture's own files under `capture/` (`page.pdf`, `input.files`, then `screenshot.png` and `capture.json`)
 * and `datapackage.json` with each file's SHA-256 and size, unsigned (the service signs it: `finishWacz`).
 * Every entry is stored, not deflated (WACZ asks for it: replay reads WARC records by offset).
 * @returns the WACZ's size in bytes and the SHA-256 (hex) of each packed file by path.
 */
export async function writeWacz(
  dir: string,
  file: string,
  input: WaczInput,
): Promise<{ bytes: number; files: Record<string, string> }> {
  const warcPath = path.join(dir, 'data.warc.gz');
  const warcHash = await writeWarc(warcPath, input);
  const cdx = await indexWarc(warcPath, warcHash.records);
  const pages = `${[
    JSON.stringify({ format: 'json-pages-1.0', id: 'pages', title: 'All Pages' }),
    JSON.stringify({ id: 'page-1', url: input.page.url, ts: input.page.ts, title: input.page.title }),
    ...(input.generatedPages ?? []).map((p, i) =>
      JSON.stringify({ id: `page-${i + 2}`, url: p.url, ts: input.created.toISOString(), title: p.title }),
    ),
  ].join('\n')}\n`;
  const small: Array<[string, Buffer]> = [
    [WACZ_PATHS.index, Buffer.from(cdx)],
    [WACZ_PATHS.pages, Buffer.from(pages)],
    ...(input.pdf ? ([[WACZ_PATHS.pdf, input.pdf]] as Array<[string, Buffer]>) : []),
    ...(input.files ?? []).map((f): [string, Buffer] => [f.path, f.data]),
    // Last, before the manifest: what the service writes again when it signs (`SERVICE_ENTRIES`).
    [WACZ_PATHS.screenshot, input.screenshot],
    [WACZ_PATHS.record, input.record],
  ];
  const files: Record<string, string> = { [WACZ_PATHS.warc]: warcHash.sha256 };
  const resources: WaczResource[] = [
    {
      name: path.basename(WACZ_PATHS.warc),
      path: WACZ_PATHS.warc,
      hash: `sha256:${warcHash.sha256}`,
      bytes: warcHash.bytes,
    },
  ];
  for (const [p, data] of small) {
    const sha256 = createHash('sha256').update(data).digest('hex');
    files[p] = sha256;
    resources.push({ name: path.basename(p), path: p, hash: `sha256:${sha256}`, bytes: data.length });
  }
  const datapackage = datapackageJson(
    resources,
    {
      title: input.page.title || input.page.url,
      mainPageUrl: input.page.url,
      mainPageDate: input.page.ts,
      software: input.software,
    },
    waczDate(input.created),
  );

  const out = createWriteStream(file);
  let failure: Error | null = null;
  const zip = new Zip((err, chunk, final) => {
    if (err) {
      failure = err;
      out.destroy(err);
      return;
    }
    out.write(chunk);
    if (final) out.end();
  });
  const add = (name: string, data: Buffer) => {
    const entry = new ZipPassThrough(name);
    zip.add(entry);
    entry.push(data, true);
  };
  // The WARC first, streamed from disk in pieces, so the archive never sits in memory whole.
  const warcEntry = new ZipPassThrough(WACZ_PATHS.warc);
  zip.add(warcEntry);
  const handle = await open(warcPath, 'r');
  try {
    const buf = Buffer.alloc(1024 * 1024);
    let offset = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
      offset += bytesRead;
      const last = offset >= warcHash.bytes || bytesRead === 0;
      warcEntry.push(Buffer.from(buf.subarray(0, bytesRead)), last);
      if (out.writableNeedDrain) await once(out, 'drain');
      if (last) break;
    }
  } finally {
    await handle.close();
  }
  for (const [p, data] of small) add(p, data);
  add(WACZ_PATHS.datapackage, datapackage);
  zip.end();
  if (!out.writableFinished) await once(out, 'finish');
  if (failure) throw failure;
  return { bytes: (await stat(file)).size, files };
}

/**
 * Writes the exchanges as WARC 1.1 records, one gzip member each; returns the file's SHA-256 and size, and
 * the SHA-256 of each record's stored bytes by its offset (the index's `recordDigest`).
 */
async function writeWarc(
  file: string,
  input: WaczInput,
): Promise<{ sha256: string; bytes: number; records: Map<number, string> }> {
  const out = createWriteStream(file);
  const hash = createHash('sha256');
  const records = new Map<number, string>();
  let bytes = 0;
  const write = async (record: WARCRecord) => {
    const data = await WARCSerializer.serialize(record, { gzip: true });
    hash.update(data);
    records.set(bytes, `sha256:${createHash('sha256').update(data).digest('hex')}`);
    bytes += data.length;
    if (!out.write(data)) await once(out, 'drain');
  };
  await write(
    WARCRecord.createWARCInfo(
      { filename: 'data.warc.gz', warcVersion: 'WARC/1.1' },
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
  for (const page of input.generatedPages ?? []) {
    await write(
      WARCRecord.create(
        {
          url: page.url,
          date: input.created.toISOString(),
          type: 'resource',
          warcVersion: 'WARC/1.1',
          warcHeaders: { 'Content-Type': 'text/html; charset=utf-8' },
        },
        [page.html],
      ),
    );
  }
  out.end();
  await once(out, 'finish');
  return { sha256: hash.digest('hex'), bytes, records };
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
 * The exchanges `writeWacz` archives whose body the browser did not hand over whole, in HAR order: for the
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

/** The URL an exchange is archived under, or undefined when `writeWacz` leaves it out (no response, not http). */
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
  for await (const cdx of indexer.iterIndex([{ reader: createReadStream(file), filename: 'data.warc.gz' }])) {
    const recordDigest = records.get(Number(cdx.offset));
    if (recordDigest) cdx.recordDigest = recordDigest;
    lines.push(indexer.serializeCDXJ(cdx));
  }
  return lines.sort().join('');
}

/** Re-exported for tests that read an archive back: warcio's parser. */
export { WARCParser };
