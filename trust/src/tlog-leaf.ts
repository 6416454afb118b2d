/**
 * The notary's transparency log entry: what one leaf commits to, never the file nor who sent it. Text lines, so that
 * an auditor reads an entry bundle with any tool:
 *
 *   notary-log-leaf/1
 *   serial <serial number>
 *   sha256 <64 lower-case hex: the document's SHA-256>
 *   time <ISO 8601 UTC with milliseconds: when the document was recorded>
 *   tenant <64 lower-case hex: HMAC-SHA256 of the tenant id under a key derived from the service secret>
 *
 * The tenant commitment lets the service prove, to the tenant, which leaves are its own without naming the tenant
 * to anyone else. Browser-safe.
 */

/** The first line of a version-1 leaf. */
export const LEAF_MAGIC = 'notary-log-leaf/1';

/** A decoded leaf. */
export interface NotaryLeaf {
  serial: string;
  /** 64 lower-case hex. */
  sha256: string;
  /** ISO 8601 UTC with milliseconds. */
  time: string;
  /** 64 lower-case hex. */
  tenant: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The leaf's bytes (UTF-8). @throws TypeError for a field that would break the format. */
export function encodeLeaf(leaf: NotaryLeaf): Uint8Array {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(leaf.serial)) throw new TypeError('bad serial for a log leaf');
  if (!HEX64.test(leaf.sha256) || !HEX64.test(leaf.tenant)) throw new TypeError('bad hash for a log leaf');
  if (Number.isNaN(Date.parse(leaf.time))) throw new TypeError('bad time for a log leaf');
  return new TextEncoder().encode(
    `${LEAF_MAGIC}\nserial ${leaf.serial}\nsha256 ${leaf.sha256}\ntime ${leaf.time}\ntenant ${leaf.tenant}\n`,
  );
}

/** Reads a leaf's bytes. @returns undefined for anything `encodeLeaf` would not have written. */
export function decodeLeaf(bytes: Uint8Array): NotaryLeaf | undefined {
  const m =
    /^notary-log-leaf\/1\nserial ([A-Za-z0-9-]{1,64})\nsha256 ([0-9a-f]{64})\ntime (\S+)\ntenant ([0-9a-f]{64})\n$/.exec(
      new TextDecoder().decode(bytes),
    );
  if (!m) return undefined;
  const [, serial = '', sha256 = '', time = '', tenant = ''] = m;
  return { serial, sha256, time, tenant };
}
