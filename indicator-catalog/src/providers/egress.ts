import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { type AllowEntry, refusal } from '@notary/platform/net/address-policy';
import { Agent, buildConnector } from 'undici';

/** Most bytes of one provider answer (8 MiB); a longer answer is an error and its stream is cancelled. */
export const MAX_PROVIDER_BODY_BYTES = 8 * 1024 * 1024;
/** Most redirects one provider request follows (each hop is checked again). */
export const MAX_PROVIDER_REDIRECTS = 5;
/** How long registration waits for DNS before accepting a URL it cannot check (the connect check remains). */
const REGISTRATION_LOOKUP_MS = 5000;

/** A provider connection refused by the address policy (never retried). */
export class EgressRefusedError extends Error {
  readonly code = 'CATALOG_EGRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

/** Resolves a host name to every address (`dns.lookup` with `all: true` by default; tests inject one). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

const describeTarget = (hostname: string, port: number) =>
  `${isIP(hostname) === 6 ? `[${hostname}]` : hostname}:${port}`;

/**
 * The catalog's only way out to providers, so that no provider URL reaches the catalog's own network (SSRF): an undici
 * `Agent` (Node's fetch ignores a node:http `agent`) whose connector resolves the host itself and checks every address
 * against the policy (`@notary/platform/net/address-policy`) before the socket is opened, then checks the socket's
 * remote address once connected. IP-literal URLs are checked before connecting (Node does not call `lookup` for them).
 * Because the check is on the address actually connected, a name that resolves to a public address at registration and
 * to a private one later (DNS rebinding) is refused at connect time.
 */
export class ProviderEgress {
  /** The undici dispatcher every provider request goes through. */
  readonly dispatcher: Agent;
  private readonly connectors = new Map<number, buildConnector.connector>();

  constructor(
    /** `CATALOG_PROVIDER_ALLOW_HOSTS`, parsed; plus the reference provider's exact address in `start:catalog`. */
    readonly allowList: readonly AllowEntry[],
    private readonly options: {
      resolve?: Resolver;
      /** Connect timeout, ms (default 10 s). */
      connectTimeoutMs?: number;
      /** Most bytes of one answer (default `MAX_PROVIDER_BODY_BYTES`; tests lower it). */
      maxBodyBytes?: number;
    } = {},
  ) {
    this.dispatcher = new Agent({ connect: (opts, callback) => this.connect(opts, callback) });
  }

  /** Most bytes of one provider answer. */
  get maxBodyBytes(): number {
    return this.options.maxBodyBytes ?? MAX_PROVIDER_BODY_BYTES;
  }

  /**
   * Why connecting to `address` for `hostname:port` is refused, as a sentence for operators
   * (`localhost:3200 resolves to a loopback address: refused ...`), or undefined when allowed.
   */
  check(hostname: string, port: number, address: string): string | undefined {
    const why = refusal({ hostname, port, address }, this.allowList);
    if (why === undefined) return undefined;
    const verb = isIP(hostname) ? 'is' : 'resolves to';
    const remedy =
      why === 'a cloud metadata address'
        ? 'never allowed'
        : 'not allowed (an operator can list it in CATALOG_PROVIDER_ALLOW_HOSTS)';
    return `${describeTarget(hostname, port)} ${verb} ${why}: ${remedy}`;
  }

  /**
   * Registration-time check of a provider's `baseUrl` (the connect-time check stays the rule): an http(s)
   * URL whose host is, or resolves to, an address the policy refuses gets a sentence saying why. A name that
   * does not resolve (or not within 5 s) is accepted: its syncs will fail and say so.
   * @returns the refusal, or undefined when the URL is acceptable.
   */
  async checkUrl(url: string): Promise<string | undefined> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return 'not a URL';
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return `scheme ${u.protocol} is not http(s)`;
    const hostname = u.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
    if (isIP(hostname)) return this.check(hostname, port, hostname);
    let timer: NodeJS.Timeout | undefined;
    const addresses = await Promise.race([
      this.resolve(hostname).catch(() => []),
      new Promise<LookupAddress[]>((resolve) => {
        timer = setTimeout(() => resolve([]), REGISTRATION_LOOKUP_MS);
        timer.unref();
      }),
    ]).finally(() => clearTimeout(timer));
    for (const a of addresses) {
      const why = this.check(hostname, port, a.address);
      if (why) return why;
    }
    return undefined;
  }

  /** Closes pooled provider connections. */
  close(): Promise<void> {
    return this.dispatcher.close();
  }

  private resolve(hostname: string): Promise<LookupAddress[]> {
    return (this.options.resolve ?? systemResolver)(hostname);
  }

  /** undici's connector, with the address checks around it. */
  private connect(opts: buildConnector.Options, callback: buildConnector.Callback): void {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    const hostname = opts.hostname;
    if (isIP(hostname)) {
      const why = this.check(hostname, port, hostname);
      if (why) {
        callback(new EgressRefusedError(why), null);
        return;
      }
    }
    this.connectorFor(port)(opts, (...args) => {
      const [error, socket] = args;
      if (error) {
        callback(error, null);
        return;
      }
      // Belt and braces: the address the socket is connected to, whatever resolved it.
      const remote = socket.remoteAddress;
      const why = remote === undefined ? 'no remote address' : this.check(hostname, port, remote);
      if (why) {
        socket.destroy();
        callback(new EgressRefusedError(why), null);
        return;
      }
      callback(null, socket);
    });
  }

  /** One undici connector per port: its `lookup` checks each resolved address for that port. */
  private connectorFor(port: number): buildConnector.connector {
    let connector = this.connectors.get(port);
    if (!connector) {
      connector = buildConnector({
        timeout: this.options.connectTimeoutMs ?? 10_000,
        lookup: this.checkingLookup(port),
      });
      this.connectors.set(port, connector);
    }
    return connector;
  }

  private checkingLookup(port: number): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname).then(
        (all) => {
          const family = options.family === 4 || options.family === 6 ? options.family : undefined;
          const addresses = family ? all.filter((a) => a.family === family) : all;
          for (const a of addresses) {
            const why = this.check(hostname, port, a.address);
            if (why) {
              callback(new EgressRefusedError(why), '', 0);
              return;
            }
          }
          const [first] = addresses;
          if (!first) {
            const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
            error.code = 'ENOTFOUND';
            callback(error, '', 0);
          } else if (options.all) callback(null, addresses);
          else callback(null, first.address, first.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, '', 0),
      );
    };
  }
}
