/** What the parts of the better-auth directory share (see `directory.ts`). */
import type { MembershipEventHub } from './membership-events';
import type { DirectoryAdapter } from './store';

export interface DirectoryContext {
  /** better-auth's database adapter (`(await auth.$context).adapter`), resolved on each call. */
  adapter: () => Promise<DirectoryAdapter>;
  /** Receives the membership event of every successful change. */
  events: MembershipEventHub;
  /** The current time (invitation expiry, `createdAt` of new rows). */
  now: () => Date;
}
