import { router } from '../../trpc';
import { cancelMonitorProcedure } from './cancel';
import { createMonitorProcedure } from './create';
import { getMonitorProcedure } from './get';

/** Monitorings of a URL over a period under `/api/monitors` (the certidão is a PDF: `http/monitors.ts`). */
export const monitorsRouter = router({
  create: createMonitorProcedure,
  get: getMonitorProcedure,
  cancel: cancelMonitorProcedure,
});
