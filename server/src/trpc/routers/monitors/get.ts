import { MonitorSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { getMonitor } from '../../../domain/monitors/service';
import { authedProcedure } from '../../trpc';

/** `GET /api/monitors/{id}`: the monitoring's state and runs, for any member of its tenant. */
export const getMonitorProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        404: 'No such monitoring in the active workspace',
      },
      method: 'GET',
      path: '/api/monitors/{id}',
      summary: 'A monitoring: its state (active, finished, cancelled, failed) and its runs',
      tags: ['monitors'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(MonitorSchema)
  .query(({ ctx, input }) => getMonitor(ctx.em(), ctx.actor, input.id));
