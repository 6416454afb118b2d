/**
 * The Stacks devnet's miner: mempool admission as stacks-core does it (`POST /v2/transactions`, and the
 * devnet's own replace-by-fee), and blocks. A block executes the pending contract calls of each sender in nonce
 * order (contiguous from its account nonce), each followed by its fee paid to a sink address; a Clarity
 * `(err ...)` response is included with `abort_by_response`, like on a real chain. Only contract calls are
 * accepted.
 */
import { tx as simTx, type Tx } from '@stacks/clarinet-sdk';
import {
  type AddressHashMode,
  AnchorMode,
  addressFromVersionHash,
  addressHashModeToVersion,
  addressToString,
  ClarityType,
  type ClarityValue,
  type ContractCallPayload,
  deserializeTransaction,
  PayloadType,
  PostConditionMode,
  type StacksTransactionWire,
  TransactionSigner,
} from '@stacks/transactions';
import { DEVNET_CHAIN_ID, normalizeTxid, stxBalance, u128Hex } from './stacks-chain';
import { nonceOf, type StacksDevnetState, type TxRecord } from './stacks-state';

/**
 * stacks-core's `MAXIMUM_MEMPOOL_TX_CHAINING` (stackslib/src/core/mempool.rs): a nonce more than this past the
 * account's next one is refused (`TooMuchChaining`).
 */
export const MAX_PENDING_PER_SENDER = 25;
/** Minimum relay fee of stacks-core: 1 µSTX per serialized byte (`MINIMUM_TX_FEE_RATE_PER_BYTE`). */
export const MIN_FEE_PER_BYTE = 1n;
/** Where fees go (the boot address), so balances fall as on a real chain. */
const FEE_SINK = 'ST000000000000000000002AMW42H';

/** A mempool rejection as stacks-core's `MemPoolRejection` writes it (`reason`, `reason_data`). */
export interface Rejection {
  reason: string;
  reason_data?: Record<string, unknown>;
}

/** Thrown by `admit` when the mempool refuses a transaction; the node answers it as JSON 400. */
export class RejectError extends Error {
  constructor(readonly rejection: Rejection) {
    super(rejection.reason);
  }
}

/** Mines `n` blocks (at least 1); the first includes the mempool. Returns the new tip height. */
export function mine(state: StacksDevnetState, n = 1): number {
  const count = Math.max(1, Math.floor(n));
  mineMempool(state);
  if (count > 1) {
    state.simnet.mineEmptyBlocks(count - 1);
    state.chain.sawBlocks();
  }
  return state.simnet.stacksBlockHeight;
}

/**
 * stacks-core mempool admission (`StacksChainState::will_admit_mempool_tx`, `MemPoolDB::try_add_tx`): adds the
 * transaction `t` (`txid`, serialized `raw`) as pending, replacing a pending one of the same sender and nonce
 * when its fee is strictly higher. A transaction already in the mempool is accepted again, unchanged.
 * @throws RejectError with stacks-core's rejection reason.
 */
export function admit(
  state: StacksDevnetState,
  t: StacksTransactionWire,
  txid: string,
  raw: Uint8Array,
): void {
  // A transaction the mempool already has is answered with its txid again (posttransaction.rs `has_tx`).
  const known = state.txs.get(txid);
  if (known && known.status !== 'dropped_replace_by_fee') return;
  const { sender, fee, nonce, call, callee } = checkAdmission(state, t, raw);
  const prior = [...state.txs.values()].find(
    (r) => r.status === 'pending' && r.sender === sender && r.nonce === nonce,
  );
  if (prior) {
    // Replace-by-fee only with a strictly higher fee (mempool.rs `try_add_tx`).
    if (fee <= prior.fee) throw new RejectError({ reason: 'ConflictingNonceInMempool' });
    prior.status = 'dropped_replace_by_fee';
    prior.replacedBy = txid;
  }
  state.txs.set(txid, {
    txid,
    raw,
    sender,
    nonce,
    fee,
    contractId: callee,
    functionName: call.functionName.content,
    args: call.functionArgs,
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
    receiptBlockHeight: state.simnet.stacksBlockHeight,
    status: 'pending',
  });
}

