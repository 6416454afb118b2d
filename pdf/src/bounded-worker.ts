import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { parentPort, type Transferable, Worker } from 'node:worker_threads';
import { errorMessage } from '@notary/shared';
import { runsFromSource } from '@notary/shared/module-entry';

/**
 * Runs jobs on untrusted input in worker threads whose memory and time are bounded, so that a crafted upload cannot
 * stall or exhaust the service: V8 heap limits (`resourceLimits`), a deadline per job in the worker thread's CPU time
 * (start-up excluded) after which the worker is terminated, and cancellation (`AbortSignal`) that terminates it too.
 * Whatever a job does, the calling thread keeps answering and at most the bounds are spent. Generic: no database, no
 * domain.
 *
 * Workers are reused for later jobs (starting one costs a few hundred ms: modules, fonts) up to
 * `maxJobsPerWorker` jobs, and retired early when a job leaves their heap above `retireHeapBytes`, so that
 * what one input leaves behind (pdf-lib interns every PDF name) cannot grow into the next job's bound.
 */

/** Limits of one worker and of one job on it. */
export interface WorkerBounds {
  /** V8 old-generation heap, MB (`resourceLimits.maxOldGenerationSizeMb`). */
  maxOldGenerationSizeMb: number;
  /** V8 young-generation heap, MB (`resourceLimits.maxYoungGenerationSizeMb`). */
  maxYoungGenerationSizeMb: number;
  /** CPU time of the worker thread on one job, ms (a new worker's start-up excluded); wall-clock backstop 6x. */
  deadlineMs: number;
}

export interface WorkerPoolOptions {
  /** Idle workers kept for later jobs (0: one worker per job). */
  maxIdle: number;
  /** Jobs one worker runs before it is replaced. */
  maxJobsPerWorker: number;
  /** A worker whose used V8 heap is above this after a job is replaced, bytes. */
  retireHeapBytes: number;
  /** An idle worker is terminated after this long without a job, ms. */
  idleMs: number;
}

/** Why a job was stopped by a bound: `memory` (the heap limit) or `deadline`. */
export class WorkerBoundError extends Error {
  override readonly name = 'WorkerBoundError';
  constructor(
    readonly bound: 'memory' | 'deadline',
    message: string,
  ) {
    super(message);
  }
}

/** A job's answer to the pool: its output, or the message of what it threw. */
type Reply<O> =
  | { ok: true; output: O; heapUsed: number }
  | { ok: false; message: string; heapUsed: number }
  /** Sent once by a new worker when its module has loaded and it listens for jobs. */
  | { ready: true };

/** How often a running job's CPU time is read, ms. */
const CPU_WATCH_MS = 100;

/** The wall-clock backstop of a job, as a multiple of its CPU deadline. */
const WALL_BACKSTOP_FACTOR = 6;

/** Longest wait for a new worker to load its module, ms (generous: a loaded machine starts it slowly). */
const STARTUP_TIMEOUT_MS = 120_000;

interface PooledWorker {
  worker: Worker;
  jobs: number;
  idleTimer: NodeJS.Timeout | undefined;
}

/**
 * The `execArgv` of a worker whose entry is `entry` (see `moduleEntry`): a TypeScript entry (the service runs
 * from its sources, under tsx) loads tsx's loader in the worker, the built service's `.mjs` needs nothing;
 * vitest's and tsx's own flags are not inherited, so one rule works under all of them.
 */
function execArgvFor(entry: URL): string[] | undefined {
  if (!runsFromSource(entry.pathname)) return undefined;
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', loader];
}

/**
 * A pool of bounded workers running `entry`, a module that calls `serveBoundedJobs`. `run` hands one input
 * to a worker and resolves with its output.
 */
export class BoundedWorkerPool<I, O> {
  private readonly idle: PooledWorker[] = [];
  private readonly execArgv: string[] | undefined;

  constructor(
    private readonly entry: URL,
    private readonly bounds: WorkerBounds,
    private readonly options: WorkerPoolOptions,
  ) {
    this.execArgv = execArgvFor(entry);
  }

