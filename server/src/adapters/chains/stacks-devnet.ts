/**
 * Local Stacks node for the embedded default and tests: loopback HTTP servers (127.0.0.1, port 0) backed by the
 * real Clarity VM of `@stacks/clarinet-sdk` 3.21 (an empty simnet session in epoch 3.1, no Clarinet.toml), with
 * `server/contracts/notary.clar` deployed (Clarity 3) by a freshly funded account.
 *
 * It answers the subset of the stacks-node RPC API (stacks-core `docs/rpc/openapi.yaml`) and of the Hiro Stacks
 * Blockchain API (`openapi.yaml`, and its deprecated v1 routes) that the notary's readers use, in their published
 * shapes (every answer is held to the pinned schemas in tests, see `schemas` below):
 * - node: `GET /v2/info`, `GET /v2/accounts/:principal`, `GET /v2/fees/transfer`, `POST /v2/transactions`
 *   (octet-stream or `{ tx }` JSON; 200 the txid, 400 JSON `MemPoolRejection` or text/plain decode errors),
 *   `POST /v2/contracts/call-read/:address/:contract/:function`, `GET /v2/transactions/unconfirmed/:txid`;
 *   anything else is stacks-node's text/plain 404 (or 405 for a known path with another method).
 * - indexer (Hiro): `GET /extended` (status), `GET /extended/v3/transactions/:tx_id?include=…`,
 *   `GET /extended/v3/principals/:principal/nonces`, and the deprecated `GET /extended/v1/tx/:tx_id`,
 *   `GET /extended/v1/address/:principal/nonces` (with Hiro's `Warning: 299` header, or 410 when `v1Gone`).
 *
 * Two addresses: `url` is the node, with Hiro's routes too when `kind` is `hiro` (as api.hiro.so serves both);
 * `indexerUrl` is always a Hiro API (its `/extended` routes and the `/v2` ones it proxies to the node).
 *
 * Mining: transactions wait in a mempool; a block is mined every `blockTimeMs` (empty blocks too, so
 * confirmations grow) or on `mine(n)`. A block executes the pending contract calls of each sender in nonce order
 * (contiguous from its account nonce), each followed by its fee paid to a sink address. A Clarity `(err ...)`
 * response is included with `abort_by_response`, like on a real chain. Only contract calls are accepted.
 *
 * Switches (`StacksDevnetSwitches`, at start and through `configure` at run time) make it answer like the
 * situations a client meets on real networks: a bare node, an indexer that lags, 429s, 410s, a transaction
 * orphaned by a fork, a replaced transaction.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '@notary/shared';
import { repositoryFile } from '@notary/shared/module-entry';
import { type ClarityEvent, getSDK, type Simnet, tx as simTx, type Tx } from '@stacks/clarinet-sdk';
import {
  type AddressHashMode,
  AnchorMode,
  addressFromVersionHash,
  addressHashModeToVersion,
  addressToString,
  ClarityType,
  type ClarityValue,
  cvToString,
  deserializeTransaction,
  hexToCV,
  PayloadType,
  PostConditionMode,
  privateKeyToAddress,
  randomPrivateKey,
  type StacksTransactionWire,
  serializeCV,
  TransactionSigner,
  validateStacksAddress,
} from '@stacks/transactions';

/** Source of the notary contract deployed on the devnet (and on real networks by hand). */
export const NOTARY_CONTRACT_PATH = fileURLToPath(repositoryFile('server/contracts/notary.clar'));
/** Stacks testnet/devnet chain id (SIP-005 `chain_id`), also `network_id` in `/v2/info`. */
export const DEVNET_CHAIN_ID = 0x80000000;
/**
 * stacks-core's `MAXIMUM_MEMPOOL_TX_CHAINING` (stackslib/src/core/mempool.rs): a nonce more than this past the
 * account's next one is refused (`TooMuchChaining`).
 */
export const MAX_PENDING_PER_SENDER = 25;
/** The message of Hiro's deprecation plugin (`src/api/init.ts` `defaultDeprecatedMessage`). */
export const HIRO_DEPRECATED_MESSAGE = 'See https://docs.hiro.so/stacks/api for more information';
/** Where fees go (the boot address), so balances fall as on a real chain. */
const FEE_SINK = 'ST000000000000000000002AMW42H';
/** Minimum relay fee of stacks-core: 1 µSTX per serialized byte (`MINIMUM_TX_FEE_RATE_PER_BYTE`). */
const MIN_FEE_PER_BYTE = 1n;
/** stacks-core `MAX_PAYLOAD_LEN` (stacks-common/src/codec/mod.rs): the largest body `POST /v2/transactions` reads. */
const MAX_TX_BODY = 1 + 16 * 1024 * 1024;
/** Bound of a read-only call's JSON body here (stacks-core allows far more; the notary's calls are tiny). */
const MAX_CALL_READ_BODY = 1024 * 1024;
/** stacks-core keeps a mined transaction in its mempool database this many blocks (`MEMPOOL_MAX_TRANSACTION_AGE`). */
const MEMPOOL_RETENTION_BLOCKS = 256;
/** Bound of the request log (`requests()`). */
const MAX_LOGGED_REQUESTS = 10_000;

/**
 * How Hiro's gateway limits requests (docs.hiro.so "Rate limits", "Response headers": about 50 a minute per IP
 * without a key; a 429 carries `retry-after` in seconds). `next`: the next N requests answer 429 (deterministic,
 * for tests); `limit`/`windowMs`: every request over `limit` in a fixed window answers 429 until it ends.
 */
export type StacksDevnetRateLimit =
  | { next: number; retryAfterSeconds?: number }
  | { limit: number; windowMs: number };

/** The devnet's run-time switches (`configure`); each defaults to the plain, forgiving behaviour. */
export interface StacksDevnetSwitches {
  /**
   * What `url` is: `hiro` (default: node RPC and Hiro's `/extended` routes on one address, as api.hiro.so) or
   * `node` (a bare stacks-node: `/extended` answers its text/plain 404). `indexerUrl` is a Hiro API either way.
   */
  kind: 'hiro' | 'node';
  /**
   * Hiro's deprecated v1 routes answer `410 Gone` `{ error: 'Gone', message: 'This endpoint has been disabled. …' }`,
   * as with the operator's `ENABLE_DEPRECATED_ENDPOINTS=false` (`src/api/deprecation-plugin.ts`).
   */
  v1Gone: boolean;
  /** The indexer sees blocks this many blocks after the node (its chain tip, mined transactions, nonces). */
  indexerLagBlocks: number;
  /** Hiro's gateway limit on the Hiro API answers (`url` when `kind` is `hiro`, and `indexerUrl`); null: none. */
  rateLimit: StacksDevnetRateLimit | null;
  /**
   * With a schema validator loaded (tests): an answer that breaks the pinned schemas is replaced by HTTP 500
   * (text/plain, the violations) when true (default), or sent as is when false; it is recorded either way.
   */
  strict: boolean;
}

