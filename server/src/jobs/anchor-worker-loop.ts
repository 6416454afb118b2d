import type { AnchorWorker } from '../domain/anchoring/anchor-worker';

/** A running `startAnchorWorkerLoop`. */
export interface AnchorWorkerLoop {
  /** Stops the timer and the worker, waiting for the tick in progress (see `AnchorWorker.stop`). */
  stop(): Promise<void>;
}

/**
 * Runs `worker.tick()` at once and then `pollMs` milliseconds after each tick ends (so ticks never overlap and a
 * slow chain is not asked faster than it answers), until `stop()`. Every tick is also the sweep that re-drives
 * rows whose retry or lease has passed, so this loop is what keeps anchoring moving when no collection wakes the
 * worker. The timers are unref'd: the loop never keeps the process alive.
 */
export function startAnchorWorkerLoop(worker: AnchorWorker, pollMs: number): AnchorWorkerLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = async (): Promise<void> => {
    await worker.tick();
    if (!stopped) timer = setTimeout(loop, pollMs).unref();
  };
  timer = setTimeout(loop, 0).unref();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await worker.stop();
    },
  };
}