  /**
   * Runs one job. `transfer` lists buffers of `input` to move instead of copy (they become unusable here).
   * @throws WorkerBoundError past the heap limit or the deadline (the worker is terminated); the signal's
   *   reason when `signal` aborts first (the worker is terminated); Error with the job's message when the
   *   job threw, or when the worker failed otherwise (exit, start-up error).
   */
  async run(input: I, options: { signal?: AbortSignal; transfer?: Transferable[] } = {}): Promise<O> {
    const { signal } = options;
    signal?.throwIfAborted();
    const pooled = await this.take(signal);
    const { worker } = pooled;
    // The deadline counts the CPU time the worker thread spends on this job, not the wall clock: a machine
    // busy with other work makes a job slower, never costlier, so it cannot push an ordinary PDF past it.
    const cpuAtStart = await worker.cpuUsage().catch(() => undefined);
    return new Promise<O>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void, keep: boolean) => {
        if (settled) return;
        settled = true;
        clearInterval(cpuWatch);
        clearTimeout(backstop);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (keep) this.release(pooled);
        else void worker.terminate();
        outcome();
      };
      const onMessage = (reply: Reply<O>) => {
        if ('ready' in reply) return;
        pooled.jobs += 1;
        const keep =
          pooled.jobs < this.options.maxJobsPerWorker && reply.heapUsed <= this.options.retireHeapBytes;
        if (reply.ok) finish(() => resolve(reply.output), keep);
        else finish(() => reject(new Error(reply.message)), keep);
      };
      const onError = (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          const mb = this.bounds.maxOldGenerationSizeMb;
          finish(() => reject(new WorkerBoundError('memory', `exceeds the ${mb} MB heap bound`)), false);
        } else finish(() => reject(new Error(`worker failed: ${error.message}`, { cause: error })), false);
      };
      const onExit = (code: number) =>
        finish(() => reject(new Error(`worker exited with code ${code}`)), false);
      const onAbort = () => finish(() => reject(signal?.reason), false);
      const overDeadline = () => {
        const s = this.bounds.deadlineMs / 1000;
        finish(
          () => reject(new WorkerBoundError('deadline', `takes longer than the ${s} s deadline`)),
          false,
        );
      };
      const cpuWatch = setInterval(() => {
        worker.cpuUsage(cpuAtStart).then(
          (used) => {
            if ((used.user + used.system) / 1000 > this.bounds.deadlineMs) overDeadline();
          },
          () => undefined,
        );
      }, CPU_WATCH_MS);
      // A job that waits without computing (it never should) is ended by the wall clock, far later.
      const backstop = setTimeout(overDeadline, this.bounds.deadlineMs * WALL_BACKSTOP_FACTOR);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.postMessage(input, options.transfer ?? []);
    });
  }

  /** Terminates the idle workers (running jobs end on their own). */
  async close(): Promise<void> {
    const idle = this.idle.splice(0);
    await Promise.all(
      idle.map((p) => {
        clearTimeout(p.idleTimer);
        return p.worker.terminate();
      }),
    );
  }

  /**
   * An idle worker, or a new one once it has loaded its module and said so: its start-up (loading tsx and
   * pdf-lib, 0.3 to 2 s) is not the job's, so it does not count against the deadline.
   * @throws Error when a new worker fails to start or does not start within `STARTUP_TIMEOUT_MS`.
   */
  private async take(signal: AbortSignal | undefined): Promise<PooledWorker> {
    const reused = this.idle.pop();
    if (reused) {
      clearTimeout(reused.idleTimer);
      reused.idleTimer = undefined;
      reused.worker.ref();
      return reused;
    }
    const worker = new Worker(this.entry, {
      ...(this.execArgv ? { execArgv: this.execArgv } : {}),
      resourceLimits: {
        maxOldGenerationSizeMb: this.bounds.maxOldGenerationSizeMb,
        maxYoungGenerationSizeMb: this.bounds.maxYoungGenerationSizeMb,
      },
    });
    const pooled: PooledWorker = { worker, jobs: 0, idleTimer: undefined };
    // Between jobs nobody else listens: an idle worker that fails or exits just leaves the pool (an 'error'
    // event without a listener would throw in this thread).
    worker.on('error', () => {});
    worker.on('exit', () => this.forget(pooled));
    await new Promise<void>((resolve, reject) => {
      const done = (outcome: () => void) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const fail = (error: unknown) =>
        done(() => {
          void worker.terminate();
          reject(error);
        });
      const onMessage = (reply: Reply<O>) => {
        if ('ready' in reply) done(resolve);
      };
      const onError = (error: Error) =>
        fail(new Error(`worker failed to start: ${error.message}`, { cause: error }));
      const onExit = (code: number) => fail(new Error(`worker exited with code ${code} while starting`));
      const onAbort = () => fail(signal?.reason);
      const timer = setTimeout(
        () => fail(new Error(`worker did not start within ${STARTUP_TIMEOUT_MS / 1000} s`)),
        STARTUP_TIMEOUT_MS,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return pooled;
  }

  private forget(pooled: PooledWorker): void {
    clearTimeout(pooled.idleTimer);
    const at = this.idle.indexOf(pooled);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private release(pooled: PooledWorker): void {
    if (this.idle.length >= this.options.maxIdle) {
      void pooled.worker.terminate();
      return;
    }
    // An idle worker does not keep the process alive, and leaves after `idleMs` without a job.
    pooled.worker.unref();
    pooled.idleTimer = setTimeout(() => {
      this.forget(pooled);
      void pooled.worker.terminate();
    }, this.options.idleMs);
    pooled.idleTimer.unref();
    this.idle.push(pooled);
  }
}

/**
 * The worker side: answers every job the pool posts with `handle(input)`'s output (moving the buffers it
 * lists in `transfer`), or with the message of what it threw. Call once at the top of the worker's module.
 */
export function serveBoundedJobs<I, O>(
  handle: (input: I) => Promise<{ output: O; transfer?: Transferable[] }>,
): void {
  const port = parentPort;
  if (!port) throw new Error('serveBoundedJobs: not in a worker thread');
  // The module has loaded (this call is at its top level, after its imports): the pool may post a job.
  const ready: Reply<O> = { ready: true };
  port.postMessage(ready);
  port.on('message', (input: I) => {
    handle(input).then(
      ({ output, transfer }) => {
        const reply: Reply<O> = { ok: true, output, heapUsed: getHeapStatistics().used_heap_size };
        port.postMessage(reply, transfer ?? []);
      },
      (error: unknown) => {
        const message = errorMessage(error);
        const reply: Reply<O> = { ok: false, message, heapUsed: getHeapStatistics().used_heap_size };
        port.postMessage(reply);
      },
    );
  });
}
