import { router } from '../../trpc';
import { cancelMonitorProcedure } from './cancel';
import { createMonitorProcedure } from './create';
import { getMonitorProcedure } from './get';
import { listMonitorsProcedure } from './list';

/** Monitorings of a URL over a period under `/api/monitors` (the certidão is a PDF: `http/monitors.ts`). */
export const monitorsRouter = router({
  list: listMonitorsProcedure,
  create: createMonitorProcedure,
  get: getMonitorProcedure,
  cancel: cancelMonitorProcedure,
});
