import type { ObjectStorage } from '../../../ports/storage';

/** Objects listed and deleted per round of the prefix sweep (one S3 list page). */
const SWEEP_BATCH = 1000;
/** Object deletions in flight at once: S3 round trips dominate, a few in parallel cut the wall time. */
const DELETE_CONCURRENCY = 8;

/**
 * Deletes every object under `<tenantId>/` (the upload route's keys: `<tenantId>/<uuid>`), so that nothing
 * of the tenant survives in storage even without a row pointing at it (a crashed upload, a future derived
 * file). Each round lists afresh from the start, since deleting while paging through a listing can skip keys.
 * The trailing slash matters: tenant ids are UUIDs of equal length, so no other tenant's key shares it.
 * @param renewLease called after each round (the run's lease; returns the rows updated).
 * @throws Error when a round lists the same keys again (deletes that do not take effect), instead of looping.
 */
export async function sweepPrefix(
  storage: ObjectStorage,
  tenantId: string,
  renewLease: () => Promise<number>,
): Promise<void> {
  const prefix = `${tenantId}/`;
  let previousFirst: string | undefined;
  for (;;) {
    const batch: string[] = [];
    for await (const o of storage.listObjects(prefix)) {
      batch.push(o.key);
      if (batch.length >= SWEEP_BATCH) break;
    }
    if (batch.length === 0) return;
    if (batch[0] === previousFirst) throw new Error(`objects under ${prefix} survive deletion (${batch[0]})`);
    previousFirst = batch[0];
    await deleteKeys(storage, batch);
    await renewLease();
    if (batch.length < SWEEP_BATCH) return;
  }
}

/** Deletes the objects `keys` with at most `DELETE_CONCURRENCY` deletions in flight. */
export async function deleteKeys(storage: ObjectStorage, keys: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++] as string;
      await storage.delete(key);
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, keys.length) }, worker));
}