/** The checks of `admit` before the mempool's own (signature, chain, call, fee, nonce, funds), in stacks-core's order. */
function checkAdmission(
  state: StacksDevnetState,
  t: StacksTransactionWire,
  raw: Uint8Array,
): { sender: string; fee: bigint; nonce: bigint; call: ContractCallPayload; callee: string } {
  try {
    t.verifyOrigin();
  } catch (err) {
    throw new RejectError({ reason: 'SignatureValidation', reason_data: { message: String(err) } });
  }
  if (t.chainId !== DEVNET_CHAIN_ID) throw new RejectError({ reason: 'BadTransactionVersion' });
  const cond = t.auth.spendingCondition;
  const sender = addressToString(
    addressFromVersionHash(addressHashModeToVersion(cond.hashMode as AddressHashMode, 'devnet'), cond.signer),
  );
  const fee = BigInt(cond.fee);
  const nonce = BigInt(cond.nonce);
  const { call, callee } = checkCall(state, t);
  const minFee = BigInt(raw.length) * MIN_FEE_PER_BYTE;
  if (fee < minFee) {
    throw new RejectError({
      reason: 'FeeTooLow',
      reason_data: { expected: Number(minFee), actual: Number(fee) },
    });
  }
  checkNonce(nonceOf(state, sender), nonce, sender);
  const balance = stxBalance(state.simnet, sender);
  if (balance < fee) {
    throw new RejectError({
      reason: 'NotEnoughFunds',
      reason_data: { expected: u128Hex(fee), actual: u128Hex(balance) },
    });
  }
  return { sender, fee, nonce, call, callee };
}

/** The payload checks: a contract call, no post-conditions, a public function of a deployed contract, its arguments. */
function checkCall(
  state: StacksDevnetState,
  t: StacksTransactionWire,
): { call: ContractCallPayload; callee: string } {
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
  const iface = state.simnet.getContractsInterfaces().get(callee);
  if (!iface) throw new RejectError({ reason: 'NoSuchContract' });
  const fn = iface.functions.find((f) => f.name === p.functionName.content && f.access === 'public');
  if (!fn) throw new RejectError({ reason: 'NoSuchPublicFunction' });
  const argError = checkArgs(fn.args, p.functionArgs);
  if (argError) throw new RejectError({ reason: 'BadFunctionArgument', reason_data: { message: argError } });
  return { call: p, callee };
}

/** A nonce below the account's (`BadNonce`) or too far past it (`TooMuchChaining`) is refused. */
function checkNonce(expected: bigint, nonce: bigint, sender: string): void {
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
}

/**
 * `replaceByFee`: the same call as the pending transaction `txid` of the devnet's sender with fee `fee`
 * (default: twice its fee), signed with the sender's key and admitted. Returns the replacement's txid.
 * @throws Error when the transaction is not pending or not the devnet sender's; RejectError as `admit`.
 */
export function replaceByFee(state: StacksDevnetState, txid: string, fee?: bigint): string {
  const rec = state.txs.get(normalizeTxid(txid));
  if (rec?.status !== 'pending' || rec.blockHeight !== undefined) {
    throw new Error(`replaceByFee: ${txid} is not a pending transaction of this devnet`);
  }
  if (rec.sender !== state.senderAddress) {
    throw new Error(`replaceByFee: ${txid} is not from the devnet's sender (${state.senderAddress})`);
  }
  const t = deserializeTransaction(rec.raw);
  t.setFee(fee ?? rec.fee * 2n);
  const signer = new TransactionSigner(t);
  signer.signOrigin(state.senderKey);
  const replacement = signer.transaction;
  const raw = replacement.serializeBytes();
  const newId = replacement.txid();
  admit(state, replacement, newId, raw);
  return newId;
}

/** Executes one block: each sender's pending calls from its account nonce, contiguous, each then paying its fee. */
function mineMempool(state: StacksDevnetState): void {
  const { simnet, chain, txs, confirmedNonce } = state;
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

/** The API's name of an enum `value` of a transaction: the name paired with it in `names`, else `otherwise`. */
function nameOf<V, N extends string>(value: V, names: ReadonlyArray<readonly [V, N]>, otherwise: N): N {
  return names.find(([v]) => v === value)?.[1] ?? otherwise;
}
