import { router } from '../../trpc';
import { acceptInvitation } from './accept-invitation';
import { cancelInvitation } from './cancel-invitation';
import { invite } from './invite';
import { listInvitations } from './list-invitations';
import { listMembers } from './list-members';
import { removeMember } from './remove-member';
import { updateMember } from './update-member';

/** Team routes (spec, Team): `/api/team/*`; the same procedures over tRPC as `team.<name>`. */
export const teamRouter = router({
  listMembers,
  listInvitations,
  invite,
  acceptInvitation,
  updateMember,
  removeMember,
  cancelInvitation,
});
