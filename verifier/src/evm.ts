import { requestJson, type Transport } from '@notary/trust/http';
import { problemOf } from '@notary/trust/messages';
import { AbiCoder, getAddress, Interface, isAddress, keccak256, solidityPacked, ZeroHash } from 'ethers';
import { errorMessage } from './error-message.ts';
import { data, foreign, type Message, msg, render } from './messages/index.ts';
import type { Receipt } from './receipt.ts';
import { CheckBuilder, type CheckResult, notRun } from './report.ts';

/**
 * Check 3: the EVM anchor, read through each JSON-RPC endpoint given (`eth_chainId`, `eth_call`,
 * `eth_getTransactionReceipt`, `eth_getBlockByNumber`, `eth_blockNumber`), never trusting one:
 * - the endpoint serves the receipt's chain id;
 * - `EAS.getAttestation(uid)` exists, under the receipt's schema, by the receipt's attester, not revoked, not
 *   expired, and its `data` decodes (`bytes32 merkleRoot`) to the receipt's Merkle root;
 * - `SchemaRegistry.getSchema(schemaUid)` is the receipt's definition, and the UID is that definition's
 *   (`keccak256(abi.encodePacked(schema, resolver, revocable))`); EAS names the receipt's registry;
 * - the transaction succeeded in the receipt's block, emitted EAS's `Attested(recipient, attester, uid,
 *   schemaUID)`, and has at least `confirmations` blocks (the inclusion block counting as 1);
 * - the attestation's `time` is its block's timestamp.
 * What each endpoint read (all but the moving chain tip) must be identical: any disagreement fails the check.
 *
 * Evidence and unavailability are kept apart (see `report.ts`). An endpoint that gives no usable answer is
 * unavailable, not evidence: unreachable, timed out, an HTTP status other than 200 (429 rate-limited, 410
 * gone, 5xx), not JSON, a JSON-RPC error other than a revert (method not found, provider limits), a result
 * that is not what an Ethereum node answers, a node of another chain (`eth_chainId` not the receipt's), or
 * one whose tip is below the receipt's block (not synced that far). The check fails only on what an endpoint
 * of the receipt's chain, synced past its block, answered: an attestation or transaction that is missing or
 * says something else, a call that reverts or whose answer does not decode (no EAS contract there), or two
 * such endpoints that disagree. Fewer confirmations than required is not a contradiction either: that part
 * is reported not checked (partial).
 * Contract interfaces: EAS 1.x `IEAS.sol` / `ISchemaRegistry.sol` (eas-contracts 1.x); JSON-RPC methods and
 * result encodings: Ethereum execution-apis (`eth_chainId`, `eth_call`, ...), JSON-RPC 2.0 error objects.
 */

/** EAS (`IEAS.sol`) fragments used, human-readable ABI. */
export const EAS_ABI = [
  'function getAttestation(bytes32 uid) view returns ((bytes32 uid, bytes32 schema, uint64 time, uint64 expirationTime, uint64 revocationTime, bytes32 refUID, address recipient, address attester, bool revocable, bytes data))',
  'function getSchemaRegistry() view returns (address)',
  'event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)',
];
/** SchemaRegistry (`ISchemaRegistry.sol`) fragments used. */
export const SCHEMA_REGISTRY_ABI = [
  'function getSchema(bytes32 uid) view returns ((bytes32 uid, address resolver, bool revocable, string schema))',
];

const eas = new Interface(EAS_ABI);
const registry = new Interface(SCHEMA_REGISTRY_ABI);

/** What one endpoint says about the anchor; `tip` moves between reads and is not compared across endpoints. */
interface EvmFacts {
  chainId: number;
  attestation: {
    uid: string;
    schema: string;
    time: number;
    expirationTime: number;
    revocationTime: number;
    recipient: string;
    attester: string;
    revocable: boolean;
    data: string;
  } | null;
  schemaRegistry: string;
  schemaRecord: { uid: string; resolver: string; revocable: boolean; schema: string };
  tx: {
    status: number;
    blockNumber: number;
    blockHash: string;
    to: string | null;
    attested: { uid: string; schemaUID: string; attester: string } | null;
  } | null;
  blockTimestamp: number | null;
}

export interface EvmCheckOptions {
  endpoints: string[];
  /** Blocks required, the inclusion block counting as 1. */
  confirmations: number;
  now: Date;
}

