import type { SqlEntityManager } from '@mikro-orm/sql';
import { z } from 'zod';
import { SyncRun } from '../db/entities';
import { SyncProgressSchema, SyncStatusSchema } from '../providers/schemas';
import { findProvider, toProviderView } from '../providers/service';

export const SyncRunSchema = z.object({
  id: z.string(),
  trigger: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  status: SyncStatusSchema,
  error: z.string().nullable(),
  stats: SyncProgressSchema.extend({
    unchanged: z
      .number()
      .int()
      .meta({ description: 'Definitions whose search text did not change (not re-embedded)' }),
    durationMs: z.number().int(),
  }).nullable(),
});

/** `GET /api/providers/{slug}/sync`: the provider's stamp, live progress, and its last runs. */
export const SyncStatusViewSchema = z.object({
  provider: z.string(),
  status: SyncStatusSchema,
  lastSyncAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  indicatorCount: z.number().int(),
  lastError: z.string().nullable(),
  progress: SyncProgressSchema.nullable().meta({
    description: 'While `running`: the sync phase and its counters',
  }),
  recentRuns: z.array(SyncRunSchema).meta({ description: 'The last 10 runs, newest first' }),
});
export type SyncStatusView = z.infer<typeof SyncStatusViewSchema>;

/**
 * Sync status of one provider, as stored (so every instance answers the same).
 * @throws AppError NOT_FOUND
 */
export async function getSyncStatus(em: SqlEntityManager, slug: string): Promise<SyncStatusView> {
  const view = toProviderView(await findProvider(em, slug));
  const runs = await em.find(SyncRun, { provider: slug }, { orderBy: { startedAt: 'desc' }, limit: 10 });
  return {
    provider: slug,
    ...view.sync,
    recentRuns: runs.map((r) => ({
      id: r.id,
      trigger: r.trigger,
      startedAt: r.startedAt.toISOString(),
      finishedAt: r.finishedAt?.toISOString() ?? null,
      status: r.status,
      error: r.error ?? null,
      stats: r.stats ?? null,
    })),
  };
}
