/**
 * RFC 3161 client against the loopback TSA (`test/harness/tsa.ts`: `openssl ts -reply` with the test PKI).
 * The good token is checked by a third party (`openssl ts -verify`); every broken answer must be refused with
 * BAD_GATEWAY and a message that names the cause.
 */

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@notary/platform/log';
import { AppError, errorMessage } from '@notary/shared';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../../test/bench/lib';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import { startTestTsa, type TestTsa, type TestTsaMode } from '../../../../test/harness/tsa';
import { HttpTimestampAuthority, trustedCertificatesFromPem } from './http';

const run = promisify(execFile);

let pki: TestPki;
let tsa: TestTsa;
let tmp: string;

beforeAll(async () => {
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-tsa-test-'));
});

afterAll(async () => {
  await tsa?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const client = (trusted?: Uint8Array[]) =>
  new HttpTimestampAuthority({
    url: tsa.url,
    trustedCertificates: trusted ?? [pki.root.certDer],
    timeoutMs: 10_000,
  });

const digestOf = (text: string) => new Uint8Array(createHash('sha256').update(text).digest());

/** Runs `fn` and returns the AppError it rejects with (fails the test otherwise). */
async function rejection(fn: () => Promise<unknown>): Promise<AppError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('HttpTimestampAuthority', () => {
  it('gets a token that openssl ts -verify accepts, with a sane genTime and serial', async () => {
    tsa.setMode('ok');
    const digest = digestOf('notarized document');
    const before = Date.now();
    const result = await client().timestamp(digest);

    const file = path.join(tmp, 'ok.tsr');
    await writeFile(file, result.response);
    const caFile = path.join(tmp, 'ca.pem');
    await writeFile(caFile, pki.root.certPem + pki.caChainPem);
    const { stdout } = await run('openssl', [
      'ts',
      '-verify',
      '-digest',
      Buffer.from(digest).toString('hex'),
      '-in',
      file,
      '-CAfile',
      caFile,
    ]);
    expect(stdout).toContain('Verification: OK');

    // genTime has second precision (clock_precision_digits = 0) and 1 s accuracy.
    expect(result.genTime.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(result.genTime.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(result.serialNumber).toMatch(/^[0-9a-f]+$/);
    expect(BigInt(`0x${result.serialNumber}`)).toBeGreaterThan(0n);

    // The token is the ContentInfo inside the response, as a PAdES signature timestamp embeds it.
    const token = pkijs.ContentInfo.fromBER(result.token);
    expect(token.contentType).toBe('1.2.840.113549.1.7.2');
    expect(Buffer.from(result.response).includes(Buffer.from(result.token))).toBe(true);

    // Serials increase from one token to the next.
    const second = await client().timestamp(digest);
    expect(BigInt(`0x${second.serialNumber}`)).toBeGreaterThan(BigInt(`0x${result.serialNumber}`));
  });

  const broken: [TestTsaMode, RegExp][] = [
    ['wrong-nonce', /nonce/],
    ['wrong-imprint', /imprint/],
    ['no-eku', /key usage/],
    ['fail-500', /500/],
    ['garbage', /parse/],
    ['rejection', /rejected/],
  ];
  for (const [mode, cause] of broken) {
    it(`refuses a ${mode} answer with BAD_GATEWAY naming the cause`, async () => {
      tsa.setMode(mode);
      try {
        const requestsBefore = tsa.requests;
        const error = await rejection(() => client().timestamp(digestOf(mode)));
        expect(error.code).toBe('BAD_GATEWAY');
        expect(error.message).toMatch(cause);
        expect(tsa.requests).toBe(requestsBefore + 1);
      } finally {
        tsa.setMode('ok');
      }
    });
  }

  it('names the rejection status, text and failInfo', async () => {
    tsa.setMode('rejection');
    try {
      const error = await rejection(() => client().timestamp(digestOf('rejection details')));
      expect(error.message).toContain('rejection (2)');
      expect(error.message).toContain('badAlg');
      expect(error.message).toContain('Message digest algorithm is not supported');
    } finally {
      tsa.setMode('ok');
    }
  });

  it('refuses an unreachable TSA with BAD_GATEWAY', async () => {
    // A port that was just free: nothing listens there any more.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    // A key in the URL (path and query) is not told to the client the 502 goes to.
    const closed = new HttpTimestampAuthority({
      url: `http://127.0.0.1:${port}/tsa/k3yInPath0123456789abcdef?apikey=qu3ryKey`,
      trustedCertificates: [pki.root.certDer],
      timeoutMs: 5_000,
    });
    const error = await rejection(() => closed.timestamp(digestOf('unreachable')));
    expect(error.code).toBe('BAD_GATEWAY');
    expect(error.message).toMatch(/unreachable/);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).toContain(`http://127.0.0.1:${port}/tsa/***?apikey=***`);
    expect(error.message).not.toMatch(/k3yInPath|qu3ryKey/);
  });

  describe('no piece of the configured URL reaches the error nor its log line', () => {
    it.each([
      ['a short all-letter path segment', (base: string) => `${base}/hushkey`, ['hushkey']],
      [
        'a percent-encoded path segment',
        (base: string) => `${base}/v1/s%C3%A9cr%C3%A9t`,
        ['sécrét', 's%C3%A9cr%C3%A9t'],
      ],
      ['a matrix parameter', (base: string) => `${base}/tsa;apikey=mk1`, ['mk1']],
      ['user-info', (base: string) => base.replace('://', '://operator:pw4u@'), ['operator', 'pw4u']],
      ['a query value', (base: string) => `${base}/tsa?token=qv9`, ['qv9']],
      ["an unknown provider's subdomain", () => 'http://acct7781.tsa.invalid/tsa', ['acct7781']],
    ])('%s', async (_name, urlOf, secrets) => {
      const url = urlOf(`http://127.0.0.1:${await freePort()}`);
      const closed = new HttpTimestampAuthority({
        url,
        trustedCertificates: [pki.root.certDer],
        timeoutMs: 5_000,
      });
      const error = await rejection(() => closed.timestamp(digestOf('redaction')));
      expect(error.code).toBe('BAD_GATEWAY');
      expect(error.message).toMatch(/unreachable|did not answer/);
      const lines: string[] = [];
      const log = createLogger({
        level: 'info',
        format: 'json',
        destination: { write: (l: string) => lines.push(l) },
      });
      log.error({ err: error }, 'timestamp failed');
      const told = [error.message, error.stack ?? '', errorMessage(error.cause), ...lines].join('\n');
      expect(told).toContain('***');
      for (const secret of secrets) expect(told).not.toContain(secret);
    });
  });

  it('gives up on a TSA that does not answer within timeoutMs', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket)); // accepts connections, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = new HttpTimestampAuthority({
        url: `http://127.0.0.1:${port}/tsa`,
        trustedCertificates: [pki.root.certDer],
        timeoutMs: 300,
      });
      const error = await rejection(() => slow.timestamp(digestOf('timeout')));
      expect(error.code).toBe('BAD_GATEWAY');
      expect(error.message).toMatch(/did not answer within 300 ms/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('follows no redirect: the configured URL is the only place the service posts to', async () => {
    tsa.setMode('ok');
    const redirecting = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: tsa.url }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = redirecting.address() as AddressInfo;
      const redirected = new HttpTimestampAuthority({
        url: `http://127.0.0.1:${port}/tsa`,
        trustedCertificates: [pki.root.certDer],
      });
      const requestsBefore = tsa.requests;
      const error = await rejection(() => redirected.timestamp(digestOf('redirect')));
      expect(error.code).toBe('BAD_GATEWAY');
      expect(error.message).toMatch(/answered HTTP 307 to .*redirects are not followed/);
      expect(tsa.requests).toBe(requestsBefore);
    } finally {
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });

  it('stops reading a streamed answer past the bound of a TimeStampResp (1 MiB)', async () => {
    let sent = 0;
    const endless = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/timestamp-reply' });
      const chunk = Buffer.alloc(64 * 1024);
      const more = (): void => {
        // Far past the bound; a client that stops reading makes the writes stop too.
        while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
        if (sent < 64 * 1024 * 1024) res.once('drain', more);
        else res.end();
      };
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = endless.address() as AddressInfo;
      const flooding = new HttpTimestampAuthority({
        url: `http://127.0.0.1:${port}/tsa`,
        trustedCertificates: [pki.root.certDer],
        timeoutMs: 10_000,
      });
      const error = await rejection(() => flooding.timestamp(digestOf('flood')));
      expect(error.code).toBe('BAD_GATEWAY');
      expect(error.message).toMatch(/larger than 1048576 bytes/);
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    }
  });

  it('refuses a token whose TSA does not chain to the trusted certificates', async () => {
    tsa.setMode('ok');
    const error = await rejection(() => client([pki.otherRoot.certDer]).timestamp(digestOf('untrusted')));
    expect(error.code).toBe('BAD_GATEWAY');
    expect(error.message).toMatch(/chain/);
  });

  it('accepts an intermediate as the trust anchor', async () => {
    tsa.setMode('ok');
    const result = await client([pki.intermediate.certDer]).timestamp(digestOf('intermediate anchor'));
    expect(result.token.byteLength).toBeGreaterThan(0);
  });

  it('trustedCertificatesFromPem reads every CERTIFICATE block', () => {
    const certs = trustedCertificatesFromPem(`junk\n${pki.caChainPem}\n${pki.rsa.keyPem}`);
    expect(certs.map((c) => Buffer.from(c).toString('hex'))).toEqual([
      Buffer.from(pki.intermediate.certDer).toString('hex'),
      Buffer.from(pki.root.certDer).toString('hex'),
    ]);
  });
});
