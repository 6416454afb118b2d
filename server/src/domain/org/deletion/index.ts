/**
 * Deletion of an organization: the two-step handshake (`handshake.ts`: request a code by mail, confirm it),
 * the leased, resumable run of its steps (`run.ts`, with `batches.ts`, `sweep.ts`, `notices.ts`), the
 * retention holds that refuse or cancel it (`hold.ts`), the resume job's pass (`resume.ts`), a run without a
 * code for scripts (`delete-now.ts`) and the operator's status (`status.ts`).
 */
export { deleteOrganizationNow } from './delete-now';
export { confirmOrganizationDeletion, requestOrganizationDeletion } from './handshake';
export { noticeRecipients } from './notices';
export {
  type DeletionRunOutcome,
  DOCUMENT_BATCH,
  LEASE_MS,
  type OrgDeletionPorts,
  type OrgDeletionRunPorts,
  RESUME_IDLE_MS,
} from './ports';
export { type ResumeReport, resumeOrganizationDeletions } from './resume';
export { type DeletionStatus, organizationDeletionStatus } from './status';
