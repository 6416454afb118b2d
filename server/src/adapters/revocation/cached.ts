/**
 * `RevocationSource` over `@notary/trust`'s `gatherValidationMaterial` (RFC 6960 OCSP, RFC 5280 CRLs), with
 * a cache: an OCSP answer is kept per (responder URL, request), the request naming the certificate by its
 * CertID; a CRL per URL (one CRL serves every certificate of its issuer). Entries last until the answer's
 * nextUpdate (an answer without one is not kept) and only answers the gathering accepted are kept; the
 * cache is bounded in entries and bytes, the oldest used going first.
 *
 * Egress: the URLs asked come from the certificates of the signing chain and of the TSA token's chain as
 * verified to the configured anchors; a token's other certificates are never asked about. They still go through
 * the address policy (`policedFetch`: public addresses only, each redirect hop checked), since a forged answer
 * or a CA's certificate may name any URL; `REVOCATION_ALLOW_HOSTS` names the private CA hosts allowed.
 */
import { createHash } from 'node:crypto';
import { AddressPolicy, type AllowEntry } from '@notary/platform/net/address-policy';
import { policedFetch } from '@notary/platform/net/policed-fetch';
import { readBounded } from '@notary/shared';
import { fetchMissingIssuers, gatherValidationMaterial, nextUpdateOf } from '@notary/trust/revocation';
import type { RevocationSource } from '../../ports/revocation';

export interface CachedRevocationSourceOptions {
  /** One request, connect to last byte, ms. */
  timeoutMs: number;
  /** Largest answer read, bytes. */
  maxBytes: number;
  /** Most entries kept. Default 512. */
  maxEntries?: number;
  /** Most answer bytes kept, all entries together. Default 32 MiB. */
  maxCacheBytes?: number;
  /**
   * Private hosts or ranges the responders may be at (`REVOCATION_ALLOW_HOSTS`, entries as `CAPTURE_ALLOW_HOSTS`);
   * none by default: public addresses only. Cloud metadata addresses are refused whatever it says.
   */
  allowHosts?: readonly AllowEntry[];
  /** For tests; default the address policy's `policedFetch` with `allowHosts`. */
  fetch?: typeof fetch;
  /** For tests; default the system clock. */
  now?: () => Date;
}

interface Entry {
  bytes: Uint8Array;
  /** nextUpdate, ms since the epoch. */
  expires: number;
}

export class CachedRevocationSource implements RevocationSource {
  private readonly cache = new Map<string, Entry>();
  private cachedBytes = 0;
  private readonly options: Required<Omit<CachedRevocationSourceOptions, 'fetch' | 'allowHosts'>> & {
    fetch: typeof fetch;
  };

  constructor(options: CachedRevocationSourceOptions) {
    const { allowHosts = [], ...rest } = options;
    this.options = {
      maxEntries: 512,
      maxCacheBytes: 32 * 1024 * 1024,
      fetch: policedFetch({ policy: new AddressPolicy(allowHosts) }),
      now: () => new Date(),
      ...rest,
    };
  }

  /** Entries kept now (for tests and diagnostics). */
  get size(): number {
    return this.cache.size;
  }

  /** `RevocationSource.withIssuers`: not cached (a chain is completed once per signing session). */
  async withIssuers(chain: readonly Uint8Array[]): Promise<Uint8Array[]> {
    const { fetch, timeoutMs, maxBytes } = this.options;
    const completed = await fetchMissingIssuers(chain, { fetch, timeoutMs, maxBytes, maxRequests: 8 });
    return completed.chain;
  }

  async gather(chain: readonly Uint8Array[]): ReturnType<RevocationSource['gather']> {
    const now = this.options.now();
    const fetched = new Map<string, Entry>();
    const fetchThroughCache: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const key = cacheKey(init?.method ?? 'GET', url, init?.body);
      const hit = key ? this.cache.get(key) : undefined;
      if (key && hit) {
        this.cache.delete(key);
        if (hit.expires > now.getTime()) {
          this.cache.set(key, hit);
          return new Response(copy(hit.bytes), { status: 200 });
        }
        this.cachedBytes -= hit.bytes.length;
      }
      const res = await this.options.fetch(input, init);
      if (!key || res.status !== 200) return res;
      const bytes = await readBounded(res, this.options.maxBytes);
      const expires = nextUpdateOf(bytes);
      if (expires !== undefined) fetched.set(key, { bytes, expires });
      return new Response(copy(bytes), { status: 200 });
    };
    const result = await gatherValidationMaterial(chain, {
      fetch: fetchThroughCache,
      timeoutMs: this.options.timeoutMs,
      maxBytes: this.options.maxBytes,
      now,
    });
    const kept = [...result.material.ocsps, ...result.material.crls];
    for (const [key, entry] of fetched) {
      if (entry.expires > now.getTime() && kept.some((k) => sameBytes(k, entry.bytes)))
        this.store(key, entry);
    }
    return result;
  }

  private store(key: string, entry: Entry): void {
    const old = this.cache.get(key);
    if (old) {
      this.cache.delete(key);
      this.cachedBytes -= old.bytes.length;
    }
    if (entry.bytes.length > this.options.maxCacheBytes) return;
    this.cache.set(key, entry);
    this.cachedBytes += entry.bytes.length;
    for (const [k, e] of this.cache) {
      if (this.cache.size <= this.options.maxEntries && this.cachedBytes <= this.options.maxCacheBytes) break;
      this.cache.delete(k);
      this.cachedBytes -= e.bytes.length;
    }
  }
}

/** `GET url` (a CRL) or `POST url sha256(body)` (an OCSP request); null for a body of another kind. */
function cacheKey(method: string, url: string, body: RequestInit['body']): string | null {
  if (body === undefined || body === null) return `GET ${url}`;
  let bytes: Uint8Array;
  if (body instanceof ArrayBuffer) bytes = new Uint8Array(body);
  else if (ArrayBuffer.isView(body)) bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  else return null;
  return `${method} ${url} ${createHash('sha256').update(bytes).digest('hex')}`;
}

function copy(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
