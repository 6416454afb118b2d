/**
 * The Stacks devnet's node routes: the subset of the stacks-node RPC API (stacks-core `docs/rpc/openapi.yaml`)
 * the notary's readers use, also served under Hiro's API, which proxies `/v2` to its node:
 * `GET /v2/info`, `GET /v2/accounts/:principal`, `GET /v2/fees/transfer`, `POST /v2/transactions`
 * (octet-stream or `{ tx }` JSON; 200 the txid, 400 JSON `MemPoolRejection` or text/plain decode errors),
 * `POST /v2/contracts/call-read/:address/:contract/:function`, `GET /v2/transactions/unconfirmed/:txid`;
 * anything else is stacks-node's text/plain 404 (or 405 for a known path with another method).
 */
import type { IncomingMessage } from 'node:http';
import { errorMessage } from '@notary/shared';
import {
  type ClarityValue,
  deserializeTransaction,
  hexToCV,
  type StacksTransactionWire,
  serializeCV,
} from '@stacks/transactions';
import { DEVNET_CHAIN_ID, stxBalance, u128Hex, validPrincipal } from './stacks-chain';
import { type Answer, drain, hiroError, json, readBody, text } from './stacks-http';
import { admit, MIN_FEE_PER_BYTE, RejectError } from './stacks-miner';
import { nonceOf, type StacksDevnetState } from './stacks-state';

/** stacks-core `MAX_PAYLOAD_LEN` (stacks-common/src/codec/mod.rs): the largest body `POST /v2/transactions` reads. */
const MAX_TX_BODY = 1 + 16 * 1024 * 1024;
/** Bound of a read-only call's JSON body here (stacks-core allows far more; the notary's calls are tiny). */
const MAX_CALL_READ_BODY = 1024 * 1024;
/** stacks-core keeps a mined transaction in its mempool database this many blocks (`MEMPOOL_MAX_TRANSACTION_AGE`). */
const MEMPOOL_RETENTION_BLOCKS = 256;

type NodeRouteName = 'info' | 'fees' | 'transactions' | 'accounts' | 'unconfirmed' | 'call-read';

/** The node routes this devnet serves: name and method, by path. */
function knownNodePath(pathname: string): { name: NodeRouteName; method: string } | undefined {
  if (pathname === '/v2/info') return { name: 'info', method: 'GET' };
  if (pathname === '/v2/fees/transfer') return { name: 'fees', method: 'GET' };
  if (pathname === '/v2/transactions') return { name: 'transactions', method: 'POST' };
  if (/^\/v2\/accounts\/[^/]+$/.test(pathname)) return { name: 'accounts', method: 'GET' };
  if (/^\/v2\/transactions\/unconfirmed\/[^/]+$/.test(pathname))
    return { name: 'unconfirmed', method: 'GET' };
  if (/^\/v2\/contracts\/call-read\/[^/]+\/[^/]+\/[^/]+$/.test(pathname))
    return { name: 'call-read', method: 'POST' };
  return undefined;
}

/** Paths Hiro's API proxies to its node (`/v2`). */
export function isNodePath(pathname: string): boolean {
  return pathname === '/v2' || pathname.startsWith('/v2/');
}

/**
 * Answers a request to the node (also Hiro's `/v2` proxy when `hiro`): `method`, the request `url` and its
 * path's non-empty segments `parts`; `req` is read for its body (or drained).
 */
export async function nodeRoute(
  state: StacksDevnetState,
  method: string,
  url: URL,
  parts: string[],
  req: IncomingMessage,
  hiro: boolean,
): Promise<Answer> {
  const pathname = url.pathname;
  const known = knownNodePath(pathname);
  if (!known) {
    await drain(req, 0);
    // Hiro proxies all of `/v2` to the node (src/api/init.ts `CoreNodeRpcProxyRouter`): the node's 404.
    if (hiro && !isNodePath(pathname)) return hiroError(404, `Route ${method}:${pathname} not found`);
    return text(404, `No such API endpoint '${method} ${pathname}'`);
  }
  if (known.method !== method) {
    await drain(req, 0);
    return text(405, `Method Not Allowed. Allowed: ${known.method}`, { allow: known.method });
  }
  if (known.name !== 'transactions' && known.name !== 'call-read') {
    const body = await drain(req, 1);
    // stacks-core's GET handlers take no body ("expected 0-length body").
    if (body > 0) return text(400, `Failed to decode: Invalid Http request: expected 0-length body`);
  }
  switch (known.name) {
    case 'info':
      return json(200, nodeInfo(state));
    case 'fees':
      return json(200, Number(MIN_FEE_PER_BYTE));
    case 'accounts':
      return account(state, url, decodeURIComponent(parts[2] ?? ''));
    case 'unconfirmed':
      return unconfirmed(state, url, parts[3] ?? '');
    case 'transactions':
      return postTransaction(state, req);
    case 'call-read':
      return callRead(state, req, parts);
  }
}

