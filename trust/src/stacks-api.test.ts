import { readFileSync } from 'node:fs';
import { Cl, serializeCV } from '@stacks/transactions';
import { describe, expect, it } from 'vitest';
import { validateStacksAnswer } from '../../test/harness/stacks-schemas.ts';
import { parseRetryAfter } from './http.ts';
import { StacksAnchoringClient } from './stacks-anchoring.ts';
import {
  anchoredRootOfResult,
  RequestBudget,
  readAnchor,
  rootArgument,
  type StacksApiClock,
  type StacksApiOptions,
  StacksApiUnavailable,
  StacksWrongKind,
} from './stacks-api.ts';

/**
 * The reader (and the anchoring client's nonces, fees and broadcasts) fed the upstream examples offline: Hiro's published and test-asserted answers
 * (`test/fixtures/stacks-api/examples/README-hiro.md`) and stacks-core's `docs/rpc/components/examples`
 * (`test/fixtures/stacks-api/stacks-core`), through a fake `fetch`; the budget on a fake clock.
 */

const FIXTURES = new URL('../../test/fixtures/stacks-api/', import.meta.url);
const text = (rel: string) => readFileSync(new URL(rel, FIXTURES), 'utf8');
const hiro = (name: string) => text(`examples/${name}`);
/** The `value` of a stacks-core example file, as the node sends it. */
const core = (name: string) =>
  JSON.stringify(
    (JSON.parse(text(`stacks-core/components/examples/${name}.example.json`)) as { value: unknown }).value,
  );

const ZERO = `0x${'0'.repeat(64)}`;
const TXID = `0x${'ab'.repeat(32)}`;

interface Reply {
  status: number;
  body: string;
  type?: string;
  headers?: Record<string, string>;
}
const json = (body: string, status = 200): Reply => ({ status, body, type: 'application/json' });
const plain = (body: string, status = 404): Reply => ({ status, body, type: 'text/plain' });
/** stacks-core's answer to a route it does not serve (`stackslib/src/net/httpcore.rs`). */
const nodeNoRoute = (method: string, path: string) => plain(`No such API endpoint '${method} ${path}'`);

type Route = (method: string, path: string, init: RequestInit) => Reply | undefined;

/** A fake endpoint: `route` answers, unknown routes get a stacks-node 404; every request is recorded. */
function endpoint(route: Route) {
  const calls: { method: string; path: string; headers: Record<string, string>; body: unknown }[] = [];
  const fetchFn = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const path = `${url.pathname}${url.search}`;
    const method = init.method ?? 'GET';
    calls.push({ method, path, headers: { ...(init.headers as Record<string, string>) }, body: init.body });
    const r = route(method, path, init) ?? nodeNoRoute(method, url.pathname);
    return new Response(r.body, {
      status: r.status,
      headers: { ...(r.type ? { 'content-type': r.type } : {}), ...r.headers },
    });
  }) as typeof fetch;
  return { fetch: fetchFn, calls };
}

/** Virtual time: `sleep` moves the clock instead of waiting. */
function fakeClock(start = Date.parse('2026-07-01T00:00:00Z')): StacksApiClock & { slept: number[] } {
  let t = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}

function client(route: Route, options: Partial<StacksApiOptions> = {}) {
  const ep = endpoint(route);
  const api = new StacksAnchoringClient({
    url: 'http://stacks.test/',
    transport: { fetch: ep.fetch, timeoutMs: 1000 },
    clock: fakeClock(),
    ...options,
  });
  return { api, calls: ep.calls };
}

/** A Hiro API with v3 routes (and the node routes it proxies). */
const hiroV3: Route = (_method, path) => {
  if (path === '/extended') return json(hiro('hiro-status.json'));
  if (path.startsWith('/extended/v3/transactions/')) return json(hiro('hiro-v3-tx-not-found.json'), 404);
  if (path === '/v2/info') return json(core('node-info'));
  return undefined;
};
/** An older Hiro API: v1 routes only (Fastify's 404 for /extended/v3). */
const hiroV1Only =
  (v1Gone = false): Route =>
  (_method, path) => {
    if (path === '/extended') return json(hiro('hiro-status.json'));
    if (path.startsWith('/extended/v3/')) return json(hiro('hiro-route-not-found.json'), 404);
    if (path.startsWith('/extended/v1/') && v1Gone) return json(hiro('hiro-v1-gone.json'), 410);
    if (path.startsWith('/extended/v1/tx/')) return json(hiro('hiro-v1-tx-not-found.json'), 404);
    if (path === '/v2/info') return json(core('node-info'));
    return undefined;
  };
