import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';

/** A provider call that failed: network, timeout, HTTP status or an answer that breaks the contract. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly url: string,
    /** HTTP status when the provider answered; undefined for network errors and timeouts. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

export interface HttpClientOptions {
  /** Per attempt, in ms. */
  timeoutMs: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries: number;
  /** First backoff delay in ms (doubles each retry, plus up to 50% jitter). Default 200. */
  backoffMs?: number;
  /** Replaceable for tests; defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

export interface Fetched<T> {
  body: T;
  /** The exact URL answered (attribution `sourceUrl`). */
  url: string;
  /** When the answer arrived. */
  retrievedAt: Date;
  /** Wall time of the call including retries, ms. */
  elapsedMs: number;
}

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * GET JSON from a provider with a timeout per attempt, retries with exponential backoff and jitter, and zod
 * validation of the body. `query` values that are undefined are left out.
 * @throws ProviderError (no retry on 4xx other than 408/425/429, nor on a body that fails validation).
 */
export async function getJson<S extends z.ZodType>(
  baseUrl: string,
  pathname: string,
  query: Record<string, string | number | undefined>,
  schema: S,
  options: HttpClientOptions,
): Promise<Fetched<z.infer<S>>> {
  const url = buildUrl(baseUrl, pathname, query);
  const doFetch = options.fetch ?? fetch;
  const started = performance.now();
  let lastError: ProviderError | undefined;
  for (let attempt = 0; attempt <= options.retries; attempt++) {
    if (attempt > 0) {
      const base = (options.backoffMs ?? 200) * 2 ** (attempt - 1);
      await sleep(base + Math.random() * base * 0.5);
    }
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (e) {
      const timedOut = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
      lastError = new ProviderError(
        timedOut ? `timed out after ${options.timeoutMs} ms` : `unreachable: ${(e as Error).message}`,
        url,
        undefined,
        { cause: e },
      );
      continue;
    }
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      lastError = new ProviderError(`answer cut short: ${(e as Error).message}`, url, response.status, {
        cause: e,
      });
      continue;
    }
    if (!response.ok) {
      lastError = new ProviderError(`answered HTTP ${response.status}`, url, response.status);
      if (RETRYABLE_STATUS.has(response.status)) continue;
      throw lastError;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new ProviderError('answered a body that is not JSON', url, response.status, { cause: e });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first?.path.length ? `${first.path.join('.')}: ` : '';
      throw new ProviderError(
        `answer breaks the contract (${where}${first?.message ?? 'invalid'})`,
        url,
        response.status,
        {
          cause: parsed.error,
        },
      );
    }
    return { body: parsed.data, url, retrievedAt: new Date(), elapsedMs: performance.now() - started };
  }
  throw lastError ?? new ProviderError('no attempt made', url);
}

/** `baseUrl` + `pathname` (path segments already encoded by the caller) + query string. */
export function buildUrl(
  baseUrl: string,
  pathname: string,
  query: Record<string, string | number | undefined>,
): string {
  const url = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  url.pathname = `${url.pathname.replace(/\/$/, '')}${pathname}`;
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}
