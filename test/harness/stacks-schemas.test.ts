import { describe, expect, it } from 'vitest';
import { type StacksAnswer, stacksCoreExamples, validateStacksAnswer } from './stacks-schemas';

const TXID = `0x${'ab'.repeat(32)}`;
const SENDER = 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH';

function answer(partial: Partial<StacksAnswer> & Pick<StacksAnswer, 'path'>): StacksAnswer {
  return { method: 'GET', status: 200, contentType: 'application/json', body: '{}', ...partial };
}

/** A v3 mined contract call as Hiro serializes it (src/api/serializers/v3/transactions.ts). */
function v3Mined(extra: Record<string, unknown> = {}) {
  return {
    tx_id: TXID,
    sender: { address: SENDER, nonce: 3 },
    sponsor: null,
    fee_rate: '1000',
    block: { height: 7, hash: TXID, index_hash: TXID, time: 1700000000, tx_index: 0 },
    bitcoin_block: { height: 107, time: 1700000000 },
    status: 'success',
    parent_block: { hash: TXID, index_hash: TXID },
    event_count: 1,
    execution_cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
    vm_error: null,
    type: 'contract_call',
    contract_call: { contract_id: `${SENDER}.notary`, function_name: 'anchor' },
    ...extra,
  };
}

describe('the pinned Stacks API schemas (stacks-core docs/rpc, Hiro openapi.yaml and v1 entities)', () => {
  it("accepts stacks-core's own examples, but for the node-info example's missing unanchored_seq", () => {
    const examples = stacksCoreExamples();
    // Every example file the document references is reached (node info, accounts, fees, read-only calls, …).
    expect(examples.length).toBeGreaterThan(30);
    const failing = examples
      .map(({ name, answer }) => ({ name, violations: validateStacksAnswer(answer) }))
      .filter((e) => e.violations.length > 0);
    // The published example lacks a field the schema requires and the node always sends (getinfo.rs): the one
    // known disagreement upstream (see the fixtures' README).
    expect(failing).toEqual([
      {
        name: 'GET /v2/info 200 node-info',
        violations: ["GET /v2/info → 200: (body) must have required property 'unanchored_seq'"],
      },
    ]);
  });

  it('refuses a /v2/info that lacks required fields, and a rejection with a text body where JSON is documented', () => {
    const info = validateStacksAnswer(
      answer({ path: '/v2/info', body: JSON.stringify({ network_id: 1, stacks_tip_height: 5 }) }),
    );
    expect(info).toContain("GET /v2/info → 200: (body) must have required property 'stacks_tip'");
    expect(info).toContain("GET /v2/info → 200: (body) must have required property 'unanchored_seq'");
    // A call-read 200 must be JSON with okay/result or okay/cause.
    expect(
      validateStacksAnswer(
        answer({
          method: 'POST',
          path: `/v2/contracts/call-read/${SENDER}/notary/get-anchor`,
          body: '{"okay":true}',
        }),
      ),
    ).not.toEqual([]);
    // The account answer has no room for extra fields (additionalProperties: false).
    expect(
      validateStacksAnswer(
        answer({
          path: `/v2/accounts/${SENDER}`,
          body: JSON.stringify({ balance: '0x0', locked: '0x0', unlock_height: 0, nonce: 0, extra: 1 }),
        }),
      ),
    ).toEqual([`GET /v2/accounts/${SENDER} → 200: (body) must NOT have additional properties`]);
  });

  it('knows the rejection fields stacks-core sends: NotEnoughFunds in u128 hex, no max_nonce needed', () => {
    const post = (body: unknown) =>
      validateStacksAnswer(
        answer({ method: 'POST', path: '/v2/transactions', status: 400, body: JSON.stringify(body) }),
      );
    const funds = { error: 'transaction rejected', reason: 'NotEnoughFunds', txid: TXID.slice(2) };
    expect(
      post({ ...funds, reason_data: { expected: `0x${'0'.repeat(28)}03e8`, actual: `0x${'0'.repeat(32)}` } }),
    ).toEqual([]);
    expect(post({ ...funds, reason_data: { expected: 1000, actual: 0 } })).toHaveLength(2);
    expect(
      post({
        error: 'transaction rejected',
        reason: 'TooMuchChaining',
        reason_data: { message: 'Nonce would exceed chaining limit in mempool', expected: 26, actual: 30 },
        txid: TXID.slice(2),
      }),
    ).toEqual([]);
    // Text bodies are documented for decode errors; a 500 is stacks-core's text too.
    expect(
      validateStacksAnswer(
        answer({
          method: 'POST',
          path: '/v2/transactions',
          status: 400,
          contentType: 'text/plain',
          body: 'Failed to decode: Missing Content-Type for transaction',
        }),
      ),
    ).toEqual([]);
  });

  it("holds Hiro's v3 transaction to its entity and to include", () => {
    const path = `/extended/v3/transactions/${TXID}`;
    expect(validateStacksAnswer(answer({ path, body: JSON.stringify(v3Mined()) }))).toEqual([]);
    const withResult = JSON.stringify(v3Mined({ result: { hex: '0x0703', repr: '(ok true)' } }));
    expect(validateStacksAnswer(answer({ path: `${path}?include=result`, body: withResult }))).toEqual([]);
    expect(validateStacksAnswer(answer({ path, body: withResult }))).toEqual([
      `GET ${path} → 200: result sent without include=result`,
    ]);
    expect(
      validateStacksAnswer(
        answer({ path: `${path}?include=function_args&include=result`, body: withResult }),
      ),
    ).toEqual([`GET ${path} → 200: include=function_args but function_args missing`]);
    const { block: _block, ...noBlock } = v3Mined();
    expect(validateStacksAnswer(answer({ path, body: JSON.stringify(noBlock) }))).not.toEqual([]);
    // Errors are Hiro's JSON error body; a stacks-node's text 404 is not what Hiro sends.
    const notFound = { statusCode: 404, error: 'Not Found', message: 'Transaction not found' };
    expect(validateStacksAnswer(answer({ path, status: 404, body: JSON.stringify(notFound) }))).toEqual([]);
    expect(
      validateStacksAnswer(answer({ path, status: 404, contentType: 'text/plain', body: 'Not found' })),
    ).not.toEqual([]);
  });

  it("holds Hiro's deprecated v1 routes to their TypeBox entities, and their 410 to the deprecation plugin", () => {
    const nonces = {
      last_mempool_tx_nonce: 5,
      last_executed_tx_nonce: 2,
      possible_next_nonce: 6,
      detected_missing_nonces: [4, 3],
      detected_mempool_nonces: [],
    };
    const noncesPath = `/extended/v1/address/${SENDER}/nonces`;
    expect(validateStacksAnswer(answer({ path: noncesPath, body: JSON.stringify(nonces) }))).toEqual([]);
    const { possible_next_nonce: _next, ...withoutNext } = nonces;
    expect(validateStacksAnswer(answer({ path: noncesPath, body: JSON.stringify(withoutNext) }))).toEqual([
      `GET ${noncesPath} → 200: (body) must have required property 'possible_next_nonce'`,
    ]);
    const gone = {
      error: 'Gone',
      message: 'This endpoint has been disabled. See https://docs.hiro.so/stacks/api for more information',
    };
    expect(
      validateStacksAnswer(answer({ path: noncesPath, status: 410, body: JSON.stringify(gone) })),
    ).toEqual([]);
    expect(
      validateStacksAnswer(
        answer({ path: noncesPath, status: 410, body: JSON.stringify({ error: 'gone' }) }),
      ),
    ).not.toEqual([]);
  });

  it("requires Retry-After on a gateway 429, and stacks-node's text 404 off its routes", () => {
    const limited = answer({ path: '/extended', status: 429, body: '{"error":"Too Many Requests"}' });
    expect(validateStacksAnswer(limited)).toEqual([
      'GET /extended → 429: a 429 carries Retry-After in seconds',
    ]);
    expect(validateStacksAnswer({ ...limited, headers: { 'retry-after': '7' } })).toEqual([]);
    const bare = { path: '/extended/v1/tx/x', status: 404, server: 'node' as const };
    expect(
      validateStacksAnswer(
        answer({ ...bare, contentType: 'text/plain', body: "No such API endpoint 'GET /x'" }),
      ),
    ).toEqual([]);
    expect(validateStacksAnswer(answer({ ...bare, body: '{"error":"not found"}' }))).not.toEqual([]);
  });
});