/** A bare stacks-node. */
const bareNode: Route = (_method, path) => (path === '/v2/info' ? json(core('node-info')) : undefined);

describe('the pinned examples are what the real APIs answer', () => {
  // (hiro-status.json is Hiro's 2020 example: its chain_tip predates `burn_block_height`, which the reader does
  // not need.)
  it('the v3 answers assembled from Hiro tests pass the pinned route schemas', () => {
    for (const [path, file] of [
      [
        `/extended/v3/transactions/${TXID}?include=function_args,post_conditions,result`,
        'hiro-v3-tx-contract-call.json',
      ],
      [
        '/extended/v3/principals/SP466FNC0P7JWTNM2R9T199QRZN1MYEDTAR0KP27/nonces',
        'hiro-v3-principal-nonces.json',
      ],
    ] as const) {
      expect(
        validateStacksAnswer({
          method: 'GET',
          path,
          status: 200,
          contentType: 'application/json',
          body: hiro(file),
        }),
        file,
      ).toEqual([]);
    }
    expect(
      validateStacksAnswer({
        method: 'GET',
        path: '/extended/v1/tx/0x1',
        status: 410,
        contentType: 'application/json',
        body: hiro('hiro-v1-gone.json'),
      }),
    ).toEqual([]);
  });
});

describe('kind detection from what the endpoint serves', () => {
  it('a Hiro API with /extended/v3 is hiro-v3 (its own 404 for the zero txid)', async () => {
    const { api, calls } = client(hiroV3);
    expect(await api.detect()).toBe('hiro-v3');
    expect(calls.map((c) => c.path)).toEqual(['/extended', `/extended/v3/transactions/${ZERO}`]);
    for (const c of calls) expect(c.headers).not.toHaveProperty('x-api-key');
  });

  it('an older Hiro API (Fastify route 404 for /extended/v3) is hiro-v1 while its v1 routes answer', async () => {
    expect(await client(hiroV1Only()).api.detect()).toBe('hiro-v1');
  });

  it('an older Hiro API whose v1 routes answer 410 is gone, not a node', async () => {
    const err = await client(hiroV1Only(true))
      .api.detect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StacksApiUnavailable);
    expect(err).toMatchObject({ reason: 'gone', status: 410 });
    expect(String(err)).toMatch(/410 Gone.*disabled its deprecated v1 routes/);
  });

  it('a stacks-node (text/plain 404 for /extended, JSON /v2/info) is node', async () => {
    expect(await client(bareNode).api.detect()).toBe('node');
  });

  it('neither: wrong-kind, found none', async () => {
    const err = await client((_m, p) => (p === '/v2/info' ? plain('<html>', 200) : undefined))
      .api.detect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StacksWrongKind);
    expect(err).toMatchObject({ reason: 'wrong-kind', found: 'none' });
  });

  it('a configured kind is checked: hiro-v3 against a node, hiro-v1 against a v3 API without v1', async () => {
    const v3OnNode = await client(bareNode, { kind: 'hiro-v3' })
      .api.probe()
      .catch((e: unknown) => e);
    expect(v3OnNode).toBeInstanceOf(StacksWrongKind);
    expect(v3OnNode).toMatchObject({ expected: 'hiro-v3', found: 'node' });
    expect(String(v3OnNode)).toMatch(/stacks-node without a Hiro API/);

    const v1Gone: Route = (m, p) =>
      p.startsWith('/extended/v1/') ? json(hiro('hiro-v1-gone.json'), 410) : hiroV3(m, p, {});
    expect(
      await client(v1Gone, { kind: 'hiro-v1' })
        .api.probe()
        .catch((e: unknown) => e),
    ).toMatchObject({ reason: 'gone' });
    expect(await client(hiroV3, { kind: 'node' }).api.probe()).toBe('node'); // Hiro proxies the node routes
    expect(await client(hiroV3, { kind: 'hiro-v3' }).api.probe()).toBe('hiro-v3');
  });

  it('in auto mode a v1 API that answers 410 later is detected again and read through v3', async () => {
    let upgraded = false;
    const route: Route = (m, p, i) =>
      upgraded
        ? p.startsWith('/extended/v1/')
          ? json(hiro('hiro-v1-gone.json'), 410)
          : hiroV3(m, p, i)
        : hiroV1Only()(m, p, i);
    const { api } = client((m, p, i) => {
      if (p.startsWith(`/extended/v3/transactions/${TXID}`))
        return json(hiro('hiro-v3-tx-contract-call.json'));
      return route(m, p, i);
    });
    expect(await api.kind()).toBe('hiro-v1');
    upgraded = true;
    expect(await api.transaction(TXID)).toMatchObject({ status: 'success' });
    expect(await api.kind()).toBe('hiro-v3');
  });
});