/** `GET /v2/accounts/:principal` (stackslib/src/net/api/getaccount.rs); proofs unless `proof=0`. */
function account(state: StacksDevnetState, url: URL, who: string): Answer {
  if (!validPrincipal(who)) return text(400, 'Failed to decode: Failed to parse `principal` field');
  return json(200, {
    balance: u128Hex(stxBalance(state.simnet, who)),
    locked: u128Hex(0n),
    unlock_height: 0,
    nonce: Number(nonceOf(state, who)),
    ...(url.searchParams.get('proof') === '0' ? {} : { balance_proof: '0x', nonce_proof: '0x' }),
  });
}

/** `GET /v2/transactions/unconfirmed/:txid` (gettransaction_unconfirmed.rs). */
function unconfirmed(state: StacksDevnetState, url: URL, id: string): Answer {
  // The node's route pattern is `[0-9a-f]{64}` (gettransaction_unconfirmed.rs): anything else has no route.
  if (!/^[0-9a-f]{64}$/.test(id)) return text(404, `No such API endpoint 'GET ${url.pathname}'`);
  const rec = state.txs.get(id);
  // stacks-core's mempool database keeps mined transactions until they age out; replaced ones are gone.
  const inMempool =
    rec &&
    rec.status !== 'dropped_replace_by_fee' &&
    (rec.blockHeight === undefined ||
      state.simnet.stacksBlockHeight - rec.blockHeight < MEMPOOL_RETENTION_BLOCKS);
  if (!rec || !inMempool) {
    return text(404, `Transaction ${id} not found in mempool or unconfirmed microblock stream`);
  }
  return json(200, { tx: Buffer.from(rec.raw).toString('hex'), status: 'Mempool' });
}

/** `POST /v2/transactions` (stackslib/src/net/api/posttransaction.rs). */
async function postTransaction(state: StacksDevnetState, req: IncomingMessage): Promise<Answer> {
  const raw = await postedTransaction(req);
  if (!(raw instanceof Uint8Array)) return raw;
  let decoded: StacksTransactionWire;
  try {
    decoded = deserializeTransaction(raw);
  } catch (err) {
    return text(400, `Failed to decode: Failed to deserialize posted transaction: ${errorMessage(err)}`);
  }
  const txid = decoded.txid();
  try {
    admit(state, decoded, txid, raw);
    return json(200, txid);
  } catch (err) {
    if (!(err instanceof RejectError)) throw err;
    return json(400, {
      error: 'transaction rejected',
      reason: err.rejection.reason,
      ...(err.rejection.reason_data ? { reason_data: err.rejection.reason_data } : {}),
      txid,
    });
  }
}

/** The serialized transaction of a `POST /v2/transactions` body (octet-stream, or JSON `{ tx: hex }`), or the 400. */
async function postedTransaction(req: IncomingMessage): Promise<Uint8Array | Answer> {
  const contentType = (req.headers['content-type'] ?? '').toLowerCase().trim();
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > MAX_TX_BODY) {
    req.resume();
    return text(400, 'Failed to decode: Invalid Http request: PostTransaction body is too big');
  }
  const body = await readBody(req, MAX_TX_BODY);
  if (body === undefined)
    return text(400, 'Failed to decode: Invalid Http request: PostTransaction body is too big');
  if (body.length === 0) {
    return text(
      400,
      'Failed to decode: Invalid Http request: expected non-zero-length body for PostTransaction',
    );
  }
  if (contentType === '') return text(400, 'Failed to decode: Missing Content-Type for transaction');
  if (contentType === 'application/octet-stream') return body;
  if (contentType === 'application/json' || contentType.startsWith('application/json;')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return text(400, 'Failed to decode: Failed to parse body');
    }
    const hex = (parsed as { tx?: unknown }).tx;
    if (typeof hex !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(hex)) {
      return text(
        400,
        typeof hex === 'string'
          ? 'Failed to decode: Failed to parse tx'
          : 'Failed to decode: Failed to parse body',
      );
    }
    return Buffer.from(hex, 'hex');
  }
  return text(
    400,
    'Failed to decode: Wrong Content-Type for transaction; expected application/json or application/octet-stream',
  );
}

