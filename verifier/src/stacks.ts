import { errorMessage } from './error-message.ts';
import { agreement, compareEndpoints } from './evm.ts';
import type { Transport } from './http.ts';
import type { Receipt } from './receipt.ts';
import { CheckBuilder, type CheckResult, notRun } from './report.ts';
import {
  type AnchorRecord,
  readAnchor,
  rootArgument,
  StacksApiClient,
  type StacksApiClock,
  type StacksApiKind,
  StacksApiUnavailable,
  type StacksTx,
} from './stacks-api.ts';

/**
 * Check 4: the Stacks anchor, read through each Stacks API endpoint given, never trusting one. Each endpoint is
 * read through the shared Stacks reader (`stacks-api.ts`), whose kind is detected per endpoint (a Hiro API with
 * v3 or v1 routes, or a bare stacks-node):
 * - `GET /v2/info` (every kind: Hiro proxies the node's routes): the node serves the receipt's network
 *   (`network_id`: mainnet 1, testnet and devnet 0x80000000) and has reached the receipt's block; its tip
 *   gives the confirmations;
 * - `(get-anchor root)` of the notary contract (`POST /v2/contracts/call-read/…/get-anchor`, the root as
 *   `(buff 32)`): `(some { height, sender })`, recorded no later than the receipt's block;
 * - with an indexer (Hiro `GET /extended/v3/transactions/0x<txid>?include=function_args,result`, or v1
 *   `GET /extended/v1/tx/0x<txid>`): the receipt's transaction succeeded, on the canonical chain, in the
 *   receipt's block, as a call of `anchor` on the receipt's contract with the root as its argument. A bare
 *   node has no transaction index: there these facts are not checked (the check is partial when no endpoint
 *   could check them), never failed. An indexer that has not reached the receipt's block yet (its `/extended`
 *   chain tip) is not asked: it would answer the transaction pending or unknown.
 * What the endpoints read (all but the moving tip) must be identical: any disagreement fails the check.
 *
 * Evidence and unavailability are kept apart (see `report.ts`): an endpoint that is unreachable, rate-limited
 * (429, beyond `maxWaitMs`), gone (410: Hiro's disabled v1 routes and no v3), of no known kind, answering what
 * is not the API, of another network, or not synced to the receipt's block is unavailable. Fewer
 * confirmations than required is not a contradiction either: that part is reported not checked.
 */

const NETWORK_IDS: Readonly<Record<string, number>> = {
  mainnet: 0x00000001,
  testnet: 0x80000000,
  devnet: 0x80000000,
};

/** What the transaction index says about the receipt's transaction (compared across endpoints). */
interface TxFacts {
  status: string;
  canonical: boolean;
  blockHeight: number | null;
  contractId: string | null;
  functionName: string | null;
  firstArg: string | null;
  sender: string | null;
}

/** What one endpoint read; `tip` moves between reads and is not compared. */
interface EndpointRead {
  kind: StacksApiKind;
  networkId: number;
  tip: number;
  anchor: AnchorRecord | null;
  /** The transaction's facts; null: the index does not know it; undefined: not checked here (`whyNot`). */
  tx: TxFacts | null | undefined;
  whyNot: string | undefined;
}

export interface StacksCheckOptions {
  endpoints: string[];
  /** Blocks required, the inclusion block counting as 1. */
  confirmations: number;
  /** A Hiro API key, sent as `x-api-key` to every endpoint given (`--stacks-api-key`). */
  apiKey?: string;
  /** Longest wait for an endpoint that answers 429 with `Retry-After`, ms (default 5 s): beyond, unavailable. */
  maxWaitMs?: number;
  /** The clock of those waits (tests). */
  clock?: StacksApiClock;
}

type RegisteredStacks = Extract<NonNullable<Receipt['stacks']>, { status: 'registered' }>;

/** Check 4 (see the module comment). Never throws: an endpoint's failure is unavailability or evidence. */
export async function checkStacks(
  receipt: Receipt,
  t: Transport,
  o: StacksCheckOptions,
): Promise<CheckResult> {
  const leg = receipt.stacks;
  if (leg === null)
    return notRun(
      4,
      'not-applicable',
      'the receipt has no Stacks anchor (the service does not anchor on Stacks)',
    );
  if (leg.status !== 'registered')
    return notRun(4, 'pending', 'the receipt records the Stacks anchor as pending');
  if (o.endpoints.length === 0) return notRun(4, 'no-endpoint', 'no --stacks-api endpoint given');
  const c = new CheckBuilder(4);
  if (!receipt.merkle) {
    c.fail('merkle root', 'the receipt has a Stacks anchor but no Merkle proof');
    return c.result('');
  }
  const root = receipt.merkle.root;
  c.note('anchor', `(get-anchor 0x${root}) on ${leg.contractId} (${leg.network}), tx ${leg.txId}`);
  const anchors: { url: string; facts: { anchor: AnchorRecord | null } }[] = [];
  const txs: { url: string; facts: TxFacts | null }[] = [];
  const notIndexed: string[] = [];
  for (const endpoint of o.endpoints) {
    const url = endpoint.replace(/\/+$/, '');
    const api = new StacksApiClient({
      url,
      transport: t,
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      maxWaitMs: o.maxWaitMs ?? 5000,
      ...(o.clock ? { clock: o.clock } : {}),
    });
    let read: EndpointRead;
    try {
      read = await readEndpoint(api, leg, root);
    } catch (e) {
      c.unavailable(url, errorMessage(e));
      continue;
    }
    c.answered(url);
    c.note('endpoint', `${describeKind(read.kind)}, tip ${read.tip}`, url);
    anchors.push({ url, facts: { anchor: read.anchor } });
    judge(c, url, read, leg, root, o.confirmations);
    if (read.tx === undefined) {
      c.note('transaction', `not checked here: ${read.whyNot}`, url);
      notIndexed.push(`${url} (${read.whyNot})`);
    } else {
      txs.push({ url, facts: read.tx });
    }
  }
  compareEndpoints(c, anchors);
  compareEndpoints(c, txs);
  if (anchors.length > 0 && txs.length === 0) {
    c.skip(`the transaction ${leg.txId} itself (status, block, call): ${notIndexed.join('; ')}`);
  }
  const height = anchors[0]?.facts.anchor?.height;
  return c.result(
    `the root is on record in ${leg.contractId} since block ${height ?? '?'} ` +
      `(${agreement(anchors.length)})`,
  );
}