describe('normalized reads', () => {
  it('v3 mined contract call, asked with include=function_args,result', async () => {
    const { api, calls } = client((m, p, i) =>
      p.startsWith(`/extended/v3/transactions/${TXID}`)
        ? json(hiro('hiro-v3-tx-contract-call.json'))
        : hiroV3(m, p, i),
    );
    expect(await api.transaction(TXID)).toEqual({
      txid: `0x${'0'.repeat(60)}5001`,
      status: 'success',
      canonical: true,
      blockHeight: 1,
      resultHex: '0x0703',
      resultRepr: '(ok true)',
      sender: 'SP466FNC0P7JWTNM2R9T199QRZN1MYEDTAR0KP27',
      nonce: 0,
      contractCall: {
        contractId: 'SP000000000000000000002Q6VF78.pox-4',
        functionName: 'stack-stx',
        args: ['0x010000000000000000000000000001e240', '0x0d0000000568656c6c6f'],
      },
      replacedBy: null,
    });
    expect(calls.at(-1)?.path).toBe(`/extended/v3/transactions/${TXID}?include=function_args,result`);
  });

  it('v3 mempool contract call: pending, not canonical, no block', async () => {
    const { api } = client((m, p, i) =>
      p.startsWith(`/extended/v3/transactions/${TXID}`)
        ? json(hiro('hiro-v3-mempool-contract-call.json'))
        : hiroV3(m, p, i),
    );
    expect(await api.transaction(TXID)).toMatchObject({
      status: 'pending',
      canonical: false,
      blockHeight: null,
      nonce: 4,
      contractCall: { functionName: 'stack-stx', args: null },
    });
  });

  it('v3 dropped_replace_by_fee names its replacement', async () => {
    const dropped = {
      ...(JSON.parse(hiro('hiro-v3-mempool-contract-call.json')) as object),
      status: 'dropped_replace_by_fee',
      replaced_by_tx_id: `0x${'cd'.repeat(32)}`,
    };
    const { api } = client((m, p, i) =>
      p.startsWith(`/extended/v3/transactions/${TXID}`) ? json(JSON.stringify(dropped)) : hiroV3(m, p, i),
    );
    expect(await api.transaction(TXID)).toMatchObject({
      status: 'dropped_replace_by_fee',
      replacedBy: `0x${'cd'.repeat(32)}`,
    });
  });

  it('v3: Hiro’s 404 is no such transaction (null); a route 404 is the wrong kind', async () => {
    expect(await client(hiroV3).api.transaction(TXID)).toBeNull();
    const { api } = client(hiroV1Only(), { kind: 'hiro-v3' });
    await expect(api.transaction(TXID)).rejects.toBeInstanceOf(StacksWrongKind);
  });

  it('v1 mined contract call (Hiro’s published example): canonical read from the answer', async () => {
    const example = JSON.parse(hiro('hiro-v1-tx-contract-call.json')) as Record<string, unknown>;
    let body = example;
    const { api } = client((m, p, i) =>
      p === `/extended/v1/tx/${TXID}` ? json(JSON.stringify(body)) : hiroV1Only()(m, p, i),
    );
    expect(await api.transaction(TXID)).toEqual({
      txid: '0xb88e97c8b86124a298de9e02bfb0551a977f09769624bd8e6d659a157a695e9f',
      status: 'success',
      canonical: true,
      blockHeight: 3201,
      resultHex: null,
      resultRepr: null,
      sender: 'STJTXEJPJPPVDNA9B052NSRRBGQCFNKVS178VGH1',
      nonce: null,
      contractCall: {
        contractId: 'STJTXEJPJPPVDNA9B052NSRRBGQCFNKVS178VGH1.hello_world',
        functionName: 'set-value',
        args: ['0x0200000003666f6f', '0x0200000003626172'],
      },
      replacedBy: null,
    });
    body = { ...example, canonical: false };
    expect(await api.transaction(TXID)).toMatchObject({
      status: 'success',
      canonical: false,
      blockHeight: 3201,
    });
  });

  it('v1 mempool (Hiro’s published example) and v1 not found', async () => {
    const { api } = client((m, p, i) =>
      p === `/extended/v1/tx/${TXID}` ? json(hiro('hiro-v1-mempool-tx-pending.json')) : hiroV1Only()(m, p, i),
    );
    expect(await api.transaction(TXID)).toMatchObject({
      status: 'pending',
      canonical: false,
      contractCall: null,
    });
    expect(await client(hiroV1Only()).api.transaction(TXID)).toBeNull();
  });

  it('a node has no transaction index: wrong-kind, never "not found"', async () => {
    await expect(client(bareNode).api.transaction(TXID)).rejects.toMatchObject({ reason: 'wrong-kind' });
  });

  it('next nonce: v3 next_nonce, v1 possible_next_nonce, node account nonce (published examples)', async () => {
    const addr = 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH';
    const v3 = client((m, p, i) =>
      p === `/extended/v3/principals/${addr}/nonces`
        ? json(hiro('hiro-v3-principal-nonces.json'))
        : hiroV3(m, p, i),
    );
    expect(await v3.api.nextNonce(addr)).toBe(4n);
    const v1 = client((m, p, i) =>
      p === `/extended/v1/address/${addr}/nonces`
        ? json(hiro('hiro-v1-address-nonces.json'))
        : hiroV1Only()(m, p, i),
    );
    expect(await v1.api.nextNonce(addr)).toBe(6n);
    const node = client((m, p, i) =>
      p === `/v2/accounts/${addr}?proof=0` ? json(core('account-data')) : bareNode(m, p, i),
    );
    expect(await node.api.nextNonce(addr)).toBe(2867n);
    expect(await node.api.accountNonce(addr)).toBe(2867n);
  });

  it('info, read-only calls (with sender) and broadcasts from stacks-core’s examples', async () => {
    let readOnly = core('read-only-function-success');
    const { api, calls } = client((_m, p) => {
      if (p === '/v2/info') return json(core('node-info'));
      if (p.startsWith('/v2/contracts/call-read/')) return json(readOnly);
      if (p === '/v2/transactions') {
        const bytes = calls.at(-1)?.body as Uint8Array;
        if (bytes[0] === 0) return plain('Failed to decode transaction', 400);
        if (bytes[0] === 1) return json(core('transaction-submission-error'), 400);
        return json('"e161978626f216b2141b156ade10501207ae535fa365a13ef5d7a7c9310a09f2"');
      }
      return undefined;
    });
    expect(await api.info()).toEqual({
      networkId: 1,
      stacksTipHeight: 1832097,
      burnBlockHeight: 16,
      serverVersion: 'stacks-node 3.1.0.0.12 (release/3.1.0.0.12:ae969ca+, release build, linux [x86_64])',
    });
    const sender = 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH';
    expect(await api.callReadOnly(`${sender}.notary`, 'get-anchor', ['0x0100'], sender)).toEqual({
      okay: true,
      result: '0x0100000000000000000000000000000001',
    });
    expect(calls.at(-1)).toMatchObject({
      method: 'POST',
      path: `/v2/contracts/call-read/${sender}/notary/get-anchor`,
      headers: { 'content-type': 'application/json' },
    });
    expect(JSON.parse(String(calls.at(-1)?.body))).toEqual({ sender, arguments: ['0x0100'] });
    readOnly = core('read-only-function-failure');
    expect(await api.callReadOnly(`${sender}.notary`, 'get-anchor', [], sender)).toEqual({
      okay: false,
      cause: 'NotReadOnly',
    });

    expect(await api.broadcast(new Uint8Array([2, 0]))).toEqual({
      accepted: true,
      txid: 'e161978626f216b2141b156ade10501207ae535fa365a13ef5d7a7c9310a09f2',
    });
    expect(calls.at(-1)?.headers['content-type']).toBe('application/octet-stream');
    expect(await api.broadcast(new Uint8Array([1]))).toMatchObject({ accepted: false, status: 400 });
    const refused = await api.broadcast(new Uint8Array([1]));
    expect(!refused.accepted && JSON.parse(refused.body)).toMatchObject({ reason: 'BadNonce' });
    expect(await api.broadcast(new Uint8Array([0]))).toEqual({
      accepted: false,
      status: 400,
      body: 'Failed to decode transaction',
    });
  });

  it('the notary contract: get-anchor records and anchor results', async () => {
    const sender = 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH';
    const root = `0x${'11'.repeat(32)}`;
    let result = `0x${serializeCV(Cl.some(Cl.tuple({ height: Cl.uint(42), sender: Cl.standardPrincipal(sender) })))}`;
    const { api, calls } = client((_m, p) =>
      p.startsWith('/v2/contracts/call-read/') ? json(JSON.stringify({ okay: true, result })) : undefined,
    );
    expect(await readAnchor(api, `${sender}.notary`, root, sender)).toEqual({ height: 42, sender });
    expect(JSON.parse(String(calls.at(-1)?.body))).toEqual({ sender, arguments: [rootArgument(root)] });
    result = `0x${serializeCV(Cl.none())}`;
    expect(await readAnchor(api, `${sender}.notary`, root, sender)).toBeNull();
    result = `0x${serializeCV(Cl.uint(1))}`;
    await expect(readAnchor(api, `${sender}.notary`, root, sender)).rejects.toMatchObject({
      reason: 'bad-answer',
    });

    const ok = `0x${serializeCV(Cl.ok(Cl.tuple({ root: Cl.bufferFromHex('11'.repeat(32)), height: Cl.uint(7), new: Cl.bool(true) })))}`;
    expect(anchoredRootOfResult(ok)).toBe(root);
    expect(anchoredRootOfResult('0x0703')).toBeNull();
    expect(anchoredRootOfResult('zz')).toBeNull();
  });
});

