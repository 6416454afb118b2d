import { MonitorSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { cancelMonitor } from '../../../domain/monitors/service';
import { authedProcedure } from '../../trpc';

/** `DELETE /api/monitors/{id}`: cancels the monitoring (editor and above); its runs stay. */
export const cancelMonitorProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: 'Below editor in the organization',
        404: 'No such monitoring in the active workspace',
      },
      method: 'DELETE',
      path: '/api/monitors/{id}',
      summary: 'Cancel a monitoring (the runs made stay; a certidão may still be asked for)',
      tags: ['monitors'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(MonitorSchema)
  .mutation(({ ctx, input }) => cancelMonitor(ctx.em(), ctx.actor, input.id));
