/**
 * Transactions as Hiro's Stacks Blockchain API writes them: v1 `Transaction` / `MempoolTransaction`
 * (src/api/schemas/v1/entities/transactions.ts) and v3 `Transaction` / `MempoolTransaction`
 * (src/api/schemas/v3/entities/transactions.ts, mempool-transactions.ts), for the indexer's routes.
 */
import { cvToString, serializeCV } from '@stacks/transactions';
import { clarityJson, functionArgs, functionSignature, printEvents } from './stacks-chain';
import type { StacksDevnetState, TxRecord } from './stacks-state';

/** The fields v1 mempool and mined transactions share (a contract call, its signature and arguments). */
function v1Base(state: StacksDevnetState, r: TxRecord) {
  return {
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
      function_signature: functionSignature(state.simnet, r.contractId, r.functionName),
      function_args: functionArgs(state.simnet, r),
    },
  };
}

/** v1 `MempoolTransaction` (src/api/schemas/v1/entities/transactions.ts). */
export function v1MempoolJson(state: StacksDevnetState, r: TxRecord) {
  return {
    ...v1Base(state, r),
    tx_status: r.status === 'dropped_replace_by_fee' ? 'dropped_replace_by_fee' : 'pending',
    replaced_by_tx_id: r.replacedBy ? `0x${r.replacedBy}` : null,
    receipt_time: r.receiptTime,
    receipt_time_iso: new Date(r.receiptTime * 1000).toISOString(),
  };
}

/** v1 `Transaction` (mined), `canonical` false when the indexer saw its block orphaned. */
export function v1MinedJson(state: StacksDevnetState, r: TxRecord, canonical: boolean) {
  const { chain } = state;
  const h = r.blockHeight ?? 0;
  const block = chain.block(h);
  const parent = chain.block(Math.max(0, h - 1));
  const events = printEvents(r);
  return {
    ...v1Base(state, r),
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
}

/** v3 heavy fields (`include`): present exactly when asked for; `result` only on mined transactions. */
function v3Call(r: TxRecord, include: string[]) {
  return {
    contract_id: r.contractId,
    function_name: r.functionName,
    ...(include.includes('function_args')
      ? { function_args: r.args.map((a) => ({ hex: `0x${serializeCV(a)}`, repr: cvToString(a) })) }
      : {}),
  };
}

/** v3 `Transaction` (src/api/schemas/v3/entities/transactions.ts, serializers/v3/transactions.ts). */
export function v3MinedJson(state: StacksDevnetState, r: TxRecord, include: string[]) {
  const { chain } = state;
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
}

/** v3 `MempoolTransaction` (src/api/schemas/v3/entities/mempool-transactions.ts). */
export function v3MempoolJson(r: TxRecord, include: string[]) {
  return {
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
  };
}