describe('answers that are not the API are unavailability', () => {
  it('not JSON, HTTP errors, redirects, oversized bodies, unreachable', async () => {
    const routes: Record<string, Reply> = {
      '/v2/info': plain('<html>maintenance</html>', 200),
      '/v2/fees/transfer': plain('upstream error', 502),
      '/v2/accounts/SP1?proof=0': { status: 302, body: '', headers: { location: 'http://elsewhere/' } },
    };
    const { api } = client((_m, p) => routes[p], { maxBytes: 64 });
    await expect(api.info()).rejects.toMatchObject({ reason: 'not-json', status: 200 });
    await expect(api.feeRate()).rejects.toMatchObject({ reason: 'http-error', status: 502 });
    await expect(api.accountNonce('SP1')).rejects.toMatchObject({ reason: 'http-error', status: 302 });
    routes['/v2/info'] = json(JSON.stringify({ padding: 'x'.repeat(200) }));
    await expect(api.info()).rejects.toMatchObject({ reason: 'unreachable' });
    routes['/v2/info'] = json('{"network_id":"one"}');
    await expect(client((_m, p) => routes[p]).api.info()).rejects.toMatchObject({ reason: 'bad-answer' });

    const down = new StacksAnchoringClient({
      url: 'http://stacks.test',
      transport: {
        fetch: (async () => {
          throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
        }) as typeof fetch,
        timeoutMs: 1000,
      },
    });
    await expect(down.info()).rejects.toMatchObject({ reason: 'unreachable', message: /ECONNREFUSED/ });
  });

  it('sends the API key as x-api-key on every request', async () => {
    const { api, calls } = client(hiroV3, { apiKey: 'hiro-key-123' });
    await api.detect();
    await api.info();
    expect(calls.length).toBe(3);
    for (const c of calls) expect(c.headers['x-api-key']).toBe('hiro-key-123');
  });
});

