/** Requests of the checking core to the endpoints the user named: `fetch` only, each with a timeout. */

/** What the checks need from the environment. */
export interface Transport {
  /** `globalThis.fetch` by default (browsers and Node alike). */
  fetch: typeof fetch;
  /** Timeout of one request, ms. */
  timeoutMs: number;
}

/** An endpoint answered something else than the API it claims (HTTP error, not JSON, a JSON-RPC error). */
export class EndpointError extends Error {
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
      signal: AbortSignal.timeout(t.timeoutMs),
    });
  } catch (e) {
    throw new EndpointError(`unreachable: ${describe(e)}`);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new EndpointError(`HTTP ${res.status}, not JSON: ${text.slice(0, 120)}`);
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
      `${method}: JSON-RPC error ${answer.error.code ?? ''} ${answer.error.message ?? ''}`,
    );
  }
  if (status !== 200 || !('result' in answer)) throw new EndpointError(`${method}: HTTP ${status}`);
  return answer.result;
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  if (e.name === 'TimeoutError') return 'timed out';
  const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? e.message;
}
