import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { AddressPolicy, classifyAddress, describeRange } from './address-policy.ts';

/**
 * The `fetch` of requests to URLs that certificates and other people's files name (OCSP responders, CRL
 * distribution points, AIA issuers, a TSA named on a command line): http(s) only, each host resolved here and
 * every address it resolves to checked before connecting, the connection made to the address checked (a second
 * lookup could answer differently: DNS rebinding), redirects followed by hand and each hop checked the same
 * way. The body is the caller's to bound (`readBounded` of `@notary/shared/fetch-body`).
 */

/** Most redirects one request follows (RFC 9110 15.4), each hop checked again. */
export const MAX_POLICED_REDIRECTS = 3;

/** A destination the address policy refuses; never retried. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
  /** The URL refused (the hop, when a redirect led there). */
  readonly url: string;

  constructor(url: string, why: string) {
    super(`${url}: refused by the address policy (${why})`);
    this.url = url;
  }
}

/** Resolves a host name to every address it has (`dns.lookup`, all, verbatim order by default). */
export type AddressResolver = (hostname: string) => Promise<string[]>;

export interface PolicedFetchOptions {
  /**
   * Which addresses may be connected to: by default public addresses only, never one of this machine's nor a
   * cloud metadata endpoint (`AddressPolicy` without allow entries); allow entries open exceptions.
   */
  policy?: AddressPolicy;
  /**
   * Every address allowed but cloud metadata endpoints: for a holder whose CA answers on a private network
   * (`notary-verify extend --allow-private`).
   */
  allowPrivate?: boolean;
  /** Default `MAX_POLICED_REDIRECTS`. */
  maxRedirects?: number;
  /** For tests; default the system resolver. */
  resolve?: AddressResolver;
}

const systemResolver: AddressResolver = async (hostname) =>
  (await lookup(hostname, { all: true, order: 'verbatim' })).map((a) => a.address);

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses whose `Response` may have no body (Fetch standard, null body status). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` (same arguments and answer) going through the address policy as described at the top of this
 * file. `init.redirect`: `follow` (default) follows at most `maxRedirects` hops, `manual` returns the 3xx,
 * `error` fails as Node's fetch does (`TypeError` whose cause says "unexpected redirect"). A 301 or 302 to a
 * POST and a 303 are followed with GET, without the body (RFC 9110 15.4).
 * @throws AddressRefusedError when a hop's scheme is not http(s) or an address of its host is refused;
 *   TypeError `fetch failed` with the cause (ECONNREFUSED, ENOTFOUND...) for a network failure, more than
 *   `maxRedirects` redirects or an unexpected redirect; the signal's reason when it aborts.
 */
export function policedFetch(options: PolicedFetchOptions = {}): typeof fetch {
  const policy = options.policy ?? new AddressPolicy([]);
  const resolve = options.resolve ?? systemResolver;
  const maxRedirects = options.maxRedirects ?? MAX_POLICED_REDIRECTS;
  const refusal = (host: string, port: number, address: string): string | undefined => {
    const kind = classifyAddress(address);
    if (options.allowPrivate) return kind === 'cloud-metadata' ? describeRange(kind) : undefined;
    const why = policy.refusal(address, policy.allowsHost(host, port));
    if (why === undefined) return undefined;
    // The range says more than "this machine" for loopback; a public address held here is said as such.
    return kind === 'public' ? why : describeRange(kind);
  };
  return async (input, init = {}) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    let body = await bodyBytes(init.body);
    for (let hop = 0; ; hop += 1) {
      const res = await requestOnce(url, { method, headers, body, signal: init.signal }, resolve, refusal);
      if (!REDIRECTS.has(res.status) || init.redirect === 'manual') return res;
      await res.body?.cancel().catch(() => undefined);
      if (init.redirect === 'error')
        throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
      const location = res.headers.get('location');
      if (!location) throw new TypeError('fetch failed', { cause: new Error('a redirect without Location') });
      if (hop >= maxRedirects) {
        throw new TypeError('fetch failed', { cause: new Error(`more than ${maxRedirects} redirects`) });
      }
      url = new URL(location, url);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
      }
    }
  };
}

type Refusal = (host: string, port: number, address: string) => string | undefined;

/** One request, no redirect followed: the host resolved and checked, the connection pinned to that address. */
async function requestOnce(
  url: URL,
  init: {
    method: string;
    headers: Headers;
    body: Uint8Array | undefined;
    signal: AbortSignal | null | undefined;
  },
  resolve: AddressResolver,
  refusal: Refusal,
): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AddressRefusedError(url.href, `scheme ${url.protocol} is not http(s)`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const literal = isIP(host) !== 0;
  let addresses: string[];
  if (literal) addresses = [host];
  else {
    try {
      addresses = await untilAborted(resolve(host), init.signal);
    } catch (e) {
      if (init.signal?.aborted && e === init.signal.reason) throw e;
      throw new TypeError('fetch failed', { cause: e });
    }
  }
  const first = addresses[0];
  if (first === undefined)
    throw new TypeError('fetch failed', { cause: new Error(`${host} has no address`) });
  // Every address must pass: a name with one public and one private address is refused whole.
  for (const address of addresses) {
    const why = refusal(host, port, address);
    if (why) throw new AddressRefusedError(url.href, `${literal ? '' : `${host} resolves to `}${why}`.trim());
  }
  const pinned: LookupFunction = (_hostname, opts, callback) => {
    const family = isIP(first);
    if (opts.all) callback(null, [{ address: first, family }]);
    else callback(null, first, family);
  };
  const headers: Record<string, string> = {};
  init.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (init.body) headers['content-length'] = String(init.body.byteLength);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolveResponse, reject) => {
    const req = client.request(
      {
        host,
        port,
        path: `${url.pathname}${url.search}`,
        method: init.method,
        headers,
        agent: false,
        ...(literal ? {} : { lookup: pinned }),
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (res) => {
        const out = new Headers();
        for (const [key, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) out.append(key, v);
        }
        const status = res.statusCode ?? 502;
        const stream = NULL_BODY.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        if (!stream) res.resume();
        resolveResponse(new Response(stream, { status, statusText: res.statusMessage ?? '', headers: out }));
      },
    );
    req.on('error', (e) => {
      if (e.name === 'AbortError' && init.signal?.aborted) reject(init.signal.reason);
      else reject(new TypeError('fetch failed', { cause: e }));
    });
    req.end(init.body ? Buffer.from(init.body) : undefined);
  });
}

/** `work`, or the signal's reason as soon as it aborts (a slow resolver counts against the request's time). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** The bytes of a request body of the kinds these requests send (none, bytes, text). */
async function bodyBytes(body: RequestInit['body']): Promise<Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return new TextEncoder().encode(body);
  return new Uint8Array(await new Response(body).arrayBuffer());
}
