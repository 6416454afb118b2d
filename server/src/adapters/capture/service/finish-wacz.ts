import { createHash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { zipSync } from 'fflate';
import { SERVICE_ENTRIES, type WaczResource } from '../child/wacz-layout';

/**
 * The service's side of a capture's WACZ: the archive the capture process wrote is checked as a zip and
 * completed with the entries the service signs (PKWARE APPNOTE.TXT), never trusted as it came.
 */

/** Zip record signatures (PKWARE APPNOTE.TXT 4.3.7 local file header, 4.3.12 central directory, 4.3.16 end). */
const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;
/** Most bytes of a capture archive's central directory and end record read (a few dozen entries use ~3 KB). */
const MAX_DIRECTORY_BYTES = 256 * 1024;
/** Most entries a capture archive may have. */
const MAX_ENTRIES = 512;

/** One central directory record of a stored (not deflated) zip entry, its bytes kept verbatim. */
interface StoredEntry {
  name: string;
  size: number;
  /** Offset of its local header in the file. */
  offset: number;
  /** The central directory record as read (46 bytes, name, extra field, comment). */
  record: Buffer;
}

/**
 * The central directory of a zip whose last `tail.length` bytes (starting at file offset `tailStart`) are
 * given: every entry stored (method 0), unencrypted, no ZIP64, unique relative names, the directory right
 * before the end record. @throws Error naming what is wrong.
 */
function readDirectory(tail: Buffer, tailStart: number): { entries: StoredEntry[]; cdOffset: number } {
  let end = -1;
  for (let i = tail.length - 22; i >= 0 && i >= tail.length - 22 - 0xffff; i--) {
    if (tail.readUInt32LE(i) === END_OF_CENTRAL && tail.readUInt16LE(i + 20) === tail.length - i - 22) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('zip: no end of central directory record');
  const count = tail.readUInt16LE(end + 10);
  const cdSize = tail.readUInt32LE(end + 12);
  const cdOffset = tail.readUInt32LE(end + 16);
  if (tail.readUInt16LE(end + 4) !== 0 || tail.readUInt16LE(end + 8) !== count || count > MAX_ENTRIES) {
    throw new Error('zip: multi-disk, inconsistent or too many entries');
  }
  if (cdOffset < tailStart || cdOffset + cdSize !== tailStart + end) {
    throw new Error('zip: the central directory is not where its end record says');
  }
  const entries: StoredEntry[] = [];
  const names = new Set<string>();
  let at = cdOffset - tailStart;
  for (let n = 0; n < count; n++) {
    if (at + 46 > end || tail.readUInt32LE(at) !== CENTRAL_HEADER) throw new Error('zip: bad central record');
    const length = 46 + tail.readUInt16LE(at + 28) + tail.readUInt16LE(at + 30) + tail.readUInt16LE(at + 32);
    if (at + length > end) throw new Error('zip: central record past the directory');
    const record = Buffer.from(tail.subarray(at, at + length));
    const name = record.toString('utf8', 46, 46 + record.readUInt16LE(28));
    const size = record.readUInt32LE(20);
    const offset = record.readUInt32LE(42);
    const safeName =
      name !== '' && !name.startsWith('/') && !name.includes('\\') && !name.split('/').includes('..');
    if ((record.readUInt16LE(8) & 1) !== 0 || record.readUInt16LE(10) !== 0) {
      throw new Error(`zip: ${name} is encrypted or compressed`);
    }
    if (!safeName || names.has(name)) throw new Error(`zip: entry name ${JSON.stringify(name)} refused`);
    if (size !== record.readUInt32LE(24) || size === 0xffffffff || offset === 0xffffffff) {
      throw new Error(`zip: ${name}: sizes disagree or ZIP64`);
    }
    names.add(name);
    entries.push({ name, size, offset, record });
    at += length;
  }
  if (at !== end) throw new Error('zip: the central directory has bytes past its records');
  return { entries, cdOffset };
}

/** SHA-256 (hex) of `size` bytes of `handle` from `start`. */
async function hashRange(handle: FileHandle, start: number, size: number): Promise<string> {
  const hash = createHash('sha256');
  const buf = Buffer.alloc(1024 * 1024);
  for (let done = 0; done < size; ) {
    const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, size - done), start + done);
    if (bytesRead === 0) throw new Error('zip: entry past the end of the file');
    hash.update(buf.subarray(0, bytesRead));
    done += bytesRead;
  }
  return hash.digest('hex');
}

