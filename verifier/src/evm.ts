import { AbiCoder, getAddress, Interface, keccak256, solidityPacked, ZeroHash } from 'ethers';
import { EndpointError, jsonRpc, type Transport } from './http.ts';
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
 * Contract interfaces: EAS 1.x `IEAS.sol` / `ISchemaRegistry.sol` (eas-contracts 1.x).
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

/** Check 3 (see the module comment). Never throws: endpoint failures are failed evidence. */
export async function checkEvm(receipt: Receipt, t: Transport, o: EvmCheckOptions): Promise<CheckResult> {
  const leg = receipt.evm;
  if (leg === null) return notRun(3, 'the receipt has no EVM anchor (the service does not anchor on EVM)');
  if (leg.status !== 'registered') return notRun(3, 'the receipt records the EVM anchor as pending');
  if (o.endpoints.length === 0) return notRun(3, 'no --evm-rpc endpoint given');
  const c = new CheckBuilder(3);
  const root = receipt.merkle ? `0x${receipt.merkle.root}` : null;
  if (!root) {
    c.fail('merkle root', 'the receipt has an EVM anchor but no Merkle proof');
    return c.result('');
  }
  c.note(
    'attestation',
    `${leg.attestationUid} on ${leg.network} (chain ${leg.chainId}) at EAS ${leg.easAddress}`,
  );
  const seen: { url: string; facts: EvmFacts }[] = [];
  for (const url of o.endpoints) {
    let facts: EvmFacts;
    let tip: number;
    try {
      ({ facts, tip } = await readFacts(t, url, leg));
    } catch (e) {
      c.fail('endpoint', e instanceof Error ? e.message : String(e), url);
      continue;
    }
    seen.push({ url, facts });
    judge(c, url, facts, tip, leg, root, o);
  }
  compareEndpoints(c, seen);
  const first = seen[0]?.facts;
  const time = first?.attestation ? new Date(first.attestation.time * 1000).toISOString() : 'unknown';
  return c.result(
    `attestation ${short(leg.attestationUid)} holds the root, by ${leg.attester}, at ${time} ` +
      `(${agreement(seen.length)})`,
  );
}

type RegisteredEvm = Extract<NonNullable<Receipt['evm']>, { status: 'registered' }>;

