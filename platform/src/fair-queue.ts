import { EventEmitter } from 'node:events';

/** The limits of a `FairQueue` and the errors it refuses with. */
export interface FairQueueOptions {
  /** Tasks running at once, at least 1. */
  concurrency: number;
  /** Tasks waiting for a place to run, all keys together, at least 0. */
  maxWaiting: number;
  /** Places (running plus waiting) one key may hold at once, at least 1. */
  maxPerKey: number;
  /** The refusal when every running and waiting place is taken (also given to a waiter that lost its place). */
  full: () => Error;
  /** The refusal when the key already holds `maxPerKey` places. */
  keyFull: (maxPerKey: number) => Error;
}

/** One key's share, as the operator sees it. */
export interface FairQueueShare {
  key: string;
  running: number;
  waiting: number;
}

/** The queue's state at one moment: its limits, its totals, and every key holding a place (most places first). */
export interface FairQueueSnapshot {
  concurrency: number;
  maxWaiting: number;
  maxPerKey: number;
  running: number;
  waiting: number;
  keys: FairQueueShare[];
}

/** Why a key was refused a place: every place taken, its share held, or its waiting place given away. */
export type FairQueueRefusal = 'full' | 'key-full' | 'replaced';

interface Waiter {
  start: () => void;
  refuse: (e: unknown) => void;
}

interface KeyState {
  /** Position in the rotation: keys are served in the order they came, from the one after the last served. */
  order: number;
  running: number;
  waiting: Waiter[];
}

/**
 * A queue shared by several callers (tenants, client addresses), each naming itself by a key, so that one key,
 * or a few, can delay only themselves: at most `concurrency` tasks run; the others wait, at most `maxWaiting`
 * in all; one key holds at most `maxPerKey` places, running and waiting together. When a place to run frees,
 * the next task is the oldest waiter of the key whose turn it is: among keys with a waiter, those with the
 * fewest tasks running, and among them the next in rotation after the key served last (round robin). When
 * every place is taken, a key that holds none still enters, in the place of the newest waiter of the key
 * holding the most places (at least two): that waiter is refused as a full queue refuses. Counted in this
 * process. Emits `change` after every change of its state (for tests and the operator's view), and `refused`
 * with the key and why after each refusal (for the operator's log).
 */
export class FairQueue extends EventEmitter<{ change: []; refused: [key: string, why: FairQueueRefusal] }> {
  readonly concurrency: number;
  readonly maxWaiting: number;
  readonly maxPerKey: number;
  private active = 0;
  private queued = 0;
  private nextOrder = 0;
  private lastServed = -1;
  private readonly keys = new Map<string, KeyState>();

  /** @throws Error when a limit is out of range. */
  constructor(private readonly options: FairQueueOptions) {
    super();
    const { concurrency, maxWaiting, maxPerKey } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('concurrency must be at least 1');
    if (!Number.isInteger(maxWaiting) || maxWaiting < 0) throw new Error('maxWaiting must be at least 0');
    if (!Number.isInteger(maxPerKey) || maxPerKey < 1) throw new Error('maxPerKey must be at least 1');
    this.concurrency = concurrency;
    this.maxWaiting = maxWaiting;
    this.maxPerKey = maxPerKey;
  }

  /**
   * Runs `task` once `key` is given a place to run, and frees the place however it ends.
   * @throws the `full` or `keyFull` error (see `acquire`); `signal`'s reason when it aborts while waiting;
   *   `task`'s own error.
   */
  async run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(key, signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  /**
   * Takes a place to run for `key`, waiting for its turn when every one is taken; resolves with the function
   * that frees it (once, whatever the number of calls). For a place held beyond one call (a stream read later).
   * @throws the `full` error when every place is taken and `key` cannot take a waiter's place (checked first), or
   *   later when its waiter's place is given to a key that held none; the `keyFull` error when `key` holds
   *   `maxPerKey` places;
   *   `signal`'s reason when it aborts first (the waiter leaves the queue).
   */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const state = this.keys.get(key);
    const places = state ? state.running + state.waiting.length : 0;
    const canRun = this.active < this.concurrency;
    const victim = !canRun && this.queued >= this.maxWaiting && places === 0 ? this.victim() : undefined;
    if (!canRun && this.queued >= this.maxWaiting && !victim) {
      this.emit('refused', key, 'full');
      return Promise.reject(this.options.full());
    }
    if (places >= this.maxPerKey) {
      this.emit('refused', key, 'key-full');
      return Promise.reject(this.options.keyFull(this.maxPerKey));
    }
    const own = state ?? this.enter(key);
    if (canRun) {
      this.start(own);
      this.emit('change');
      return Promise.resolve(this.releaser(key, own));
    }
    if (victim) this.evictNewest(victim);
    return this.wait(key, own, signal);
  }

