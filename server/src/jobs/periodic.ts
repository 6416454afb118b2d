/** A job run on a timer and on demand (see `startPeriodicJob`). */
export interface PeriodicJob<T> {
  /** Runs now, or joins the run in progress. Resolves with its result (`undefined` when it failed and logged). */
  runOnce(): Promise<T | undefined>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `intervalMs` (0: never, only through `runOnce`). Runs never overlap: a tick while one runs is
 * skipped, `runOnce` joins it. `run` handles and logs its own failures (resolving `undefined`), so the next tick
 * simply tries again. The timer is unref'd: it never keeps the process alive.
 */
export function startPeriodicJob<T>(intervalMs: number, run: () => Promise<T | undefined>): PeriodicJob<T> {
  let running: Promise<T | undefined> | undefined;
  let stopped = false;
  const runOnce = (): Promise<T | undefined> => {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer =
    intervalMs > 0
      ? setInterval(() => {
          if (!stopped && !running) void runOnce();
        }, intervalMs)
      : undefined;
  timer?.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
