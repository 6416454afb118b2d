import type { Worker } from 'node:worker_threads';

/**
 * Waits for a worker thread's start message. `read` looks at each message: `undefined` to go on waiting, else
 * the started value or the `Error` the thread reported. A worker that errs or exits before its start message,
 * or reports a failure, is terminated and its error rethrown, so a failed start leaves no thread behind.
 * @param what the thread's name in the exit error (`"the devnet's worker"`).
 * @throws Error the thread's own failure, its uncaught error, or "`what` exited with code N while starting".
 */
export async function awaitWorkerStart<T, M>(
  worker: Worker,
  what: string,
  read: (message: M) => { value: T } | Error | undefined,
): Promise<T> {
  try {
    return await new Promise<T>((resolve, reject) => {
      const onMessage = (message: M) => {
        const outcome = read(message);
        if (outcome === undefined) return;
        cleanup();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome.value);
      };
      const onError = (error: Error) => {
        cleanup();
        reject(error);
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new Error(`${what} exited with code ${code} while starting`));
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
}
