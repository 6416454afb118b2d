import { router } from '../../trpc';
import { getActProcedure } from './get';
import { recordActProcedure } from './record';
import { removeActProcedure } from './remove';

/** A document's notarial act (MNE, selo, book and page) under `/api/documents/{id}/act`. */
export const actsRouter = router({
  record: recordActProcedure,
  get: getActProcedure,
  remove: removeActProcedure,
});
