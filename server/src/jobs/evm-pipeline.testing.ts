import { randomUUID } from 'node:crypto';
import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { EvmEasChain, type EvmEasConfig } from '../adapters/chains/evm-eas';
import { type HardhatDevnet, startHardhatDevnet } from '../adapters/chains/hardhat-devnet';
import { Tenant } from '../db/entities';
import { openMemoryOrm } from '../db/memory-orm.testing';
import { AnchorWorker, type WorkerOptions } from '../domain/anchoring/anchor-worker';
import { addPendingDocument } from '../domain/anchoring/pending-documents.testing';

/**
 * Test support for EVM anchoring on the in-process Hardhat devnet (EAS deployed): the adapter's configuration
 * for that devnet, and the whole pipeline set-up (PGlite in memory, the devnet, a chain with its schema, one
 * tenant) that the pipeline tests share.
 */

/**
 * The `EvmEasChain` configuration of `devnet`: its RPC, funded key, EAS and SchemaRegistry addresses and chain
 * id, no explorer links. `extra` overrides any field (another `rpcUrl` through a proxy, `rpcTimeoutMs`, …).
 */
export function hardhatEasConfig(devnet: HardhatDevnet, extra: Partial<EvmEasConfig> = {}): EvmEasConfig {
  return {
    rpcUrl: devnet.rpcUrl,
    privateKey: devnet.funderPrivateKey,
    easAddress: devnet.easAddress,
    schemaRegistryAddress: devnet.schemaRegistryAddress,
    network: 'hardhat',
    chainId: devnet.chainId,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
    ...extra,
  };
}

/** What `startEvmPipeline` started; `stop` closes the chain, the devnet and the database. */
export interface EvmPipelineFixture {
  orm: PgliteORM;
  devnet: HardhatDevnet;
  /** The devnet's chain (direct RPC), schema registered. */
  chain: EvmEasChain;
  tenantId: string;
  /**
   * Persists `n` pending documents of the tenant (serial numbers `<prefix>-1`, `<prefix>-2`, … across calls).
   * @returns their ids.
   */
  addDocuments(n: number): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * Starts PGlite in memory (migrated), the Hardhat devnet with EAS, an `EvmEasChain` on it (`chainConfig`
 * overrides its configuration) with the notary schema registered, and a personal tenant whose serial prefix is
 * `serialPrefix`. What started is stopped again when a later step fails.
 */
export async function startEvmPipeline(
  serialPrefix: string,
  chainConfig: Partial<EvmEasConfig> = {},
): Promise<EvmPipelineFixture> {
  let devnet: HardhatDevnet | undefined;
  let chain: EvmEasChain | undefined;
  const orm = await openMemoryOrm();
  const stop = async () => {
    chain?.close();
    await devnet?.stop();
    await orm.close();
  };
  try {
    devnet = await startHardhatDevnet();
    chain = new EvmEasChain(hardhatEasConfig(devnet, chainConfig));
    await chain.ensureSchema();
    const em = orm.em.fork();
    const tenantId = randomUUID();
    em.create(Tenant, { id: tenantId, kind: 'personal', externalId: 'u1', name: 'T', serialPrefix });
    await em.flush();
    let serial = 0;
    const addDocuments = async (n: number): Promise<string[]> => {
      const docs = orm.em.fork();
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(addPendingDocument(docs, tenantId, `${serialPrefix}-${++serial}`));
      await docs.flush();
      return ids;
    };
    return { orm, devnet, chain, tenantId, addDocuments, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * An `AnchorWorker` that never waits: one confirmation, stuck after 60 s (of its clock), no poll delay, backoff
 * or lease, five attempts; `options` gives the chain, the database and the log and overrides any of those.
 */
export function quietWorker(
  options: Pick<WorkerOptions, 'chain' | 'fork' | 'log'> & Partial<WorkerOptions>,
): AnchorWorker {
  return new AnchorWorker({
    confirmations: 1,
    stuckAfterMs: 60_000,
    pollMs: 0,
    backoffMs: 0,
    maxBackoffMs: 0,
    maxAttempts: 5,
    leaseMs: 0,
    ...options,
  });
}
