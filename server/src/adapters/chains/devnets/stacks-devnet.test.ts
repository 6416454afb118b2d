import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  Cl,
  cvToString,
  hexToCV,
  makeContractCall,
  PostConditionMode,
  serializeCV,
} from '@stacks/transactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLazyStacksDevnet, startStacksDevnetWorker } from '../devnet-worker.js';
import { MAX_PENDING_PER_SENDER, type StacksDevnet, startStacksDevnet } from './stacks-devnet.js';

/**
 * Drives the devnet with raw HTTP, as a client of a Stacks node and of Hiro's API would. Every answer is also
 * held to the pinned stacks-core/Hiro schemas by the test setup (test/harness/stacks-devnet-guard.ts): a test
 * whose devnet answered outside them fails.
 */

interface Got {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are read field by field in assertions
  json: any;
}

async function http(url: string, init: RequestInit = {}): Promise<Got> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: body };
}

/** POSTs `body` as JSON text to `url`, labelled `contentType`. */
function postJson(url: string, body: unknown, contentType = 'application/json'): Promise<Got> {
  return http(url, { method: 'POST', headers: { 'content-type': contentType }, body: JSON.stringify(body) });
}

function signer(dev: StacksDevnet) {
  const [contractAddress = '', contractName = ''] = dev.contractId.split('.');
  return (root: string, nonce: number, fee = 1000) =>
    makeContractCall({
      contractAddress,
      contractName,
      functionName: 'anchor',
      functionArgs: [Cl.bufferFromHex(root)],
      senderKey: dev.senderKey,
      nonce,
      fee,
      network: 'devnet',
      postConditionMode: PostConditionMode.Deny,
    });
}

function poster(dev: StacksDevnet) {
  /** `contentType` null: none sent. */
  return (raw: Uint8Array, contentType: string | null = 'application/octet-stream') =>
    http(`${dev.url}/v2/transactions`, {
      method: 'POST',
      headers: contentType === null ? {} : { 'content-type': contentType },
      body: Buffer.from(raw),
    });
}

const root = (byte: number) => byte.toString(16).padStart(2, '0').repeat(32);

let dev: StacksDevnet;
let sign: ReturnType<typeof signer>;
let post: ReturnType<typeof poster>;
/**
 * Starts a devnet with `options` before the enclosing block's tests as `dev` (stopped after them), with `sign`
 * and `post` for it; the blocks run one after the other, so they share these names.
 */
function useDevnet(options: Parameters<typeof startStacksDevnet>[0]): void {
  beforeAll(async () => {
    dev = await startStacksDevnet(options);
    sign = signer(dev);
    post = poster(dev);
  });
  afterAll(async () => {
    await dev.stop();
  });
}