/**
 * Reads what `api` says about the anchor.
 * @throws StacksApiUnavailable when the endpoint gives no usable answer, is of another network, or has not
 *   reached the receipt's block.
 */
async function readEndpoint(
  api: StacksApiClient,
  leg: RegisteredStacks,
  root: string,
): Promise<EndpointRead> {
  const kind = await api.kind();
  const info = await api.info();
  const expectedId = NETWORK_IDS[leg.network] ?? -1;
  if (info.networkId !== expectedId) {
    throw new StacksApiUnavailable(
      'wrong-kind',
      `serves network_id ${hexId(info.networkId)}, not the receipt's ${leg.network} (${hexId(expectedId)})`,
    );
  }
  if (info.stacksTipHeight < leg.blockHeight) {
    throw new StacksApiUnavailable(
      'wrong-kind',
      `not synced: its tip is block ${info.stacksTipHeight}, the receipt's transaction is in block ${leg.blockHeight}`,
    );
  }
  const [deployer] = leg.contractId.split('.');
  const anchor = await readAnchor(api, leg.contractId, root, deployer ?? leg.contractId);
  const read = (tx: TxFacts | null | undefined, whyNot: string | undefined): EndpointRead => ({
    kind,
    networkId: info.networkId,
    tip: info.stacksTipHeight,
    anchor,
    tx,
    whyNot,
  });
  if (kind === 'node') return read(undefined, 'a stacks-node without a transaction index');
  // An indexer behind its node has not seen the receipt's block: whatever it says of the transaction (pending,
  // unknown) is not evidence about it yet.
  const indexed = (await api.hiroStatus()).tipHeight;
  if (indexed === null || indexed < leg.blockHeight) {
    return read(
      undefined,
      `its index has reached block ${indexed ?? 'none'}, not yet the receipt's block ${leg.blockHeight}`,
    );
  }
  const found = await api.transaction(leg.txId);
  return read(found === null ? null : txFacts(found), undefined);
}

function txFacts(tx: StacksTx): TxFacts {
  return {
    status: tx.status,
    canonical: tx.canonical,
    blockHeight: tx.blockHeight,
    contractId: tx.contractCall?.contractId ?? null,
    functionName: tx.contractCall?.functionName ?? null,
    firstArg: tx.contractCall?.args?.[0] ?? null,
    sender: tx.sender,
  };
}

function judge(
  c: CheckBuilder,
  url: string,
  read: EndpointRead,
  leg: RegisteredStacks,
  root: string,
  required: number,
): void {
  const anchor = read.anchor;
  c.expect(
    anchor !== null,
    'get-anchor',
    anchor
      ? `(some { height: u${anchor.height}, sender: ${anchor.sender} })`
      : 'none: the root is not recorded',
    url,
  );
  if (anchor) {
    c.expect(
      anchor.height <= leg.blockHeight,
      'recorded height',
      `u${anchor.height}, no later than the receipt's block ${leg.blockHeight}`,
      url,
    );
  }
  const confirmations = Math.max(0, read.tip - leg.blockHeight + 1);
  const text = `${confirmations} (at least ${required} required; tip ${read.tip})`;
  if (confirmations >= required) {
    c.expect(true, 'confirmations', text, url);
  } else {
    c.note('confirmations', text, url);
    c.skip(`${required} confirmations at ${url} (${confirmations} so far)`);
  }
  const tx = read.tx;
  if (tx === undefined) return;
  if (
    !c.expect(tx !== null, 'transaction', tx ? leg.txId : `unknown to this index: ${leg.txId}`, url) ||
    !tx
  ) {
    return;
  }
  c.expect(tx.status === 'success', 'tx_status', tx.status, url);
  c.expect(
    tx.canonical,
    'canonical',
    tx.canonical ? 'in a block of the canonical chain' : 'not in a block of the canonical chain',
    url,
  );
  c.expect(
    tx.blockHeight === leg.blockHeight,
    'block_height',
    `${tx.blockHeight ?? 'none'} (receipt ${leg.blockHeight})`,
    url,
  );
  const rootArg = rootArgument(root);
  c.expect(
    tx.contractId === leg.contractId && tx.functionName === 'anchor' && tx.firstArg === rootArg,
    'contract call',
    `(${tx.contractId}::${tx.functionName} ${tx.firstArg ?? '(arguments not answered)'}) (receipt (${leg.contractId}::anchor ${rootArg}))`,
    url,
  );
}

function describeKind(kind: StacksApiKind): string {
  return kind === 'node' ? 'a stacks-node (RPC only)' : `a Hiro API (${kind})`;
}

function hexId(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}
