import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURE_FILES } from '../process-protocol';
import { BODY_FIELD, type HarEntry, missingBodies, WARCParser, writeWarcFiles } from './warc';

/** One HAR exchange as Playwright records it; `response` fields override the defaults (200, a text body). */
function exchange(url: string, response: Partial<HarEntry['response']> = {}, method = 'GET'): HarEntry {
  return {
    startedDateTime: '2026-01-02T03:04:05.000Z',
    request: { method, url, httpVersion: 'HTTP/1.1', headers: [{ name: 'Accept', value: '*/*' }] },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      headers: [{ name: 'Content-Type', value: 'text/plain' }],
      content: { size: 5, mimeType: 'text/plain', text: 'hello' },
      ...response,
    },
  };
}

const O = 'http://127.0.0.1:8080';
const ENTRIES: HarEntry[] = [
  exchange(`${O}/whole`),
  // Bodies that are empty, or absent by definition: never missing.
  exchange(`${O}/empty`, { content: { size: 0, text: '' } }),
  exchange(`${O}/no-content`, { status: 204, statusText: 'No Content', content: { size: 0, text: '' } }),
  exchange(`${O}/not-modified`, { status: 304, statusText: 'Not Modified', content: { size: -1 } }),
  exchange(
    `${O}/head`,
    { headers: [{ name: 'Content-Length', value: '900' }], content: { size: -1 } },
    'HEAD',
  ),
  // A redirect announcing no body: nothing was kept back.
  exchange(`${O}/empty-redirect`, {
    status: 302,
    statusText: 'Found',
    headers: [
      { name: 'Location', value: '/whole' },
      { name: 'Content-Length', value: '0' },
    ],
    content: { size: -1 },
  }),
  // A gzip body is handed over decoded: its Content-Length (of the encoded bytes) cannot be compared.
  exchange(`${O}/gzip`, {
    headers: [
      { name: 'Content-Encoding', value: 'gzip' },
      { name: 'Content-Length', value: '2' },
    ],
  }),
  exchange(`${O}/binary`, {
    content: { size: 3, text: Buffer.from([1, 2, 3]).toString('base64'), encoding: 'base64' },
  }),
  // What the browser did not hand over.
  exchange(`${O}/evicted`, { content: { size: -1, mimeType: 'image/png' } }),
  exchange(`${O}/redirect`, {
    status: 301,
    statusText: 'Moved Permanently',
    headers: [{ name: 'Location', value: '/whole' }],
    content: { size: -1 },
  }),
  exchange(`${O}/reset`, { content: { size: -1 }, _failureText: 'net::ERR_CONNECTION_RESET' }),
  exchange(`${O}/short`, { content: { size: 10, text: 'hello' } }),
  exchange(`${O}/cut`, {
    headers: [{ name: 'content-length', value: '1000' }],
    content: { size: 5, text: 'hello' },
  }),
  exchange(`${O}/devtools`, { content: { size: -1 }, _error: 'net::ERR_ABORTED' }),
  // Not archived at all (no response; not http): not listed either.
  exchange(`${O}/never`, {
    status: -1,
    content: { size: -1 },
    _failureText: 'net::ERR_TUNNEL_CONNECTION_FAILED',
  }),
  exchange('data:text/plain,x', { content: { size: -1 } }),
];

describe('WARC: bodies the browser did not hand over are marked, never archived as empty', () => {
  let dir: string;
  let records: Map<string, { truncated: string | null; body: string | null; payload: Buffer }>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-test-'));
    const sizes = await writeWarcFiles(dir, {
      entries: ENTRIES,
      addressOf: () => '127.0.0.1',
      software: 'test',
    });
    const warc = await readFile(path.join(dir, CAPTURE_FILES.warc));
    expect(warc.length).toBe(sizes.warc);
    expect((await readFile(path.join(dir, CAPTURE_FILES.index))).length).toBe(sizes.index);
    records = new Map();
    for await (const record of WARCParser.iterRecords([warc])) {
      const payload = Buffer.from(await record.readFully());
      if (record.warcType !== 'response') continue;
      records.set(new URL(record.warcTargetURI ?? '').pathname, {
        truncated: record.warcHeader('WARC-Truncated') ?? null,
        body: record.warcHeader(BODY_FIELD) ?? null,
        payload,
      });
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists each missing or incomplete body with its status and why, in HAR order', () => {
    expect(missingBodies(ENTRIES)).toEqual([
      { url: `${O}/evicted`, status: 200, kind: 'missing', reason: 'the browser did not hand the body over' },
      {
        url: `${O}/redirect`,
        status: 301,
        kind: 'missing',
        reason: 'the browser does not keep the body of a redirect',
      },
      { url: `${O}/reset`, status: 200, kind: 'missing', reason: 'net::ERR_CONNECTION_RESET' },
      { url: `${O}/short`, status: 200, kind: 'incomplete', reason: '5 of 10 bytes handed over' },
      {
        url: `${O}/cut`,
        status: 200,
        kind: 'incomplete',
        reason: '5 of 1000 bytes (Content-Length) handed over',
      },
      { url: `${O}/devtools`, status: 200, kind: 'missing', reason: 'net::ERR_ABORTED' },
    ]);
  });

  it('marks exactly those response records WARC-Truncated, with the extension field saying how', () => {
    const marked = [...records]
      .filter(([, r]) => r.truncated !== null)
      .map(([p, r]) => [p, r.truncated, r.body]);
    expect(marked).toEqual([
      ['/evicted', 'unspecified', 'missing'],
      ['/redirect', 'unspecified', 'missing'],
      ['/reset', 'unspecified', 'missing'],
      ['/short', 'unspecified', 'incomplete'],
      ['/cut', 'unspecified', 'incomplete'],
      ['/devtools', 'unspecified', 'missing'],
    ]);
    // Whole and empty-by-definition bodies carry no mark; what was handed over is archived as it was.
    for (const p of [
      '/whole',
      '/empty',
      '/no-content',
      '/not-modified',
      '/head',
      '/empty-redirect',
      '/gzip',
      '/binary',
    ]) {
      expect(records.get(p)?.truncated, p).toBeNull();
      expect(records.get(p)?.body, p).toBeNull();
    }
    expect(records.get('/binary')?.payload.toString('hex')).toContain('010203');
    expect(records.has('/never')).toBe(false);
  });
});