describe('Stacks devnet: the node RPC (stacks-core)', () => {
  useDevnet({ blockTimeMs: 0 });

  it('serves /v2/info with every field of the node (RPCPeerInfoData), /v2/accounts and /v2/fees/transfer', async () => {
    const info = await http(`${dev.url}/v2/info`);
    expect(info.json.network_id).toBe(0x80000000);
    expect(info.json).toMatchObject({
      unanchored_tip: null,
      unanchored_seq: null,
      exit_at_block_height: null,
    });
    expect(info.json.stacks_tip).toMatch(/^[0-9a-f]{64}$/);
    expect(info.json.pox_consensus).toMatch(/^[0-9a-f]{40}$/);
    const acc = await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`);
    expect(acc.json.nonce).toBe(0);
    expect(acc.json.balance).toMatch(/^0x[0-9a-f]{32}$/);
    expect(BigInt(acc.json.balance)).toBeGreaterThan(0n);
    expect((await http(`${dev.url}/v2/fees/transfer`)).json).toBe(1);
    expect(dev.takeViolations()).toEqual([]);
  });

  it('answers CORS like the public Stacks APIs (the web verify page reads it from a browser)', async () => {
    const preflight = await fetch(
      `${dev.url}/v2/contracts/call-read/${dev.contractId.replace('.', '/')}/get-anchor`,
      {
        method: 'OPTIONS',
        headers: {
          origin: 'http://127.0.0.1:3000',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      },
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('content-type');
    const info = await fetch(`${dev.url}/v2/info`, { headers: { origin: 'http://127.0.0.1:3000' } });
    expect(info.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('mines a contract call, records the root and reads it back with call-read', async () => {
    const r = root(0xcd);
    const tx = await sign(r, 0);
    expect(await post(tx.serializeBytes())).toMatchObject({ status: 200, json: tx.txid() });
    expect(await post(tx.serializeBytes())).toMatchObject({ status: 200, json: tx.txid() }); // idempotent re-post
    expect((await http(`${dev.url}/extended/v1/tx/0x${tx.txid()}`)).json.tx_status).toBe('pending');
    const tip = dev.mine();
    const done = (await http(`${dev.url}/extended/v1/tx/0x${tx.txid()}`)).json;
    expect(done).toMatchObject({ tx_status: 'success', block_height: tip, canonical: true, event_count: 1 });
    expect(done.tx_result.repr).toContain(`(root 0x${r})`);
    expect(done.contract_call.function_signature).toBe('(define-public (anchor (root (buff 32))))');
    expect(done.contract_call.function_args).toEqual([
      { hex: `0x${serializeCV(Cl.bufferFromHex(r))}`, repr: `0x${r}`, name: 'root', type: '(buff 32)' },
    ]);
    expect(done.events[0]).toMatchObject({
      event_type: 'smart_contract_log',
      contract_log: { topic: 'print' },
    });
    const [a, n] = dev.contractId.split('.');
    const read = await postJson(`${dev.url}/v2/contracts/call-read/${a}/${n}/get-anchor`, {
      sender: dev.senderAddress,
      arguments: [`0x${serializeCV(Cl.bufferFromHex(r))}`],
    });
    expect(read.json.okay).toBe(true);
    expect(cvToString(hexToCV(read.json.result))).toBe(
      `(some (tuple (height u${tip}) (sender ${dev.senderAddress})))`,
    );
    expect(
      (await http(`${dev.url}/extended/v1/address/${dev.senderAddress}/nonces`)).json.possible_next_nonce,
    ).toBe(1);
  });

  it('POST /v2/transactions: text/plain 400 for what it cannot decode, as stacks-core (posttransaction.rs)', async () => {
    const tx = await sign(root(0x31), 1);
    const bytes = tx.serializeBytes();
    const cases: [Uint8Array, string | null, string][] = [
      [bytes, null, 'Failed to decode: Missing Content-Type for transaction'],
      [
        bytes,
        'text/plain',
        'Failed to decode: Wrong Content-Type for transaction; expected application/json or application/octet-stream',
      ],
      [new Uint8Array(0), 'application/octet-stream', 'expected non-zero-length body for PostTransaction'],
      [
        Buffer.from('not a transaction'),
        'application/octet-stream',
        'Failed to deserialize posted transaction',
      ],
      [Buffer.from('{"tx":"zz"}'), 'application/json', 'Failed to decode: Failed to parse tx'],
    ];
    for (const [body, type, message] of cases) {
      const res = await post(body, type);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('text/plain');
      expect(res.text).toContain(message);
    }
    // The JSON form `{ tx: <hex> }` is the other accepted body.
    const asJson = await post(
      Buffer.from(JSON.stringify({ tx: Buffer.from(bytes).toString('hex') })),
      'application/json',
    );
    expect(asJson).toMatchObject({ status: 200, json: tx.txid() });
    dev.mine();
  });

  it('call-read: 400 text/plain without sender or with another content type (callreadonly.rs)', async () => {
    const [a, n] = dev.contractId.split('.');
    const url = `${dev.url}/v2/contracts/call-read/${a}/${n}/get-anchor`;
    const arg = `0x${serializeCV(Cl.bufferFromHex(root(0xcd)))}`;
    const noSender = await postJson(url, { arguments: [arg] });
    expect(noSender).toMatchObject({ status: 400, text: 'Failed to decode: Failed to parse JSON body' });
    expect(noSender.headers.get('content-type')).toBe('text/plain');
    const badSender = await postJson(url, { sender: 'nobody', arguments: [arg] });
    expect(badSender).toMatchObject({
      status: 400,
      text: 'Failed to decode: Failed to parse sender principal',
    });
    const form = await postJson(url, { sender: dev.senderAddress, arguments: [arg] }, 'text/plain');
    expect(form).toMatchObject({
      status: 400,
      text: 'Failed to decode: Invalid content-type: expected application/json',
    });
    const badArg = await postJson(url, { sender: dev.senderAddress, arguments: ['0xzz'] });
    expect(badArg).toMatchObject({
      status: 400,
      text: 'Failed to decode: Failed to deserialize argument value',
    });
    const noFn = await postJson(`${dev.url}/v2/contracts/call-read/${a}/${n}/no-such-fn`, {
      sender: dev.senderAddress,
      arguments: [],
    });
    expect(noFn).toMatchObject({ status: 200, json: { okay: false } });
    expect(typeof noFn.json.cause).toBe('string');
  });

  it('rejects with the fields stacks-core sends (MemPoolRejection::into_json): BadNonce, ConflictingNonceInMempool, FeeTooLow, NotEnoughFunds, BadFunctionArgument, TooMuchChaining', async () => {
    const next = (await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`)).json.nonce as number;
    const stale = await sign(root(0x01), next - 1);
    const r1 = await post(stale.serializeBytes());
    expect(r1).toMatchObject({ status: 400 });
    expect(r1.json).toEqual({
      error: 'transaction rejected',
      reason: 'BadNonce',
      reason_data: { expected: next, actual: next - 1, principal: dev.senderAddress, is_origin: true },
      txid: stale.txid(),
    });

    const first = await sign(root(0x02), next, 1000);
    expect((await post(first.serializeBytes())).status).toBe(200);
    const same = await sign(root(0x03), next, 1000);
    expect((await post(same.serializeBytes())).json).toEqual({
      error: 'transaction rejected',
      reason: 'ConflictingNonceInMempool',
      txid: same.txid(),
    });

    const cheap = await sign(root(0x04), next + 1, 1);
    expect((await post(cheap.serializeBytes())).json).toMatchObject({
      reason: 'FeeTooLow',
      reason_data: { expected: cheap.serializeBytes().length, actual: 1 },
    });

    const rich = await sign(root(0x05), next + 1, 10 ** 15);
    const funds = (await post(rich.serializeBytes())).json;
    expect(funds.reason).toBe('NotEnoughFunds');
    expect(funds.reason_data.expected).toBe(`0x${(10n ** 15n).toString(16).padStart(32, '0')}`);
    expect(funds.reason_data.actual).toMatch(/^0x[0-9a-f]{32}$/);

    const long = makeContractCall({
      contractAddress: dev.contractId.split('.')[0] ?? '',
      contractName: 'notary',
      functionName: 'anchor',
      functionArgs: [Cl.bufferFromHex('06'.repeat(33))],
      senderKey: dev.senderKey,
      nonce: next + 1,
      fee: 1000,
      network: 'devnet',
      postConditionMode: PostConditionMode.Deny,
    });
    const r5 = await post((await long).serializeBytes());
    expect(r5).toMatchObject({ status: 400, json: { reason: 'BadFunctionArgument' } });

    const far = await sign(root(0x07), next + MAX_PENDING_PER_SENDER + 2);
    const chained = (await post(far.serializeBytes())).json;
    expect(chained).toEqual({
      error: 'transaction rejected',
      reason: 'TooMuchChaining',
      reason_data: {
        message: 'Nonce would exceed chaining limit in mempool',
        expected: next + 1 + MAX_PENDING_PER_SENDER,
        actual: next + MAX_PENDING_PER_SENDER + 2,
        principal: dev.senderAddress,
        is_origin: true,
      },
      txid: far.txid(),
    });
    expect(chained.reason_data).not.toHaveProperty('max_nonce');
    dev.mine();
  });

  it("/v2/transactions/unconfirmed: the node's mempool view (kept after mining, gone when replaced)", async () => {
    const next = (await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`)).json.nonce as number;
    const tx = await sign(root(0x41), next);
    await post(tx.serializeBytes());
    const pending = await http(`${dev.url}/v2/transactions/unconfirmed/${tx.txid()}`);
    expect(pending.json).toEqual({ tx: Buffer.from(tx.serializeBytes()).toString('hex'), status: 'Mempool' });
    dev.mine();
    // stacks-core keeps mined transactions in its mempool database until they age out.
    expect((await http(`${dev.url}/v2/transactions/unconfirmed/${tx.txid()}`)).json.status).toBe('Mempool');
    const unknown = await http(`${dev.url}/v2/transactions/unconfirmed/${'0'.repeat(64)}`);
    expect(unknown).toMatchObject({ status: 404 });
    expect(unknown.headers.get('content-type')).toBe('text/plain');
  });

  it('answers an unknown route with the node text 404 and a known one with another method 405', async () => {
    // Hiro proxies all of /v2 to the node, so the node's 404 reaches the client either way.
    const none = await http(`${dev.url}/v2/nothing`);
    expect(none).toMatchObject({ status: 404, text: "No such API endpoint 'GET /v2/nothing'" });
    expect(none.headers.get('content-type')).toBe('text/plain');
    // Outside /v2 and /extended, Hiro's own (Fastify) 404.
    expect(await http(`${dev.url}/nothing`)).toMatchObject({ status: 404, json: { error: 'Not Found' } });
    dev.configure({ kind: 'node' });
    expect(await http(`${dev.url}/nothing`)).toMatchObject({
      status: 404,
      text: "No such API endpoint 'GET /nothing'",
    });
    const wrong = await http(`${dev.url}/v2/transactions`);
    expect(wrong).toMatchObject({ status: 405 });
    expect(wrong.headers.get('allow')).toBe('POST');
    dev.configure({ kind: 'hiro' });
  });
});

describe("Stacks devnet: Hiro's API", () => {
  useDevnet({ blockTimeMs: 0 });

  it('GET /extended: the status answer with the indexer chain tip, so clients can tell an indexer is there', async () => {
    const tip = dev.mine();
    const status = await http(`${dev.url}/extended`);
    expect(status.json).toMatchObject({ status: 'ready', chain_tip: { block_height: tip } });
    expect(status.json.server_version).toContain('stacks-blockchain-api');
  });

  it('GET /extended/v3/transactions/:tx_id: mempool then mined entity, heavy fields only on include', async () => {
    const r = root(0x51);
    const tx = await sign(r, 0);
    await post(tx.serializeBytes());
    const url = `${dev.url}/extended/v3/transactions/0x${tx.txid()}`;
    const pending = (await http(url)).json;
    expect(pending).toMatchObject({ tx_id: `0x${tx.txid()}`, status: 'pending', replaced_by_tx_id: null });
    expect(pending.contract_call).toEqual({ contract_id: dev.contractId, function_name: 'anchor' });
    const tip = dev.mine();
    const lean = (await http(url)).json;
    expect(lean).toMatchObject({
      status: 'success',
      block: { height: tip },
      type: 'contract_call',
      event_count: 1,
    });
    expect(lean).not.toHaveProperty('result');
    expect(lean.contract_call).not.toHaveProperty('function_args');
    const full = (await http(`${url}?include=function_args,result`)).json;
    expect(full.result.repr).toContain(`(root 0x${r})`);
    expect(full.contract_call.function_args).toEqual([
      { hex: `0x${serializeCV(Cl.bufferFromHex(r))}`, repr: `0x${r}` },
    ]);
    const repeated = (await http(`${url}?include=result&include=post_conditions`)).json;
    expect(repeated).toMatchObject({ post_conditions: [], result: full.result });
    expect(repeated.contract_call).not.toHaveProperty('function_args');
    // Without 0x too (the id pattern admits both).
    expect((await http(`${dev.url}/extended/v3/transactions/${tx.txid()}`)).json.tx_id).toBe(
      `0x${tx.txid()}`,
    );
    const bad = await http(`${url}?include=events`);
    expect(bad).toMatchObject({ status: 400, json: { statusCode: 400, error: 'Bad Request' } });
    const missing = await http(`${dev.url}/extended/v3/transactions/0x${'0'.repeat(64)}`);
    expect(missing).toMatchObject({
      status: 404,
      json: { error: 'Not Found', message: 'Transaction not found' },
    });
  });

  it("Hiro's next-nonce rule (getAddressNonces): the highest nonce seen + 1, gaps reported, on v1 and v3", async () => {
    const confirmed = (await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`)).json
      .nonce as number;
    // Nonces confirmed … confirmed-1 are mined; send confirmed and confirmed+2 (a gap at confirmed+1).
    await post((await sign(root(0x61), confirmed)).serializeBytes());
    await post((await sign(root(0x62), confirmed + 2)).serializeBytes());
    dev.mine(); // mines `confirmed` only: the next one waits for the gap
    const v1 = (await http(`${dev.url}/extended/v1/address/${dev.senderAddress}/nonces`)).json;
    expect(v1).toEqual({
      last_executed_tx_nonce: confirmed,
      last_mempool_tx_nonce: confirmed + 2,
      possible_next_nonce: confirmed + 3,
      detected_missing_nonces: [confirmed + 1],
      detected_mempool_nonces: [],
    });
    const v3 = (await http(`${dev.indexerUrl}/extended/v3/principals/${dev.senderAddress}/nonces`)).json;
    expect(v3).toEqual({
      next_nonce: confirmed + 3,
      last_confirmed_nonce: confirmed,
      mempool: { last_nonce: confirmed + 2, pending_nonces: [], missing_nonces: [confirmed + 1] },
    });
    // Filling the gap: both mine in the next block.
    await post((await sign(root(0x63), confirmed + 1)).serializeBytes());
    dev.mine();
    expect((await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`)).json.nonce).toBe(
      confirmed + 3,
    );
    const fresh = (await http(`${dev.url}/extended/v1/address/ST000000000000000000002AMW42H/nonces`)).json;
    expect(fresh).toMatchObject({ last_executed_tx_nonce: null, possible_next_nonce: 0 });
  });

  it('v1 routes carry the deprecation Warning and redirect a txid without 0x', async () => {
    const tx = await sign(root(0x71), (await http(`${dev.url}/v2/accounts/${dev.senderAddress}`)).json.nonce);
    await post(tx.serializeBytes());
    const res = await http(`${dev.url}/extended/v1/tx/${tx.txid()}?event_limit=5`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/extended/v1/tx/0x${tx.txid()}?event_limit=5`);
    const followed = await http(`${dev.url}/extended/v1/tx/0x${tx.txid()}`);
    expect(followed.headers.get('warning')).toBe(
      '299 - "Deprecated: See https://docs.hiro.so/stacks/api for more information"',
    );
    const unknown = await http(`${dev.url}/extended/v1/tx/0x${'0'.repeat(64)}`);
    expect(unknown).toMatchObject({ status: 404, json: { message: 'could not find transaction by ID' } });
    const route = await http(`${dev.url}/extended/v9/anything`);
    expect(route).toMatchObject({ status: 404, json: { error: 'Not Found' } });
    dev.mine();
  });
});

