import { router } from '../../trpc';
import { deleteConfirm } from './delete-confirm';
import { deleteRequest } from './delete-request';
import { updateProfile } from './profile';
import { declareServentiaProcedure } from './serventia-declare';
import { readServentiaProcedure } from './serventia-read';

/** Organization routes (spec, Organization): `/api/org/*`. */
export const orgRouter = router({
  updateProfile,
  deleteRequest,
  deleteConfirm,
  serventia: readServentiaProcedure,
  declareServentia: declareServentiaProcedure,
});
