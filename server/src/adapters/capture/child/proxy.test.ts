import { once } from 'node:events';
import http from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import {
  AddressPolicy,
  type AddressPolicyOptions,
  INTERFACE_REFRESH_MS,
  parseAllowList,
} from '@notary/platform/net/address-policy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CaptureProxy,
  DNS_MAX_ANSWERS,
  NOT_PUBLIC_REASON,
  type RefusedDestination,
  type Resolver,
} from './proxy';

/** A loopback origin that counts the TCP connections it accepted and answers every request `hello`. */
async function startOrigin() {
  let connections = 0;
  const server = http.createServer((_req, res) => res.end('hello'));
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A loopback port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The `Proxy-Authorization` of the credential in `proxy`'s user-info (none without one), as Chromium sends it. */
function authorization(proxy: URL): Record<string, string> {
  if (!proxy.username) return {};
  const basic = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`);
  return { 'proxy-authorization': `Basic ${basic.toString('base64')}` };
}

/** The proxy's URL with its credential as user-info (what `viaProxy` and `connectVia` present). */
function withCredential(proxy: CaptureProxy, url: string): string {
  const u = new URL(url);
  u.username = proxy.credential.username;
  u.password = proxy.credential.password;
  return u.toString();
}

/** A plain HTTP request through the proxy (absolute form, as Chromium sends it): status and body, or the error. */
function viaProxy(
  proxyUrl: string,
  target: string,
): Promise<{ status: number; body: string } | { error: string }> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve) => {
    const req = http.request({
      host: proxy.hostname,
      port: Number(proxy.port),
      path: target,
      headers: { host: new URL(target).host, ...authorization(proxy) },
      agent: false,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    req.on('error', (e) => resolve({ error: e.message }));
    req.end();
  });
}

/** `CONNECT authority` through the proxy: the status line's code (the tunnel is closed at once). */
function connectVia(proxyUrl: string, authority: string): Promise<number> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.hostname,
      port: Number(proxy.port),
      method: 'CONNECT',
      path: authority,
      headers: authorization(proxy),
      agent: false,
    });
    req.on('connect', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

const fixed =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses;
  };

describe('capture proxy: refusals without the resolved address, this machine refused', () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const proxies: CaptureProxy[] = [];

  beforeAll(async () => {
    origin = await startOrigin();
  });
  afterAll(async () => {
    await origin.close();
  });
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  async function proxyWith(allow: string, resolve: Resolver, policyOptions: AddressPolicyOptions = {}) {
    const refusals: RefusedDestination[] = [];
    const proxy = new CaptureProxy(new AddressPolicy(parseAllowList(allow), policyOptions), {
      maxBytes: 1024 * 1024,
      resolve,
      onRefusal: (r) => refusals.push(r),
    });
    proxies.push(proxy);
    return { proxy, url: withCredential(proxy, await proxy.start()), refusals };
  }

  it('a name resolving to a private address: 403, listed without the address, which only the operator gets', async () => {
    // One public and one private address: refused whole, and neither is told.
    const { proxy, url, refusals } = await proxyWith(
      '',
      fixed({ 'internal.test': ['93.184.215.14', '10.20.30.40'] }),
    );
    expect(await connectVia(url, 'internal.test:443')).toBe(403);
    expect(proxy.blocked).toEqual([
      { url: 'https://internal.test:443', ip: null, reason: NOT_PUBLIC_REASON, rule: 'private-range' },
    ]);
    // The name answer is listed, its addresses are not.
    expect(proxy.dns).toEqual([
      { host: 'internal.test', outcome: 'refused', addresses: [], connected: [], at: expect.any(String) },
    ]);
    const clientFacing = JSON.stringify({
      blocked: proxy.blocked,
      failed: proxy.failed,
      servers: proxy.servers,
      dns: proxy.dns,
    });
    expect(clientFacing).not.toContain('10.20.30.40');
    expect(clientFacing).not.toContain('93.184.215.14');
    expect(refusals).toEqual([
      {
        url: 'https://internal.test:443',
        host: 'internal.test',
        port: 443,
        addresses: ['93.184.215.14', '10.20.30.40'],
        address: '10.20.30.40',
        reason: 'not a public address',
      },
    ]);
  });

  it('plain HTTP to a name resolving to loopback: cut before any connection, the address not listed', async () => {
    const { proxy, url, refusals } = await proxyWith('', fixed({ 'app.test': ['127.0.0.1'] }));
    const target = `http://app.test:${origin.port}/secret`;
    const res = await viaProxy(url, target);
    expect(res).toHaveProperty('error');
    expect(origin.connections()).toBe(0);
    expect(proxy.blocked).toEqual([
      { url: target, ip: null, reason: NOT_PUBLIC_REASON, rule: 'private-range' },
    ]);
    expect(refusals.map((r) => r.address)).toEqual(['127.0.0.1']);
    expect(refusals[0]?.reason).toBe('an address of this machine');
  });

  it('an IP literal in the URL is named in `blocked` (the client wrote it: nothing to hide)', async () => {
    const { proxy, url } = await proxyWith('', fixed({}));
    const target = `http://127.0.0.1:${origin.port}/x`;
    expect(await viaProxy(url, target)).toHaveProperty('error');
    expect(await connectVia(url, '[::ffff:a00:1]:443')).toBe(403);
    // A metadata address written in the URL is named as such (the IPv4-mapped spelling too).
    expect(await viaProxy(url, 'http://169.254.169.254/latest/meta-data/')).toHaveProperty('error');
    expect(await connectVia(url, '[::ffff:a9fe:a9fe]:80')).toBe(403);
    expect(proxy.blocked).toEqual([
      { url: target, ip: '127.0.0.1', reason: NOT_PUBLIC_REASON, rule: 'private-range' },
      {
        url: 'https://[::ffff:a00:1]:443',
        ip: '::ffff:a00:1',
        reason: NOT_PUBLIC_REASON,
        rule: 'private-range',
      },
      {
        url: 'http://169.254.169.254/latest/meta-data/',
        ip: '169.254.169.254',
        reason: NOT_PUBLIC_REASON,
        rule: 'metadata-address',
      },
      {
        url: 'tcp://[::ffff:a9fe:a9fe]:80',
        ip: '::ffff:a9fe:a9fe',
        reason: NOT_PUBLIC_REASON,
        rule: 'metadata-address',
      },
    ]);
    expect(origin.connections()).toBe(0);
    // Addresses are not names: nothing was resolved.
    expect(proxy.dns).toEqual([]);
  });

  it("this machine's own addresses are refused inside an allowed range; a host entry naming them opens them", async () => {
    const target = `http://127.0.0.1:${origin.port}/x`;
    // The real interfaces (127.0.0.1 is the loopback interface's), under a range that allows all loopback.
    const ranged = await proxyWith('127.0.0.0/8', fixed({}));
    expect(await viaProxy(ranged.url, target)).toHaveProperty('error');
    expect(ranged.refusals.map((r) => r.reason)).toEqual(['an address of this machine']);
    expect(origin.connections()).toBe(0);
    // Named explicitly, host and port: reached.
    const named = await proxyWith(`127.0.0.1:${origin.port}`, fixed({}));
    expect(await viaProxy(named.url, target)).toEqual({ status: 200, body: 'hello' });
    expect(named.proxy.blocked).toEqual([]);
    expect(origin.connections()).toBe(1);
  });

  it('an address the machine gains is refused from the next reading of its interfaces on', async () => {
    let now = 0;
    const held: string[] = [];
    const { proxy, url } = await proxyWith('127.0.0.0/8', fixed({ 'site.test': ['127.0.0.1'] }), {
      interfaceAddresses: () => [...held],
      now: () => now,
    });
    const before = origin.connections();
    const target = `http://site.test:${origin.port}/x`;
    expect(await viaProxy(url, target)).toEqual({ status: 200, body: 'hello' });
    held.push('127.0.0.1');
    now += INTERFACE_REFRESH_MS;
    expect(await viaProxy(url, target)).toHaveProperty('error');
    expect(origin.connections()).toBe(before + 1);
    expect(proxy.blocked).toEqual([
      { url: target, ip: null, reason: NOT_PUBLIC_REASON, rule: 'private-range' },
    ]);
    // The same name answered the same twice: one answer connected to, then the same answer refused.
    expect(proxy.dns.map((d) => [d.host, d.outcome, d.addresses, d.connected])).toEqual([
      ['site.test', 'resolved', ['127.0.0.1'], ['127.0.0.1']],
      ['site.test', 'refused', [], []],
    ]);
  });

  it('failed connections carry the error code, never the address connected to', async () => {
    const port = await closedPort();
    const { proxy, url } = await proxyWith('gone.test', fixed({ 'gone.test': ['127.0.0.1'] }));
    expect(await connectVia(url, `gone.test:${port}`)).toBe(502);
    expect(await connectVia(url, 'unknown.test:443')).toBe(403);
    expect(proxy.failed).toEqual([
      { host: 'gone.test', port, stage: 'tcp', reason: 'ECONNREFUSED' },
      { host: 'unknown.test', port: 443, stage: 'dns', reason: 'ENOTFOUND' },
    ]);
    expect(proxy.blocked).toEqual([]);
    // An allowed name is listed with what it resolved to, though nothing answered there; a name that did not
    // resolve, with the resolver's code.
    expect(proxy.dns).toEqual([
      {
        host: 'gone.test',
        outcome: 'resolved',
        addresses: ['127.0.0.1'],
        connected: [],
        at: expect.any(String),
      },
      {
        host: 'unknown.test',
        outcome: 'failed',
        addresses: [],
        connected: [],
        error: 'ENOTFOUND',
        at: expect.any(String),
      },
    ]);
  });

  it('name answers: one per distinct answer, with the address connected to', async () => {
    let answer = ['127.0.0.1'];
    const { proxy, url } = await proxyWith('site.test', async () => answer);
    const target = `http://site.test:${origin.port}/x`;
    expect(await viaProxy(url, target)).toEqual({ status: 200, body: 'hello' });
    expect(await viaProxy(url, target)).toEqual({ status: 200, body: 'hello' });
    answer = ['127.0.0.1', '::1'];
    expect(await viaProxy(url, target)).toEqual({ status: 200, body: 'hello' });
    expect(proxy.dns.map((d) => [d.host, d.outcome, d.addresses, d.connected])).toEqual([
      ['site.test', 'resolved', ['127.0.0.1'], ['127.0.0.1']],
      ['site.test', 'resolved', ['127.0.0.1', '::1'], ['127.0.0.1']],
    ]);
  });

  it(`past ${DNS_MAX_ANSWERS} answers the rest are counted, not kept`, async () => {
    const { proxy, url } = await proxyWith('', async () => {
      throw Object.assign(new Error('no'), { code: 'ENOTFOUND' });
    });
    const names = Array.from({ length: DNS_MAX_ANSWERS + 7 }, (_, i) => `h${i}.test:443`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((n) => connectVia(url, n)));
    }
    expect(proxy.dns).toHaveLength(DNS_MAX_ANSWERS);
    expect(proxy.dnsOmitted).toBe(7);
  });

  // Last: these connect to the origin, whose connection count the tests above read.
  it("refuses whoever lacks this capture's credential with 407, on both plain HTTP and CONNECT", async () => {
    // Loopback stands for an allowed private network here: not this machine's own for the test.
    const { proxy, url } = await proxyWith('127.0.0.0/8', fixed({ 'site.test': ['127.0.0.1'] }), {
      interfaceAddresses: () => [],
    });
    const bare = new URL(url);
    bare.username = '';
    bare.password = '';
    const wrong = new URL(url);
    wrong.password = 'not-the-password';
    for (const client of [bare.toString(), wrong.toString()]) {
      expect(await viaProxy(client, `http://site.test:${origin.port}/x`)).toEqual({ status: 407, body: '' });
      expect(await connectVia(client, `site.test:${origin.port}`)).toBe(407);
    }
    expect(proxy.servers).toEqual([]);
    expect(await viaProxy(url, `http://site.test:${origin.port}/x`)).toEqual({ status: 200, body: 'hello' });
  });

  it('a client that resets its CONNECT after the 407 (as Chromium does before asking again) does not end the proxy', async () => {
    const { proxy, url } = await proxyWith('127.0.0.0/8', fixed({ 'site.test': ['127.0.0.1'] }), {
      interfaceAddresses: () => [],
    });
    const port = Number(new URL(url).port);
    for (let i = 0; i < 5; i++) {
      const client = connect({ host: '127.0.0.1', port });
      await once(client, 'connect');
      client.write(`CONNECT site.test:${origin.port} HTTP/1.1\r\nHost: site.test:${origin.port}\r\n\r\n`);
      // Reset at once: the proxy's answer meets a closed connection (ECONNRESET or EPIPE on its side).
      client.resetAndDestroy();
      await once(client, 'close');
    }
    expect(proxy.servers).toEqual([]);
    expect(await connectVia(url, `site.test:${origin.port}`)).toBe(200);
  });

  it('reaches ports other than 80 and 443 only where the allow list names the host or its range', async () => {
    // A public address (refused before any connection is tried).
    const { proxy, url } = await proxyWith('', fixed({ 'mail.test': ['93.184.216.34'] }));
    expect(await connectVia(url, 'mail.test:25')).toBe(403);
    expect(proxy.blocked).toEqual([
      {
        url: 'tcp://mail.test:25',
        ip: null,
        reason: 'port 25 not allowed (web ports 80 and 443 only)',
        rule: 'port',
      },
    ]);
    // In an allowed range (the origin on loopback, its port not a web port): reached.
    const ranged = await proxyWith('127.0.0.0/8', fixed({ 'site.test': ['127.0.0.1'] }), {
      interfaceAddresses: () => [],
    });
    expect(await viaProxy(ranged.url, `http://site.test:${origin.port}/x`)).toEqual({
      status: 200,
      body: 'hello',
    });
  });
});
