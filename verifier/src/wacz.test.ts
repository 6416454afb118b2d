/**
 * `verifyWacz` on archives made here by hand (node:crypto, node:zlib, fflate; nothing of the service), so
 * the verifier is held to the spec rather than to the service's writer: the forms other tools write (an
 * anonymous P-256 key with a DER signature), and each way an archive can be wrong.
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli.ts';
import { verifyWacz, WaczFormatError, type WaczReport } from './wacz.ts';

const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/** One WARC record (WARC 1.1), with block and payload digests, gzipped as a member of its own. */
function record(type: string, url: string, http: string, body = ''): Buffer {
  const block = Buffer.from(`${http}\r\n\r\n${body}`);
  const head = [
    'WARC/1.1',
    `WARC-Type: ${type}`,
    `WARC-Target-URI: ${url}`,
    'WARC-Date: 2026-01-02T03:04:05Z',
    `WARC-Record-ID: <urn:uuid:${crypto.randomUUID()}>`,
    `Content-Type: application/http; msgtype=${type}`,
    `WARC-Payload-Digest: sha256:${sha(body)}`,
    `WARC-Block-Digest: sha256:${sha(block)}`,
    `Content-Length: ${block.length}`,
  ].join('\r\n');
  return gzipSync(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), block, Buffer.from('\r\n\r\n')]));
}

interface Options {
  /** Changes the index lines before they are packed. */
  index?: (lines: Array<Record<string, unknown>>) => Array<Record<string, unknown>>;
  /** Changes `signedData` after signing. */
  signedData?: (s: Record<string, string>) => Record<string, string>;
  /** Files added to the zip without being listed. */
  unlisted?: Record<string, Uint8Array>;
  unsigned?: boolean;
}

/** A WACZ with one page (its response and request records), signed in the anonymous form with a P-256 key. */
function wacz(options: Options = {}): Uint8Array {
  const url = 'https://example.test/page';
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
  const listed: Record<string, Uint8Array> = {
    'archive/data.warc.gz': warc,
    'indexes/index.cdx': cdx,
    'pages/pages.jsonl': pages,
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
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const signedData = (options.signedData ?? ((s) => s))({
    hash,
    created: '2026-01-02T03:04:06Z',
    software: 'a tool of another maker',
    // DER Ecdsa-Sig-Value, as authsign writes signatures.
    signature: sign('sha256', Buffer.from(hash), privateKey).toString('base64'),
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
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

const statuses = (r: WaczReport) => Object.fromEntries(r.checks.map((c) => [c.id, c.status]));
const failedEvidence = (r: WaczReport, id: number) =>
  r.checks
    .find((c) => c.id === id)
    ?.evidence.filter((e) => e.ok === false)
    .map((e) => `${e.label}: ${e.value}`) ?? [];

describe('verifyWacz', () => {
  it('accepts an anonymous P-256 signature in DER, every record against the index', async () => {
    const report = await verifyWacz(wacz());
    expect(statuses(report)).toEqual({
      1: 'passed',
      2: 'passed',
      3: 'passed',
      4: 'not-run',
      5: 'not-run',
      6: 'passed',
      7: 'not-run',
    });
    expect(report.outcome).toBe('passed');
    expect(report.exitCode).toBe(0);
    expect(report.checks.find((c) => c.id === 6)?.summary).toMatch(/^1 indexed records .*; 2 other records/);
  });

  it('refuses a signedData with a property outside the spec, or a signature over another hash', async () => {
    const extra = await verifyWacz(wacz({ signedData: (s) => ({ ...s, comment: 'x' }) }));
    expect(extra.failedAt).toBe(3);
    const other = await verifyWacz(wacz({ signedData: (s) => ({ ...s, hash: `${s.hash}0` }) }));
    expect(other.outcome).toBe('failed');
    expect(failedEvidence(other, 2)[0]).toMatch(/^signedData.hash/);
  });

  it('refuses a file no hash covers, and an unsigned archive', async () => {
    const unlisted = await verifyWacz(
      wacz({ unlisted: { 'extra/added.html': Buffer.from('<p>later</p>') } }),
    );
    expect(unlisted.failedAt).toBe(1);
    expect(failedEvidence(unlisted, 1)).toEqual([
      'extra/added.html: in the archive but not listed in datapackage.json (no hash covers it)',
    ]);
    const unsigned = await verifyWacz(wacz({ unsigned: true }));
    expect(unsigned.failedAt).toBe(2);
    expect(failedEvidence(unsigned, 2)[0]).toContain('not signed');
  });

  it('refuses a record whose recordDigest, offset or URL is not its own, and a response outside the index', async () => {
    const digest = await verifyWacz(
      wacz({ index: (l) => l.map((x) => ({ ...x, recordDigest: `sha256:${'0'.repeat(64)}` })) }),
    );
    expect(digest.failedAt).toBe(6);
    expect(failedEvidence(digest, 6)[0]).toMatch(/recordDigest sha256:0+, the record's bytes are sha256:/);
    const offset = await verifyWacz(
      wacz({ index: (l) => l.map((x) => ({ ...x, offset: '10', recordDigest: undefined })) }),
    );
    expect(offset.failedAt).toBe(6);
    const url = await verifyWacz(
      wacz({ index: (l) => l.map((x) => ({ ...x, url: 'https://example.test/other' })) }),
    );
    expect(failedEvidence(url, 6)[0]).toContain('the record is of https://example.test/page');
    const missing = await verifyWacz(wacz({ index: () => [] }));
    expect(failedEvidence(missing, 6)).toContainEqual(
      expect.stringMatching(/https:\/\/example.test\/page: a response record outside the index/),
    );
  });

  it('a file that is not a WACZ is unusable input: exit status 2 from notary-verify', async () => {
    await expect(verifyWacz(new TextEncoder().encode('not a zip'))).rejects.toThrow(WaczFormatError);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-cli-'));
    try {
      await writeFile(path.join(dir, 'bad.wacz'), 'not a zip');
      const bad = await runCli([path.join(dir, 'bad.wacz')]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('not a WACZ');
      await writeFile(path.join(dir, 'good.wacz'), wacz());
      const good = await runCli([path.join(dir, 'good.wacz')]);
      expect(good.code, good.stdout).toBe(0);
      expect(good.stdout).toContain('Signed (anonymous form) by the key with SHA-256');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
