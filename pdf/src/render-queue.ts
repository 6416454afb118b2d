/**
 * A bounded work queue, so that a flood of requests for PDF work cannot pile it up without end: at most `concurrency`
 * tasks run, at most `maxWaiting` wait; beyond that `run` refuses at once with `QueueFullError`. A task's `AbortSignal`
 * (the client left) removes it from the queue while it waits and is handed to it while it runs, so that it can stop its
 * work.
 */

/** The queue is full: `running` tasks run and `waiting` wait. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
}

interface Waiter {
  start: () => void;
}

/** See the module comment; `running`, `waiting` and `onChange` let tests and metrics watch it. */
export class BoundedQueue {
  private active = 0;
  private readonly waiters: Waiter[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
  ) {}

  /** Tasks running now. */
  get running(): number {
    return this.active;
  }

  /** Tasks waiting for a free slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Runs `task(signal)` when a slot is free. A task whose `signal` aborts while waiting leaves the queue and
   * never runs; a running one gets the same signal.
   * @throws QueueFullError (rejected at once) when `maxWaiting` tasks wait already; the signal's reason when
   *   it aborts first; whatever the task throws.
   */
  run<T>(task: (signal: AbortSignal | undefined) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const execute = (): Promise<T> => {
      this.active += 1;
      this.changed();
      const done = () => {
        this.active -= 1;
        this.next();
        this.changed();
      };
      let work: Promise<T>;
      try {
        work = task(signal);
      } catch (error) {
        work = Promise.reject(error);
      }
      return work.finally(done);
    };
    if (this.active < this.concurrency) return execute();
    if (this.waiters.length >= this.maxWaiting) {
      return Promise.reject(
        new QueueFullError(`${this.active} running and ${this.waiters.length} waiting: the queue is full`),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        this.changed();
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          execute().then(resolve, reject);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.changed();
    });
  }

  /**
   * Calls `listener` after every change of `running` or `waiting` (tests and metrics watch the queue
   * through it); returns the function that unsubscribes.
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private next(): void {
    while (this.active < this.concurrency) {
      const waiter = this.waiters.shift();
      if (!waiter) return;
      waiter.start();
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
