/** The thread of `startStacksDevnetWorker` (devnet-worker.ts): the Stacks devnet, its endpoint posted back. */
import { type StacksDevnetEndpoint, serveDevnetInThread } from './devnet-worker';
import { startStacksDevnet } from './devnets/stacks-devnet';

await serveDevnetInThread(
  startStacksDevnet,
  (d): Omit<StacksDevnetEndpoint, 'stop' | 'controls'> => ({
    url: d.url,
    indexerUrl: d.indexerUrl,
    network: d.network,
    contractId: d.contractId,
    senderKey: d.senderKey,
    senderAddress: d.senderAddress,
  }),
);
