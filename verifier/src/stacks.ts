import { Cl, ClarityType, cvToString, hexToCV, serializeCV } from '@stacks/transactions';
import { agreement, compareEndpoints } from './evm.ts';
import { EndpointError, requestJson, type Transport } from './http.ts';
import type { Receipt } from './receipt.ts';
import { CheckBuilder, type CheckResult, notRun } from './report.ts';

/**
 * Check 4: the Stacks anchor, read through each Stacks API endpoint given (a stacks-core node's RPC plus the
 * Hiro API's transaction route), never trusting one:
 * - `GET /v2/info`: the node's `network_id` is the receipt network's chain id (mainnet 1, testnet and devnet
 *   0x80000000), and its tip gives the confirmations;
 * - `POST /v2/contracts/call-read/<address>/<name>/get-anchor` with the root as `(buff 32)`: the notary
 *   contract returns `(some { height, sender })`, recorded no later than the transaction's block;
 * - `GET /extended/v1/tx/0x<txid>`: the transaction succeeded, in the receipt's block, as a call of `anchor` on
 *   the receipt's contract with the root as its argument.
 * What each endpoint read (all but the moving tip) must be identical: any disagreement fails the check.
 */

const NETWORK_IDS: Readonly<Record<string, number>> = {
  mainnet: 0x00000001,
  testnet: 0x80000000,
  devnet: 0x80000000,
};

interface StacksFacts {
  networkId: number | null;
  anchor: { height: number; sender: string } | null;
  tx: {
    status: string;
    blockHeight: number | null;
    contractId: string | null;
    functionName: string | null;
    firstArg: string | null;
    sender: string | null;
  } | null;
}

export interface StacksCheckOptions {
  endpoints: string[];
  /** Blocks required, the inclusion block counting as 1. */
  confirmations: number;
}

/** Check 4 (see the module comment). Never throws: endpoint failures are failed evidence. */
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
  const rootArg = `0x${serializeCV(Cl.bufferFromHex(root))}`;
  c.note('anchor', `(get-anchor 0x${root}) on ${leg.contractId} (${leg.network}), tx ${leg.txId}`);
  const seen: { url: string; facts: StacksFacts }[] = [];
  for (const endpoint of o.endpoints) {
    const url = endpoint.replace(/\/+$/, '');
    let facts: StacksFacts;
    let tip: number | null;
    try {
      ({ facts, tip } = await readFacts(t, url, leg.contractId, leg.txId, rootArg));
    } catch (e) {
      c.fail('endpoint', e instanceof Error ? e.message : String(e), url);
      continue;
    }
    seen.push({ url, facts });
    const expectedId = NETWORK_IDS[leg.network];
    c.expect(
      facts.networkId === expectedId,
      'network_id',
      `${facts.networkId === null ? 'unknown' : hexId(facts.networkId)} (receipt ${leg.network}: ${hexId(expectedId ?? 0)})`,
      url,
    );
    const anchor = facts.anchor;
    c.expect(
      anchor !== null,
      'get-anchor',
      anchor
        ? `(some { height: u${anchor.height}, sender: ${anchor.sender} })`
        : 'none: the root is not recorded',
      url,
    );
    const tx = facts.tx;
    if (
      !c.expect(tx !== null, 'transaction', tx ? leg.txId : `unknown to this endpoint: ${leg.txId}`, url) ||
      !tx
    ) {
      continue;
    }
    c.expect(tx.status === 'success', 'tx_status', tx.status, url);
    c.expect(
      tx.blockHeight === leg.blockHeight,
      'block_height',
      `${tx.blockHeight} (receipt ${leg.blockHeight})`,
      url,
    );
    c.expect(
      tx.contractId === leg.contractId && tx.functionName === 'anchor' && tx.firstArg === rootArg,
      'contract call',
      `(${tx.contractId}::${tx.functionName} ${tx.firstArg ?? ''}) (receipt (${leg.contractId}::anchor ${rootArg}))`,
      url,
    );
    if (anchor && tx.blockHeight !== null) {
      c.expect(
        anchor.height <= tx.blockHeight,
        'recorded height',
        `u${anchor.height}, no later than the transaction's block ${tx.blockHeight}`,
        url,
      );
    }
    if (tip !== null && tx.blockHeight !== null) {
      const confirmations = Math.max(0, tip - tx.blockHeight + 1);
      c.expect(
        confirmations >= o.confirmations,
        'confirmations',
        `${confirmations} (at least ${o.confirmations} required; tip ${tip})`,
        url,
      );
    }
  }
  compareEndpoints(c, seen);
  const first = seen[0];
  const height = first?.facts.anchor?.height;
  return c.result(
    `the root is on record in ${leg.contractId} since block ${height ?? '?'} ` +
      `(${agreement(seen.length)})`,
  );
}

