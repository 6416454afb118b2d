import { router } from '../../trpc';

/** Organization routes (spec, Organization): `/api/org/*`. */
export const orgRouter = router({});