  /** Tasks running now, all keys together. */
  get running(): number {
    return this.active;
  }

  /** Tasks waiting for a place to run, all keys together. */
  get waiting(): number {
    return this.queued;
  }

  /** Calls `listener` after every change of the queue's state; returns the function that unsubscribes. */
  onChange(listener: () => void): () => void {
    this.on('change', listener);
    return () => this.off('change', listener);
  }

  /** Places `key` holds now, running and waiting. */
  held(key: string): number {
    const state = this.keys.get(key);
    return state ? state.running + state.waiting.length : 0;
  }

  /** The queue's limits, totals and each key's share, most places first (for the operator). */
  snapshot(): FairQueueSnapshot {
    const keys = [...this.keys.entries()]
      .map(([key, s]) => ({ key, running: s.running, waiting: s.waiting.length }))
      .sort((a, b) => b.running + b.waiting - (a.running + a.waiting));
    return {
      concurrency: this.concurrency,
      maxWaiting: this.maxWaiting,
      maxPerKey: this.maxPerKey,
      running: this.active,
      waiting: this.queued,
      keys,
    };
  }

  private enter(key: string): KeyState {
    const state: KeyState = { order: this.nextOrder++, running: 0, waiting: [] };
    this.keys.set(key, state);
    return state;
  }

  private start(state: KeyState): void {
    this.active++;
    state.running++;
    this.lastServed = state.order;
  }

  private releaser(key: string, state: KeyState): () => void {
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.active--;
      state.running--;
      this.forget(key, state);
      this.dispatch();
      this.emit('change');
    };
  }

  private wait(key: string, state: KeyState, signal: AbortSignal | undefined): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.start(state);
          resolve(this.releaser(key, state));
        },
        refuse: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      const onAbort = () => {
        if (!this.leave(key, state, waiter)) return;
        reject(signal?.reason);
        this.emit('change');
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiting.push(waiter);
      this.queued++;
      this.emit('change');
    });
  }

  /** Takes `waiter` out of the queue; false when it is no longer there (started or refused). */
  private leave(key: string, state: KeyState, waiter: Waiter): boolean {
    const i = state.waiting.indexOf(waiter);
    if (i < 0) return false;
    state.waiting.splice(i, 1);
    this.queued--;
    this.forget(key, state);
    return true;
  }

  private forget(key: string, state: KeyState): void {
    if (state.running === 0 && state.waiting.length === 0) this.keys.delete(key);
  }

  /** Starts waiters while places to run are free, each from the key whose turn it is. */
  private dispatch(): void {
    while (this.active < this.concurrency && this.queued > 0) {
      const turn = this.nextTurn();
      if (!turn) return;
      const waiter = turn[1].waiting.shift();
      this.queued--;
      waiter?.start();
    }
  }

  /** Among keys with a waiter and the fewest running, the first in rotation after the one served last. */
  private nextTurn(): [string, KeyState] | undefined {
    let best: [string, KeyState] | undefined;
    const rank = (s: KeyState) => (s.order > this.lastServed ? s.order : s.order + this.nextOrder);
    for (const entry of this.keys) {
      const s = entry[1];
      if (s.waiting.length === 0) continue;
      if (
        !best ||
        s.running < best[1].running ||
        (s.running === best[1].running && rank(s) < rank(best[1]))
      ) {
        best = entry;
      }
    }
    return best;
  }

  /** The key holding the most places (at least two) that has a waiter, whose waiter can give way. */
  private victim(): [string, KeyState] | undefined {
    let best: [string, KeyState] | undefined;
    for (const entry of this.keys) {
      const s = entry[1];
      const places = s.running + s.waiting.length;
      if (s.waiting.length === 0 || places < 2) continue;
      if (!best || places > best[1].running + best[1].waiting.length) best = entry;
    }
    return best;
  }

  private evictNewest([key, state]: [string, KeyState]): void {
    const waiter = state.waiting.pop();
    if (!waiter) return;
    this.queued--;
    this.forget(key, state);
    this.emit('refused', key, 'replaced');
    waiter.refuse(this.options.full());
  }
}