/** `POST /v2/contracts/call-read/…` (stackslib/src/net/api/callreadonly.rs). */
async function callRead(state: StacksDevnetState, req: IncomingMessage, parts: string[]): Promise<Answer> {
  const [, , , address, name, fn] = parts;
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  const body = await readBody(req, MAX_CALL_READ_BODY);
  const size = body?.length ?? declared;
  if (body === undefined || size === 0) {
    return text(
      400,
      `Failed to decode: Invalid Http request: invalid body length for CallReadOnly (${size})`,
    );
  }
  const contentType = (req.headers['content-type'] ?? '').toLowerCase().trim();
  if (contentType !== 'application/json' && !contentType.startsWith('application/json;')) {
    return text(400, 'Failed to decode: Invalid content-type: expected application/json');
  }
  let parsed: { sender?: unknown; sponsor?: unknown; arguments?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    return text(400, 'Failed to decode: Failed to parse JSON body');
  }
  // serde's `CallReadOnlyRequestBody { sender: String, sponsor: Option<String>, arguments: Vec<String> }`.
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    typeof parsed.sender !== 'string' ||
    !Array.isArray(parsed.arguments) ||
    !parsed.arguments.every((a) => typeof a === 'string') ||
    (parsed.sponsor !== undefined && parsed.sponsor !== null && typeof parsed.sponsor !== 'string')
  ) {
    return text(400, 'Failed to decode: Failed to parse JSON body');
  }
  if (!validPrincipal(parsed.sender)) return text(400, 'Failed to decode: Failed to parse sender principal');
  if (typeof parsed.sponsor === 'string' && !validPrincipal(parsed.sponsor)) {
    return text(400, 'Failed to decode: Failed to parse sponsor principal');
  }
  let args: ClarityValue[];
  try {
    args = (parsed.arguments as string[]).map((a) => hexToCV(a));
  } catch {
    return text(400, 'Failed to decode: Failed to deserialize argument value');
  }
  try {
    const result = state.simnet.callReadOnlyFn(`${address}.${name}`, fn ?? '', args, parsed.sender);
    return json(200, { okay: true, result: `0x${serializeCV(result.result)}` });
  } catch (err) {
    return json(200, { okay: false, cause: errorMessage(err) });
  }
}

/** `/v2/info` with every field of stacks-core's `RPCPeerInfoData` (stackslib/src/net/api/getinfo.rs). */
function nodeInfo(state: StacksDevnetState) {
  const { simnet, chain } = state;
  const tip = simnet.stacksBlockHeight;
  const burn = simnet.burnBlockHeight;
  return {
    peer_version: 4207599116,
    pox_consensus: chain.consensusHash(burn),
    burn_block_height: burn,
    stable_pox_consensus: chain.consensusHash(Math.max(0, burn - 1)),
    stable_burn_block_height: Math.max(0, burn - 1),
    server_version: 'stacks-node notary-devnet (clarinet-sdk simnet)',
    network_id: DEVNET_CHAIN_ID,
    parent_network_id: 3669344250,
    stacks_tip_height: tip,
    stacks_tip: chain.blockHash(tip),
    stacks_tip_consensus_hash: chain.consensusHash(chain.block(tip).burnHeight),
    genesis_chainstate_hash: chain.genesisHash,
    unanchored_tip: null,
    unanchored_seq: null,
    tenure_height: tip,
    exit_at_block_height: null,
    is_fully_synced: true,
    node_public_key: chain.nodePublicKey,
    node_public_key_hash: chain.nodePublicKeyHash,
    last_pox_anchor: { anchor_block_hash: chain.blockHash(0), anchor_block_txid: '0'.repeat(64) },
    stackerdbs: [],
  };
}
