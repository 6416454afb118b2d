import { randomBytes, timingSafeEqual } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  type AddressPolicy,
  type AddressRefusal,
  isCloudMetadata,
} from '@notary/platform/net/address-policy';
import type { BlockedRequest, DnsAnswer, ServerContact } from '../process-protocol';

/** Resolves a host name to its addresses (IPv4 and IPv6), as `dns.lookup` with `all: true` does. */
export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Longest a name lookup may take before the connection counts as unreachable (getaddrinfo has no timeout). */
const LOOKUP_TIMEOUT_MS = 10_000;
/** Longest a TCP connect may take (a black-holed address would otherwise hold the browser's request). */
const CONNECT_TIMEOUT_MS = 10_000;
/** Distinct name answers kept in `dns` (a page naming thousands of hosts is counted past it, in `dnsOmitted`). */
export const DNS_MAX_ANSWERS = 500;
/** Addresses kept per answer. */
export const DNS_MAX_ADDRESSES = 32;

/** Hop-by-hop headers (RFC 9110 section 7.6.1) and the proxy's own: never forwarded to the origin. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

/** A connection the proxy could not make, and why. */
export interface FailedConnection {
  host: string;
  port: number;
  /** `dns`: the name did not resolve; `tcp`: the address did not answer. */
  stage: 'dns' | 'tcp';
  /** The system's error code (`ENOTFOUND`, `ECONNREFUSED`) or the proxy's own words; never an address. */
  reason: string;
}

/** The challenge of a request without this capture's credential (RFC 9110 section 11.7.1). */
const PROXY_CHALLENGE = 'Proxy-Authenticate: Basic realm="capture"';

/** The ports a capture may reach on any public host; others only on a `CAPTURE_ALLOW_HOSTS` host:port. */
const WEB_PORTS = new Set([80, 443]);

/**
 * What `blocked` says of a destination refused by address. The same words for every such refusal and never
 * the address a name resolved to: a capture must not tell its user what internal names resolve to (a DNS
 * oracle into the service's network), nor which refused address is this machine's own.
 */
export const NOT_PUBLIC_REASON = 'the destination is not a public address';

/**
 * A destination refused by address, for the operator's log only (see `NOT_PUBLIC_REASON`): the host as the
 * page named it, every address it resolved to, the one refused and why.
 */
export interface RefusedDestination {
  url: string;
  host: string;
  port: number;
  /** Every address the host resolved to, in the resolver's order (the literal itself for an IP in the URL). */
  addresses: string[];
  /** The address that was refused. */
  address: string;
  reason: AddressRefusal;
}

/** What a `CaptureProxy` is set up with beside its address policy. */
export interface CaptureProxyOptions {
  /** Bytes received from origins past which every connection is cut (the archive's bound). */
  maxBytes: number;
  /** Name resolution (default: the system's `getaddrinfo`); tests inject one. */
  resolve?: Resolver;
  /**
   * Called for each destination refused by address, with the address: the operator's log, the only place
   * it goes (the capture process passes it to the service, which logs it).
   */
  onRefusal?: (refused: RefusedDestination) => void;
}

/**
 * The capture's forward proxy, because a check inside the browser (Playwright's `page.route`) is bypassed by redirect
 * hops, WebSockets and Chromium's own DNS lookups (rebinding). Chromium sends every request here (`--proxy-server`,
 * with `<-loopback>` so that loopback is proxied too): plain HTTP as absolute-form requests, HTTPS and WebSockets as
 * `CONNECT host:port` (RFC 9110 section 9.3.6). For each, the proxy resolves the host itself, checks every address with
 * the `AddressPolicy`, and connects to the address it checked (a second lookup could answer differently: DNS
 * rebinding). A refused connection is cut without an answer of the origin's (a refused plain HTTP request gets its
 * socket closed, so no forged response lands in the archive; a refused CONNECT gets 403) and listed in `blocked`
 * without the address a name resolved to (`NOT_PUBLIC_REASON`), which goes to `onRefusal` only. Every address connected
 * to is listed in `servers`, every answer of the resolver in `dns`. Past `maxBytes` received from origins, every
 * connection is cut (the archive's bound) and `overLimit` is set.
 * One proxy serves one capture, on 127.0.0.1 and a free port.
 */
export class CaptureProxy {
  readonly servers: ServerContact[] = [];
  readonly blocked: BlockedRequest[] = [];
  readonly failed: FailedConnection[] = [];
  /**
   * Each distinct answer of the proxy's name resolution, in order, up to `DNS_MAX_ANSWERS` (see `DnsAnswer`:
   * the addresses of a refused name are not listed); IP literals are not resolved and not listed.
   */
  readonly dns: DnsAnswer[] = [];
  /** Answers past `DNS_MAX_ANSWERS`, counted. */
  dnsOmitted = 0;
  /** Bytes received from origins so far. */
  bytesIn = 0;
  overLimit = false;
  /**
   * The credential Chromium presents (`Proxy-Authorization: Basic`, RFC 9110 section 11.7.1), made for this capture:
   * another process of the machine that finds the proxy's port cannot use it to reach anything.
   */
  readonly credential = { username: 'capture', password: randomBytes(18).toString('base64url') };
  private readonly sockets = new Set<Duplex>();
  private server: http.Server | undefined;

