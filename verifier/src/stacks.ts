import type { Transport } from '@notary/trust/http';
import { problemOf } from '@notary/trust/messages';
import {
  type AnchorRecord,
  readAnchor,
  rootArgument,
  StacksApiClient,
  type StacksApiClock,
  type StacksApiKind,
  type StacksTx,
} from '@notary/trust/stacks-api';
import { agreement, compareEndpoints, confirmationsEvidence } from './evm.ts';
import { data, type Message, msg, render } from './messages/index.ts';
import type { Receipt } from './receipt.ts';
import { CheckBuilder, type CheckResult, notRun } from './report.ts';

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
  whyNot: Message | undefined;
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
  if (leg === null) return notRun(4, 'not-applicable', msg('stacks.none'));
  if (leg.status !== 'registered') return notRun(4, 'pending', msg('stacks.pending'));
  if (o.endpoints.length === 0) return notRun(4, 'no-endpoint', msg('stacks.noEndpoint'));
  const c = new CheckBuilder(4);
  if (!receipt.merkle) {
    c.fail(msg('anchor.merkleRoot'), msg('stacks.noMerkle'));
    return c.result(data(''));
  }
  const root = receipt.merkle.root;
  c.note(
    msg('stacks.anchor'),
    msg('stacks.anchorValue', { root, contract: leg.contractId, network: leg.network, tx: leg.txId }),
  );
  const anchors: { url: string; facts: { anchor: AnchorRecord | null } }[] = [];
  const txs: { url: string; facts: TxFacts | null }[] = [];
  const notIndexed: Message[] = [];
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
      c.unavailable(url, e instanceof EndpointUnusable ? e.detail : problemOf(e));
      continue;
    }
    c.answered(url);
    c.note(
      msg('stacks.endpoint'),
      msg('stacks.kindAndTip', { kind: describeKind(read.kind), tip: read.tip }),
      url,
    );
    anchors.push({ url, facts: { anchor: read.anchor } });
    judge(c, url, read, leg, root, o.confirmations);
    if (read.tx === undefined) {
      const why = read.whyNot ?? data('');
      c.note(msg('stacks.transaction'), msg('stacks.notCheckedHere', { why }), url);
      notIndexed.push(msg('report.sourceReason', { source: url, reason: why }));
    } else {
      txs.push({ url, facts: read.tx });
    }
  }
  compareEndpoints(c, anchors);
  compareEndpoints(c, txs);
  if (anchors.length > 0 && txs.length === 0) {
    c.skip(msg('stacks.txNotChecked', { tx: leg.txId, endpoints: notIndexed }));
  }
  const height = anchors[0]?.facts.anchor?.height;
  return c.result(
    msg('stacks.summary', {
      contract: leg.contractId,
      height: height ?? '?',
      agreement: agreement(anchors.length),
    }),
  );
}

/** An endpoint of another network, or behind the receipt's block: unavailable, `detail` why. */
class EndpointUnusable extends Error {
  override name = 'EndpointUnusable';
  readonly detail: Message;

  constructor(detail: Message) {
    super(render(detail, 'en'));
    this.detail = detail;
  }
}

/**
 * Reads what `api` says about the anchor.
 * @throws StacksApiUnavailable when the endpoint gives no usable answer; EndpointUnusable when it is of
 *   another network, or has not reached the receipt's block.
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
    throw new EndpointUnusable(
      msg('stacks.otherNetwork', {
        networkId: hexId(info.networkId),
        network: leg.network,
        expected: hexId(expectedId),
      }),
    );
  }
  if (info.stacksTipHeight < leg.blockHeight) {
    throw new EndpointUnusable(
      msg('anchor.notSynced', { tip: info.stacksTipHeight, block: leg.blockHeight }),
    );
  }
  const [deployer] = leg.contractId.split('.');
  const anchor = await readAnchor(api, leg.contractId, root, deployer ?? leg.contractId);
  const read = (tx: TxFacts | null | undefined, whyNot: Message | undefined): EndpointRead => ({
    kind,
    networkId: info.networkId,
    tip: info.stacksTipHeight,
    anchor,
    tx,
    whyNot,
  });
  if (kind === 'node') return read(undefined, msg('stacks.nodeWithoutIndex'));
  // An indexer behind its node has not seen the receipt's block: whatever it says of the transaction (pending,
  // unknown) is not evidence about it yet.
  const indexed = (await api.hiroStatus()).tipHeight;
  if (indexed === null || indexed < leg.blockHeight) {
    return read(
      undefined,
      msg('stacks.indexBehind', { indexed: indexed ?? msg('word.none'), block: leg.blockHeight }),
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
    data('get-anchor'),
    anchor
      ? data(`(some { height: u${anchor.height}, sender: ${anchor.sender} })`)
      : msg('stacks.notRecorded'),
    url,
  );
  if (anchor) {
    c.expect(
      anchor.height <= leg.blockHeight,
      msg('stacks.recordedHeight'),
      msg('stacks.heightValue', { height: `u${anchor.height}`, block: leg.blockHeight }),
      url,
    );
  }
  confirmationsEvidence(c, url, Math.max(0, read.tip - leg.blockHeight + 1), required, read.tip);
  const tx = read.tx;
  if (tx === undefined) return;
  const found = tx ? data(leg.txId) : msg('stacks.unknownToIndex', { tx: leg.txId });
  if (!c.expect(tx !== null, msg('stacks.transaction'), found, url) || !tx) return;
  c.expect(tx.status === 'success', data('tx_status'), data(tx.status), url);
  c.expect(
    tx.canonical,
    msg('stacks.canonical'),
    msg(tx.canonical ? 'stacks.inCanonical' : 'stacks.notInCanonical'),
    url,
  );
  c.expect(
    tx.blockHeight === leg.blockHeight,
    data('block_height'),
    msg('value.receipt', { value: tx.blockHeight ?? msg('word.none'), expected: leg.blockHeight }),
    url,
  );
  const rootArg = rootArgument(root);
  c.expect(
    tx.contractId === leg.contractId && tx.functionName === 'anchor' && tx.firstArg === rootArg,
    msg('stacks.contractCall'),
    msg('value.receipt', {
      value: msg('stacks.call', {
        contract: String(tx.contractId),
        fn: String(tx.functionName),
        arg: tx.firstArg ?? msg('stacks.argumentsNotAnswered'),
      }),
      expected: `(${leg.contractId}::anchor ${rootArg})`,
    }),
    url,
  );
}

function describeKind(kind: StacksApiKind): Message {
  return kind === 'node' ? msg('stacks.nodeKind') : msg('stacks.hiroKind', { kind });
}

function hexId(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}