/** Check 3 (see the module comment). Never throws: an endpoint's failure is unavailability or evidence. */
export async function checkEvm(receipt: Receipt, t: Transport, o: EvmCheckOptions): Promise<CheckResult> {
  const leg = receipt.evm;
  if (leg === null) {
    return notRun(3, 'not-applicable', msg('evm.none'));
  }
  if (leg.status !== 'registered') {
    return notRun(3, 'pending', msg('evm.pending'));
  }
  if (o.endpoints.length === 0) return notRun(3, 'no-endpoint', msg('evm.noEndpoint'));
  const c = new CheckBuilder(3);
  const root = receipt.merkle ? `0x${receipt.merkle.root}` : null;
  if (!root) {
    c.fail(msg('anchor.merkleRoot'), msg('evm.noMerkle'));
    return c.result(data(''));
  }
  c.note(
    msg('evm.attestation'),
    msg('evm.attestationValue', {
      uid: leg.attestationUid,
      network: leg.network,
      chainId: leg.chainId,
      eas: leg.easAddress,
    }),
  );
  const seen: { url: string; facts: EvmFacts }[] = [];
  for (const url of o.endpoints) {
    let facts: EvmFacts;
    let tip: number;
    try {
      ({ facts, tip } = await readFacts(t, url, leg));
    } catch (e) {
      if (e instanceof Unavailable) {
        c.unavailable(url, e.detail);
      } else {
        // The endpoint is of the receipt's chain and synced past its block: what it answered is evidence.
        c.answered(url);
        c.fail(msg('anchor.answer'), e instanceof Contradiction ? e.detail : foreign(errorMessage(e)), url);
      }
      continue;
    }
    c.answered(url);
    seen.push({ url, facts });
    judge(c, url, facts, tip, leg, root, o);
  }
  compareEndpoints(c, seen);
  const first = seen[0]?.facts;
  const time = first?.attestation
    ? data(new Date(first.attestation.time * 1000).toISOString())
    : msg('word.unknown');
  return c.result(
    msg('evm.summary', {
      uid: short(leg.attestationUid),
      attester: leg.attester,
      at: time,
      agreement: agreement(seen.length),
    }),
  );
}

type RegisteredEvm = Extract<NonNullable<Receipt['evm']>, { status: 'registered' }>;

/** An endpoint's answer as an error, `detail` its message (the error's text is its English). */
class EndpointAnswer extends Error {
  readonly detail: Message;

  constructor(detail: Message) {
    super(render(detail, 'en'));
    this.detail = detail;
  }
}

/** The endpoint gave no usable answer (see the module comment): not evidence about the anchor. */
class Unavailable extends EndpointAnswer {
  override name = 'Unavailable';
}

/** What the endpoint's chain answered contradicts the receipt (a revert, an answer that does not decode). */
class Contradiction extends EndpointAnswer {
  override name = 'Contradiction';
}

let rpcId = 0;

/**
 * One JSON-RPC 2.0 call (POST, no redirect, bounded; see `requestJson`): its `result`.
 * @throws Unavailable on a transport failure, an HTTP status other than 200, a body that is not a JSON-RPC
 *   response, or a JSON-RPC error other than a revert; Contradiction on a revert (EIP-1474/1898 code 3, or a
 *   message saying `revert`: the contract the receipt names answers with a revert).
 */
async function rpc(t: Transport, url: string, method: string, params: unknown[]): Promise<unknown> {
  rpcId += 1;
  let answer: { status: number; body: unknown };
  try {
    answer = await requestJson(t, url, {
      method: 'POST',
      body: { jsonrpc: '2.0', id: rpcId, method, params },
    });
  } catch (e) {
    throw new Unavailable(msg('evm.methodError', { method, error: problemOf(e) }));
  }
  const body = answer.body as { result?: unknown; error?: { code?: unknown; message?: unknown } } | null;
  if (answer.status !== 200) {
    const code =
      answer.status === 429 ? 'evm.httpRateLimited' : answer.status === 410 ? 'evm.httpGone' : 'evm.http';
    throw new Unavailable(msg(code, { method, status: answer.status }));
  }
  if (typeof body !== 'object' || body === null) {
    throw new Unavailable(msg('evm.notJsonRpc', { method }));
  }
  if (body.error) {
    const code = typeof body.error.code === 'number' ? body.error.code : '';
    const message = typeof body.error.message === 'string' ? body.error.message.slice(0, 200) : '';
    const text = msg('evm.rpcError', { method, error: `${code} ${message}`.trim() });
    if (code === 3 || /revert/i.test(message)) throw new Contradiction(text);
    throw new Unavailable(text);
  }
  if (!('result' in body)) throw new Unavailable(msg('evm.noResult', { method }));
  return body.result;
}

