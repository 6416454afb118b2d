/**
 * Local Stacks node for the embedded default and tests: a loopback HTTP server (127.0.0.1, port 0) backed by the
 * real Clarity VM of `@stacks/clarinet-sdk` 3.21 (an empty simnet session in epoch 3.1, no Clarinet.toml), with
 * `server/contracts/notary.clar` deployed (Clarity 3) by a freshly funded account.
 *
 * It answers the subset of the Stacks node RPC API (stacks-core `/v2/*`) and of the Hiro API (`/extended/v1/*`)
 * that `StacksNotaryChain` uses, with the same shapes:
 * - `GET  /v2/info` → `{ network_id, stacks_tip_height, burn_block_height, server_version, ... }`
 * - `GET  /v2/accounts/:principal?proof=0` → `{ balance: '0x<u128 hex>', locked, unlock_height, nonce }` (confirmed nonce)
 * - `GET  /extended/v1/address/:principal/nonces` → `{ last_executed_tx_nonce, last_mempool_tx_nonce,
 *   possible_next_nonce, detected_missing_nonces, detected_mempool_nonces }`
 * - `GET  /v2/fees/transfer` → a JSON number (µSTX per byte)
 * - `POST /v2/transactions` (`application/octet-stream`, SIP-005 serialized tx) → 200 `"<txid>"` (JSON string, no
 *   0x), or 400 `{ error, reason, reason_data, txid }` with stacks-core's `MemPoolRejection` reasons:
 *   Deserialization, SignatureValidation, BadTransactionVersion, NoSuchContract, NoSuchPublicFunction,
 *   BadFunctionArgument, FeeTooLow, BadNonce, NotEnoughFunds, ConflictingNonceInMempool, TooMuchChaining.
 *   Re-posting a transaction already in the mempool answers its txid again (as stacks-core does).
 * - `GET  /extended/v1/tx/:txid` → `{ tx_id, tx_status: pending|success|abort_by_response, block_height,
 *   tx_result: { hex, repr }, nonce, fee_rate, sender_address, tx_type, contract_call }`, 404 when unknown.
 * - `POST /v2/contracts/call-read/:address/:name/:fn` with `{ sender, arguments: ['0x<cv hex>'] }` →
 *   `{ okay: true, result: '0x<cv hex>' }` or `{ okay: false, cause }`.
 *
 * Mining: transactions wait in a mempool; a block is mined every `blockTimeMs` (empty blocks too, so
 * confirmations grow) or on `mine(n)`. A block executes the pending contract calls of each sender in nonce order
 * (contiguous from its account nonce), each followed by its fee paid to a sink address. A Clarity `(err ...)`
 * response is included with `abort_by_response`, like on a real chain. Only contract calls are accepted.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { getSDK, type Simnet, tx as simTx, type Tx } from '@stacks/clarinet-sdk';
import {
  type AddressHashMode,
  addressFromVersionHash,
  addressHashModeToVersion,
  addressToString,
  ClarityType,
  type ClarityValue,
  cvToString,
  deserializeTransaction,
  hexToCV,
  PayloadType,
  privateKeyToAddress,
  randomPrivateKey,
  type StacksTransactionWire,
  serializeCV,
} from '@stacks/transactions';

/** Source of the notary contract deployed on the devnet (and on real networks by hand). */
export const NOTARY_CONTRACT_PATH = fileURLToPath(new URL('../../../contracts/notary.clar', import.meta.url));
/** Stacks testnet/devnet chain id (SIP-005 `chain_id`), also `network_id` in `/v2/info`. */
export const DEVNET_CHAIN_ID = 0x80000000;
/** stacks-core refuses more than this many pending transactions of one sender (`TooMuchChaining`). */
export const MAX_PENDING_PER_SENDER = 25;
/** Where fees go (the boot address), so balances fall as on a real chain. */
const FEE_SINK = 'ST000000000000000000002AMW42H';
/** Minimum relay fee of stacks-core: 1 µSTX per serialized byte. */
const MIN_FEE_PER_BYTE = 1n;

