/**
 * The Stacks devnet's Hiro Stacks Blockchain API routes (`openapi.yaml`, and its deprecated v1 routes behind
 * the deprecation plugin), over the indexer's view of the chain (`indexerLagBlocks`, orphaned transactions):
 * `GET /extended` (status), `GET /extended/v3/transactions/:tx_id?include=…`,
 * `GET /extended/v3/principals/:principal/nonces`, and the deprecated `GET /extended/v1/tx/:tx_id`,
 * `GET /extended/v1/address/:principal/nonces` (with Hiro's `Warning: 299` header, or 410 when `v1Gone`).
 */
import { validateStacksAddress } from '@stacks/transactions';
import { normalizeTxid } from './stacks-chain';
import { type Answer, hiroError, json, validationError } from './stacks-http';
import { v1MempoolJson, v1MinedJson, v3MempoolJson, v3MinedJson } from './stacks-indexer-json';
import type { StacksDevnetState } from './stacks-state';
import { indexerTip, indexerView } from './stacks-switches';

/** The message of Hiro's deprecation plugin (`src/api/init.ts` `defaultDeprecatedMessage`). */
export const HIRO_DEPRECATED_MESSAGE = 'See https://docs.hiro.so/stacks/api for more information';

/**
 * Answers a request to the Hiro API's `/extended` routes: `method`, the request `url` and its path's
 * non-empty segments `parts`. Anything else is Fastify's 404.
 */
export function hiroRoute(state: StacksDevnetState, method: string, url: URL, parts: string[]): Answer {
  const pathname = url.pathname;
  const notFound = () => hiroError(404, `Route ${method}:${pathname} not found`);
  if (method !== 'GET') return notFound();
  if (pathname === '/extended' || pathname === '/extended/') return hiroStatus(state);
  const v1 = parts[1] === 'v1';
  const v1Routes =
    (parts[2] === 'tx' && parts.length === 4) ||
    (parts[2] === 'address' && parts[4] === 'nonces' && parts.length === 5);
  if (v1 && v1Routes) {
    const warning = { warning: `299 - "Deprecated: ${HIRO_DEPRECATED_MESSAGE}"` };
    if (state.switches.v1Gone) {
      return json(
        410,
        { error: 'Gone', message: `This endpoint has been disabled. ${HIRO_DEPRECATED_MESSAGE}` },
        warning,
      );
    }
    const answer =
      parts[2] === 'tx' ? v1Tx(state, url, decodeURIComponent(parts[3] ?? '')) : v1Nonces(state, parts);
    return { ...answer, headers: { ...answer.headers, ...warning } };
  }
  if (parts[1] === 'v3' && parts[2] === 'transactions' && parts.length === 4) {
    return v3Tx(state, url, decodeURIComponent(parts[3] ?? ''));
  }
  if (parts[1] === 'v3' && parts[2] === 'principals' && parts[4] === 'nonces' && parts.length === 5) {
    return v3Nonces(state, decodeURIComponent(parts[3] ?? ''));
  }
  return notFound();
}

/** `GET /extended`: the API's status, with the indexer's chain tip once past genesis. */
function hiroStatus(state: StacksDevnetState): Answer {
  const { chain } = state;
  const tip = indexerTip(state);
  return json(200, {
    server_version: 'stacks-blockchain-api v9.0.2 (notary devnet)',
    status: 'ready',
    ...(tip > 0
      ? {
          chain_tip: {
            block_height: tip,
            block_hash: `0x${chain.blockHash(tip)}`,
            index_block_hash: `0x${chain.indexHash(tip)}`,
            microblock_hash: '0x',
            microblock_sequence: 2147483647,
            burn_block_height: chain.block(tip).burnHeight,
          },
        }
      : {}),
  });
}

/** `GET /extended/v1/tx/:tx_id` (src/api/routes/v1/tx.ts, db-controller.ts `searchTx`). */
function v1Tx(state: StacksDevnetState, url: URL, id: string): Answer {
  if (!/^(0x)?[a-fA-F0-9]{64}$/.test(id)) {
    return validationError('params/tx_id must match pattern "^(0x)?[a-fA-F0-9]{64}$"');
  }
  // Hiro redirects a txid without 0x to the 0x form (302), keeping the query.
  if (!id.startsWith('0x'))
    return { status: 302, headers: { location: `/extended/v1/tx/0x${id}${url.search}` }, body: '' };
  const rec = state.txs.get(normalizeTxid(id));
  if (!rec) return hiroError(404, 'could not find transaction by ID');
  const view = indexerView(state, rec);
  if (view === 'mined' || view === 'orphaned') return json(200, v1MinedJson(state, rec, view === 'mined'));
  return json(200, v1MempoolJson(state, rec));
}

