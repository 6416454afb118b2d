import { createRequire } from 'node:module';
import type { JsonFragment } from 'ethers';

/**
 * EAS contract interfaces, read at runtime from the artifacts published in
 * `@ethereum-attestation-service/eas-contracts` (1.9.0; Solidity sources `contracts/EAS.sol`,
 * `contracts/SchemaRegistry.sol`) rather than copied, so the ABI always matches the bytecode the devnet deploys.
 *
 * Only the fragments the chain adapter uses are kept (plus every custom `error`, so a revert is decoded into its
 * name, e.g. `InvalidSchema`, `AlreadyExists`).
 *
 * Calls used (EAS 1.x, `IEAS.sol` / `ISchemaRegistry.sol`):
 * - `EAS.attest((bytes32 schema, (address recipient, uint64 expirationTime, bool revocable, bytes32 refUID,
 *   bytes data, uint256 value) data)) payable returns (bytes32 uid)`
 * - `EAS.getAttestation(bytes32 uid) view returns (Attestation)` (`data` field: the abi-encoded schema fields)
 * - `event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)`
 * - `SchemaRegistry.register(string schema, address resolver, bool revocable) returns (bytes32 uid)`
 * - `SchemaRegistry.getSchema(bytes32 uid) view returns ((bytes32 uid, address resolver, bool revocable,
 *   string schema))` (all zero when the UID is not registered)
 */

/** A Hardhat artifact as published in the npm package (`abi` + creation `bytecode`, 0x-hex). */
export interface ContractArtifact {
  contractName: string;
  abi: JsonFragment[];
  bytecode: string;
}

const require = createRequire(import.meta.url);
const ARTIFACTS = '@ethereum-attestation-service/eas-contracts/artifacts/contracts';

function load(path: string): ContractArtifact {
  const a = require(`${ARTIFACTS}/${path}`) as ContractArtifact;
  if (!Array.isArray(a.abi) || typeof a.bytecode !== 'string' || !a.bytecode.startsWith('0x')) {
    throw new Error(`unexpected artifact shape in ${ARTIFACTS}/${path}`);
  }
  return a;
}

/** Full artifacts, for deploying (devnet only). Throws if the package is missing or its layout changed. */
export function easArtifacts(): { eas: ContractArtifact; schemaRegistry: ContractArtifact } {
  return { eas: load('EAS.sol/EAS.json'), schemaRegistry: load('SchemaRegistry.sol/SchemaRegistry.json') };
}

function pick(abi: JsonFragment[], names: string[]): JsonFragment[] {
  const kept = abi.filter((f) => f.type === 'error' || (f.name !== undefined && names.includes(f.name)));
  for (const n of names) {
    if (!kept.some((f) => f.name === n)) throw new Error(`EAS artifact has no fragment named ${n}`);
  }
  return kept;
}

/** Minimal EAS ABI: `attest`, `getAttestation`, `Attested`, and the custom errors. */
export function easAbi(): JsonFragment[] {
  return pick(easArtifacts().eas.abi, ['attest', 'getAttestation', 'Attested']);
}

/** Minimal SchemaRegistry ABI: `register`, `getSchema`, `Registered`, and the custom errors. */
export function schemaRegistryAbi(): JsonFragment[] {
  return pick(easArtifacts().schemaRegistry.abi, ['register', 'getSchema', 'Registered']);
}
