import { parentPort, Worker, workerData } from 'node:worker_threads';
import { SMALL_WORKER_HEAP, typescriptWorkerExecArgv } from '@notary/platform/worker-exec-argv';
import { awaitWorkerStart } from '@notary/platform/worker-start';
import type { StacksDevnet, StacksDevnetOptions } from './stacks-devnet';

/**
 * A devnet of the service (`ANCHORING=devnet`) in a worker thread. The Clarity VM of the Stacks devnet is
 * WebAssembly that runs synchronously on the thread that calls it: its session start (boot contracts, the
 * notary contract's deployment) held the service's event loop for 1.2 s at start-up, and each block it mines
 * (one a second) for its own time after. In a worker none of it reaches the service's HTTP. The service
 * talks to it over its loopback HTTP interface anyway, as to a real node: it keeps the endpoint and `stop`.
 *
 * The Hardhat devnet stays in the service's thread: its start costs the event loop about 0.4 s in small
 * pieces (module loading, two key derivations, the EAS deployments through EDR, native and asynchronous),
 * and a thread of its own would cost 66 MB of resident memory (its module graph, ethers included, loaded a
 * second time), against 39 MB for the Stacks devnet's.
 */

/** What the service uses of the Stacks devnet: its endpoint and funded account, and `stop`. */
export type StacksDevnetEndpoint = Pick<
  StacksDevnet,
  'url' | 'network' | 'contractId' | 'senderKey' | 'senderAddress' | 'stop'
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

async function startDevnetWorker<E extends object>(
  entry: URL,
  options: object,
): Promise<E & { stop(): Promise<void> }> {
  const worker = new Worker(entry, {
    workerData: options,
    execArgv: typescriptWorkerExecArgv(),
    resourceLimits: SMALL_WORKER_HEAP,
  });
  const endpoint = await awaitWorkerStart(worker, "the devnet's worker", (message: ThreadMessage<E>) => {
    if ('started' in message && message.started) return { value: message.endpoint };
    return new Error('message' in message ? message.message : 'the devnet did not start');
  });
  // A failure after the start reaches the anchoring as a node that does not answer, never as an uncaught
  // error.
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
