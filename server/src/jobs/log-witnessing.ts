import type { Log } from '@notary/platform/log';
import { errorMessage } from '@notary/shared';
import type { LogWitnessing, WitnessingState } from '../domain/log/witnessing';
import type { JobQueue } from './boss';

/** Queue of the log's witnessing: at most one job queued and one running (policy `stately`). */
export const LOG_WITNESS_QUEUE = 'log-witness';

/** A witness down for days is asked again for as long: the retries stop only with the next checkpoint's job. */
const RETRY_LIMIT = 10_000;

/**
 * Runs the log's witnessing (`LogWitnessing.cosignLatest`) as jobs of `jobs`: `request()` queues one (a no-op when
 * one is already queued); a job whose checkpoint falls short of the quorum fails and is retried after
 * `retrySeconds`, doubling up to ten times as long, so a witness that comes back cosigns the checkpoints that
 * waited for it. Several instances share the queue; each job runs in one of them. `onState` sees every run's
 * outcome (tests wait on it).
 * @returns `request`, called with each new checkpoint and once at start.
 */
export async function startLogWitnessing(
  jobs: JobQueue,
  witnessing: LogWitnessing,
  options: { retrySeconds: number; log: Log; onState?: (state: WitnessingState) => void },
): Promise<{ request(): void }> {
  await jobs.boss.createQueue(LOG_WITNESS_QUEUE, { policy: 'stately' });
  await jobs.boss.work(LOG_WITNESS_QUEUE, { batchSize: 1 }, async () => {
    const state = await witnessing.cosignLatest();
    if (!state) return;
    options.onState?.(state);
    if (!state.final) {
      throw new Error(
        `checkpoint ${state.size} cosigned by ${state.cosignedBy.length} of the ${witnessing.quorum} witnesses needed`,
      );
    }
  });
  return {
    request: () => {
      jobs.boss
        .send(
          LOG_WITNESS_QUEUE,
          {},
          {
            retryLimit: RETRY_LIMIT,
            retryDelay: options.retrySeconds,
            retryBackoff: true,
            retryDelayMax: options.retrySeconds * 10,
          },
        )
        .catch((e: unknown) =>
          options.log.error({ err: errorMessage(e) }, 'the witnessing of the log was not queued'),
        );
    },
  };
}