/** One request the devnet answered (`requests()`), oldest first. */
export interface StacksDevnetRequest {
  /** `url` (node, or node + Hiro) or `indexer` (`indexerUrl`). */
  address: 'url' | 'indexer';
  method: string;
  /** Path and query as sent. */
  path: string;
  status: number;
  /** ms since the epoch. */
  at: number;
  /** The `x-api-key` header, when sent (Hiro's API key header). */
  apiKey?: string;
}

export interface StacksDevnetOptions {
  /** Block interval of the automatic miner; 0 mines only on `mine()` (tests). Default 1000 ms. */
  blockTimeMs?: number;
  /** Private key of the funded deployer/sender (hex, compressed); a random one by default. */
  senderKey?: string;
  /** µSTX minted to the sender. Default 1,000,000 STX. */
  initialBalance?: bigint;
  /** Contract name. Default `notary`. */
  contractName?: string;
  /** Switches at start (see `StacksDevnetSwitches`). */
  switches?: Partial<StacksDevnetSwitches>;
  /**
   * Tests only: path of a module exporting `validateStacksAnswer` (test/harness/stacks-schemas.ts). Default: the
   * `STACKS_DEVNET_SCHEMAS` environment variable, which the test setup sets (test/harness/stacks-devnet-guard.ts);
   * without either nothing is loaded. Every answer is then checked; violations are recorded (`takeViolations`,
   * `onViolation`).
   */
  schemas?: string;
  /** Called with each violation (default: the test guard's process-wide record, when the validator is loaded). */
  onViolation?: (violation: string) => void;
}

/** What tests and the service's devnet mode steer the devnet with (the worker thread carries these too). */
export interface StacksDevnetControls {
  /** Mines `n` blocks (default 1); the first includes the mempool. Resolves to the new tip height. */
  mine(n?: number): number;
  /** Credits `amount` µSTX to `address` (fixtures). */
  fund(address: string, amount: bigint): void;
  /** Changes switches; returns all of them as they now are. */
  configure(switches: Partial<StacksDevnetSwitches>): StacksDevnetSwitches;
  /**
   * The indexer's view of a mined transaction after a fork orphaned its block (the node keeps it: the Clarity VM
   * has no forks). `restored: false` (default), as when Hiro never saw it in its mempool: v1 answers it with
   * `canonical: false`, v3 (which reads canonical transactions and the live mempool only) 404, and it leaves the
   * nonces. `restored: true`, as Hiro does on a reorg (`pg-write-store.ts` restores orphaned transactions to the
   * mempool): both answer it pending, from the mempool.
   * @throws Error when the transaction is unknown or not mined yet.
   */
  markNonCanonical(txid: string, options?: { restored?: boolean }): void;
  /**
   * Replaces a pending transaction of the devnet's own sender by the same call with a higher fee (default:
   * twice the fee), signed with its key and admitted as a broadcast one would be: the first then reads
   * `dropped_replace_by_fee` with `replaced_by_tx_id` on Hiro v1, 404 on v3 and on the node's unconfirmed route.
   * @returns the replacement's txid (64 hex, no 0x).
   * @throws Error when the transaction is not pending or not the devnet sender's.
   */
  replaceByFee(txid: string, fee?: bigint): string;
  /** The schema violations recorded since the last call, cleared (empty without a validator). */
  takeViolations(): string[];
  /** The requests answered so far (the last 10,000), oldest first. */
  requests(): StacksDevnetRequest[];
}

export interface StacksDevnet extends StacksDevnetControls {
  /** Base URL of the node (with Hiro's routes when `kind` is `hiro`), e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Base URL of the Hiro API (`/extended`, and `/v2` proxied to the node), which `indexerLagBlocks` delays. */
  indexerUrl: string;
  network: 'devnet';
  /** `<deployer address>.<name>`. */
  contractId: string;
  /** Private key of a funded account (the deployer). */
  senderKey: string;
  senderAddress: string;
  stop(): Promise<void>;
}

/** A validator module's answer check (test/harness/stacks-schemas.ts `validateStacksAnswer`). */
type AnswerValidator = (answer: {
  method: string;
  path: string;
  status: number;
  contentType: string | undefined;
  body: string;
  headers: Record<string, string>;
  server: 'node' | 'indexer';
}) => string[];

/** The process-wide record of violations the test guard reads after each test. */
const VIOLATIONS = Symbol.for('notary.stacks-devnet.violations');
type ViolationRecord = { devnet: string; text: string }[];
function violationRecord(): ViolationRecord {
  const g = globalThis as { [VIOLATIONS]?: ViolationRecord };
  g[VIOLATIONS] ??= [];
  return g[VIOLATIONS];
}

interface TxRecord {
  txid: string;
  raw: Uint8Array;
  sender: string;
  nonce: bigint;
  fee: bigint;
  contractId: string;
  functionName: string;
  args: ClarityValue[];
  postConditionMode: 'allow' | 'deny' | 'originator';
  anchorMode: 'on_chain_only' | 'off_chain_only' | 'any';
  receiptTime: number;
  receiptBlockHeight: number;
  status: 'pending' | 'success' | 'abort_by_response' | 'dropped_replace_by_fee';
  replacedBy?: string;
  blockHeight?: number;
  txIndex?: number;
  result?: ClarityValue;
  events?: ClarityEvent[];
  /** The indexer's view after `markNonCanonical`. */
  orphaned?: 'orphaned' | 'restored';
}

interface Rejection {
  reason: string;
  reason_data?: Record<string, unknown>;
}

class RejectError extends Error {
  constructor(readonly rejection: Rejection) {
    super(rejection.reason);
  }
}

/** An answer: status, headers and a body already serialized (JSON or text). */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: text };
}

/** stacks-core's text answers (`HttpBadRequest::new`, `HttpNotFound::new`, …: text/plain). */
function text(status: number, body: string, headers: Record<string, string> = {}): Answer {
  return { status, headers: { 'content-type': 'text/plain', ...headers }, body };
}