  constructor(
    private readonly policy: AddressPolicy,
    private readonly options: CaptureProxyOptions,
  ) {}

  /** Starts listening; resolves with the proxy's URL (`http://127.0.0.1:<port>`). */
  async start(): Promise<string> {
    const server = http.createServer((req, res) => {
      if (!this.authorized(req)) {
        res
          .writeHead(407, { 'proxy-authenticate': PROXY_CHALLENGE.slice('Proxy-Authenticate: '.length) })
          .end();
        return;
      }
      this.forward(req, res).catch(() => res.destroy());
    });
    server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      // The HTTP server lets go of a CONNECT's socket: a reset (Chromium drops the connection a 407 answered,
      // then asks again with the credential) must not be an unhandled 'error' that ends the capture process.
      socket.on('error', () => socket.destroy());
      if (!this.authorized(req)) {
        socket.end(
          `HTTP/1.1 407 Proxy Authentication Required\r\n${PROXY_CHALLENGE}\r\nConnection: close\r\n\r\n`,
        );
        return;
      }
      this.tunnel(req, socket, head).catch(() => socket.destroy());
    });
    // A WebSocket upgrade sent as a plain request (never by Chromium through a proxy): refused.
    server.on('upgrade', (_req, socket: Duplex) => {
      socket.on('error', () => undefined);
      socket.destroy();
    });
    server.on('connection', (s: Socket) => this.track(s));
    server.on('clientError', (_e, socket: Duplex) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Stops listening and cuts every connection still open. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** The address `host` was connected to at `port` (the first contact), if any. */
  addressOf(host: string, port: number): string | undefined {
    const h = stripBrackets(host).toLowerCase();
    return this.servers.find((s) => s.host === h && s.port === port)?.ip;
  }

  /** Whether `req` carries this capture's credential (compared in constant time). */
  private authorized(req: http.IncomingMessage): boolean {
    const { username, password } = this.credential;
    const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
    const given = Buffer.from(req.headers['proxy-authorization'] ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }

  private received(n: number): void {
    this.bytesIn += n;
    if (this.bytesIn > this.options.maxBytes && !this.overLimit) {
      this.overLimit = true;
      for (const s of this.sockets) s.destroy();
    }
  }

  /**
   * Resolves and checks `host:port`; returns the address to connect to (with the answer it came from), or
   * undefined after recording why not (`blocked` and `onRefusal` for a refused address, `failed` for a name
   * that does not resolve). `blocked` names the refused address only when the URL itself was that address (it
   * tells the client nothing new). Every answer for a name goes to `dns`.
   */
  private async pick(host: string, port: number, url: string): Promise<Picked | undefined> {
    const name = stripBrackets(host).toLowerCase();
    const hostAllowed = this.policy.allowsHost(name, port);
    const literal = isIP(name) !== 0;
    let addresses: string[];
    if (literal) addresses = [name];
    else {
      try {
        addresses = await withTimeout(
          (this.options.resolve ?? systemResolver)(name),
          LOOKUP_TIMEOUT_MS,
          'lookup timed out',
        );
      } catch (e) {
        this.failed.push({ host: name, port, stage: 'dns', reason: errorText(e) });
        this.answer(name, 'failed', [], errorText(e));
        return undefined;
      }
    }
    if (addresses.length === 0) {
      this.failed.push({ host: name, port, stage: 'dns', reason: 'no address' });
      if (!literal) this.answer(name, 'failed', [], 'no address');
      return undefined;
    }
    // Every address must pass: a name with one public and one private address is refused whole.
    for (const address of addresses) {
      const refusal = this.policy.refusal(address, hostAllowed);
      if (refusal) {
        const metadata = literal && isCloudMetadata(name);
        this.blocked.push({
          url,
          ip: literal ? name : null,
          reason: NOT_PUBLIC_REASON,
          rule: metadata ? 'metadata-address' : 'private-range',
        });
        this.options.onRefusal?.({ url, host: name, port, addresses, address, reason: refusal });
        if (!literal) this.answer(name, 'refused', []);
        return undefined;
      }
    }
    // Web pages are served on 80 and 443: another port (a mail server, a database) only where the allow list
    // names the host or the range its addresses are in.
    if (!WEB_PORTS.has(port) && !hostAllowed && !addresses.every((a) => this.policy.inAllowedRange(a))) {
      this.blocked.push({
        url,
        ip: null,
        reason: `port ${port} not allowed (web ports 80 and 443 only)`,
        rule: 'port',
      });
      return undefined;
    }
    const ip = addresses[0];
    if (ip === undefined) return undefined;
    return { ip, answer: literal ? undefined : this.answer(name, 'resolved', addresses) };
  }

  /**
   * Records an answer of the resolver (`dns`), once per distinct host, outcome and address list; returns the
   * entry kept, undefined past `DNS_MAX_ANSWERS` (then counted in `dnsOmitted`).
   */
  private answer(
    host: string,
    outcome: DnsAnswer['outcome'],
    addresses: string[],
    error?: string,
  ): DnsAnswer | undefined {
    const kept = addresses.slice(0, DNS_MAX_ADDRESSES);
    const same = this.dns.find(
      (a) =>
        a.host === host &&
        a.outcome === outcome &&
        a.addresses.length === kept.length &&
        a.addresses.every((x, i) => x === kept[i]),
    );
    if (same) return same;
    if (this.dns.length >= DNS_MAX_ANSWERS) {
      this.dnsOmitted++;
      return undefined;
    }
    const entry: DnsAnswer = {
      host,
      outcome,
      addresses: kept,
      connected: [],
      ...(error ? { error } : {}),
      at: new Date().toISOString(),
    };
    this.dns.push(entry);
    return entry;
  }

  private contact(host: string, port: number, picked: Picked): void {
    const h = stripBrackets(host).toLowerCase();
    const { ip } = picked;
    if (!this.servers.some((s) => s.host === h && s.port === port && s.ip === ip))
      this.servers.push({ host: h, port, ip });
    if (picked.answer && !picked.answer.connected.includes(ip)) picked.answer.connected.push(ip);
  }

  /** A plain HTTP request in absolute form (`GET http://host/path`): forwarded to the checked address. */
  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // The browser may reset the connection at any point (it is closed at the end of a capture).
    let cancel = () => {};
    req.on('error', () => cancel());
    res.on('error', () => cancel());
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.destroy();
      return;
    }
    if (target.protocol !== 'http:') {
      this.blocked.push({
        url: target.href,
        ip: null,
        reason: `scheme not allowed: ${target.protocol}`,
        rule: 'scheme',
      });
      res.destroy();
      return;
    }
    const port = Number(target.port || 80);
    const picked = await this.pick(target.hostname, port, target.href);
    if (!picked) {
      res.destroy();
      return;
    }
    const { ip } = picked;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    }
    if (req.destroyed) return;
    const upstream = http.request({
      host: ip,
      port,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
      setHost: false,
      timeout: CONNECT_TIMEOUT_MS,
    });
    cancel = () => upstream.destroy();
    upstream.once('socket', (s) => {
      this.track(s);
      // A kept-alive connection to the same address is already open: it counts for this answer too.
      if (s.connecting) s.once('connect', () => this.contact(target.hostname, port, picked));
      else this.contact(target.hostname, port, picked);
    });
    upstream.once('timeout', () => upstream.destroy(new Error('connect timed out')));
    upstream.on('error', (e) => {
      if (!upstream.socket || upstream.socket.bytesRead === 0)
        this.failed.push({ host: target.hostname, port, stage: 'tcp', reason: errorText(e) });
      res.destroy();
    });
    upstream.once('response', (up) => {
      upstream.setTimeout(0);
      const raw: string[] = [];
      for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) {
        const name = up.rawHeaders[i] ?? '';
        if (!HOP_BY_HOP.has(name.toLowerCase())) raw.push(name, up.rawHeaders[i + 1] ?? '');
      }
      res.writeHead(up.statusCode ?? 502, up.statusMessage, raw);
      up.on('data', (chunk: Buffer) => this.received(chunk.length));
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    req.pipe(upstream);
  }

  /** `CONNECT host:port`: a TCP tunnel to the checked address (TLS stays end to end with Chromium). */
  private async tunnel(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.track(socket);
    // From the start: the browser may reset the connection while the address is being checked.
    let upstreamRef: Socket | undefined;
    socket.on('error', () => upstreamRef?.destroy());
    const authority = req.url ?? '';
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:]+):(\d{1,5})$/.exec(authority);
    if (!m?.[1] || !m[2]) {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const host = m[1];
    const port = Number(m[2]);
    const picked = await this.pick(host, port, `${port === 443 ? 'https' : 'tcp'}://${authority}`);
    if (!picked) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    const { ip } = picked;
    if (socket.destroyed) return;
    const upstream = tcpConnect({ host: ip, port, timeout: CONNECT_TIMEOUT_MS });
    upstreamRef = upstream;
    this.track(upstream);
    let connected = false;
    upstream.once('timeout', () => upstream.destroy(new Error('connect timed out')));
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      this.contact(host, port, picked);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.on('data', (chunk: Buffer) => this.received(chunk.length));
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', (e) => {
      if (!connected) {
        this.failed.push({
          host: stripBrackets(host).toLowerCase(),
          port,
          stage: 'tcp',
          reason: errorText(e),
        });
        socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
        return;
      }
      socket.destroy();
    });
    upstream.once('close', () => socket.destroy());
    socket.once('close', () => upstream.destroy());
  }
}

/** The address `pick` chose, and the resolver's answer it came from (none for an IP literal, or past the bound). */
interface Picked {
  ip: string;
  answer: DnsAnswer | undefined;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * An error in words that never hold an address: the system's code when there is one (its message names the
 * address connected to, `connect ECONNREFUSED 10.0.0.5:80`), else the proxy's own message.
 */
function errorText(e: unknown): string {
  if (e instanceof Error) return (e as NodeJS.ErrnoException).code ?? e.message;
  return 'failed';
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
