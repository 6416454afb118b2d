import { MonitorInputSchema, MonitorSchema } from '@notary/shared';
import { createMonitor } from '../../../domain/monitors/service';
import { authedProcedure } from '../../trpc';

/**
 * `POST /api/monitors` `{url, interval, period}` (ISO 8601 durations): schedules a monitoring of the URL, the
 * first capture at once; 201 Monitor (`active`). Counted as a web capture (5 a minute), as each run is.
 */
export const createMonitorProcedure = authedProcedure
  .meta({
    rateLimit: 'webCapture',
    openapi: {
      errorResponses: {
        400: 'Invalid URL, an interval under MONITOR_MIN_INTERVAL_SECONDS, a period over MONITOR_MAX_DAYS or shorter than the interval',
        401: 'Missing or invalid session token',
        403: 'Below editor in the organization',
        413: 'The workspace is at its storage quota',
        429: 'Over 5 captures a minute, or the workspace already holds its most active monitorings',
      },
      method: 'POST',
      path: '/api/monitors',
      summary: 'Monitor a web page: a capture every interval during a period (certidão de permanência)',
      tags: ['monitors'],
      protect: true,
      description:
        'Each run is an ordinary notarized web capture whose signed record names the previous run’s WACZ ' +
        'SHA-256. See docs/api.md, Monitoring.',
    },
    rest: { status: 201 },
  })
  .input(MonitorInputSchema)
  .output(MonitorSchema)
  .mutation(({ ctx, input }) => createMonitor(ctx.em(), ctx.deps, ctx.actor, input));