/** A JSON-RPC quantity (`0x`-prefixed hex) as a number. @throws Unavailable when it is not one. */
function quantity(method: string, value: unknown): number {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(value)) {
    throw new Unavailable(
      msg('evm.notQuantity', { method, value: String(JSON.stringify(value)).slice(0, 80) }),
    );
  }
  return Number(BigInt(value));
}

/** `eth_call` data: `0x` and hex digits. @throws Unavailable when the result is not that. */
function callData(value: unknown): string {
  if (typeof value !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(value)) {
    throw new Unavailable(msg('evm.notCallData', { value: String(JSON.stringify(value)).slice(0, 80) }));
  }
  return value;
}

async function readFacts(
  t: Transport,
  url: string,
  leg: RegisteredEvm,
): Promise<{ facts: EvmFacts; tip: number }> {
  const chainId = quantity('eth_chainId', await rpc(t, url, 'eth_chainId', []));
  if (chainId !== leg.chainId) {
    throw new Unavailable(msg('evm.otherChain', { chainId, expected: leg.chainId, network: leg.network }));
  }
  const tip = quantity('eth_blockNumber', await rpc(t, url, 'eth_blockNumber', []));
  if (tip < leg.blockNumber) {
    throw new Unavailable(msg('anchor.notSynced', { tip, block: leg.blockNumber }));
  }
  const call = async (to: string, data: string) =>
    callData(await rpc(t, url, 'eth_call', [{ to, data }, 'latest']));
  const rawAttestation = await call(
    leg.easAddress,
    eas.encodeFunctionData('getAttestation', [leg.attestationUid]),
  );
  const a = decode(eas, 'getAttestation', rawAttestation, leg.easAddress)[0] as Record<string, unknown>;
  const attestation =
    String(a.uid) === ZeroHash
      ? null
      : {
          uid: String(a.uid).toLowerCase(),
          schema: String(a.schema).toLowerCase(),
          time: Number(a.time),
          expirationTime: Number(a.expirationTime),
          revocationTime: Number(a.revocationTime),
          recipient: getAddress(String(a.recipient)),
          attester: getAddress(String(a.attester)),
          revocable: Boolean(a.revocable),
          data: String(a.data).toLowerCase(),
        };
  const schemaRegistry = getAddress(
    String(
      decode(
        eas,
        'getSchemaRegistry',
        await call(leg.easAddress, eas.encodeFunctionData('getSchemaRegistry')),
        leg.easAddress,
      )[0],
    ),
  );
  const s = decode(
    registry,
    'getSchema',
    await call(schemaRegistry, registry.encodeFunctionData('getSchema', [leg.schemaUid])),
    schemaRegistry,
  )[0] as Record<string, unknown>;
  const schemaRecord = {
    uid: String(s.uid).toLowerCase(),
    resolver: getAddress(String(s.resolver)),
    revocable: Boolean(s.revocable),
    schema: String(s.schema),
  };
  const r = await rpc(t, url, 'eth_getTransactionReceipt', [leg.txHash]);
  let tx: EvmFacts['tx'] = null;
  let blockTimestamp: number | null = null;
  if (r !== null) {
    const receipt = transactionReceipt(r);
    let attested: NonNullable<EvmFacts['tx']>['attested'] = null;
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== leg.easAddress.toLowerCase()) continue;
      const parsed = safeParseLog(log);
      if (
        parsed?.name === 'Attested' &&
        String(parsed.args.getValue('uid')).toLowerCase() === leg.attestationUid
      ) {
        attested = {
          uid: String(parsed.args.getValue('uid')).toLowerCase(),
          schemaUID: String(parsed.args.getValue('schemaUID')).toLowerCase(),
          attester: getAddress(String(parsed.args.getValue('attester'))),
        };
      }
    }
    tx = {
      status: receipt.status,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      to: receipt.to,
      attested,
    };
    const block = await rpc(t, url, 'eth_getBlockByNumber', [`0x${receipt.blockNumber.toString(16)}`, false]);
    const stamp = (block as { timestamp?: unknown } | null)?.timestamp;
    blockTimestamp = stamp === undefined ? null : quantity('eth_getBlockByNumber', stamp);
  }
  return { facts: { chainId, attestation, schemaRegistry, schemaRecord, tx, blockTimestamp }, tip };
}

