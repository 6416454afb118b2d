/**
 * The RFC 3161 client against the loopback TSA (`openssl ts -reply`, test/harness/tsa.ts): a good
 * token is accepted and checked (chain to the test root), every wrong answer the TSA can be made to give is
 * refused with its cause, and an oversized or slow answer is cut off.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SignatureTimestamper } from '@notary/pdf/cades';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../test/harness/pki.ts';
import { startTestTsa, type TestTsa } from '../../test/harness/tsa.ts';
import { TsaClient, TsaError } from './tsa-client.ts';

const run = promisify(execFile);
const sha256 = (data: string) => new Uint8Array(createHash('sha256').update(data).digest());

let pki: TestPki;
let tsa: TestTsa;
let tmp: string;

beforeAll(async () => {
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-tsa-client-'));
});

afterAll(async () => {
  await tsa?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const client = (extra: Partial<ConstructorParameters<typeof TsaClient>[0]> = {}) =>
  new TsaClient({ url: tsa.url, tsaCa: [pki.root.certDer], ...extra });

describe('TsaClient', () => {
  it('returns a token over the digest that openssl ts -verify accepts, with its genTime and TSA', async () => {
    tsa.setMode('ok');
    const digest = sha256('document bytes');
    const before = Date.now();
    const stamped = await client().timestamp(digest);
    expect(stamped.tsa).toMatch(/Notary Test TSA/);
    expect(stamped.chainChecked).toBe(true);
    expect(Math.abs(stamped.genTime.getTime() - before)).toBeLessThan(60_000);
    // The pdf writer's port shape: `timestamp(digest) → { token }`.
    const asPort: SignatureTimestamper = client();
    expect((await asPort.timestamp(digest)).token.length).toBeGreaterThan(1000);

    const tokenPath = path.join(tmp, 'ok.tok');
    await writeFile(tokenPath, stamped.token);
    const { stdout } = await run('openssl', [
      'ts',
      '-verify',
      '-digest',
      Buffer.from(digest).toString('hex'),
      '-token_in',
      '-in',
      tokenPath,
      '-CAfile',
      pki.caChainPath,
      '-untrusted',
      pki.tsa.certPath,
    ]);
    expect(stdout).toMatch(/Verification: OK/);
  });

  it('without anchors the token is still checked, its chain only is not', async () => {
    tsa.setMode('ok');
    const stamped = await new TsaClient({ url: tsa.url }).timestamp(sha256('x'));
    expect(stamped.chainChecked).toBe(false);
  });

  it.each([
    ['wrong-nonce', /nonce differs from the one requested/],
    ['wrong-imprint', /message imprint differs from the one requested/],
    ['garbage', /does not parse as an RFC 3161 TimeStampResp/],
    ['fail-500', /answered HTTP 500/],
    ['rejection', /status rejection \(2\).*failInfo badAlg/],
    ['no-eku', /extended key usage/],
  ] as const)('refuses a %s answer', async (mode, message) => {
    tsa.setMode(mode);
    try {
      await expect(client().timestamp(sha256(mode))).rejects.toThrow(message);
      await expect(client().timestamp(sha256(mode))).rejects.toBeInstanceOf(TsaError);
    } finally {
      tsa.setMode('ok');
    }
  });

  it('refuses a token whose TSA does not chain to the anchors given', async () => {
    tsa.setMode('ok');
    await expect(client({ tsaCa: [pki.otherRoot.certDer] }).timestamp(sha256('y'))).rejects.toThrow(
      /chain is not trusted \(no path to --tsa-ca\)/,
    );
  });

  it('refuses a digest that is not 32 bytes, and a TSA that is not there', async () => {
    await expect(client().timestamp(new Uint8Array(20))).rejects.toThrow(/32 bytes/);
    await expect(new TsaClient({ url: 'http://127.0.0.1:1/tsa' }).timestamp(sha256('z'))).rejects.toThrow(
      /unreachable/,
    );
  });

  it('reads at most maxBytes, gives up after timeoutMs, and follows no redirect', async () => {
    let stall: (() => void) | undefined;
    const stalled = new Promise<void>((resolve) => {
      stall = resolve;
    });
    const server = createServer((req, res) => {
      req.resume();
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' });
        // Streamed without a content-length: the client must stop reading by itself.
        const chunk = Buffer.alloc(64 * 1024);
        const pump = () => {
          while (res.write(chunk)) {}
        };
        res.on('drain', pump);
        pump();
        req.socket.on('close', () => res.destroy());
      } else if (req.url === '/slow') {
        stalled.then(() => res.end());
      } else {
        res.writeHead(302, { location: tsa.url });
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await expect(
        new TsaClient({ url: `${base}/big`, maxBytes: 100_000 }).timestamp(sha256('b')),
      ).rejects.toThrow(/larger than 100000 bytes/);
      await expect(
        new TsaClient({ url: `${base}/slow`, timeoutMs: 300 }).timestamp(sha256('s')),
      ).rejects.toThrow(/did not answer within 300 ms/);
      await expect(new TsaClient({ url: `${base}/moved` }).timestamp(sha256('r'))).rejects.toThrow(
        /redirect|HTTP 302/,
      );
    } finally {
      stall?.();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