export interface StacksDevnetOptions {
  /** Block interval of the automatic miner; 0 mines only on `mine()` (tests). Default 1000 ms. */
  blockTimeMs?: number;
  /** Private key of the funded deployer/sender (hex, compressed); a random one by default. */
  senderKey?: string;
  /** µSTX minted to the sender. Default 1,000,000 STX. */
  initialBalance?: bigint;
  /** Contract name. Default `notary`. */
  contractName?: string;
}

export interface StacksDevnet {
  /** Base URL, e.g. `http://127.0.0.1:41234` (serves both `/v2` and `/extended`). */
  url: string;
  network: 'devnet';
  /** `<deployer address>.<name>`. */
  contractId: string;
  /** Private key of a funded account (the deployer). */
  senderKey: string;
  senderAddress: string;
  /** Mines `n` blocks (default 1); the first includes the mempool. Resolves to the new tip height. */
  mine(n?: number): number;
  /** Credits `amount` µSTX to `address` (fixtures). */
  fund(address: string, amount: bigint): void;
  stop(): Promise<void>;
}

interface TxRecord {
  txid: string;
  sender: string;
  nonce: bigint;
  fee: bigint;
  contractId: string;
  functionName: string;
  args: ClarityValue[];
  receiptTime: number;
  status: 'pending' | 'success' | 'abort_by_response';
  blockHeight?: number;
  result?: ClarityValue;
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

/** Starts the devnet; `stop()` closes it (the timer and server are unref'd: they never keep the process alive). */
export async function startStacksDevnet(options: StacksDevnetOptions = {}): Promise<StacksDevnet> {
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

  const txs = new Map<string, TxRecord>();
  const confirmedNonce = new Map<string, bigint>();
  const nonceOf = (who: string): bigint => confirmedNonce.get(who) ?? 0n;

  const mine = (n = 1): number => {
    const count = Math.max(1, Math.floor(n));
    mineMempool(simnet, txs, confirmedNonce);
    if (count > 1) simnet.mineEmptyBlocks(count - 1);
    return simnet.stacksBlockHeight;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      sendJson(res, 500, { error: 'internal error', message: String(err) });
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // CORS as the public Stacks APIs answer it: the web verify page reads the devnet from the browser.
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
        'Access-Control-Allow-Headers': 'content-type',
        'Access-Control-Max-Age': '600',
      });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://devnet');
    const path = url.pathname;
    const parts = path.split('/').filter((p) => p !== '');
    if (req.method === 'GET' && path === '/v2/info') {
      return sendJson(res, 200, {
        peer_version: 4207599116,
        network_id: DEVNET_CHAIN_ID,
        parent_network_id: 3669344250,
        server_version: 'notary-stacks-devnet (clarinet-sdk simnet)',
        stacks_tip_height: simnet.stacksBlockHeight,
        burn_block_height: simnet.burnBlockHeight,
      });
    }
    if (req.method === 'GET' && path === '/v2/fees/transfer')
      return sendJson(res, 200, Number(MIN_FEE_PER_BYTE));
    if (req.method === 'GET' && parts[0] === 'v2' && parts[1] === 'accounts' && parts.length === 3) {
      const who = decodeURIComponent(parts[2] ?? '');
      return sendJson(res, 200, {
        balance: `0x${stxBalance(simnet, who).toString(16).padStart(32, '0')}`,
        locked: `0x${'0'.repeat(32)}`,
        unlock_height: 0,
        nonce: Number(nonceOf(who)),
      });
    }
    if (req.method === 'GET' && parts[0] === 'extended' && parts[2] === 'address' && parts[4] === 'nonces') {
      const who = decodeURIComponent(parts[3] ?? '');
      const executed = nonceOf(who);
      const pending = [...txs.values()]
        .filter((t) => t.status === 'pending' && t.sender === who)
        .map((t) => t.nonce)
        .sort((a, b) => (a < b ? -1 : 1));
      let next = executed;
      while (pending.includes(next)) next += 1n;
      const maxPending = pending.at(-1);
      const missing: number[] = [];
      if (maxPending !== undefined) {
        for (let k = executed; k < maxPending; k++) if (!pending.includes(k)) missing.push(Number(k));
      }
      return sendJson(res, 200, {
        last_executed_tx_nonce: executed > 0n ? Number(executed - 1n) : null,
        last_mempool_tx_nonce: maxPending === undefined ? null : Number(maxPending),
        possible_next_nonce: Number(next),
        detected_missing_nonces: missing,
        detected_mempool_nonces: pending.map(Number),
      });
    }
    if (req.method === 'GET' && parts[0] === 'extended' && parts[2] === 'tx' && parts.length === 4) {
      const id = normalizeTxid(decodeURIComponent(parts[3] ?? ''));
      const rec = txs.get(id);
      if (!rec) return sendJson(res, 404, { error: `could not find transaction by ID 0x${id}` });
      return sendJson(res, 200, txJson(rec));
    }
    if (req.method === 'POST' && path === '/v2/transactions') {
      const body = await readBody(req);
      let decoded: StacksTransactionWire | undefined;
      try {
        decoded = deserializeTransaction(body);
      } catch (err) {
        return sendJson(res, 400, {
          error: 'transaction rejected',
          reason: 'Deserialization',
          reason_data: { message: String(err) },
          txid: '',
        });
      }
      const txid = decoded.txid();
      try {
        admit(decoded, txid, body.length);
        return sendJson(res, 200, txid);
      } catch (err) {
        if (!(err instanceof RejectError)) throw err;
        return sendJson(res, 400, { error: 'transaction rejected', ...err.rejection, txid });
      }
    }
    if (req.method === 'POST' && parts[0] === 'v2' && parts[1] === 'contracts' && parts[2] === 'call-read') {
      const [, , , address, name, fn] = parts;
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as {
        sender?: string;
        arguments?: string[];
      };
      try {
        const result = simnet.callReadOnlyFn(
          `${address}.${name}`,
          fn ?? '',
          (body.arguments ?? []).map((a) => hexToCV(a)),
          body.sender ?? senderAddress,
        );
        return sendJson(res, 200, { okay: true, result: `0x${serializeCV(result.result)}` });
      } catch (err) {
        return sendJson(res, 200, { okay: false, cause: String(err) });
      }
    }
    sendJson(res, 404, { error: `no route ${req.method} ${path}` });
  };

  /** stacks-core mempool admission (`MemPoolDB::will_admit_tx` checks), throwing `RejectError`. */
  const admit = (t: StacksTransactionWire, txid: string, size: number): void => {
    if (txs.has(txid)) return; // already known: the node answers the txid again
    try {
      t.verifyOrigin();
    } catch (err) {
      throw new RejectError({ reason: 'SignatureValidation', reason_data: { message: String(err) } });
    }
    if (t.chainId !== DEVNET_CHAIN_ID) {
      throw new RejectError({
        reason: 'BadTransactionVersion',
        reason_data: { message: `chain id ${t.chainId}` },
      });
    }
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
    const p = t.payload;
    const callee = `${addressToString(p.contractAddress)}.${p.contractName.content}`;
    const iface = simnet.getContractsInterfaces().get(callee);
    if (!iface) throw new RejectError({ reason: 'NoSuchContract' });
    const fn = iface.functions.find((f) => f.name === p.functionName.content && f.access === 'public');
    if (!fn) throw new RejectError({ reason: 'NoSuchPublicFunction' });
    const argError = checkArgs(fn.args, p.functionArgs);
    if (argError)
      throw new RejectError({ reason: 'BadFunctionArgument', reason_data: { message: argError } });
    const minFee = BigInt(size) * MIN_FEE_PER_BYTE;
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
          is_origin: true,
          principal: sender,
        },
      });
    }
    const balance = stxBalance(simnet, sender);
    if (balance < fee) {
      throw new RejectError({
        reason: 'NotEnoughFunds',
        reason_data: { expected: `0x${fee.toString(16)}`, actual: `0x${balance.toString(16)}` },
      });
    }
    const pending = [...txs.values()].filter((r) => r.status === 'pending' && r.sender === sender);
    const prior = pending.find((r) => r.nonce === nonce);
    if (prior) {
      if (fee <= prior.fee) throw new RejectError({ reason: 'ConflictingNonceInMempool' });
      txs.delete(prior.txid); // replace-by-fee, as stacks-core's mempool does
    } else if (pending.length >= MAX_PENDING_PER_SENDER) {
      throw new RejectError({
        reason: 'TooMuchChaining',
        reason_data: {
          max_nonce: Number(expected) + MAX_PENDING_PER_SENDER,
          actual_nonce: Number(nonce),
          principal: sender,
          is_origin: true,
        },
      });
    }
    txs.set(txid, {
      txid,
      sender,
      nonce,
      fee,
      contractId: callee,
      functionName: p.functionName.content,
      args: p.functionArgs,
      receiptTime: Math.floor(Date.now() / 1000),
      status: 'pending',
    });
  };

  // Loopback only: no idle timeout on kept-alive connections, so a client that blocked its event loop (the
  // devnets start WebAssembly in-process) never sends on a socket this side is closing (ECONNRESET).
  server.keepAliveTimeout = 0;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  server.unref();
  const { port } = server.address() as AddressInfo;
  const blockTimeMs = options.blockTimeMs ?? 1000;
  const timer = blockTimeMs > 0 ? setInterval(() => mine(1), blockTimeMs) : undefined;
  timer?.unref();

  return {
    url: `http://127.0.0.1:${port}`,
    network: 'devnet',
    contractId,
    senderKey,
    senderAddress,
    mine,
    fund: (address, amount) => {
      simnet.mintSTX(address, amount);
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Executes one block: each sender's pending calls from its account nonce, contiguous, each then paying its fee. */
function mineMempool(simnet: Simnet, txs: Map<string, TxRecord>, confirmedNonce: Map<string, bigint>): void {
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
    return;
  }
  const block: Tx[] = [];
  for (const r of included) {
    block.push(simTx.callPublicFn(r.contractId, r.functionName, r.args, r.sender));
    if (r.fee > 0n) block.push(simTx.transferSTX(Number(r.fee), FEE_SINK, r.sender));
  }
  const results = simnet.mineBlock(block);
  const height = simnet.stacksBlockHeight;
  let i = 0;
  for (const r of included) {
    const res = results[i];
    i += r.fee > 0n ? 2 : 1;
    r.result = res?.result;
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

function stxBalance(simnet: Simnet, who: string): bigint {
  return simnet.getAssetsMap().get('STX')?.get(who) ?? 0n;
}

function txJson(r: TxRecord): Record<string, unknown> {
  const base = {
    tx_id: `0x${r.txid}`,
    tx_type: 'contract_call',
    nonce: Number(r.nonce),
    fee_rate: r.fee.toString(),
    sender_address: r.sender,
    tx_status: r.status,
    receipt_time: r.receiptTime,
    contract_call: {
      contract_id: r.contractId,
      function_name: r.functionName,
      function_args: r.args.map((a) => ({ hex: `0x${serializeCV(a)}`, repr: cvToString(a) })),
    },
  };
  if (r.status === 'pending' || !r.result) return base;
  return {
    ...base,
    block_height: r.blockHeight,
    canonical: true,
    tx_result: { hex: `0x${serializeCV(r.result)}`, repr: cvToString(r.result) },
  };
}

function normalizeTxid(id: string): string {
  return id.toLowerCase().replace(/^0x/, '');
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}
