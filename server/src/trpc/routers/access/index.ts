import { router } from '../../trpc';
import { createPolicy } from './create-policy';
import { emailAccessRequest } from './email-request';
import { emailAccessVerify } from './email-verify';
import { listPolicies } from './list-policies';
import { accessLog } from './log';
import { publicAccess } from './public';
import { revokePolicy } from './revoke-policy';
import { shareLink } from './share';
import { walletAccess } from './wallet';

/**
 * Sharing (spec, Public, no credentials: share and access routes; Access log; see also docs/sharing.md): the
 * managers' policy routes under
 * `/api/documents/{id}/access-policies`, the public access routes and the access log at the server root.
 */
export const accessRouter = router({
  createPolicy,
  listPolicies,
  revokePolicy,
  shareLink,
  publicAccess,
  walletAccess,
  emailAccessRequest,
  emailAccessVerify,
  accessLog,
});