async function readFacts(
  t: Transport,
  url: string,
  leg: RegisteredEvm,
): Promise<{ facts: EvmFacts; tip: number }> {
  const call = async (to: string, data: string) =>
    String(await jsonRpc(t, url, 'eth_call', [{ to, data }, 'latest']));
  const chainId = Number(BigInt(String(await jsonRpc(t, url, 'eth_chainId', []))));
  const rawAttestation = await call(
    leg.easAddress,
    eas.encodeFunctionData('getAttestation', [leg.attestationUid]),
  );
  const a = decode(eas, 'getAttestation', rawAttestation)[0] as Record<string, unknown>;
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
      )[0],
    ),
  );
  const s = decode(
    registry,
    'getSchema',
    await call(schemaRegistry, registry.encodeFunctionData('getSchema', [leg.schemaUid])),
  )[0] as Record<string, unknown>;
  const schemaRecord = {
    uid: String(s.uid).toLowerCase(),
    resolver: getAddress(String(s.resolver)),
    revocable: Boolean(s.revocable),
    schema: String(s.schema),
  };
  const r = (await jsonRpc(t, url, 'eth_getTransactionReceipt', [leg.txHash])) as {
    status?: string;
    blockNumber?: string;
    blockHash?: string;
    to?: string | null;
    logs?: { address: string; topics: string[]; data: string }[];
  } | null;
  let tx: EvmFacts['tx'] = null;
  let blockTimestamp: number | null = null;
  if (r) {
    let attested: NonNullable<EvmFacts['tx']>['attested'] = null;
    for (const log of r.logs ?? []) {
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
      status: Number(BigInt(r.status ?? '0x0')),
      blockNumber: Number(BigInt(r.blockNumber ?? '0x0')),
      blockHash: String(r.blockHash).toLowerCase(),
      to: r.to ? getAddress(r.to) : null,
      attested,
    };
    const block = (await jsonRpc(t, url, 'eth_getBlockByNumber', [r.blockNumber, false])) as {
      timestamp?: string;
      hash?: string;
    } | null;
    blockTimestamp = block?.timestamp ? Number(BigInt(block.timestamp)) : null;
  }
  const tip = Number(BigInt(String(await jsonRpc(t, url, 'eth_blockNumber', []))));
  return { facts: { chainId, attestation, schemaRegistry, schemaRecord, tx, blockTimestamp }, tip };
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
  c.expect(f.chainId === leg.chainId, 'chain id', `${f.chainId} (receipt ${leg.chainId})`, url);
  const a = f.attestation;
  if (
    !c.expect(
      a !== null,
      'attestation exists',
      a ? leg.attestationUid : `no attestation ${leg.attestationUid}`,
      url,
    )
  ) {
    return;
  }
  if (!a) return;
  c.expect(a.schema === leg.schemaUid, 'attestation.schema', `${a.schema} (receipt ${leg.schemaUid})`, url);
  c.expect(
    sameAddress(a.attester, leg.attester),
    'attestation.attester',
    `${a.attester} (receipt ${leg.attester})`,
    url,
  );
  let anchored = '(undecodable)';
  try {
    anchored = String(AbiCoder.defaultAbiCoder().decode(['bytes32'], a.data)[0]).toLowerCase();
  } catch {
    // reported below as a mismatch
  }
  c.expect(
    anchored === root,
    'attestation.data (bytes32 merkleRoot)',
    `${anchored} (receipt root ${root})`,
    url,
  );
  c.expect(
    a.revocationTime === 0,
    'not revoked',
    a.revocationTime === 0 ? 'revocationTime 0' : `revoked at ${iso(a.revocationTime)}`,
    url,
  );
  const now = Math.floor(o.now.getTime() / 1000);
  c.expect(
    a.expirationTime === 0 || a.expirationTime > now,
    'not expired',
    a.expirationTime === 0 ? 'no expiration' : `expires ${iso(a.expirationTime)}`,
    url,
  );
  const rec = f.schemaRecord;
  c.expect(
    rec.uid === leg.schemaUid && rec.schema === leg.schema,
    'SchemaRegistry.getSchema',
    `"${rec.schema}" ${rec.uid} (receipt "${leg.schema}" ${leg.schemaUid})`,
    url,
  );
  const computed = keccak256(
    solidityPacked(['string', 'address', 'bool'], [rec.schema, rec.resolver, rec.revocable]),
  ).toLowerCase();
  c.expect(computed === leg.schemaUid, 'schema UID = keccak256(schema, resolver, revocable)', computed, url);
  if (leg.schemaRegistryAddress) {
    c.expect(
      sameAddress(f.schemaRegistry, leg.schemaRegistryAddress),
      'EAS.getSchemaRegistry',
      `${f.schemaRegistry} (receipt ${leg.schemaRegistryAddress})`,
      url,
    );
  } else {
    c.note('EAS.getSchemaRegistry', f.schemaRegistry, url);
  }
  const tx = f.tx;
  if (!c.expect(tx !== null, 'transaction receipt', tx ? leg.txHash : `no receipt for ${leg.txHash}`, url))
    return;
  if (!tx) return;
  c.expect(
    tx.status === 1,
    'transaction status',
    tx.status === 1 ? 'success (1)' : `reverted (${tx.status})`,
    url,
  );
  c.expect(
    tx.blockNumber === leg.blockNumber,
    'transaction block',
    `${tx.blockNumber} (receipt ${leg.blockNumber})`,
    url,
  );
  c.expect(
    tx.attested !== null &&
      tx.attested.schemaUID === leg.schemaUid &&
      sameAddress(tx.attested.attester, leg.attester),
    'Attested event',
    tx.attested
      ? `uid ${tx.attested.uid}, schema ${tx.attested.schemaUID}, attester ${tx.attested.attester}`
      : 'none for this UID from the EAS address',
    url,
  );
  const confirmations = Math.max(0, tip - tx.blockNumber + 1);
  c.expect(
    confirmations >= o.confirmations,
    'confirmations',
    `${confirmations} (at least ${o.confirmations} required; tip ${tip})`,
    url,
  );
  c.expect(
    f.blockTimestamp !== null && f.blockTimestamp === a.time,
    'attestation.time = block timestamp',
    `${iso(a.time)} (block ${f.blockTimestamp === null ? 'unknown' : iso(f.blockTimestamp)})`,
    url,
  );
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
      'endpoints agree',
      diffs.length === 0
        ? `${other.url} reads what ${first.url} reads`
        : `${other.url} and ${first.url} disagree on ${diffs.join(', ')}`,
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
export function agreement(endpoints: number): string {
  return endpoints === 1 ? '1 endpoint read' : `${endpoints} endpoints agree`;
}

function decode(iface: Interface, fn: string, data: string) {
  try {
    return iface.decodeFunctionResult(fn, data);
  } catch (e) {
    throw new EndpointError(`${fn}: undecodable answer ${data.slice(0, 66)}: ${(e as Error).message}`);
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