/**
 * Completes a capture's WACZ (`writeWacz`'s output, read from `source`, `sourceBytes` long) into `outFile`:
 * every entry but `SERVICE_ENTRIES` is kept byte for byte (the capture writes those last, so the file is cut
 * before them), each kept entry's SHA-256 and size is computed from the copy and handed to `complete`, and
 * the entries `complete` returns (path and bytes, in order: the service's screenshot, `capture.json`,
 * `datapackage.json`, `datapackage-digest.json`) are appended, stored, with a new central directory (PKWARE
 * APPNOTE.TXT 4.3). The source is never trusted: a zip that is not what `writeWacz` writes (a deflated,
 * encrypted or ZIP64 entry, an unsafe or repeated name, a directory out of place, more bytes than
 * announced) is refused.
 * @returns the finished WACZ's size in bytes.
 * @throws Error naming what is wrong with the source; `complete`'s errors.
 */
export async function finishWacz(
  source: Readable,
  sourceBytes: number,
  outFile: string,
  complete: (kept: WaczResource[]) => Promise<Array<[string, Buffer]>>,
): Promise<{ bytes: number }> {
  const handle = await open(outFile, 'w+', 0o600);
  try {
    // Copied as it comes; the last bytes (directory and end record) are kept aside to read the directory.
    const keep = Math.min(sourceBytes, MAX_DIRECTORY_BYTES);
    let tail = Buffer.alloc(0);
    let total = 0;
    for await (const chunk of source as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > sourceBytes) throw new Error('zip: longer than announced');
      await handle.write(chunk, 0, chunk.length, total - chunk.length);
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > keep) tail = tail.subarray(tail.length - keep);
    }
    if (total !== sourceBytes) throw new Error('zip: shorter than announced');
    const { entries, cdOffset } = readDirectory(tail, total - tail.length);
    const kept = entries.filter((e) => !SERVICE_ENTRIES.includes(e.name));
    const replaced = entries.filter((e) => SERVICE_ENTRIES.includes(e.name));
    const cut = Math.min(cdOffset, ...replaced.map((e) => e.offset));
    const resources: WaczResource[] = [];
    for (const entry of kept) {
      const header = Buffer.alloc(30);
      await handle.read(header, 0, 30, entry.offset);
      if (header.readUInt32LE(0) !== LOCAL_HEADER) throw new Error(`zip: ${entry.name}: no local header`);
      const start = entry.offset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
      if (start + entry.size > cut) throw new Error(`zip: ${entry.name} overlaps the entries replaced`);
      const sha256 = await hashRange(handle, start, entry.size);
      resources.push({
        name: path.basename(entry.name),
        path: entry.name,
        hash: `sha256:${sha256}`,
        bytes: entry.size,
      });
    }
    const added = await complete(resources);
    const appended = Buffer.from(
      zipSync(Object.fromEntries(added.map(([p, data]) => [p, [data, { level: 0 }]])), { level: 0 }),
    );
    const own = readDirectory(appended, 0);
    const records = [
      ...kept.map((e) => e.record),
      ...own.entries.map((e) => {
        const record = Buffer.from(e.record);
        record.writeUInt32LE(e.offset + cut, 42);
        return record;
      }),
    ];
    const directory = Buffer.concat(records);
    const endRecord = Buffer.alloc(22);
    endRecord.writeUInt32LE(END_OF_CENTRAL, 0);
    endRecord.writeUInt16LE(records.length, 8);
    endRecord.writeUInt16LE(records.length, 10);
    endRecord.writeUInt32LE(directory.length, 12);
    endRecord.writeUInt32LE(cut + own.cdOffset, 16);
    const rest = Buffer.concat([appended.subarray(0, own.cdOffset), directory, endRecord]);
    await handle.truncate(cut);
    await handle.write(rest, 0, rest.length, cut);
    return { bytes: cut + rest.length };
  } finally {
    await handle.close();
  }
}
