/**
 * What the Stacks devnet knows of its chain beyond the Clarity VM (`@stacks/clarinet-sdk`'s simnet): block times,
 * burn heights and synthetic hashes per height (`ChainFacts`), and how values, principals and contract functions
 * are written in the stacks-core and Hiro answers.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Simnet } from '@stacks/clarinet-sdk';
import { type ClarityValue, cvToString, serializeCV, validateStacksAddress } from '@stacks/transactions';
import type { TxRecord } from './stacks-state';

/** Stacks testnet/devnet chain id (SIP-005 `chain_id`), also `network_id` in `/v2/info`. */
export const DEVNET_CHAIN_ID = 0x80000000;

/** Block facts the simnet does not keep: times, burn heights, and stable synthetic hashes per height. */
export class ChainFacts {
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

/** A Clarity ABI type as Clarity source writes it (`{ buffer: { length: 32 } }` → `(buff 32)`). */
export function abiType(t: unknown): string {
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

/** The ABI of function `name` of the deployed contract `contractId`, if any. */
function functionAbi(simnet: Simnet, contractId: string, name: string) {
  return simnet
    .getContractsInterfaces()
    .get(contractId)
    ?.functions.find((f) => f.name === name);
}

/** Hiro's `function_signature`: `(define-public (anchor (root (buff 32))))`. */
export function functionSignature(simnet: Simnet, contractId: string, name: string): string {
  const fn = functionAbi(simnet, contractId, name);
  const args = (fn?.args ?? []).map((a) => ` (${a.name} ${abiType(a.type)})`).join('');
  return `(define-public (${name}${args}))`;
}

/** Hiro v1 `function_args`: `{ hex, repr, name, type }` each, from the contract's ABI. */
export function functionArgs(simnet: Simnet, r: TxRecord) {
  const fn = functionAbi(simnet, r.contractId, r.functionName);
  return r.args.map((a, i) => ({
    hex: `0x${serializeCV(a)}`,
    repr: cvToString(a),
    name: fn?.args[i]?.name ?? `arg${i}`,
    type: abiType(fn?.args[i]?.type),
  }));
}

/** The `print` events of a mined call (the notary contract emits one per anchor). */
export function printEvents(
  r: TxRecord,
): { contractId: string; topic: string; value: ClarityValue | undefined }[] {
  return (r.events ?? [])
    .filter((e) => e.event === 'print_event')
    .map((e) => ({
      contractId: String(e.data.contract_identifier ?? r.contractId),
      topic: String(e.data.topic ?? 'print'),
      value: e.data.value,
    }));
}

/** A Clarity value as Hiro writes it: `{ hex: '0x…', repr }` (empty when there is none). */
export function clarityJson(v: ClarityValue | undefined): { hex: string; repr: string } {
  if (!v) return { hex: '0x', repr: '' };
  return { hex: `0x${serializeCV(v)}`, repr: cvToString(v) };
}

/** Whether `p` is a standard principal (address) or a contract principal (`address.name`). */
export function validPrincipal(p: string): boolean {
  const [address, name, ...rest] = p.split('.');
  if (rest.length > 0 || !address || !validateStacksAddress(address)) return false;
  return name === undefined || /^[a-zA-Z]([a-zA-Z0-9]|[-_]){0,127}$/.test(name);
}

/** A u128 as stacks-core writes it: `0x` and 32 hex digits (big-endian). */
export function u128Hex(n: bigint): string {
  return `0x${n.toString(16).padStart(32, '0')}`;
}

/** The µSTX balance of `who` in the Clarity VM. */
export function stxBalance(simnet: Simnet, who: string): bigint {
  return simnet.getAssetsMap().get('STX')?.get(who) ?? 0n;
}

/** A txid as the devnet keys it: lower-case hex without `0x`. */
export function normalizeTxid(id: string): string {
  return id.toLowerCase().replace(/^0x/, '');
}
