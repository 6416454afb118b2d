import { parentPort, Worker, workerData } from 'node:worker_threads';
import { SMALL_WORKER_HEAP, workerExecArgv } from '@notary/platform/worker-exec-argv';
import { awaitWorkerStart } from '@notary/platform/worker-start';
import { errorMessage } from '@notary/shared';
import { moduleEntry } from '@notary/shared/module-entry';
import { privateKeyToAddress, randomPrivateKey } from '@stacks/transactions';
import type { StacksDevnet, StacksDevnetControls, StacksDevnetOptions } from './devnets/stacks-devnet';
import { callsAfterStart, startLazyDevnet } from './lazy-endpoint';

/**
 * A devnet of the service (`ANCHORING=devnet`) in a worker thread. The Clarity VM of the Stacks devnet is
 * WebAssembly that runs synchronously on the thread that calls it: its session start (boot contracts, the
 * notary contract's deployment) held the service's event loop for 1.2 s at start-up, and each block it mines
 * (one a second) for its own time after. In a worker none of it reaches the service's HTTP. The service
 * talks to it over its loopback HTTP interface anyway, as to a real node: it keeps the endpoint and `stop`;
 * tests steer it through `controls` (the devnet's switches, mining, faults), carried as messages.
 *
 * The Hardhat devnet stays in the service's thread: its start costs the event loop about 0.4 s in small
 * pieces (module loading, two key derivations, the EAS deployments through EDR, native and asynchronous),
 * and a thread of its own would cost 66 MB of resident memory (its module graph, ethers included, loaded a
 * second time), against 39 MB for the Stacks devnet's.
 *
 * Both devnets of the service start on their first use (`startLazyStacksDevnet` here,
 * `startLazyHardhatDevnet` in hardhat-devnet.ts): their addresses listen from the start in the service's
 * thread and the first connection or control starts them (`lazy-endpoint.ts`).
 */

/** A devnet control as called from another thread: the same arguments, the result as a promise. */
export type RemoteControls<C> = {
  [K in keyof C]: C[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** What the service uses of the Stacks devnet: its endpoints and funded account, `stop`, and the controls. */
export type StacksDevnetEndpoint = Pick<
  StacksDevnet,
  'url' | 'indexerUrl' | 'network' | 'contractId' | 'senderKey' | 'senderAddress' | 'stop'
> & {
  /** The devnet's controls (`StacksDevnetControls`), run in its thread. */
  controls: RemoteControls<StacksDevnetControls>;
};

/** Names of the controls a thread answers (the keys of `StacksDevnetControls`). */
const CONTROL_NAMES = [
  'mine',
  'fund',
  'configure',
  'markNonCanonical',
  'replaceByFee',
  'takeViolations',
  'requests',
] as const satisfies readonly (keyof StacksDevnetControls)[];
type ControlName = (typeof CONTROL_NAMES)[number];

/** The thread's messages: its start (the endpoint, or why it failed), control answers, violations, stop's end. */
type ThreadMessage<E> =
  | { started: true; endpoint: E }
  | { started: false; message: string }
  | { reply: number; value?: unknown; error?: string }
  | { violation: string }
  | { stopped: true };

/** The service's messages: a control call, or stop. */
type ParentMessage = { call: number; name: ControlName; args: unknown[] } | 'stop';

/** The process-wide record of devnet schema violations the test guard reads (as devnets/stacks-schema-check.ts keeps it). */
const VIOLATIONS = Symbol.for('notary.stacks-devnet.violations');

/**
 * Starts the Stacks devnet (`devnets/stacks-devnet.ts`) in a worker thread; resolves once it serves on loopback.
 * Schema violations of its answers (tests: `STACKS_DEVNET_SCHEMAS`) reach this thread's record of them.
 * @throws Error with the devnet's message when it fails to start.
 */
export async function startStacksDevnetWorker(
  options: Omit<StacksDevnetOptions, 'onViolation'> = {},
): Promise<StacksDevnetEndpoint> {
  const entry = moduleEntry(import.meta.url, 'stacks-devnet.thread');
  const worker = new Worker(entry, {
    workerData: options,
    execArgv: workerExecArgv(entry),
    resourceLimits: SMALL_WORKER_HEAP,
  });
  type Endpoint = Omit<StacksDevnetEndpoint, 'stop' | 'controls'>;
  const endpoint = await awaitWorkerStart(
    worker,
    "the devnet's worker",
    (message: ThreadMessage<Endpoint>) => {
      if ('started' in message && message.started) return { value: message.endpoint };
      if ('started' in message) return new Error(message.message);
      return undefined;
    },
  );
  const devnetId = `worker:${endpoint.url}`;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextCall = 0;
  worker.on('message', (message: ThreadMessage<Endpoint>) => {
    if ('violation' in message) {
      const g = globalThis as { [VIOLATIONS]?: { devnet: string; text: string }[] };
      g[VIOLATIONS] ??= [];
      g[VIOLATIONS].push({ devnet: devnetId, text: message.violation });
    } else if ('reply' in message) {
      const call = pending.get(message.reply);
      pending.delete(message.reply);
      if (message.error !== undefined) call?.reject(new Error(message.error));
      else call?.resolve(message.value);
    }
  });
  // A failure after the start reaches the anchoring as a node that does not answer, never as an uncaught
  // error.
  worker.on('error', () => {});
  worker.on('exit', () => {
    for (const call of pending.values()) call.reject(new Error("the devnet's worker has ended"));
    pending.clear();
  });
  // As the devnets in-process (their servers and timers are unref'd), a running one keeps no process alive.
  worker.unref();
  const call = (name: ControlName, args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextCall++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ call: id, name, args } satisfies ParentMessage);
    });
  const controls = Object.fromEntries(
    CONTROL_NAMES.map((name) => [name, (...args: unknown[]) => call(name, args)]),
  ) as RemoteControls<StacksDevnetControls>;
  // Taken violations leave this thread's record too (the thread forwarded each one here).
  controls.takeViolations = async () => {
    const taken = (await call('takeViolations', [])) as string[];
    const record = (globalThis as { [VIOLATIONS]?: { devnet: string }[] })[VIOLATIONS] ?? [];
    for (let i = record.length - 1; i >= 0; i--) if (record[i]?.devnet === devnetId) record.splice(i, 1);
    return taken;
  };
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.on('message', (message: ThreadMessage<Endpoint>) => {
        if ('stopped' in message) void worker.terminate();
      });
      // Held until the thread has closed its server and ended.
      worker.ref();
      worker.postMessage('stop' satisfies ParentMessage);
    });
    return stopping;
  };
  return { ...endpoint, controls, stop };
}

