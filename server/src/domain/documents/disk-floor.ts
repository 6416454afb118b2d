import { type Log, silentLog } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import type { FreeSpace, Volume } from '../../ports/free-space';

/**
 * The service-wide disk guard: whatever the tenants' quotas allow, no intake may fill the disk the service
 * runs on (a full volume stops the embedded database, the file storage and every tenant with them). Below
 * `DISK_FREE_FLOOR_BYTES` of free space new files are refused with 507 Insufficient Storage (RFC 4918,
 * section 11.5) before anything is accepted, and a file that would take the volume below it while it streams
 * in is cut off and removed.
 */

/** What the guard uses of the service (a subset of `AppDeps`). */
export interface DiskFloorDeps {
  freeSpace: FreeSpace;
  /** `diskFreeFloorBytes`: free bytes each volume keeps (`DISK_FREE_FLOOR_BYTES`); 0: no guard. */
  config: { diskFreeFloorBytes: number };
  /** Where refusals are reported to the operator (the request's logger; default: nowhere). */
  log?: Log;
}

/**
 * Bytes a file may stream between two readings of the free space while the last reading, less what came since,
 * stays above the floor; closer to the floor every chunk is checked.
 */
export const DISK_RECHECK_BYTES = 8 * 1024 * 1024;

/**
 * Bytes of a file that may be on their way to the disk, passed on but not yet written (the file storage's
 * 4 MiB write buffer and the streams before it), which a reading of the free space does not show yet: kept
 * free on top of the floor while a file streams in, so that the floor holds once they land.
 */
export const DISK_IN_FLIGHT_BYTES = 8 * 1024 * 1024;

/** The refusal every intake gives when a volume is below the floor. */
export function insufficientStorage(): AppError {
  return new AppError(
    'INSUFFICIENT_STORAGE',
    'The server is running out of disk space and accepts no new files for now: try again later',
  );
}

/**
 * Refuses an intake while any of `volumes` has less than the floor free, or would have once `incomingBytes`
 * (the size announced up front, 0 when unknown) were written. A failure to read the free space lets the intake
 * through (logged): the guard protects availability, it must not take it away.
 * @throws AppError INSUFFICIENT_STORAGE (507).
 */
export async function assertDiskRoom(
  deps: DiskFloorDeps,
  volumes: readonly Volume[],
  incomingBytes = 0,
): Promise<void> {
  const floor = deps.config.diskFreeFloorBytes;
  if (floor === 0) return;
  for (const volume of volumes) {
    const free = await readFree(deps, volume);
    if (free - incomingBytes < floor) throw refuse(deps, volume, free, floor, incomingBytes);
  }
}

/**
 * The guard of a file streaming into `volume`, for `ingestStream`'s `gate`: asked before each chunk is passed
 * on with the bytes already passed (`stored`) and the chunk's length (`next`). It reads the free space again
 * every `DISK_RECHECK_BYTES`, and at every chunk once the last reading less what came since nears the floor;
 * the chunk waits for the reading, and is refused when the reading less the chunk and what may still be in
 * flight (`DISK_IN_FLIGHT_BYTES`) is under the floor. Undefined when the guard is off.
 * @returns a function answering undefined (pass the chunk now) or a promise that rejects with
 *   AppError INSUFFICIENT_STORAGE when the chunk would take the volume below the floor.
 */
export function diskFloorGate(
  deps: DiskFloorDeps,
  volume: Volume,
): ((stored: number, next: number) => Promise<void> | undefined) | undefined {
  const floor = deps.config.diskFreeFloorBytes;
  if (floor === 0) return undefined;
  let lastFree: number | undefined;
  let storedAtReading = 0;
  return (stored, next) => {
    const since = stored + next - storedAtReading;
    if (
      lastFree !== undefined &&
      since < DISK_RECHECK_BYTES &&
      lastFree - since - DISK_IN_FLIGHT_BYTES >= floor
    ) {
      return undefined;
    }
    return readFree(deps, volume).then((free) => {
      lastFree = free;
      storedAtReading = stored;
      if (free - next - DISK_IN_FLIGHT_BYTES < floor) {
        throw refuse(deps, volume, free, floor, next + DISK_IN_FLIGHT_BYTES);
      }
    });
  };
}

async function readFree(deps: DiskFloorDeps, volume: Volume): Promise<number> {
  try {
    return await deps.freeSpace.freeBytes(volume);
  } catch (err) {
    (deps.log ?? silentLog).error({ err, volume }, 'free space unknown: intake allowed');
    return Number.POSITIVE_INFINITY;
  }
}

/** Logs the refusal for the operator: the volume, its free bytes, the floor and the bytes about to come. */
function refuse(
  deps: DiskFloorDeps,
  volume: Volume,
  freeBytes: number,
  floorBytes: number,
  incomingBytes: number,
): AppError {
  (deps.log ?? silentLog).warn(
    { volume, freeBytes, floorBytes, incomingBytes },
    'free space below DISK_FREE_FLOOR_BYTES: intake refused',
  );
  return insufficientStorage();
}
