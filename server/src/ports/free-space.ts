/**
 * Free space of the volumes intake bytes are written to (the service-wide disk guard,
 * `domain/documents/disk-floor.ts`). Adapter: `adapters/free-space/statfs.ts`; tests replace it to simulate a
 * full disk.
 */

/**
 * `data`: the volume(s) of `DATA_DIR` and of the stored files (the embedded database, the file storage, the
 * development mailbox). `temp`: the temporary directory web captures work in (Chromium's profile, the WACZ).
 */
export type Volume = 'data' | 'temp';

export interface FreeSpace {
  /**
   * Bytes an unprivileged writer may still use on `volume` (statfs `f_bavail` times `f_bsize`); the smallest of
   * them when the volume spans several file systems (stored files mounted apart from `DATA_DIR`).
   * `Number.POSITIVE_INFINITY` when nothing of the service writes there (S3 storage on PostgreSQL: `data`).
   * @throws Error when the file system cannot be asked (the guard then lets the intake through and logs it).
   */
  freeBytes(volume: Volume): Promise<number>;
}
