import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFiles } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

/** Status, headers as sent (raw, in order, without the per-answer `Date` and `X-Request-Id`) and body of one answer. */
function answer(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: string[]; requestId: string | undefined; body: string }>(
    (resolve, reject) => {
      http
        .get(url, { headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const raw = res.rawHeaders;
            const sent: string[] = [];
            for (let i = 0; i < raw.length; i += 2) {
              const name = raw[i] ?? '';
              if (!/^(date|x-request-id)$/i.test(name)) sent.push(`${name}: ${raw[i + 1]}`);
            }
            const id = res.headers['x-request-id'];
            resolve({
              status: res.statusCode ?? 0,
              headers: sent,
              requestId: typeof id === 'string' ? id : undefined,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
        })
        .on('error', reject);
    },
  );
}

/**
 * The public verify lane (`publicVerifyLane`, `GET` of exactly `/api/public/verify`) answers what the app's own
 * chain answers for the same request (reached here through a trailing slash, which the lane leaves to it): the
 * same status, the same headers in the same order, the same body, for each kind of query and origin.
 */
describe('public verify lane', () => {
  let t: TestService;
  let known: string;
  const allowedOrigin = 'https://app.example.org';

  beforeAll(async () => {
    t = await startTestService('pglite', { ALLOWED_ORIGINS: allowedOrigin });
    const [file] = await fixtureFiles();
    if (!file) throw new Error('no fixture');
    const up = await uploadFile(t.url, await t.token('lane@example.com'), file);
    expect(up.status).toBe(201);
    known = (up.body as { sha256Hash: string }).sha256Hash;
  });
  afterAll(async () => {
    await t?.close();
  });

  const queries: [string, () => string][] = [
    ['known hash', () => `hash=${known}`],
    ['known hash, upper case', () => `hash=${known.toUpperCase()}`],
    ['known hash and another key', () => `hash=${known}&x=1`],
    ['unknown hash', () => `hash=${'ab'.repeat(32)}`],
    ['malformed hash', () => 'hash=xyz'],
    ['no hash', () => ''],
    ['hash twice', () => `hash=${known}&hash=${known}`],
    ['NUL in the query', () => `hash=${known}&x=%00`],
  ];
  const origins: [string, Record<string, string>][] = [
    ['no Origin', {}],
    ['allowed Origin', { Origin: allowedOrigin }],
    ['foreign Origin', { Origin: 'https://evil.example' }],
  ];

  for (const [query, of] of queries) {
    for (const [origin, headers] of origins) {
      it(`${query}, ${origin}`, async () => {
        const lane = await answer(`${t.url}/api/public/verify?${of()}`, headers);
        const chain = await answer(`${t.url}/api/public/verify/?${of()}`, headers);
        expect(lane).toEqual({ ...chain, requestId: lane.requestId });
        expect(lane.requestId).toMatch(/^[0-9a-f-]{36}$/);
      });
    }
  }

  it('a known hash without Origin: the headers the route has always sent, in that order', async () => {
    const lane = await answer(`${t.url}/api/public/verify?hash=${known}`);
    expect(lane.status).toBe(200);
    expect(lane.headers).toEqual([
      'X-Content-Type-Options: nosniff',
      'Referrer-Policy: no-referrer',
      'Vary: Origin',
      'Cache-Control: public, max-age=60',
      'Content-Type: application/json; charset=utf-8',
      'Connection: close',
      `Content-Length: ${Buffer.byteLength(lane.body)}`,
    ]);
  });

  it('a client-sent request id is echoed by both', async () => {
    const id = `bench-${randomBytes(4).toString('hex')}`;
    const lane = await answer(`${t.url}/api/public/verify?hash=${known}`, { 'X-Request-Id': id });
    const chain = await answer(`${t.url}/api/public/verify/?hash=${known}`, { 'X-Request-Id': id });
    expect([lane.requestId, chain.requestId]).toEqual([id, id]);
    expect(lane.headers).toEqual(chain.headers);
  });
});
