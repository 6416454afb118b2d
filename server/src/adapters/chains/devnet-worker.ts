import { parentPort, Worker, workerData } from 'node:worker_threads';
import { typescriptWorkerExecArgv } from '@notary/platform/worker-exec-argv';
import type { HardhatDevnet, HardhatDevnetOptions } from './hardhat-devnet';
import type { StacksDevnet, StacksDevnetOptions } from './stacks-devnet';

/**
 * The service's devnets (`ANCHORING=devnet`) in worker threads. Both are virtual machines that run
 * synchronously on the thread that calls them: the Clarity VM's session start (WebAssembly: boot contracts,
 * the notary contract's deployment) held the service's event loop for 1.2 s at start-up, Hardhat's for
 * 0.4 s (its modules, key derivations, the EAS deployments), and each mined block or JSON-RPC call for its
 * own time after. In a worker none of it reaches the service's HTTP. The service talks to them over their
 * loopback HTTP interfaces anyway, as to real nodes, so what it keeps of each is its endpoint and `stop`.
 */

/** What the service uses of the Stacks devnet: its endpoint and funded account, and `stop`. */
export type StacksDevnetEndpoint = Pick<
  StacksDevnet,
  'url' | 'network' | 'contractId' | 'senderKey' | 'senderAddress' | 'stop'
>;

/** What the service uses of the Hardhat devnet: its endpoint, funded account and EAS contracts, and `stop`. */
export type HardhatDevnetEndpoint = Pick<
  HardhatDevnet,
  | 'rpcUrl'
  | 'chainId'
  | 'funderPrivateKey'
  | 'funderAddress'
  | 'easAddress'
  | 'schemaRegistryAddress'
  | 'stop'
>;

/** The thread's messages: its start (the endpoint, or why it failed), then the end of a `stop`. */
type ThreadMessage<E> =
  | { started: true; endpoint: E }
  | { started: false; message: string }
  | { stopped: true };

/**
 * Starts the Stacks devnet (`stacks-devnet.ts`) in a worker thread; resolves once it serves on loopback.
 * @throws Error with the devnet's message when it fails to start.
 */
export function startStacksDevnetWorker(options: StacksDevnetOptions = {}): Promise<StacksDevnetEndpoint> {
  return startDevnetWorker(new URL('./stacks-devnet.thread.ts', import.meta.url), options);
}

/**
 * Starts the Hardhat devnet (`hardhat-devnet.ts`, EAS deployed) in a worker thread; resolves once it serves
 * JSON-RPC on loopback.
 * @throws Error with the devnet's message when it fails to start.
 */
export function startHardhatDevnetWorker(options: HardhatDevnetOptions = {}): Promise<HardhatDevnetEndpoint> {
  return startDevnetWorker(new URL('./hardhat-devnet.thread.ts', import.meta.url), options);
}

async function startDevnetWorker<E extends object>(
  entry: URL,
  options: object,
): Promise<E & { stop(): Promise<void> }> {
  const worker = new Worker(entry, { workerData: options, execArgv: typescriptWorkerExecArgv() });
  let endpoint: E;
  try {
    endpoint = await new Promise<E>((resolve, reject) => {
      const onMessage = (message: ThreadMessage<E>) => {
        cleanup();
        if ('started' in message && message.started) resolve(message.endpoint);
        else reject(new Error('message' in message ? message.message : 'the devnet did not start'));
      };
      const onError = (error: Error) => {
        cleanup();
        reject(error);
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new Error(`the devnet's worker exited with code ${code} while starting`));
      };
      const cleanup = () => {
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      };
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    });
  } catch (e) {
    await worker.terminate();
    throw e;
  }
  // A failure after the start reaches the anchoring as a node that does not answer, never as an uncaught error.
  worker.on('error', () => {});
  // As the devnets in-process (their servers and timers are unref'd), a running one keeps no process alive.
  worker.unref();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.on('message', (message: ThreadMessage<E>) => {
        if ('stopped' in message) void worker.terminate();
      });
      // Held until the thread has closed its server and ended.
      worker.ref();
      worker.postMessage('stop');
    });
    return stopping;
  };
  return { ...endpoint, stop };
}

/**
 * The thread's side: starts the devnet with the options the service passed, posts its endpoint (`pick`), and
 * stops it when asked. A failure to start is posted as its message, and the thread ends.
 */
export async function serveDevnetInThread<D extends { stop(): Promise<void> }, E>(
  start: (options: never) => Promise<D>,
  pick: (devnet: D) => E,
): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('a devnet thread runs as a worker thread');
  const post = (message: ThreadMessage<E>) => port.postMessage(message);
  let devnet: D;
  try {
    devnet = await start(workerData as never);
  } catch (e) {
    post({ started: false, message: e instanceof Error ? e.message : String(e) });
    return;
  }
  // The listener keeps this thread alive (the devnet's own server and timers are unref'd) until `stop`.
  port.on('message', (message: unknown) => {
    if (message !== 'stop') return;
    void devnet.stop().finally(() => post({ stopped: true }));
  });
  post({ started: true, endpoint: pick(devnet) });
}
