import { FairQueue } from '@notary/platform/fair-queue';
import { AppError } from '@notary/shared';
import type { IpfsReadUse } from '../../ports/ipfs';

/**
 * `retryAfterSeconds` of a read refused because every place is taken (`IPFS_IMPORT_CONCURRENCY`): most imports
 * take seconds, and the client's retry is cheap (refused before any request).
 */
export const IPFS_BUSY_RETRY_AFTER_SECONDS = 10;

/**
 * The read queues of one process, by use, each keyed by tenant id (`FairQueue`: served in turn across tenants,
 * each within its share, a tenant holding none taking the place of the newest waiter of the one holding most):
 * - `import`: `concurrency` (`IPFS_IMPORT_CONCURRENCY`) reads at once, as many waiting, one tenant holding at
 *   most `concurrency` places (alone, it may use every slot; the waiting places are for the others);
 * - `certificate` (re-reading an imported PDF to stamp it): half as many at once (rounded up), `concurrency`
 *   waiting, half as many per tenant: its own slots, so imports cannot starve certificates nor the reverse.
 * Refusals are AppError RATE_LIMITED with `retryAfterSeconds` (`IPFS_BUSY_RETRY_AFTER_SECONDS`).
 */
export function createIpfsReadQueues(concurrency: number): Record<IpfsReadUse, FairQueue> {
  const certificates = Math.ceil(concurrency / 2);
  return {
    import: readQueue(concurrency, concurrency, concurrency, 'IPFS files'),
    certificate: readQueue(certificates, concurrency, certificates, 'IPFS files for certificates'),
  };
}

function readQueue(concurrency: number, maxWaiting: number, maxPerKey: number, what: string): FairQueue {
  const retry = { retryAfterSeconds: IPFS_BUSY_RETRY_AFTER_SECONDS };
  return new FairQueue({
    concurrency,
    maxWaiting,
    maxPerKey,
    full: () =>
      new AppError(
        'RATE_LIMITED',
        `The service is reading as many ${what} at once as it allows (${concurrency}), and as many wait: try again shortly`,
        retry,
      ),
    keyFull: (n) =>
      new AppError(
        'RATE_LIMITED',
        `Your workspace is already reading as many ${what} at once as it allows (${n}): wait for one to finish and try again`,
        retry,
      ),
  });
}
