import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '@notary/shared';
import { type Dispatcher, request } from 'undici';
import type { z } from 'zod';
import { EgressRefusedError, MAX_PROVIDER_REDIRECTS, type ProviderEgress } from './egress';

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
  /** Per attempt (every redirect hop and the whole body included), in ms. */
  timeoutMs: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries: number;
  /** First backoff delay in ms (doubles each retry, plus up to 50% jitter). Default 200. */
  backoffMs?: number;
  /** The address-checking way out (`ProviderEgress`): dispatcher and body cap. */
  egress: ProviderEgress;
}

export interface Fetched<T> {
  body: T;
  /** The exact URL answered (attribution `sourceUrl`): the last hop when the provider redirected. */
  url: string;
  /** When the answer arrived. */
  retrievedAt: Date;
  /** Wall time of the call including retries, ms. */
  elapsedMs: number;
}

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

/** A failure that another attempt cannot fix (refused address, redirects, oversize answer). */
class Final extends Error {
  constructor(readonly error: ProviderError) {
    super(error.message);
  }
}

/**
 * Drops an answer's body unread, cancelling its stream (undici reports the cancellation as an `error` event:
 * expected here, so listened to).
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** `scheme://host[:port]` of a URL: what a message about a redirect target shows (never its path or query). */
const originOf = (url: URL) => `${url.protocol}//${url.host}`;

/**
 * Reads `body` up to `maxBytes`: a `content-length` above it is refused before reading, a stream that grows
 * past it is cancelled at once.
 * @throws Final when over the cap.
 */
async function readCapped(response: Dispatcher.ResponseData, url: string, maxBytes: number): Promise<Buffer> {
  const tooLong = () =>
    new Final(new ProviderError(`answer longer than ${maxBytes} bytes: refused`, url, response.statusCode));
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discard(response.body);
    throw tooLong();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      discard(response.body);
      throw tooLong();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * One GET through the egress dispatcher, following at most `MAX_PROVIDER_REDIRECTS` redirects by hand:
 * every hop's address is checked at connect time by the dispatcher, and a hop to anything but http(s) is
 * refused. Error statuses are not read (their bodies never reach a message).
 * @returns the final status, URL and (for 2xx) the capped body.
 */
async function getFollowing(
  start: string,
  egress: ProviderEgress,
  signal: AbortSignal,
): Promise<{ status: number; url: string; text: string | undefined }> {
  let url = new URL(start);
  for (let hop = 0; ; hop++) {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'GET',
        dispatcher: egress.dispatcher,
        headers: { accept: 'application/json' },
        signal,
      });
    } catch (e) {
      if (e instanceof EgressRefusedError) {
        throw new Final(
          new ProviderError(
            hop === 0 ? `refused: ${e.message}` : `redirect to ${originOf(url)} refused: ${e.message}`,
            start,
            undefined,
            { cause: e },
          ),
        );
      }
      throw e;
    }
    const status = response.statusCode;
    if (REDIRECT_STATUS.has(status)) {
      discard(response.body);
      const location = response.headers.location;
      const target = typeof location === 'string' ? URL.parse(location, url.href) : null;
      if (!target)
        throw new Final(new ProviderError(`answered HTTP ${status} without a valid Location`, start, status));
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        throw new Final(new ProviderError(`redirect to a ${target.protocol} URL refused`, start, status));
      }
      if (hop >= MAX_PROVIDER_REDIRECTS) {
        throw new Final(new ProviderError(`more than ${MAX_PROVIDER_REDIRECTS} redirects`, start, status));
      }
      url = target;
      continue;
    }
    if (status < 200 || status >= 300) {
      discard(response.body);
      return { status, url: url.toString(), text: undefined };
    }
    const bytes = await readCapped(response, start, egress.maxBodyBytes);
    return { status, url: url.toString(), text: bytes.toString('utf8') };
  }
}

/** A short, body-free account of a contract violation: the first issue's path and zod message, bounded. */
function contractIssue(error: z.ZodError): string {
  const first = error.issues[0];
  const path = (first?.path ?? [])
    .slice(0, 4)
    .map((p) => String(p).slice(0, 40))
    .join('.');
  const message = (first?.message ?? 'invalid').slice(0, 120);
  return path ? `${path}: ${message}` : message;
}

/**
 * GET JSON from a provider through the egress dispatcher (`ProviderEgress`: connect-time address checks,
 * redirects re-checked, body capped) with a timeout per attempt, retries with exponential backoff and jitter,
 * and zod validation of the body. `query` values that are undefined are left out. Error messages carry the
 * status and a short reason, never the provider's body.
 * @throws ProviderError (no retry on a refused address, a redirect problem, an oversize answer, 4xx other
 * than 408/425/429, nor a body that fails validation).
 */
export async function getJson<S extends z.ZodType>(
  baseUrl: string,
  pathname: string,
  query: Record<string, string | number | undefined>,
  schema: S,
  options: HttpClientOptions,
): Promise<Fetched<z.infer<S>>> {
  const url = buildUrl(baseUrl, pathname, query);
  const started = performance.now();
  let lastError: ProviderError | undefined;
  for (let attempt = 0; attempt <= options.retries; attempt++) {
    if (attempt > 0) {
      const base = (options.backoffMs ?? 200) * 2 ** (attempt - 1);
      await sleep(base + Math.random() * base * 0.5);
    }
    const signal = AbortSignal.timeout(options.timeoutMs);
    let answer: Awaited<ReturnType<typeof getFollowing>>;
    try {
      answer = await getFollowing(url, options.egress, signal);
    } catch (e) {
      if (e instanceof Final) throw e.error;
      lastError = new ProviderError(
        signal.aborted ? `timed out after ${options.timeoutMs} ms` : `unreachable: ${errorMessage(e)}`,
        url,
        undefined,
        { cause: e },
      );
      continue;
    }
    if (answer.text === undefined) {
      lastError = new ProviderError(`answered HTTP ${answer.status}`, url, answer.status);
      if (RETRYABLE_STATUS.has(answer.status)) continue;
      throw lastError;
    }
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch (e) {
      throw new ProviderError('answered a body that is not JSON', url, answer.status, { cause: e });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new ProviderError(
        `answer breaks the contract (${contractIssue(parsed.error)})`,
        url,
        answer.status,
        { cause: parsed.error },
      );
    }
    return {
      body: parsed.data,
      url: answer.url,
      retrievedAt: new Date(),
      elapsedMs: performance.now() - started,
    };
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