describe('request budget and 429', () => {
  it('Retry-After: seconds or an HTTP date', () => {
    const now = Date.parse('2026-07-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Wed, 01 Jul 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 30 Jun 2026 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('a token bucket: the burst goes at once, then the rate; a caller that cannot wait is rate-limited', async () => {
    const clock = fakeClock();
    const budget = new RequestBudget({ rpm: 60, burst: 2, clock });
    const t0 = clock.now();
    await budget.take(0);
    await budget.take(0);
    await expect(budget.take(500)).rejects.toMatchObject({ reason: 'rate-limited', retryAfterMs: 1000 });
    await budget.take(1000); // one per second at 60 per minute
    expect(clock.now() - t0).toBe(1000);
    // Callers asking together are served one after the other, each reserving its slot.
    await Promise.all([budget.take(10_000), budget.take(10_000), budget.take(10_000)]);
    expect(clock.now() - t0).toBe(4000);
  });

  it('every caller of one client shares the budget (default burst rpm/10)', async () => {
    const clock = fakeClock();
    const { api, calls } = client(bareNode, { rpm: 40, clock });
    expect(api.budget.burst).toBe(4);
    const t0 = clock.now();
    await Promise.all(Array.from({ length: 10 }, () => api.info()));
    expect(calls.length).toBe(10);
    // 4 at once, then one per 1.5 s.
    expect(clock.now() - t0).toBe(6 * 1500);
  });

  it('429 with Retry-After pauses every caller, then the request is sent again', async () => {
    const clock = fakeClock();
    let limited = 1;
    const { api, calls } = client(
      (m, p) => {
        if (p === '/v2/info' && limited > 0) {
          limited -= 1;
          return { status: 429, body: '', headers: { 'retry-after': '12' } };
        }
        return bareNode(m, p, {});
      },
      { clock, maxWaitMs: 60_000 },
    );
    const t0 = clock.now();
    expect(await api.info()).toMatchObject({ networkId: 1 });
    expect(clock.now() - t0).toBe(12_000);
    expect(calls.length).toBe(2);
  });

  it('429 longer than the caller can wait: rate-limited with the wait, and the client stays paused', async () => {
    const clock = fakeClock();
    let limited = true;
    const { api, calls } = client(
      (m, p) =>
        limited
          ? {
              status: 429,
              body: '{"error":"Too Many Requests"}',
              headers: { 'retry-after': 'Wed, 01 Jul 2026 00:02:00 GMT' },
            }
          : bareNode(m, p, {}),
      { clock, maxWaitMs: 5000 },
    );
    const err = await api.info().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StacksApiUnavailable);
    expect(err).toMatchObject({ reason: 'rate-limited', status: 429, retryAfterMs: 120_000 });
    limited = false;
    // Nothing is sent while the endpoint's pause lasts: the next caller is told at once.
    await expect(api.info()).rejects.toMatchObject({ reason: 'rate-limited' });
    expect(calls.length).toBe(1);
    await clock.sleep(120_000);
    expect(await api.info()).toMatchObject({ networkId: 1 });
  });

  it('a 429 without Retry-After pauses the default; three in a row give up', async () => {
    const clock = fakeClock();
    const { api, calls } = client(() => ({ status: 429, body: '' }), { clock, maxWaitMs: 600_000 });
    await expect(api.info()).rejects.toMatchObject({ reason: 'rate-limited', retryAfterMs: 30_000 });
    expect(calls.length).toBe(3);
    expect(clock.slept).toEqual([30_000, 30_000]);
  });
});
