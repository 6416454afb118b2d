import { MonitorListSchema } from '@notary/shared';
import { listMonitors } from '../../../domain/monitors/service';
import { authedProcedure } from '../../trpc';

/** `GET /api/monitors`: the workspace's monitorings, newest first (at most 100), for any member. */
export const listMonitorsProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
      },
      method: 'GET',
      path: '/api/monitors',
      summary:
        "The workspace's monitorings, newest first (at most 100): state, runs recorded and the last run of each",
      tags: ['monitors'],
      protect: true,
    },
  })
  .output(MonitorListSchema)
  .query(({ ctx }) => listMonitors(ctx.em(), ctx.actor));
