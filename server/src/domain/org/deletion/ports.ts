import type { Log } from '@notary/platform/log';
import type { OrganizationDirectory } from '../../../ports/directory';
import type { Mailer } from '../../../ports/mail';
import type { ObjectStorage } from '../../../ports/storage';

/** Ports a run of the deletion's steps uses (the confirmation, the resume job, a script). */
export interface OrgDeletionRunPorts {
  storage: ObjectStorage;
  mailer: Mailer;
  directory: OrganizationDirectory;
  /**
   * The run's log (the caller binds `module: 'org-deletion'`; default: nowhere): one info line per step and per
   * batch of documents (`<tenant id>: batch <n> done, <d> documents deleted, <l> left`), a warning per
   * noteworthy event (a notice refused for good, a sweep or lease release that failed), an error per resumed
   * deletion that failed.
   */
  log?: Log;
  /** Documents per batch, 1 to 10000 (default {@link DOCUMENT_BATCH}). */
  batchSize?: number;
  /** The current time (tests inject it); default `new Date()`. */
  now?: () => Date;
}

/** Ports the confirmation uses: a run's, plus the key of the code hashes. */
export interface OrgDeletionPorts extends OrgDeletionRunPorts {
  /** Key of the code hashes: `deletionCodeKey(secret)`. */
  codeKey: Uint8Array;
}

/** What a run of the steps needs to know of the organization: read from its tenant row. */
export interface DeletionTarget {
  deletionId: string;
  tenantId: string;
  /** The organization's id at the identity provider (the tenant's `externalId`). */
  organizationId: string;
  organizationName: string;
}

/** Outcome of one run of the steps, for the resume job's log. */
export type DeletionRunOutcome = 'finished' | 'busy';

/**
 * Documents handled per batch by default: bounds memory, the size of one `DELETE ... WHERE id = ANY(...)`
 * and the work a crash repeats (one batch's object deletions).
 */
export const DOCUMENT_BATCH = 200;
/** The largest batch a caller may ask for. */
export const MAX_DOCUMENT_BATCH = 10_000;
/**
 * How long a run owns a deletion, in milliseconds, renewed after each batch. Two confirms at once (a double
 * click), or a confirm and the resume job, would otherwise both run the steps and mail every member twice; a
 * killed run frees the deletion when its lease runs out, and the resume job then finishes it.
 */
export const LEASE_MS = 2 * 60 * 1000;
/**
 * How long the resume job leaves a deletion whose run failed (and released its lease) to the user's own
 * retry ("confirm again with the same code") before finishing it itself, in milliseconds.
 */
export const RESUME_IDLE_MS = 60 * 1000;
/** Started deletions read per query by the resume job and the status (they are a handful in practice). */
export const RESUME_PAGE = 50;

/** The clock of the ports (tests and the resume test inject it). */
export const clockOf = (ports: OrgDeletionRunPorts): Date => ports.now?.() ?? new Date();
