/** The thread of `startHardhatDevnetWorker` (devnet-worker.ts): the Hardhat devnet, its endpoint posted back. */
import { type HardhatDevnetEndpoint, serveDevnetInThread } from './devnet-worker';
import { startHardhatDevnet } from './hardhat-devnet';

await serveDevnetInThread(
  startHardhatDevnet,
  (d): Omit<HardhatDevnetEndpoint, 'stop'> => ({
    rpcUrl: d.rpcUrl,
    chainId: d.chainId,
    funderPrivateKey: d.funderPrivateKey,
    funderAddress: d.funderAddress,
    easAddress: d.easAddress,
    schemaRegistryAddress: d.schemaRegistryAddress,
  }),
);
