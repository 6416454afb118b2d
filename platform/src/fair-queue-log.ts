import type { FairQueue } from './fair-queue';
import type { Log } from './log';

/** Keys of the queue's snapshot a refusal's log line lists (those holding the most places). */
const TOP_KEYS = 5;

/**
 * Logs each refusal of `queue` at warn level with the queue's depth and its top keys' shares, so the operator
 * sees who held a shared resource when someone was turned away: `{queue: name, key, why, running, waiting,
 * concurrency, maxWaiting, maxPerKey, top: [{key, running, waiting}]}`, message "queue refused a place".
 */
export function logQueueRefusals(name: string, queue: FairQueue, log: Log): void {
  queue.on('refused', (key, why) => {
    const { keys, ...depth } = queue.snapshot();
    log.warn({ queue: name, key, why, ...depth, top: keys.slice(0, TOP_KEYS) }, 'queue refused a place');
  });
}