/** Hiro's (Fastify's) error body: `{ statusCode, error, message }`. */
/** The API's name of an enum `value` of a transaction: the name paired with it in `names`, else `otherwise`. */
function nameOf<V, N extends string>(value: V, names: ReadonlyArray<readonly [V, N]>, otherwise: N): N {
  return names.find(([v]) => v === value)?.[1] ?? otherwise;
}

function hiroError(status: number, message: string, headers: Record<string, string> = {}): Answer {
  const names: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 410: 'Gone' };
  return json(status, { statusCode: status, error: names[status] ?? 'Error', message }, headers);
}

/** Starts the devnet; `stop()` closes it (the timer and servers are unref'd: they never keep the process alive). */
export async function startStacksDevnet(options: StacksDevnetOptions = {}): Promise<StacksDevnet> {
  const schemasPath = options.schemas ?? process.env.STACKS_DEVNET_SCHEMAS;
  const validate = schemasPath ? await loadValidator(schemasPath) : undefined;
  const devnetId = randomBytes(8).toString('hex');
  const violations: string[] = [];
  const record = (violation: string) => {
    violations.push(violation);
    if (options.onViolation) options.onViolation(violation);
    else violationRecord().push({ devnet: devnetId, text: violation });
  };

  const simnet = await getSDK();
  await simnet.initEmptySession({ enabled: false, api_url: '', initial_height: null });
  simnet.setEpoch('3.1');

  const senderKey = options.senderKey ?? randomPrivateKey();
  const senderAddress = privateKeyToAddress(senderKey, 'devnet');
  const contractName = options.contractName ?? 'notary';
  simnet.mintSTX(senderAddress, options.initialBalance ?? 1_000_000_000_000n);
  simnet.deployer = senderAddress;
  const deployed = simnet.deployContract(
    contractName,
    readFileSync(NOTARY_CONTRACT_PATH, 'utf8'),
    { clarityVersion: 3 },
    senderAddress,
  );
  if (deployed.result.type !== ClarityType.BoolTrue) {
    throw new Error(`notary contract deployment failed: ${cvToString(deployed.result)}`);
  }
  const contractId = `${senderAddress}.${contractName}`;

  const switches: StacksDevnetSwitches = {
    kind: 'hiro',
    v1Gone: false,
    indexerLagBlocks: 0,
    rateLimit: null,
    strict: true,
    ...options.switches,
  };
  const chain = new ChainFacts(simnet);
  const txs = new Map<string, TxRecord>();
  const confirmedNonce = new Map<string, bigint>();
  const nonceOf = (who: string): bigint => confirmedNonce.get(who) ?? 0n;
  const log: StacksDevnetRequest[] = [];
  let limiter = newLimiter(switches.rateLimit);

  const mine = (n = 1): number => {
    const count = Math.max(1, Math.floor(n));
    mineMempool(simnet, chain, txs, confirmedNonce);
    if (count > 1) {
      simnet.mineEmptyBlocks(count - 1);
      chain.sawBlocks();
    }
    return simnet.stacksBlockHeight;
  };

  /** The indexer's chain tip: the node's, `indexerLagBlocks` behind. */
  const indexerTip = () => Math.max(0, simnet.stacksBlockHeight - Math.max(0, switches.indexerLagBlocks));

  /** How the indexer sees a transaction: mined (canonical or not), in its mempool, dropped, or not at all. */
  const indexerView = (r: TxRecord): 'mined' | 'orphaned' | 'pending' | 'dropped' => {
    if (r.status === 'dropped_replace_by_fee') return 'dropped';
    if (r.blockHeight === undefined || r.blockHeight > indexerTip()) return 'pending';
    if (r.orphaned === 'orphaned') return 'orphaned';
    if (r.orphaned === 'restored') return 'pending';
    return 'mined';
  };

  const servers: { server: Server; address: StacksDevnetRequest['address'] }[] = [];
  for (const address of ['url', 'indexer'] as const) {
    const server = createServer((req, res) => {
      serve(address, req, res).catch((err: unknown) => {
        if (!res.headersSent) writeAnswer(res, text(500, `Internal Server Error: ${String(err)}`));
      });
    });
    servers.push({ server, address });
  }

  const serve = async (
    address: StacksDevnetRequest['address'],
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const path = req.url ?? '/';
    const pathname = new URL(path, 'http://devnet').pathname;
    const hiro = address === 'indexer' || switches.kind === 'hiro';
    const indexerRoute = pathname === '/extended' || pathname.startsWith('/extended/');
    let answer = await route(req, hiro);
    if (validate && req.method !== 'OPTIONS') {
      const found = validate({
        method: req.method ?? 'GET',
        path,
        status: answer.status,
        contentType: answer.headers['content-type'],
        body: answer.body,
        headers: answer.headers,
        server: hiro && (indexerRoute || !isNodePath(pathname)) ? 'indexer' : 'node',
      });
      if (found.length > 0) {
        for (const v of found) record(`Stacks devnet answer breaks the pinned schemas: ${v}`);
        if (switches.strict) {
          answer = text(500, `Stacks devnet answer breaks the pinned schemas:\n${found.join('\n')}`);
        }
      }
    }
    const apiKey = req.headers['x-api-key'];
    log.push({
      address,
      method: req.method ?? 'GET',
      path,
      status: answer.status,
      at: Date.now(),
      ...(typeof apiKey === 'string' ? { apiKey } : {}),
    });
    if (log.length > MAX_LOGGED_REQUESTS) log.splice(0, log.length - MAX_LOGGED_REQUESTS);
    writeAnswer(res, answer);
  };

  const route = async (req: IncomingMessage, hiro: boolean): Promise<Answer> => {
    const method = req.method ?? 'GET';
    // CORS preflight, as stacks-core answers it (stackslib/src/net/http/response.rs); the web verify page reads
    // the devnet from a browser.
    if (method === 'OPTIONS') {
      return {
        status: 204,
        headers: {
          'access-control-allow-methods': 'POST, GET, OPTIONS',
          'access-control-allow-headers': 'origin, content-type',
          'access-control-max-age': '600',
        },
        body: '',
      };
    }
    const url = new URL(req.url ?? '/', 'http://devnet');
    const pathname = url.pathname;
    const parts = pathname.split('/').filter((p) => p !== '');
    if (hiro) {
      const limited = limiter(Date.now());
      if (limited) {
        await drain(req, 0);
        return limited;
      }
    }
    if (hiro && (pathname === '/extended' || pathname.startsWith('/extended/'))) {
      await drain(req, 0);
      return hiroRoute(method, url, parts);
    }
    return nodeRoute(method, url, parts, req, hiro);
  };

  /** The Hiro API's routes (the deprecated v1 ones behind the deprecation plugin). */
  const hiroRoute = (method: string, url: URL, parts: string[]): Answer => {
    const pathname = url.pathname;
    const notFound = () => hiroError(404, `Route ${method}:${pathname} not found`);
    if (method !== 'GET') return notFound();
    if (pathname === '/extended' || pathname === '/extended/') {
      const tip = indexerTip();
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
    const v1 = parts[1] === 'v1';
    const v1Routes =
      (parts[2] === 'tx' && parts.length === 4) ||
      (parts[2] === 'address' && parts[4] === 'nonces' && parts.length === 5);
    if (v1 && v1Routes) {
      const warning = { warning: `299 - "Deprecated: ${HIRO_DEPRECATED_MESSAGE}"` };
      if (switches.v1Gone) {
        return json(
          410,
          { error: 'Gone', message: `This endpoint has been disabled. ${HIRO_DEPRECATED_MESSAGE}` },
          warning,
        );
      }
      const answer = parts[2] === 'tx' ? v1Tx(url, decodeURIComponent(parts[3] ?? '')) : v1Nonces(parts);
      return { ...answer, headers: { ...answer.headers, ...warning } };
    }
    if (parts[1] === 'v3' && parts[2] === 'transactions' && parts.length === 4) {
      return v3Tx(url, decodeURIComponent(parts[3] ?? ''));
    }
    if (parts[1] === 'v3' && parts[2] === 'principals' && parts[4] === 'nonces' && parts.length === 5) {
      const who = decodeURIComponent(parts[3] ?? '');
      if (!validateStacksAddress(who)) {
        return validationError(
          'params/principal must match pattern "^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}$"',
        );
      }
      const n = hiroNonces(who);
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
    return notFound();
  };

  /** `GET /extended/v1/tx/:tx_id` (src/api/routes/v1/tx.ts, db-controller.ts `searchTx`). */
  const v1Tx = (url: URL, id: string): Answer => {
    if (!/^(0x)?[a-fA-F0-9]{64}$/.test(id)) {
      return validationError('params/tx_id must match pattern "^(0x)?[a-fA-F0-9]{64}$"');
    }
    // Hiro redirects a txid without 0x to the 0x form (302), keeping the query.
    if (!id.startsWith('0x'))
      return { status: 302, headers: { location: `/extended/v1/tx/0x${id}${url.search}` }, body: '' };
    const rec = txs.get(normalizeTxid(id));
    if (!rec) return hiroError(404, 'could not find transaction by ID');
    const view = indexerView(rec);
    if (view === 'mined' || view === 'orphaned') return json(200, v1MinedJson(rec, view === 'mined'));
    return json(200, v1MempoolJson(rec));
  };

  /** `GET /extended/v1/address/:principal/nonces` (src/api/routes/v1/address.ts). */
  const v1Nonces = (parts: string[]): Answer => {
    const who = decodeURIComponent(parts[3] ?? '');
    if (!validateStacksAddress(who.split('.')[0] ?? ''))
      return hiroError(400, `invalid STX address "${who}"`);
    const n = hiroNonces(who);
    return json(200, {
      last_mempool_tx_nonce: n.lastMempool,
      last_executed_tx_nonce: n.lastExecuted,
      possible_next_nonce: n.possibleNext,
      detected_missing_nonces: n.detectedMissing,
      detected_mempool_nonces: n.detectedMempool,
    });
  };

  /** `GET /extended/v3/transactions/:tx_id?include=…` (src/api/routes/v3/transactions.ts, pg-store-v3.ts). */
  const v3Tx = (url: URL, id: string): Answer => {
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
    const rec = txs.get(normalizeTxid(id));
    const view = rec ? indexerView(rec) : undefined;
    // v3 reads canonical mined transactions, then the mempool's live (unpruned) ones: orphaned or dropped → 404.
    if (!rec || view === 'orphaned' || view === 'dropped') return hiroError(404, 'Transaction not found');
    return json(200, view === 'mined' ? v3MinedJson(rec, include) : v3MempoolJson(rec, include));
  };

  /** Hiro's next-nonce rule (src/datastore/pg-store.ts `getAddressNonces`) over the indexer's view. */
  const hiroNonces = (who: string) => {
    const mine = [...txs.values()].filter((r) => r.sender === who);
    const executed = mine.filter((r) => indexerView(r) === 'mined').map((r) => Number(r.nonce));
    const mempool = mine.filter((r) => indexerView(r) === 'pending').map((r) => Number(r.nonce));
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
  };

  /** The node's routes (also Hiro's `/v2` proxy). */
  const nodeRoute = async (
    method: string,
    url: URL,
    parts: string[],
    req: IncomingMessage,
    hiro: boolean,
  ): Promise<Answer> => {
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
        return json(200, nodeInfo());
      case 'fees':
        return json(200, Number(MIN_FEE_PER_BYTE));
      case 'accounts': {
        const who = decodeURIComponent(parts[2] ?? '');
        if (!validPrincipal(who)) return text(400, 'Failed to decode: Failed to parse `principal` field');
        return json(200, {
          balance: u128Hex(stxBalance(simnet, who)),
          locked: u128Hex(0n),
          unlock_height: 0,
          nonce: Number(nonceOf(who)),
          ...(url.searchParams.get('proof') === '0' ? {} : { balance_proof: '0x', nonce_proof: '0x' }),
        });
      }
      case 'unconfirmed': {
        const id = parts[3] ?? '';
        // The node's route pattern is `[0-9a-f]{64}` (gettransaction_unconfirmed.rs): anything else has no route.
        if (!/^[0-9a-f]{64}$/.test(id)) return text(404, `No such API endpoint 'GET ${url.pathname}'`);
        const rec = txs.get(id);
        // stacks-core's mempool database keeps mined transactions until they age out; replaced ones are gone.
        const inMempool =
          rec &&
          rec.status !== 'dropped_replace_by_fee' &&
          (rec.blockHeight === undefined ||
            simnet.stacksBlockHeight - rec.blockHeight < MEMPOOL_RETENTION_BLOCKS);
        if (!rec || !inMempool) {
          return text(404, `Transaction ${id} not found in mempool or unconfirmed microblock stream`);
        }
        return json(200, { tx: Buffer.from(rec.raw).toString('hex'), status: 'Mempool' });
      }
      case 'transactions':
        return postTransaction(req);
      case 'call-read':
        return callRead(req, parts);
    }
  };

  /** `POST /v2/transactions` (stackslib/src/net/api/posttransaction.rs). */
  const postTransaction = async (req: IncomingMessage): Promise<Answer> => {
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
    let raw: Uint8Array;
    if (contentType === '') return text(400, 'Failed to decode: Missing Content-Type for transaction');
    if (contentType === 'application/octet-stream') {
      raw = body;
    } else if (contentType === 'application/json' || contentType.startsWith('application/json;')) {
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
      raw = Buffer.from(hex, 'hex');
    } else {
      return text(
        400,
        'Failed to decode: Wrong Content-Type for transaction; expected application/json or application/octet-stream',
      );
    }
    let decoded: StacksTransactionWire;
    try {
      decoded = deserializeTransaction(raw);
    } catch (err) {
      return text(400, `Failed to decode: Failed to deserialize posted transaction: ${errorMessage(err)}`);
    }
    const txid = decoded.txid();
    try {
      admit(decoded, txid, raw);
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
  };

  /** `POST /v2/contracts/call-read/…` (stackslib/src/net/api/callreadonly.rs). */
  const callRead = async (req: IncomingMessage, parts: string[]): Promise<Answer> => {
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
    if (!validPrincipal(parsed.sender))
      return text(400, 'Failed to decode: Failed to parse sender principal');
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
      const result = simnet.callReadOnlyFn(`${address}.${name}`, fn ?? '', args, parsed.sender);
      return json(200, { okay: true, result: `0x${serializeCV(result.result)}` });
    } catch (err) {
      return json(200, { okay: false, cause: errorMessage(err) });
    }
  };

  /** `/v2/info` with every field of stacks-core's `RPCPeerInfoData` (stackslib/src/net/api/getinfo.rs). */
  const nodeInfo = () => {
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
  };

  const v1Base = (r: TxRecord) => ({
    tx_id: `0x${r.txid}`,
    nonce: Number(r.nonce),
    fee_rate: r.fee.toString(),
    sender_address: r.sender,
    sponsored: false,
    post_condition_mode: r.postConditionMode,
    post_conditions: [],
    anchor_mode: r.anchorMode,
    tx_type: 'contract_call',
    contract_call: {
      contract_id: r.contractId,
      function_name: r.functionName,
      function_signature: functionSignature(simnet, r.contractId, r.functionName),
      function_args: functionArgs(simnet, r),
    },
  });

  /** v1 `MempoolTransaction` (src/api/schemas/v1/entities/transactions.ts). */
  const v1MempoolJson = (r: TxRecord) => ({
    ...v1Base(r),
    tx_status: r.status === 'dropped_replace_by_fee' ? 'dropped_replace_by_fee' : 'pending',
    replaced_by_tx_id: r.replacedBy ? `0x${r.replacedBy}` : null,
    receipt_time: r.receiptTime,
    receipt_time_iso: new Date(r.receiptTime * 1000).toISOString(),
  });

  /** v1 `Transaction` (mined), `canonical` false when the indexer saw its block orphaned. */
  const v1MinedJson = (r: TxRecord, canonical: boolean) => {
    const h = r.blockHeight ?? 0;
    const block = chain.block(h);
    const parent = chain.block(Math.max(0, h - 1));
    const events = printEvents(r);
    return {
      ...v1Base(r),
      block_hash: `0x${chain.blockHash(h)}`,
      block_height: h,
      block_time: block.time,
      block_time_iso: new Date(block.time * 1000).toISOString(),
      burn_block_time: block.time,
      burn_block_height: block.burnHeight,
      burn_block_time_iso: new Date(block.time * 1000).toISOString(),
      parent_burn_block_time: parent.time,
      parent_burn_block_time_iso: new Date(parent.time * 1000).toISOString(),
      canonical,
      tx_index: r.txIndex ?? 0,
      tx_status: r.status,
      tx_result: clarityJson(r.result),
      event_count: events.length,
      parent_block_hash: `0x${chain.blockHash(Math.max(0, h - 1))}`,
      is_unanchored: false,
      microblock_hash: '0x',
      microblock_sequence: 2147483647,
      microblock_canonical: true,
      execution_cost_read_count: 0,
      execution_cost_read_length: 0,
      execution_cost_runtime: 0,
      execution_cost_write_count: 0,
      execution_cost_write_length: 0,
      vm_error: null,
      events: events.map((e, i) => ({
        event_index: i,
        event_type: 'smart_contract_log',
        tx_id: `0x${r.txid}`,
        contract_log: { contract_id: e.contractId, topic: e.topic, value: clarityJson(e.value) },
      })),
    };
  };

  /** v3 heavy fields (`include`): present exactly when asked for; `result` only on mined transactions. */
  const v3Call = (r: TxRecord, include: string[]) => ({
    contract_id: r.contractId,
    function_name: r.functionName,
    ...(include.includes('function_args')
      ? { function_args: r.args.map((a) => ({ hex: `0x${serializeCV(a)}`, repr: cvToString(a) })) }
      : {}),
  });

  /** v3 `Transaction` (src/api/schemas/v3/entities/transactions.ts, serializers/v3/transactions.ts). */
  const v3MinedJson = (r: TxRecord, include: string[]) => {
    const h = r.blockHeight ?? 0;
    const block = chain.block(h);
    return {
      tx_id: `0x${r.txid}`,
      sender: { address: r.sender, nonce: Number(r.nonce) },
      sponsor: null,
      fee_rate: r.fee.toString(),
      block: {
        height: h,
        hash: `0x${chain.blockHash(h)}`,
        index_hash: `0x${chain.indexHash(h)}`,
        time: block.time,
        tx_index: r.txIndex ?? 0,
      },
      bitcoin_block: { height: block.burnHeight, time: block.time },
      status: r.status,
      parent_block: {
        hash: `0x${chain.blockHash(Math.max(0, h - 1))}`,
        index_hash: `0x${chain.indexHash(Math.max(0, h - 1))}`,
      },
      ...(include.includes('post_conditions') ? { post_conditions: [] } : {}),
      event_count: printEvents(r).length,
      execution_cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
      vm_error: null,
      ...(include.includes('result') ? { result: clarityJson(r.result) } : {}),
      type: 'contract_call',
      contract_call: v3Call(r, include),
    };
  };

  /** v3 `MempoolTransaction` (src/api/schemas/v3/entities/mempool-transactions.ts). */
  const v3MempoolJson = (r: TxRecord, include: string[]) => ({
    tx_id: `0x${r.txid}`,
    sender: { address: r.sender, nonce: Number(r.nonce) },
    sponsor: null,
    fee_rate: r.fee.toString(),
    receipt_time: r.receiptTime,
    receipt_block_height: r.receiptBlockHeight,
    status: 'pending',
    ...(include.includes('post_conditions') ? { post_conditions: [] } : {}),
    replaced_by_tx_id: null,
    type: 'contract_call',
    contract_call: v3Call(r, include),
  });

  /** stacks-core mempool admission (`StacksChainState::will_admit_mempool_tx`, `MemPoolDB::try_add_tx`). */
  const admit = (t: StacksTransactionWire, txid: string, raw: Uint8Array): void => {
    // A transaction the mempool already has is answered with its txid again (posttransaction.rs `has_tx`).
    const known = txs.get(txid);
    if (known && known.status !== 'dropped_replace_by_fee') return;
    try {
      t.verifyOrigin();
    } catch (err) {
      throw new RejectError({ reason: 'SignatureValidation', reason_data: { message: String(err) } });
    }
    if (t.chainId !== DEVNET_CHAIN_ID) throw new RejectError({ reason: 'BadTransactionVersion' });
    const cond = t.auth.spendingCondition;
    const sender = addressToString(
      addressFromVersionHash(
        addressHashModeToVersion(cond.hashMode as AddressHashMode, 'devnet'),
        cond.signer,
      ),
    );
    const fee = BigInt(cond.fee);
    const nonce = BigInt(cond.nonce);
    if (t.payload.payloadType !== PayloadType.ContractCall) {
      throw new RejectError({
        reason: 'ServerFailureOther',
        reason_data: { message: 'this devnet accepts contract calls only' },
      });
    }
    if (t.postConditions.values.length > 0) {
      throw new RejectError({
        reason: 'ServerFailureOther',
        reason_data: { message: 'this devnet accepts contract calls without post-conditions only' },
      });
    }
    const p = t.payload;
    const callee = `${addressToString(p.contractAddress)}.${p.contractName.content}`;
    const iface = simnet.getContractsInterfaces().get(callee);
    if (!iface) throw new RejectError({ reason: 'NoSuchContract' });
    const fn = iface.functions.find((f) => f.name === p.functionName.content && f.access === 'public');
    if (!fn) throw new RejectError({ reason: 'NoSuchPublicFunction' });
    const argError = checkArgs(fn.args, p.functionArgs);
    if (argError)
      throw new RejectError({ reason: 'BadFunctionArgument', reason_data: { message: argError } });
    const minFee = BigInt(raw.length) * MIN_FEE_PER_BYTE;
    if (fee < minFee) {
      throw new RejectError({
        reason: 'FeeTooLow',
        reason_data: { expected: Number(minFee), actual: Number(fee) },
      });
    }
    const expected = nonceOf(sender);
    if (nonce < expected) {
      throw new RejectError({
        reason: 'BadNonce',
        reason_data: {
          expected: Number(expected),
          actual: Number(nonce),
          principal: sender,
          is_origin: true,
        },
      });
    }
    const maxNonce = expected + 1n + BigInt(MAX_PENDING_PER_SENDER);
    if (nonce > maxNonce) {
      throw new RejectError({
        reason: 'TooMuchChaining',
        reason_data: {
          message: 'Nonce would exceed chaining limit in mempool',
          expected: Number(maxNonce),
          actual: Number(nonce),
          principal: sender,
          is_origin: true,
        },
      });
    }
    const balance = stxBalance(simnet, sender);
    if (balance < fee) {
      throw new RejectError({
        reason: 'NotEnoughFunds',
        reason_data: { expected: u128Hex(fee), actual: u128Hex(balance) },
      });
    }
    const prior = [...txs.values()].find(
      (r) => r.status === 'pending' && r.sender === sender && r.nonce === nonce,
    );
    if (prior) {
      // Replace-by-fee only with a strictly higher fee (mempool.rs `try_add_tx`).
      if (fee <= prior.fee) throw new RejectError({ reason: 'ConflictingNonceInMempool' });
      prior.status = 'dropped_replace_by_fee';
      prior.replacedBy = txid;
    }
    txs.set(txid, {
      txid,
      raw,
      sender,
      nonce,
      fee,
      contractId: callee,
      functionName: p.functionName.content,
      args: p.functionArgs,
      postConditionMode: nameOf(
        t.postConditionMode,
        [
          [PostConditionMode.Allow, 'allow'],
          [PostConditionMode.Deny, 'deny'],
        ],
        'originator',
      ),
      anchorMode: nameOf(
        t.anchorMode,
        [
          [AnchorMode.OnChainOnly, 'on_chain_only'],
          [AnchorMode.OffChainOnly, 'off_chain_only'],
        ],
        'any',
      ),
      receiptTime: Math.floor(Date.now() / 1000),
      receiptBlockHeight: simnet.stacksBlockHeight,
      status: 'pending',
    });
  };

  const controls: StacksDevnetControls = {
    mine,
    fund: (address, amount) => {
      simnet.mintSTX(address, amount);
    },
    configure: (next) => {
      Object.assign(switches, next);
      if ('rateLimit' in next) limiter = newLimiter(switches.rateLimit);
      return { ...switches };
    },
    markNonCanonical: (txid, opts = {}) => {
      const rec = txs.get(normalizeTxid(txid));
      if (!rec || rec.blockHeight === undefined) {
        throw new Error(`markNonCanonical: ${txid} is not a mined transaction of this devnet`);
      }
      rec.orphaned = opts.restored ? 'restored' : 'orphaned';
    },
    replaceByFee: (txid, fee) => {
      const rec = txs.get(normalizeTxid(txid));
      if (rec?.status !== 'pending' || rec.blockHeight !== undefined) {
        throw new Error(`replaceByFee: ${txid} is not a pending transaction of this devnet`);
      }
      if (rec.sender !== senderAddress) {
        throw new Error(`replaceByFee: ${txid} is not from the devnet's sender (${senderAddress})`);
      }
      const t = deserializeTransaction(rec.raw);
      t.setFee(fee ?? rec.fee * 2n);
      const signer = new TransactionSigner(t);
      signer.signOrigin(senderKey);
      const replacement = signer.transaction;
      const raw = replacement.serializeBytes();
      const newId = replacement.txid();
      admit(replacement, newId, raw);
      return newId;
    },
    takeViolations: () => {
      const out = violations.splice(0, violations.length);
      const all = violationRecord();
      for (let i = all.length - 1; i >= 0; i--) if (all[i]?.devnet === devnetId) all.splice(i, 1);
      return out;
    },
    requests: () => log.map((r) => ({ ...r })),
  };

  for (const { server } of servers) {
    // Loopback only: no idle timeout on kept-alive connections, so a client that blocked its event loop (the
    // devnets start WebAssembly in-process) never sends on a socket this side is closing (ECONNRESET).
    server.keepAliveTimeout = 0;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    server.unref();
  }
  const [nodePort, indexerPort] = servers.map(({ server }) => (server.address() as AddressInfo).port);
  const blockTimeMs = options.blockTimeMs ?? 1000;
  const timer = blockTimeMs > 0 ? setInterval(() => mine(1), blockTimeMs) : undefined;
  timer?.unref();

  return {
    url: `http://127.0.0.1:${nodePort}`,
    indexerUrl: `http://127.0.0.1:${indexerPort}`,
    network: 'devnet',
    contractId,
    senderKey,
    senderAddress,
    ...controls,
    stop: async () => {
      if (timer) clearInterval(timer);
      await Promise.all(
        servers.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}

/** Loads the test validator (a module exporting `validateStacksAnswer`). @throws when it does not. */
async function loadValidator(modulePath: string): Promise<AnswerValidator> {
  const mod = (await import(/* @vite-ignore */ modulePath)) as { validateStacksAnswer?: unknown };
  if (typeof mod.validateStacksAnswer !== 'function') {
    throw new Error(
      `${modulePath}: no validateStacksAnswer export (STACKS_DEVNET_SCHEMAS names the schema validator)`,
    );
  }
  return mod.validateStacksAnswer as AnswerValidator;
}

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
type NodeRouteName = 'info' | 'fees' | 'transactions' | 'accounts' | 'unconfirmed' | 'call-read';

/** Paths Hiro's API proxies to its node (`/v2`). */
function isNodePath(pathname: string): boolean {
  return pathname === '/v2' || pathname.startsWith('/v2/');
}

/**
 * A Fastify validation error as Hiro answers it (`{ statusCode: 400, code: 'FST_ERR_VALIDATION', error, message }`).
 */
function validationError(message: string): Answer {
  return json(400, { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message });
}

/** A fixed-window or next-N limiter; returns the 429 answer when the request is over the limit. */
function newLimiter(limit: StacksDevnetRateLimit | null): (now: number) => Answer | undefined {
  if (!limit) return () => undefined;
  const tooMany = (retryAfter: number, extra: Record<string, string> = {}) =>
    json(
      429,
      { error: 'Too Many Requests', message: `API rate limit exceeded; retry after ${retryAfter} s` },
      { 'retry-after': String(retryAfter), ...extra },
    );
  if ('next' in limit) {
    let left = Math.max(0, Math.floor(limit.next));
    const retryAfter = Math.max(0, Math.floor(limit.retryAfterSeconds ?? 1));
    return () => {
      if (left <= 0) return undefined;
      left -= 1;
      return tooMany(retryAfter);
    };
  }
  let windowStart = -1;
  let used = 0;
  return (now) => {
    if (windowStart < 0 || now - windowStart >= limit.windowMs) {
      windowStart = now;
      used = 0;
    }
    used += 1;
    const reset = windowStart + limit.windowMs;
    const headers = {
      'ratelimit-limit': String(limit.limit),
      'ratelimit-remaining': String(Math.max(0, limit.limit - used)),
      'ratelimit-reset': String(Math.ceil(reset / 1000)),
    };
    if (used <= limit.limit) return undefined;
    return tooMany(Math.max(1, Math.ceil((reset - now) / 1000)), headers);
  };
}

/** Block facts the simnet does not keep: times, burn heights, and stable synthetic hashes per height. */
class ChainFacts {
  readonly genesisHash: string;
  readonly nodePublicKey: string;
  readonly nodePublicKeyHash: string;
  private readonly salt = randomBytes(16).toString('hex');
  private readonly blocks = new Map<number, { time: number; burnHeight: number }>();
  private readonly start = Math.floor(Date.now() / 1000);

  constructor(private readonly simnet: Simnet) {
    this.genesisHash = this.hash('genesis');
    this.nodePublicKey = `02${this.hash('node-key')}`;
    this.nodePublicKeyHash = this.hash('node-key-hash').slice(0, 40);
    this.sawBlocks();
  }

  /** Records time and burn height for the heights mined since the last call. */
  sawBlocks(): void {
    const tip = this.simnet.stacksBlockHeight;
    const now = Math.floor(Date.now() / 1000);
    for (let h = tip; h >= 0 && !this.blocks.has(h); h--) {
      this.blocks.set(h, {
        time: h === tip ? now : this.start,
        burnHeight: h === tip ? this.simnet.burnBlockHeight : 0,
      });
    }
  }

  block(height: number): { time: number; burnHeight: number } {
    return this.blocks.get(height) ?? { time: this.start, burnHeight: 0 };
  }

  blockHash(height: number): string {
    return this.hash(`block:${height}`);
  }

  indexHash(height: number): string {
    return this.hash(`index:${height}`);
  }

  /** A 20-byte consensus hash (hex) of a burn height. */
  consensusHash(burnHeight: number): string {
    return this.hash(`consensus:${burnHeight}`).slice(0, 40);
  }

  private hash(what: string): string {
    return createHash('sha256').update(`${this.salt}:${what}`).digest('hex');
  }
}

/** Executes one block: each sender's pending calls from its account nonce, contiguous, each then paying its fee. */
function mineMempool(
  simnet: Simnet,
  chain: ChainFacts,
  txs: Map<string, TxRecord>,
  confirmedNonce: Map<string, bigint>,
): void {
  const bySender = new Map<string, TxRecord[]>();
  for (const r of txs.values()) {
    if (r.status !== 'pending') continue;
    const list = bySender.get(r.sender) ?? [];
    list.push(r);
    bySender.set(r.sender, list);
  }
  const included: TxRecord[] = [];
  for (const [sender, list] of bySender) {
    let next = confirmedNonce.get(sender) ?? 0n;
    for (const r of list.sort((a, b) => (a.nonce < b.nonce ? -1 : 1))) {
      if (r.nonce !== next) break;
      included.push(r);
      next += 1n;
    }
  }
  if (included.length === 0) {
    simnet.mineEmptyBlock();
    chain.sawBlocks();
    return;
  }
  const block: Tx[] = [];
  for (const r of included) {
    block.push(simTx.callPublicFn(r.contractId, r.functionName, r.args, r.sender));
    if (r.fee > 0n) block.push(simTx.transferSTX(Number(r.fee), FEE_SINK, r.sender));
  }
  const results = simnet.mineBlock(block);
  chain.sawBlocks();
  const height = simnet.stacksBlockHeight;
  let i = 0;
  for (const r of included) {
    const res = results[i];
    r.txIndex = i;
    i += r.fee > 0n ? 2 : 1;
    r.result = res?.result;
    r.events = res?.events;
    r.status = res?.result.type === ClarityType.ResponseOk ? 'success' : 'abort_by_response';
    r.blockHeight = height;
    confirmedNonce.set(r.sender, r.nonce + 1n);
  }
}

/** Checks call arguments against the contract interface (argument count; buffer kinds and maximum lengths). */
function checkArgs(
  expected: readonly { name: string; type: unknown }[],
  actual: readonly ClarityValue[],
): string | undefined {
  if (expected.length !== actual.length) return `expected ${expected.length} arguments, got ${actual.length}`;
  for (const [k, spec] of expected.entries()) {
    const value = actual[k];
    const type = spec.type;
    if (value && typeof type === 'object' && type !== null && 'buffer' in type) {
      const max = (type as { buffer: { length: number } }).buffer.length;
      if (value.type !== ClarityType.Buffer) return `argument ${spec.name}: expected (buff ${max})`;
      const len = value.value.length / 2;
      if (len > max) return `argument ${spec.name}: (buff ${len}) exceeds (buff ${max})`;
    }
  }
  return undefined;
}

/** A Clarity ABI type as Clarity source writes it (`{ buffer: { length: 32 } }` → `(buff 32)`). */
function abiType(t: unknown): string {
  if (typeof t === 'string') return t === 'uint128' ? 'uint' : t === 'int128' ? 'int' : t;
  if (typeof t !== 'object' || t === null) return String(t);
  const o = t as Record<string, unknown>;
  if ('buffer' in o) return `(buff ${(o.buffer as { length: number }).length})`;
  if ('string-ascii' in o) return `(string-ascii ${(o['string-ascii'] as { length: number }).length})`;
  if ('string-utf8' in o) return `(string-utf8 ${(o['string-utf8'] as { length: number }).length})`;
  if ('optional' in o) return `(optional ${abiType(o.optional)})`;
  if ('response' in o) {
    const r = o.response as { ok: unknown; error: unknown };
    return `(response ${abiType(r.ok)} ${abiType(r.error)})`;
  }
  if ('list' in o) {
    const l = o.list as { type: unknown; length: number };
    return `(list ${l.length} ${abiType(l.type)})`;
  }
  if ('tuple' in o) {
    const fields = o.tuple as { name: string; type: unknown }[];
    return `(tuple ${fields.map((f) => `(${f.name} ${abiType(f.type)})`).join(' ')})`;
  }
  return JSON.stringify(t);
}

function functionAbi(simnet: Simnet, contractId: string, name: string) {
  return simnet
    .getContractsInterfaces()
    .get(contractId)
    ?.functions.find((f) => f.name === name);
}

/** Hiro's `function_signature`: `(define-public (anchor (root (buff 32))))`. */
function functionSignature(simnet: Simnet, contractId: string, name: string): string {
  const fn = functionAbi(simnet, contractId, name);
  const args = (fn?.args ?? []).map((a) => ` (${a.name} ${abiType(a.type)})`).join('');
  return `(define-public (${name}${args}))`;
}

/** Hiro v1 `function_args`: `{ hex, repr, name, type }` each, from the contract's ABI. */
function functionArgs(simnet: Simnet, r: TxRecord) {
  const fn = functionAbi(simnet, r.contractId, r.functionName);
  return r.args.map((a, i) => ({
    hex: `0x${serializeCV(a)}`,
    repr: cvToString(a),
    name: fn?.args[i]?.name ?? `arg${i}`,
    type: abiType(fn?.args[i]?.type),
  }));
}

/** The `print` events of a mined call (the notary contract emits one per anchor). */
function printEvents(r: TxRecord): { contractId: string; topic: string; value: ClarityValue | undefined }[] {
  return (r.events ?? [])
    .filter((e) => e.event === 'print_event')
    .map((e) => ({
      contractId: String(e.data.contract_identifier ?? r.contractId),
      topic: String(e.data.topic ?? 'print'),
      value: e.data.value,
    }));
}

function clarityJson(v: ClarityValue | undefined): { hex: string; repr: string } {
  if (!v) return { hex: '0x', repr: '' };
  return { hex: `0x${serializeCV(v)}`, repr: cvToString(v) };
}

function validPrincipal(p: string): boolean {
  const [address, name, ...rest] = p.split('.');
  if (rest.length > 0 || !address || !validateStacksAddress(address)) return false;
  return name === undefined || /^[a-zA-Z]([a-zA-Z0-9]|[-_]){0,127}$/.test(name);
}

/** A u128 as stacks-core writes it: `0x` and 32 hex digits (big-endian). */
function u128Hex(n: bigint): string {
  return `0x${n.toString(16).padStart(32, '0')}`;
}

function stxBalance(simnet: Simnet, who: string): bigint {
  return simnet.getAssetsMap().get('STX')?.get(who) ?? 0n;
}

function normalizeTxid(id: string): string {
  return id.toLowerCase().replace(/^0x/, '');
}

/** Reads at most `max` bytes; undefined when the body is larger (the rest is discarded). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) over = true;
    if (!over) chunks.push(chunk as Buffer);
  }
  return over ? undefined : Buffer.concat(chunks);
}

/** Discards a body; resolves to its size (counting stops past `upTo` when > 0). */
async function drain(req: IncomingMessage, upTo: number): Promise<number> {
  let size = 0;
  for await (const chunk of req) {
    if (upTo === 0 || size <= upTo) size += (chunk as Buffer).length;
  }
  return size;
}

function writeAnswer(res: ServerResponse, answer: Answer): void {
  // CORS as the public Stacks APIs answer it: the web verify page reads the devnet from the browser.
  res.writeHead(answer.status, { 'access-control-allow-origin': '*', ...answer.headers });
  res.end(answer.body);
}