describe('Stacks devnet: switches', () => {
  const nextNonce = async () =>
    (await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`)).json.nonce as number;
  useDevnet({ blockTimeMs: 0, switches: { kind: 'node' } });

  it("kind 'node': a bare stacks-node has no /extended (its text 404); indexerUrl is Hiro; switchable at run time", async () => {
    const bare = await http(`${dev.url}/extended/v1/tx/0x${'0'.repeat(64)}`);
    expect(bare).toMatchObject({
      status: 404,
      text: `No such API endpoint 'GET /extended/v1/tx/0x${'0'.repeat(64)}'`,
    });
    expect(bare.headers.get('content-type')).toBe('text/plain');
    expect((await http(`${dev.url}/extended`)).status).toBe(404);
    expect((await http(`${dev.url}/v2/info`)).status).toBe(200);
    expect((await http(`${dev.indexerUrl}/extended`)).json.status).toBe('ready');
    // Hiro proxies the node's /v2 routes.
    expect((await http(`${dev.indexerUrl}/v2/info`)).json.network_id).toBe(0x80000000);
    expect(dev.configure({ kind: 'hiro' }).kind).toBe('hiro');
    expect((await http(`${dev.url}/extended`)).status).toBe(200);
    dev.configure({ kind: 'node' });
  });

  it('v1Gone: the deprecated v1 routes answer 410 as the deprecation plugin does; v3 still answers', async () => {
    dev.configure({ v1Gone: true });
    for (const p of [
      `/extended/v1/tx/0x${'0'.repeat(64)}`,
      `/extended/v1/address/${dev.senderAddress}/nonces`,
    ]) {
      const gone = await http(`${dev.indexerUrl}${p}`);
      expect(gone.status).toBe(410);
      expect(gone.json).toEqual({
        error: 'Gone',
        message: 'This endpoint has been disabled. See https://docs.hiro.so/stacks/api for more information',
      });
      expect(gone.headers.get('warning')).toContain('Deprecated');
    }
    expect((await http(`${dev.indexerUrl}/extended/v3/principals/${dev.senderAddress}/nonces`)).status).toBe(
      200,
    );
    dev.configure({ v1Gone: false });
    expect((await http(`${dev.indexerUrl}/extended/v1/address/${dev.senderAddress}/nonces`)).status).toBe(
      200,
    );
  });

  it('indexerLagBlocks: the node sees the anchor at once, the indexer N blocks later', async () => {
    dev.configure({ indexerLagBlocks: 2 });
    const r = root(0x81);
    const tx = await sign(r, await nextNonce());
    await post(tx.serializeBytes());
    const tip = dev.mine();
    const [a, n] = dev.contractId.split('.');
    const read = await postJson(`${dev.url}/v2/contracts/call-read/${a}/${n}/get-anchor`, {
      sender: dev.senderAddress,
      arguments: [`0x${serializeCV(Cl.bufferFromHex(r))}`],
    });
    expect(cvToString(hexToCV(read.json.result))).toContain(`(height u${tip})`);
    const status = (await http(`${dev.indexerUrl}/extended`)).json;
    expect(status.chain_tip.block_height).toBe(tip - 2);
    const v3 = `${dev.indexerUrl}/extended/v3/transactions/0x${tx.txid()}`;
    expect((await http(v3)).json.status).toBe('pending');
    expect((await http(`${dev.indexerUrl}/extended/v1/tx/0x${tx.txid()}`)).json.tx_status).toBe('pending');
    dev.mine(2);
    expect((await http(v3)).json).toMatchObject({ status: 'success', block: { height: tip } });
    dev.configure({ indexerLagBlocks: 0 });
  });

  it('rateLimit: the next N Hiro answers are 429 with Retry-After; a window limit counts requests; a bare node is never limited', async () => {
    dev.configure({ rateLimit: { next: 2, retryAfterSeconds: 3 } });
    for (let i = 0; i < 2; i++) {
      const limited = await http(`${dev.indexerUrl}/extended`);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('3');
    }
    expect((await http(`${dev.indexerUrl}/extended`)).status).toBe(200);

    dev.configure({ rateLimit: { limit: 2, windowMs: 60_000 } });
    expect((await http(`${dev.indexerUrl}/v2/info`)).status).toBe(200);
    expect((await http(`${dev.url}/v2/info`)).status).toBe(200); // kind 'node': not behind Hiro's gateway
    expect((await http(`${dev.indexerUrl}/extended`)).status).toBe(200);
    const over = await http(`${dev.indexerUrl}/extended`);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(over.headers.get('ratelimit-limit')).toBe('2');
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    dev.configure({ rateLimit: null });
    expect((await http(`${dev.indexerUrl}/extended`)).status).toBe(200);
  });

  it('markNonCanonical: v1 says canonical false, v3 404 and the nonce leaves; restored, both say pending', async () => {
    const nonce = await nextNonce();
    const tx = await sign(root(0x91), nonce);
    await post(tx.serializeBytes());
    dev.mine();
    dev.markNonCanonical(tx.txid());
    const v1 = (await http(`${dev.indexerUrl}/extended/v1/tx/0x${tx.txid()}`)).json;
    expect(v1).toMatchObject({ tx_status: 'success', canonical: false });
    expect((await http(`${dev.indexerUrl}/extended/v3/transactions/0x${tx.txid()}`)).status).toBe(404);
    const nonces = (await http(`${dev.indexerUrl}/extended/v1/address/${dev.senderAddress}/nonces`)).json;
    expect(nonces.last_executed_tx_nonce).toBe(nonce === 0 ? null : nonce - 1);
    dev.markNonCanonical(`0x${tx.txid()}`, { restored: true });
    expect((await http(`${dev.indexerUrl}/extended/v1/tx/0x${tx.txid()}`)).json.tx_status).toBe('pending');
    expect((await http(`${dev.indexerUrl}/extended/v3/transactions/0x${tx.txid()}`)).json.status).toBe(
      'pending',
    );
    expect(() => dev.markNonCanonical('00'.repeat(32))).toThrow(/not a mined transaction/);
  });

  it('a replaced transaction: the first reads dropped_replace_by_fee on v1, 404 on v3 and the node; the replacement is mined', async () => {
    const nonce = await nextNonce();
    const first = await sign(root(0xa1), nonce, 1000);
    await post(first.serializeBytes());
    // A broadcast replacement: same sender and nonce, a higher fee (stacks-core mempool.rs `try_add_tx`).
    const second = await sign(root(0xa2), nonce, 1500);
    expect((await post(second.serializeBytes())).json).toBe(second.txid());
    const v1 = (await http(`${dev.indexerUrl}/extended/v1/tx/0x${first.txid()}`)).json;
    expect(v1).toMatchObject({
      tx_status: 'dropped_replace_by_fee',
      replaced_by_tx_id: `0x${second.txid()}`,
    });
    expect((await http(`${dev.indexerUrl}/extended/v3/transactions/0x${first.txid()}`)).status).toBe(404);
    expect((await http(`${dev.url}/v2/transactions/unconfirmed/${first.txid()}`)).status).toBe(404);
    // The helper does the same with the devnet's key: twice the fee unless told.
    const third = dev.replaceByFee(second.txid());
    expect((await http(`${dev.indexerUrl}/extended/v1/tx/0x${second.txid()}`)).json).toMatchObject({
      tx_status: 'dropped_replace_by_fee',
      replaced_by_tx_id: `0x${third}`,
    });
    const replacement = (await http(`${dev.indexerUrl}/extended/v1/tx/0x${third}`)).json;
    expect(replacement).toMatchObject({ tx_status: 'pending', fee_rate: '3000', nonce });
    dev.mine();
    expect((await http(`${dev.indexerUrl}/extended/v3/transactions/0x${third}`)).json.status).toBe('success');
    expect(() => dev.replaceByFee(third)).toThrow(/not a pending transaction/);
  });

  it('requests(): what was asked, of which address, with the x-api-key header', async () => {
    const before = dev.requests().length;
    await http(`${dev.indexerUrl}/extended`, { headers: { 'x-api-key': 'k-123' } });
    const last = dev.requests().slice(before);
    expect(last).toEqual([
      expect.objectContaining({
        address: 'indexer',
        method: 'GET',
        path: '/extended',
        status: 200,
        apiKey: 'k-123',
      }),
    ]);
    expect(dev.takeViolations()).toEqual([]);
  });
});

describe('Stacks devnet: held to the schemas (strict)', () => {
  let dir: string;
  let flagged: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'stacks-devnet-schemas-'));
    flagged = path.join(dir, 'flag-fees.mjs');
    // A validator that finds the fee answer wrong, to see what a violation does.
    await writeFile(
      flagged,
      "export function validateStacksAnswer(a) { return a.path === '/v2/fees/transfer' ? ['fee answer flagged'] : []; }\n",
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a violating answer becomes a 500 naming the violation and is recorded; strict false passes it through, still recorded', async () => {
    const dev = await startStacksDevnet({ blockTimeMs: 0, schemas: flagged });
    try {
      const res = await http(`${dev.url}/v2/fees/transfer`);
      expect(res.status).toBe(500);
      expect(res.text).toContain('fee answer flagged');
      expect((await http(`${dev.url}/v2/info`)).status).toBe(200);
      expect(dev.takeViolations()).toEqual([
        'Stacks devnet answer breaks the pinned schemas: fee answer flagged',
      ]);
      dev.configure({ strict: false });
      expect(await http(`${dev.url}/v2/fees/transfer`)).toMatchObject({ status: 200, json: 1 });
      expect(dev.takeViolations()).toHaveLength(1);
      expect(dev.takeViolations()).toEqual([]);
    } finally {
      await dev.stop();
    }
  });

  it('a module without validateStacksAnswer is refused at start', async () => {
    const empty = path.join(dir, 'empty.mjs');
    await writeFile(empty, 'export const nothing = 1;\n');
    await expect(startStacksDevnet({ blockTimeMs: 0, schemas: empty })).rejects.toThrow(
      /validateStacksAnswer/,
    );
  });

  it('in its worker thread: the controls cross the thread, violations reach this thread', async () => {
    // Started as the service starts it (no `schemas` option): the validator comes from the environment the test setup
    // gives every test (STACKS_DEVNET_SCHEMAS), here pointed at the flagging one for this start only.
    const saved = process.env.STACKS_DEVNET_SCHEMAS;
    process.env.STACKS_DEVNET_SCHEMAS = flagged;
    const dev = await startStacksDevnetWorker({ blockTimeMs: 0 }).finally(() => {
      process.env.STACKS_DEVNET_SCHEMAS = saved;
    });
    try {
      await dev.controls.configure({ strict: true });
      const tip = await dev.controls.mine(2);
      expect((await http(`${dev.url}/v2/info`)).json.stacks_tip_height).toBe(tip);
      expect(await dev.controls.configure({ kind: 'node' })).toMatchObject({ kind: 'node', strict: true });
      expect((await http(`${dev.url}/extended`)).status).toBe(404);
      expect((await http(`${dev.indexerUrl}/extended`)).status).toBe(200);
      await expect(dev.controls.markNonCanonical('00'.repeat(32))).rejects.toThrow(/not a mined transaction/);
      expect((await http(`${dev.url}/v2/fees/transfer`)).status).toBe(500);
      const record = (globalThis as Record<symbol, unknown[]>)[Symbol.for('notary.stacks-devnet.violations')];
      expect(record?.length).toBe(1);
      expect(await dev.controls.takeViolations()).toEqual([
        'Stacks devnet answer breaks the pinned schemas: fee answer flagged',
      ]);
      expect(record?.length).toBe(0);
    } finally {
      await dev.stop();
    }
  });
});

describe("Stacks devnet started on first use (the service's ANCHORING=devnet)", () => {
  it('listens at once, starts its thread on the first request, then answers as the devnet on both addresses', async () => {
    const dev = await startLazyStacksDevnet({ blockTimeMs: 0 });
    try {
      expect(dev.started()).toBe(false);
      expect(dev.contractId).toBe(`${dev.senderAddress}.notary`);
      const info = await http(`${dev.url}/v2/info`);
      expect(info.status).toBe(200);
      expect(dev.started()).toBe(true);
      const tip = await dev.controls.mine(2);
      expect((await http(`${dev.url}/v2/info`)).json.stacks_tip_height).toBe(tip);
      expect((await http(`${dev.indexerUrl}/extended`)).status).toBe(200);
      // The sender chosen before the start is the devnet's funded deployer.
      const account = await http(`${dev.url}/v2/accounts/${dev.senderAddress}?proof=0`);
      expect(BigInt(account.json.balance as string)).toBeGreaterThan(0n);
    } finally {
      await dev.stop();
    }
  });

  it('a control starts it too; stopped before any use, it never starts', async () => {
    const used = await startLazyStacksDevnet({ blockTimeMs: 0 });
    try {
      expect(await used.controls.mine(1)).toBeGreaterThan(0);
      expect(used.started()).toBe(true);
    } finally {
      await used.stop();
    }
    const unused = await startLazyStacksDevnet({ blockTimeMs: 0 });
    await unused.stop();
    expect(unused.started()).toBe(false);
    await expect(unused.controls.mine(1)).rejects.toThrow(/stopped/);
  });
});

describe('Stacks devnet automatic miner', () => {
  it('includes a broadcast transaction and grows the tip without mine()', async () => {
    const dev = await startStacksDevnet({ blockTimeMs: 50 });
    try {
      const tx = await signer(dev)(root(0x77), 0);
      await poster(dev)(tx.serializeBytes());
      const started = Date.now();
      let status = 'pending';
      while (status === 'pending' && Date.now() - started < 5000) {
        await new Promise((r) => setTimeout(r, 25));
        status = (await http(`${dev.url}/extended/v1/tx/0x${tx.txid()}`)).json.tx_status;
      }
      expect(status).toBe('success');
      const info = (await http(`${dev.url}/v2/info`)).json.stacks_tip_height as number;
      await new Promise((r) => setTimeout(r, 200));
      expect((await http(`${dev.url}/v2/info`)).json.stacks_tip_height).toBeGreaterThan(info);
    } finally {
      await dev.stop();
    }
  });
});