/** The Stacks devnet of `startLazyStacksDevnet`: the endpoint, and whether its thread has started yet. */
export type LazyStacksDevnetEndpoint = StacksDevnetEndpoint & {
  /** True once a request or a control has started the devnet's thread. */
  started(): boolean;
};

/**
 * The Stacks devnet started on its first use (`ANCHORING=devnet`): its Clarity VM holds about 110 MB of
 * memory (the clarinet-sdk's WebAssembly and the simnet session) plus its thread's own heap, which a service
 * that has not anchored anything yet does not need. Its two addresses listen from the start, in this thread,
 * so they can be printed, announced to verifiers and recorded; the first connection to either, or the first
 * control call, starts the devnet in its worker thread (`startStacksDevnetWorker`, with the sender key chosen
 * here) and every connection is then forwarded to the devnet's own server, bytes as they are (`lazy-endpoint.ts`,
 * shared with the EVM devnet). A failed start is reported to `onStartError` and the connection closed, as a node
 * that is down; the next use tries again.
 */
export async function startLazyStacksDevnet(
  options: Omit<StacksDevnetOptions, 'onViolation'> = {},
  onStartError: (e: unknown) => void = () => {},
): Promise<LazyStacksDevnetEndpoint> {
  const senderKey = options.senderKey ?? randomPrivateKey();
  const senderAddress = privateKeyToAddress(senderKey, 'devnet');
  const lazy = await startLazyDevnet(
    () => startStacksDevnetWorker({ ...options, senderKey }),
    { node: (d) => d.url, indexer: (d) => d.indexerUrl },
    onStartError,
  );
  const controls = callsAfterStart(
    lazy,
    CONTROL_NAMES,
    (d) => d.controls,
  ) as unknown as RemoteControls<StacksDevnetControls>;
  const contractName = options.contractName ?? 'notary';
  return {
    url: lazy.urls.node,
    indexerUrl: lazy.urls.indexer,
    network: 'devnet',
    contractId: `${senderAddress}.${contractName}`,
    senderKey,
    senderAddress,
    controls,
    started: () => lazy.started(),
    stop: () => lazy.stop(),
  };
}

/**
 * The thread's side: starts the devnet with the options the service passed, posts its endpoint (`pick`), runs
 * the controls the service calls, forwards schema violations, and stops it when asked. A failure to start is
 * posted as its message, and the thread ends.
 */
export async function serveDevnetInThread<D extends StacksDevnetControls & { stop(): Promise<void> }, E>(
  start: (options: StacksDevnetOptions) => Promise<D>,
  pick: (devnet: D) => E,
): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('a devnet thread runs as a worker thread');
  const post = (message: ThreadMessage<E>) => port.postMessage(message);
  let devnet: D;
  try {
    devnet = await start({
      ...(workerData as StacksDevnetOptions),
      onViolation: (violation) => post({ violation }),
    });
  } catch (e) {
    post({ started: false, message: errorMessage(e) });
    return;
  }
  // The listener keeps this thread alive (the devnet's own server and timers are unref'd) until `stop`.
  port.on('message', (message: ParentMessage) => {
    if (message === 'stop') {
      void devnet.stop().finally(() => post({ stopped: true }));
      return;
    }
    if (!CONTROL_NAMES.includes(message.name)) {
      post({ reply: message.call, error: `no devnet control ${String(message.name)}` });
      return;
    }
    try {
      const control = devnet[message.name] as (...args: unknown[]) => unknown;
      post({ reply: message.call, value: control(...message.args) });
    } catch (e) {
      post({ reply: message.call, error: errorMessage(e) });
    }
  });
  post({ started: true, endpoint: pick(devnet) });
}
