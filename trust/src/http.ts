/**
 * Requests to the endpoints a user or an operator named (the verifier's chain reads, the service's EVM
 * adapter): `fetch` only, each with a timeout, never following a redirect (whoever named the endpoint chose
 * it: an answer from elsewhere, perhaps over plain http or from an internal address, is not that endpoint's),
 * and read up to `MAX_RESPONSE_BYTES`.
 */

import { readBounded } from '@notary/shared/fetch-body';
import { fetchProblem, TrustError, trustMsg } from './messages.ts';

/** Largest answer read from an endpoint, bytes: JSON-RPC and Stacks API answers here are a few KB. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** What the checks need from the environment. */
export interface Transport {
  /** `globalThis.fetch` by default (browsers and Node alike). */
  fetch: typeof fetch;
  /** Timeout of one request, ms. */
  timeoutMs: number;
}

/**
 * An endpoint answered something else than the API it claims (HTTP error, not JSON, a JSON-RPC error), or
 * did not answer: `detail` says it as data, `message` in English.
 */
export class EndpointError extends TrustError {
  override name = 'EndpointError';
}

/** GET or POST JSON; the parsed body and status. @throws EndpointError on network errors and non-JSON. */
export async function requestJson(
  t: Transport,
  url: string,
  init: { method?: 'GET' | 'POST'; body?: unknown } = {},
): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await t.fetch(url, {
      method: init.method ?? 'GET',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      redirect: 'error',
      signal: AbortSignal.timeout(t.timeoutMs),
    });
  } catch (e) {
    throw new EndpointError(trustMsg('trust.unreachable', { problem: fetchProblem(e) }));
  }
  // A redirect answered despite `redirect: 'error'` (a fetch that does not honour it, `manual` semantics).
  if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
    await res.body?.cancel().catch(() => undefined);
    throw new EndpointError(trustMsg('trust.httpRedirectAskFinal', { status: res.status }));
  }
  let text: string;
  try {
    text = await readText(res, MAX_RESPONSE_BYTES);
  } catch (e) {
    throw new EndpointError(trustMsg('trust.unreachable', { problem: fetchProblem(e) }));
  }
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new EndpointError(
      trustMsg('trust.httpNotJson', { status: res.status, answer: text.slice(0, 120) }),
    );
  }
}

let rpcId = 0;

/** One JSON-RPC 2.0 call. @throws EndpointError on a transport failure or a JSON-RPC error object. */
export async function jsonRpc(
  t: Transport,
  url: string,
  method: string,
  params: unknown[],
): Promise<unknown> {
  rpcId += 1;
  const { status, body } = await requestJson(t, url, {
    method: 'POST',
    body: { jsonrpc: '2.0', id: rpcId, method, params },
  });
  const answer = body as { result?: unknown; error?: { code?: number; message?: string } };
  if (answer.error) {
    throw new EndpointError(
      trustMsg('trust.rpcError', {
        method,
        error: `${answer.error.code ?? ''} ${answer.error.message ?? ''}`,
      }),
    );
  }
  if (status !== 200 || !('result' in answer))
    throw new EndpointError(trustMsg('trust.rpcHttp', { method, status }));
  return answer.result;
}

/** The body of `res` as UTF-8 text. @throws Error past `max` bytes (the rest is not read). */
async function readText(res: Response, max: number): Promise<string> {
  return new TextDecoder().decode(await readBounded(res, max));
}

/**
 * `Retry-After` (RFC 9110 10.2.3) as a delay in milliseconds from `nowMs`: delay-seconds (`"120"`) or an
 * HTTP-date (`"Wed, 21 Oct 2015 07:28:00 GMT"`, a date in the past meaning 0). `undefined` for a missing or
 * unusable value. Shared by the Stacks reader and the service's EVM adapter.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