/**
 * The fields used of an `eth_getTransactionReceipt` result (execution-apis `ReceiptInfo`).
 * @throws Unavailable when it is not a receipt object (not what a node answers).
 */
function transactionReceipt(value: unknown): {
  status: number;
  blockNumber: number;
  blockHash: string;
  to: string | null;
  logs: { address: string; topics: string[]; data: string }[];
} {
  const method = 'eth_getTransactionReceipt';
  const r = value as {
    status?: unknown;
    blockNumber?: unknown;
    blockHash?: unknown;
    to?: unknown;
    logs?: unknown;
  } | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    !Array.isArray(r.logs) ||
    typeof r.blockHash !== 'string' ||
    (r.to !== null && r.to !== undefined && !(typeof r.to === 'string' && isAddress(r.to)))
  ) {
    throw new Unavailable(msg('evm.notTxReceipt', { method }));
  }
  const logs = r.logs.filter(
    (l): l is { address: string; topics: string[]; data: string } =>
      typeof l === 'object' &&
      l !== null &&
      typeof (l as { address?: unknown }).address === 'string' &&
      Array.isArray((l as { topics?: unknown }).topics) &&
      typeof (l as { data?: unknown }).data === 'string',
  );
  return {
    status: quantity(method, r.status ?? '0x0'),
    blockNumber: quantity(method, r.blockNumber),
    blockHash: r.blockHash.toLowerCase(),
    to: typeof r.to === 'string' ? getAddress(r.to) : null,
    logs,
  };
}

function judge(
  c: CheckBuilder,
  url: string,
  f: EvmFacts,
  tip: number,
  leg: RegisteredEvm,
  root: string,
  o: EvmCheckOptions,
): void {
  const vs = (value: string | number, expected: string | number) => msg('value.receipt', { value, expected });
  c.expect(f.chainId === leg.chainId, msg('evm.chainId'), vs(f.chainId, leg.chainId), url);
  const a = f.attestation;
  const exists = a ? data(leg.attestationUid) : msg('evm.noAttestation', { uid: leg.attestationUid });
  if (!c.expect(a !== null, msg('evm.attestationExists'), exists, url) || !a) return;
  c.expect(a.schema === leg.schemaUid, data('attestation.schema'), vs(a.schema, leg.schemaUid), url);
  c.expect(
    sameAddress(a.attester, leg.attester),
    data('attestation.attester'),
    vs(a.attester, leg.attester),
    url,
  );
  let anchored: Message = msg('evm.undecodable');
  try {
    anchored = data(String(AbiCoder.defaultAbiCoder().decode(['bytes32'], a.data)[0]).toLowerCase());
  } catch {
    // reported below as a mismatch
  }
  c.expect(
    anchored.code === 'data' && anchored.params.value === root,
    data('attestation.data (bytes32 merkleRoot)'),
    msg('value.receiptRoot', { value: anchored, root }),
    url,
  );
  c.expect(
    a.revocationTime === 0,
    msg('evm.notRevoked'),
    a.revocationTime === 0 ? data('revocationTime 0') : msg('evm.revokedAt', { at: iso(a.revocationTime) }),
    url,
  );
  const now = Math.floor(o.now.getTime() / 1000);
  c.expect(
    a.expirationTime === 0 || a.expirationTime > now,
    msg('evm.notExpired'),
    a.expirationTime === 0 ? msg('evm.noExpiration') : msg('evm.expires', { at: iso(a.expirationTime) }),
    url,
  );
  const rec = f.schemaRecord;
  c.expect(
    rec.uid === leg.schemaUid && rec.schema === leg.schema,
    data('SchemaRegistry.getSchema'),
    vs(`"${rec.schema}" ${rec.uid}`, `"${leg.schema}" ${leg.schemaUid}`),
    url,
  );
  const computed = keccak256(
    solidityPacked(['string', 'address', 'bool'], [rec.schema, rec.resolver, rec.revocable]),
  ).toLowerCase();
  c.expect(computed === leg.schemaUid, msg('evm.schemaUid'), data(computed), url);
  if (leg.schemaRegistryAddress) {
    c.expect(
      sameAddress(f.schemaRegistry, leg.schemaRegistryAddress),
      data('EAS.getSchemaRegistry'),
      vs(f.schemaRegistry, leg.schemaRegistryAddress),
      url,
    );
  } else {
    c.note(data('EAS.getSchemaRegistry'), data(f.schemaRegistry), url);
  }
  const tx = f.tx;
  const txFound = tx ? data(leg.txHash) : msg('evm.noTxReceipt', { tx: leg.txHash });
  if (!c.expect(tx !== null, msg('evm.txReceipt'), txFound, url) || !tx) return;
  c.expect(
    tx.status === 1,
    msg('evm.txStatus'),
    tx.status === 1 ? msg('evm.txSuccess') : msg('evm.txReverted', { status: tx.status }),
    url,
  );
  c.expect(tx.blockNumber === leg.blockNumber, msg('evm.txBlock'), vs(tx.blockNumber, leg.blockNumber), url);
  c.expect(
    tx.attested !== null &&
      tx.attested.schemaUID === leg.schemaUid &&
      sameAddress(tx.attested.attester, leg.attester),
    msg('evm.attestedEvent'),
    tx.attested
      ? msg('evm.attestedValue', {
          uid: tx.attested.uid,
          schema: tx.attested.schemaUID,
          attester: tx.attested.attester,
        })
      : msg('evm.noAttestedEvent'),
    url,
  );
  confirmationsEvidence(c, url, Math.max(0, tip - tx.blockNumber + 1), o.confirmations, tip);
  c.expect(
    f.blockTimestamp !== null && f.blockTimestamp === a.time,
    msg('evm.timeIsBlockTime'),
    msg('evm.timeValue', {
      time: iso(a.time),
      block: f.blockTimestamp === null ? msg('word.unknown') : iso(f.blockTimestamp),
    }),
    url,
  );
}