async function readFacts(
  t: Transport,
  url: string,
  contractId: string,
  txId: string,
  rootArg: string,
): Promise<{ facts: StacksFacts; tip: number | null }> {
  const info = await requestJson(t, `${url}/v2/info`);
  if (info.status !== 200) throw new EndpointError(`/v2/info: HTTP ${info.status}`);
  const infoBody = info.body as { network_id?: unknown; stacks_tip_height?: unknown };
  const networkId = typeof infoBody.network_id === 'number' ? infoBody.network_id : null;
  const tip = typeof infoBody.stacks_tip_height === 'number' ? infoBody.stacks_tip_height : null;

  const [address, name] = contractId.split('.');
  const read = await requestJson(t, `${url}/v2/contracts/call-read/${address}/${name}/get-anchor`, {
    method: 'POST',
    body: { sender: address, arguments: [rootArg] },
  });
  const readBody = read.body as { okay?: unknown; result?: unknown; cause?: unknown };
  if (read.status !== 200 || readBody.okay !== true || typeof readBody.result !== 'string') {
    throw new EndpointError(
      `call-read get-anchor: HTTP ${read.status} ${JSON.stringify(read.body).slice(0, 160)}`,
    );
  }
  const anchor = parseAnchor(readBody.result);

  const txRes = await requestJson(t, `${url}/extended/v1/tx/${txId}`);
  let tx: StacksFacts['tx'] = null;
  if (txRes.status === 200) {
    const b = txRes.body as {
      tx_status?: unknown;
      block_height?: unknown;
      sender_address?: unknown;
      contract_call?: { contract_id?: unknown; function_name?: unknown; function_args?: { hex?: unknown }[] };
    };
    const arg = b.contract_call?.function_args?.[0]?.hex;
    tx = {
      status: typeof b.tx_status === 'string' ? b.tx_status : 'unknown',
      blockHeight: typeof b.block_height === 'number' ? b.block_height : null,
      contractId: typeof b.contract_call?.contract_id === 'string' ? b.contract_call.contract_id : null,
      functionName: typeof b.contract_call?.function_name === 'string' ? b.contract_call.function_name : null,
      firstArg: typeof arg === 'string' ? arg.toLowerCase() : null,
      sender: typeof b.sender_address === 'string' ? b.sender_address : null,
    };
  } else if (txRes.status !== 404) {
    throw new EndpointError(`/extended/v1/tx: HTTP ${txRes.status}`);
  }
  return { facts: { networkId, anchor, tx }, tip };
}

/** `(optional { height: uint, sender: principal })` from its hex serialization. */
function parseAnchor(hex: string): StacksFacts['anchor'] {
  let cv: ReturnType<typeof hexToCV>;
  try {
    cv = hexToCV(hex);
  } catch (e) {
    throw new EndpointError(`get-anchor: undecodable Clarity value: ${(e as Error).message}`);
  }
  if (cv.type === ClarityType.OptionalNone) return null;
  if (cv.type !== ClarityType.OptionalSome || cv.value.type !== ClarityType.Tuple) {
    throw new EndpointError(`get-anchor: unexpected ${cvToString(cv)}`);
  }
  const { height, sender } = cv.value.value;
  if (height?.type !== ClarityType.UInt || sender?.type !== ClarityType.PrincipalStandard) {
    throw new EndpointError(`get-anchor: unexpected ${cvToString(cv)}`);
  }
  return { height: Number(height.value), sender: sender.value };
}

function hexId(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}
