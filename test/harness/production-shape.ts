import { randomBytes } from 'node:crypto';
import { type StacksDevnet, startStacksDevnet } from '@notary/server/adapters/chains/devnets/stacks-devnet';
import { type HardhatDevnet, startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { createTestDatabase } from './postgres';
import { startRadosgw } from './radosgw';

/** What the production shape runs against, started on loopback, and the service's environment to use them. */
export interface ProductionStandIns {
  /**
   * `NODE_ENV=production`, a fresh PostgreSQL database, an S3 bucket on radosgw, `ANCHORING=configured` on a
   * Hardhat node with EAS and the Clarity-VM Stacks devnet (real chains' APIs, as stand-ins), a `SECRET` and
   * `PUBLIC_URL`. Add `DATA_DIR`, `PORT`, `HOST` and whatever the caller tests.
   */
  env: Record<string, string>;
  /** The chains the service anchors on, for tests that count what reached them. */
  chains: { evm: HardhatDevnet; stacks: StacksDevnet };
  /** Stops every stand-in and drops the database (idempotent). */
  stop(): Promise<void>;
}

/**
 * Starts the production shape's dependencies, every one on 127.0.0.1: no devnet inside the service, the chains
 * are endpoints it is configured with. Needs radosgw (`radosgwAvailable()`) and PostgreSQL (`TEST_PG_ADMIN_URL`).
 * @throws the first start that failed (the others are stopped again).
 */
export async function startProductionStandIns(
  options: { publicUrl?: string; stacksBlockMs?: number } = {},
): Promise<ProductionStandIns> {
  const started = await Promise.allSettled([
    startRadosgw(),
    startHardhatDevnet(),
    startStacksDevnet({ blockTimeMs: options.stacksBlockMs ?? 1000 }),
    createTestDatabase(),
  ]);
  const [rgw, evm, stacks, database] = started;
  const stop = async () => {
    if (database.status === 'fulfilled') await database.value.drop().catch(() => undefined);
    if (stacks.status === 'fulfilled') await stacks.value.stop().catch(() => undefined);
    if (evm.status === 'fulfilled') await evm.value.stop().catch(() => undefined);
    if (rgw.status === 'fulfilled') await rgw.value.stop().catch(() => undefined);
  };
  if (
    rgw.status === 'rejected' ||
    evm.status === 'rejected' ||
    stacks.status === 'rejected' ||
    database.status === 'rejected'
  ) {
    await stop();
    throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
  }
  let stopping: Promise<void> | undefined;
  return {
    chains: { evm: evm.value, stacks: stacks.value },
    env: {
      NODE_ENV: 'production',
      PUBLIC_URL: options.publicUrl ?? 'http://notary.test',
      SECRET: randomBytes(32).toString('hex'),
      DATABASE_URL: database.value.url,
      S3_ENDPOINT: rgw.value.endpoint,
      S3_BUCKET: `notary-production-${randomBytes(4).toString('hex')}`,
      S3_REGION: rgw.value.region,
      S3_ACCESS_KEY_ID: rgw.value.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.value.secretAccessKey,
      ANCHORING: 'configured',
      EVM_RPC_URL: evm.value.rpcUrl,
      EVM_PRIVATE_KEY: evm.value.funderPrivateKey,
      EVM_CHAIN_ID: String(evm.value.chainId),
      EVM_NETWORK: 'loopback-evm',
      EAS_ADDRESS: evm.value.easAddress,
      EAS_SCHEMA_REGISTRY_ADDRESS: evm.value.schemaRegistryAddress,
      STACKS_API_URL: stacks.value.url,
      STACKS_PRIVATE_KEY: stacks.value.senderKey,
      STACKS_CONTRACT_ID: stacks.value.contractId,
      STACKS_NETWORK: 'devnet',
    },
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}