/** `GET /extended/v1/address/:principal/nonces` (src/api/routes/v1/address.ts). */
function v1Nonces(state: StacksDevnetState, parts: string[]): Answer {
  const who = decodeURIComponent(parts[3] ?? '');
  if (!validateStacksAddress(who.split('.')[0] ?? '')) return hiroError(400, `invalid STX address "${who}"`);
  const n = hiroNonces(state, who);
  return json(200, {
    last_mempool_tx_nonce: n.lastMempool,
    last_executed_tx_nonce: n.lastExecuted,
    possible_next_nonce: n.possibleNext,
    detected_missing_nonces: n.detectedMissing,
    detected_mempool_nonces: n.detectedMempool,
  });
}

/** `GET /extended/v3/principals/:principal/nonces`: Hiro's next-nonce rule, v3's field names. */
function v3Nonces(state: StacksDevnetState, who: string): Answer {
  if (!validateStacksAddress(who)) {
    return validationError(
      'params/principal must match pattern "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}$"',
    );
  }
  const n = hiroNonces(state, who);
  return json(200, {
    next_nonce: n.possibleNext,
    last_confirmed_nonce: n.lastExecuted,
    mempool: {
      last_nonce: n.lastMempool,
      pending_nonces: n.detectedMempool,
      missing_nonces: n.detectedMissing,
    },
  });
}

/** `GET /extended/v3/transactions/:tx_id?include=…` (src/api/routes/v3/transactions.ts, pg-store-v3.ts). */
function v3Tx(state: StacksDevnetState, url: URL, id: string): Answer {
  if (!/^(0x)?[a-fA-F0-9]{64}$/.test(id)) {
    return validationError('params/tx_id must match pattern "^(0x)?[a-fA-F0-9]{64}$"');
  }
  const include = url.searchParams.getAll('include').flatMap((v) => v.split(','));
  const allowed = ['function_args', 'source_code', 'post_conditions', 'result'];
  const bad = include.findIndex((f) => !allowed.includes(f));
  if (bad >= 0) return validationError(`querystring/include/${bad} must be equal to constant`);
  if (new Set(include).size !== include.length) {
    return validationError('querystring/include must NOT have duplicate items');
  }
  const rec = state.txs.get(normalizeTxid(id));
  const view = rec ? indexerView(state, rec) : undefined;
  // v3 reads canonical mined transactions, then the mempool's live (unpruned) ones: orphaned or dropped → 404.
  if (!rec || view === 'orphaned' || view === 'dropped') return hiroError(404, 'Transaction not found');
  return json(200, view === 'mined' ? v3MinedJson(state, rec, include) : v3MempoolJson(rec, include));
}

/** Hiro's next-nonce rule (src/datastore/pg-store.ts `getAddressNonces`) over the indexer's view. */
function hiroNonces(state: StacksDevnetState, who: string) {
  const mine = [...state.txs.values()].filter((r) => r.sender === who);
  const executed = mine.filter((r) => indexerView(state, r) === 'mined').map((r) => Number(r.nonce));
  const mempool = mine.filter((r) => indexerView(state, r) === 'pending').map((r) => Number(r.nonce));
  const lastExecuted = executed.length > 0 ? Math.max(...executed) : null;
  const lastMempool = mempool.length > 0 ? Math.max(...mempool) : null;
  const possibleNext =
    lastExecuted !== null || lastMempool !== null ? Math.max(lastExecuted ?? 0, lastMempool ?? 0) + 1 : 0;
  const detectedMissing: number[] = [];
  const detectedMempool: number[] = [];
  if (lastExecuted !== null && lastMempool !== null && lastMempool - lastExecuted > 1) {
    for (let k = lastMempool - 1; k > lastExecuted; k--) {
      (mempool.includes(k) ? detectedMempool : detectedMissing).push(k);
    }
  }
  return { lastExecuted, lastMempool, possibleNext, detectedMissing, detectedMempool };
}
