import { HealthSchema } from '@notary/shared';
import { publicProcedure } from '../../trpc';

/** `GET /health` (spec, Public): `{status:'ok', timestamp}`. */
export const health = publicProcedure
  .meta({ openapi: { method: 'GET', path: '/health', tags: ['system'], summary: 'Liveness' } })
  .output(HealthSchema)
  .query(() => ({ status: 'ok' as const, timestamp: new Date().toISOString() }));
