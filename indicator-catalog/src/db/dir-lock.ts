import type { LockHolder } from '@notary/platform/db/dir-lock';

/**
 * Message of the catalog's directory locks (`@notary/platform` `acquireDirectoryLock`): PGlite and the embedded vector
 * index are single-process stores, and a second process on the same files would silently lose writes; the message names
 * the lock file and says so.
 */
export const catalogLockedMessage = ({ file, pid }: LockHolder): string =>
  `${file} is held by process ${pid}: one catalog process per data directory`;
