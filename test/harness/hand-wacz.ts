/**
 * Signed web archives made here by hand (node:crypto, node:zlib, fflate; nothing of the service), for the
 * verifier's tests: a WACZ 1.1.1 with one page (warcinfo, response and request records, a CDXJ index), a
 * capture record as the service writes it (`capture/capture.json`, format `notary-web-capture/1`), signed in
 * the anonymous form of Webrecorder's "WACZ Signing and Verification" 0.1.0 with a P-256 key (a DER
 * signature, as authsign writes it). Options make it wrong in the ways a verifier must notice.
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';

const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/** The page the hand-made capture is of. */
export const HAND_WACZ_URL = 'https://example.test/page';

/** One WARC record (WARC 1.1), with block and payload digests, gzipped as a member of its own. */
function record(type: string, url: string, http: string, body = ''): Buffer {
  const block = Buffer.from(`${http}\r\n\r\n${body}`);
  const head = [
    'WARC/1.1',
    `WARC-Type: ${type}`,
    `WARC-Target-URI: ${url}`,
    'WARC-Date: 2026-01-02T03:04:05Z',
    `WARC-Record-ID: <urn:uuid:${randomUUID()}>`,
    `Content-Type: application/http; msgtype=${type}`,
    `WARC-Payload-Digest: sha256:${sha(body)}`,
    `WARC-Block-Digest: sha256:${sha(block)}`,
    `Content-Length: ${block.length}`,
  ].join('\r\n');
  return gzipSync(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), block, Buffer.from('\r\n\r\n')]));
}

export interface HandWaczOptions {
  /** Changes the index lines before they are packed. */
  index?: (lines: Array<Record<string, unknown>>) => Array<Record<string, unknown>>;
  /** Changes `signedData` after signing. */
  signedData?: (s: Record<string, string>) => Record<string, string>;
  /** Files added to the zip without being listed. */
  unlisted?: Record<string, Uint8Array>;
  /** No `datapackage-digest.json`. */
  unsigned?: boolean;
  /** No `capture/capture.json` (an archive of another tool). */
  noRecord?: boolean;
}

/** A signed WACZ (see the module comment), its bytes stored uncompressed in the zip. */
export function handWacz(options: HandWaczOptions = {}): Uint8Array {
  const url = HAND_WACZ_URL;
  const info = gzipSync(
    Buffer.from(
      'WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Date: 2026-01-02T03:04:05Z\r\nContent-Length: 0\r\n\r\n\r\n\r\n',
    ),
  );
  const response = record('response', url, 'HTTP/1.1 200 OK\r\nContent-Type: text/html', '<h1>hi</h1>');
  const request = record('request', url, 'GET /page HTTP/1.1\r\nHost: example.test');
  const warc = Buffer.concat([info, response, request]);
  const lines = (options.index ?? ((l) => l))([
    {
      url,
      mime: 'text/html',
      status: '200',
      digest: sha('<h1>hi</h1>'),
      length: String(response.length),
      offset: String(info.length),
      recordDigest: `sha256:${sha(response)}`,
      filename: 'data.warc.gz',
    },
  ]);
  const cdx = Buffer.from(
    lines.map((l) => `test,example)/page 20260102030405 ${JSON.stringify(l)}\n`).join(''),
  );
  const pages = Buffer.from(`{"format":"json-pages-1.0"}\n{"url":"${url}","ts":"2026-01-02T03:04:05Z"}\n`);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const captureRecord = Buffer.from(
    JSON.stringify({
      format: 'notary-web-capture/1',
      requestedUrl: url,
      finalUrl: url,
      status: 200,
      startedAt: '2026-01-02T03:04:00.000Z',
      finishedAt: '2026-01-02T03:04:05.000Z',
      serverIp: '192.0.2.10',
      title: 'hi',
      browser: { name: 'Chromium', version: '140.0.0.0' },
      tls: {
        protocol: 'TLS 1.3',
        subject: 'CN=example.test',
        issuer: 'CN=Example Test CA, O=Example',
        validFrom: '2026-01-01T00:00:00.000Z',
        validTo: '2026-04-01T00:00:00.000Z',
        sha256Fingerprint: sha('a leaf certificate'),
      },
      signature: { form: 'anonymous', publicKeySha256: sha(spki) },
    }),
  );
  const listed: Record<string, Uint8Array> = {
    'archive/data.warc.gz': warc,
    'indexes/index.cdx': cdx,
    'pages/pages.jsonl': pages,
    ...(options.noRecord ? {} : { 'capture/capture.json': captureRecord }),
  };
  const datapackage = Buffer.from(
    JSON.stringify({
      profile: 'data-package',
      wacz_version: '1.1.1',
      created: '2026-01-02T03:04:06Z',
      resources: Object.entries(listed).map(([p, d]) => ({
        name: path.basename(p),
        path: p,
        hash: `sha256:${sha(d)}`,
        bytes: d.length,
      })),
    }),
  );
  const hash = `sha256:${sha(datapackage)}`;
  const signedData = (options.signedData ?? ((s) => s))({
    hash,
    created: '2026-01-02T03:04:06Z',
    software: 'a tool of another maker',
    signature: sign('sha256', Buffer.from(hash), privateKey).toString('base64'),
    publicKey: spki.toString('base64'),
  });
  const files: Record<string, [Uint8Array, { level: 0 }]> = {};
  for (const [p, d] of Object.entries({ ...listed, ...(options.unlisted ?? {}) }))
    files[p] = [d, { level: 0 }];
  files['datapackage.json'] = [datapackage, { level: 0 }];
  if (!options.unsigned) {
    files['datapackage-digest.json'] = [
      Buffer.from(JSON.stringify({ path: 'datapackage.json', hash, signedData })),
      { level: 0 },
    ];
  }
  return zipSync(files);
}

/**
 * `wacz` with one byte changed in place: `text/html` of its CDXJ index becomes `Text/html`. The zip stores
 * the index uncompressed, so the archive still opens; the SHA-256 datapackage.json lists for it no longer holds.
 */
export function tamperedWacz(wacz: Uint8Array): Uint8Array {
  const out = new Uint8Array(wacz);
  const needle = Buffer.from('"mime":"text/html"');
  const at = Buffer.from(out).indexOf(needle);
  if (at < 0) throw new Error('no index line to change');
  out[at + needle.indexOf('text')] = 'T'.charCodeAt(0);
  return out;
}
