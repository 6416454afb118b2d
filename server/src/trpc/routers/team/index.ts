import { router } from '../../trpc';

/** Team routes (spec, Team): `/api/team/*`. */
export const teamRouter = router({});