/**
 * The `confirmations` evidence of checks 3 and 4: `confirmations` blocks (the inclusion block counting as 1)
 * of the `required`, the chain's tip `tip` as `url` reads it. Not final enough yet is no contradiction: that
 * part is skipped (the check partial) until the chain grows.
 */
export function confirmationsEvidence(
  c: CheckBuilder,
  url: string,
  confirmations: number,
  required: number,
  tip: number,
): void {
  const text = msg('anchor.confirmationsValue', { confirmations, required, tip });
  if (confirmations >= required) {
    c.expect(true, msg('anchor.confirmations'), text, url);
  } else {
    c.note(msg('anchor.confirmations'), text, url);
    c.skip(msg('anchor.confirmationsSoFar', { required, url, confirmations }));
  }
}

/**
 * Every endpoint must have read the same facts (checks 3 and 4): each one's differences from the first are
 * named as a failed `endpoints agree` evidence.
 */
export function compareEndpoints<F>(c: CheckBuilder, seen: readonly { url: string; facts: F }[]): void {
  const [first, ...rest] = seen;
  if (!first) return;
  for (const other of rest) {
    const diffs = differences(first.facts, other.facts);
    c.expect(
      diffs.length === 0,
      msg('anchor.endpointsAgree'),
      diffs.length === 0
        ? msg('anchor.readsWhat', { other: other.url, first: first.url })
        : msg('anchor.disagree', { other: other.url, first: first.url, paths: diffs.join(', ') }),
      other.url,
    );
  }
}

/** Paths (a.b.c) whose JSON values differ between `a` and `b`. */
export function differences(a: unknown, b: unknown, path = ''): string[] {
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) =>
      differences(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        path ? `${path}.${k}` : k,
      ),
    );
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path || '(value)'];
}

/** `1 endpoint read` / `3 endpoints agree`, for summaries. */
export function agreement(endpoints: number): Message {
  return endpoints === 1 ? msg('anchor.oneEndpointRead') : msg('anchor.endpointsAgreeCount', { endpoints });
}

/**
 * `fn`'s result from the call data `to` answered. @throws Contradiction when it does not decode: `0x` is an
 * address without code, anything else a contract that is not the one the receipt names.
 */
function decode(iface: Interface, fn: string, answer: string, to: string) {
  try {
    return iface.decodeFunctionResult(fn, answer);
  } catch (e) {
    throw new Contradiction(
      answer === '0x'
        ? msg('evm.noContract', { fn, to })
        : msg('evm.undecodableAnswer', {
            fn,
            to,
            answer: answer.slice(0, 66),
            error: errorMessage(e).slice(0, 120),
          }),
    );
  }
}

function safeParseLog(log: { topics: string[]; data: string }) {
  try {
    return eas.parseLog({ topics: [...log.topics], data: log.data });
  } catch {
    return null;
  }
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function short(hex: string): string {
  return `${hex.slice(0, 10)}…`;
}
