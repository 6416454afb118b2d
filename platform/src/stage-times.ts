import { performance } from 'node:perf_hooks';

/**
 * Wall time spent in each named stage of one request, in ms, for `Server-Timing` (W3C Server Timing): how a
 * bench sees which stage of an upload was slow. Made only when the operator turned it on (`SERVER_TIMING=on`);
 * code paths take it as an optional argument, so it costs nothing when off. Stages measured several times add
 * up; a stage may be part of another (the report says which).
 */
export class StageTimes {
  private readonly totals = new Map<string, number>();

  /** Adds `ms` to `stage`. */
  add(stage: string, ms: number): void {
    this.totals.set(stage, (this.totals.get(stage) ?? 0) + ms);
  }

  /** Adds the time since `startedAt` (`performance.now()`) to `stage`. */
  since(stage: string, startedAt: number): void {
    this.add(stage, performance.now() - startedAt);
  }

  /** Runs `work`, adding its wall time to `stage` whether it resolves or rejects. */
  async time<T>(stage: string, work: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      return await work();
    } finally {
      this.since(stage, startedAt);
    }
  }

  /** Each stage's total so far, ms, in the order first measured (a bench's report). */
  entries(): Record<string, number> {
    return Object.fromEntries(this.totals);
  }

  /** The `Server-Timing` header value: `stage;dur=ms` per stage, in the order first measured, 0.01 ms. */
  header(): string {
    return [...this.totals].map(([stage, ms]) => `${stage};dur=${ms.toFixed(2)}`).join(', ');
  }
}

/** `work()`, timed under `stage` when `times` is given. */
export function timed<T>(times: StageTimes | undefined, stage: string, work: () => Promise<T>): Promise<T> {
  return times ? times.time(stage, work) : work();
}
