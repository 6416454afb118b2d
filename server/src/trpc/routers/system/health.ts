import { HealthSchema } from '@notary/shared';
import { publicProcedure } from '../../trpc';

/** `GET /health` (spec, Public, no credentials): `{status:'ok', timestamp}`. */
export const health = publicProcedure
  // Probes poll it: never rate limited. While the service starts, the HTTP layer answers 503 `starting`.
  .meta({
    openapi: {
      protect: false,
      method: 'GET',
      path: '/health',
      tags: ['system'],
      summary: 'Readiness',
    },
    rateLimit: 'exempt',
  })
  .output(HealthSchema)
  .query(() => ({ status: 'ok' as const, timestamp: new Date().toISOString() }));
