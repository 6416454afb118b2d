import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { acquireDirectoryLock, type DirectoryLock } from '@notary/platform/db/dir-lock';
import { type Logger, silentLogger } from '@notary/platform/log';
import { catalogLockedMessage } from '../db/dir-lock';
import type { PointPayload, VectorHit, VectorIndex, VectorPoint } from './port';

const MAGIC = 0x58564349; // "ICVX" little-endian
const FORMAT_VERSION = 1;
const HEADER_FIXED_BYTES = 20;

export interface EmbeddedIndexOptions {
  dimensions: number;
  /** Directory of `vectors.bin`; undefined keeps the index in memory only (tests). */
  dir: string | undefined;
  /** Where a failed write at `close()` is reported (default: nowhere). */
  log?: Logger;
}

/**
 * Embedded vector index: exact (brute-force) cosine search over an in-memory matrix of unit vectors, so a
 * dot product is the cosine. About 10 ms per query over 10,000 x 1536 on this machine; enough for catalogs
 * of tens of thousands of definitions (use Qdrant beyond that, or with several catalog instances).
 * Persisted to `<dir>/vectors.bin` on `persist()`, atomically (temp file, fsync, rename), so a crash leaves
 * the previous file whole. One process per directory (lock file `vectors.lock`).
 * File: u32 magic, u32 version, u32 dimensions, u32 count, u32 header length, header JSON
 * (`[[id, providerSlug, indicatorId, contentHash], ...]`), then count x dimensions float32 (little-endian).
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly kind = 'embedded';
  private readonly dims: number;
  private readonly file: string | undefined;
  private data: Float32Array;
  private ids: string[] = [];
  private payloads: PointPayload[] = [];
  private readonly slotById = new Map<string, number>();
  private dirty = false;
  private lock: DirectoryLock | undefined;
  private persisting: Promise<void> = Promise.resolve();

  constructor(private readonly options: EmbeddedIndexOptions) {
    this.dims = options.dimensions;
    this.file = options.dir ? path.join(options.dir, 'vectors.bin') : undefined;
    this.data = new Float32Array(this.dims * 1024);
  }

  async init(): Promise<void> {
    if (!this.file || !this.options.dir) return;
    // Creates the directory too.
    this.lock = await acquireDirectoryLock(this.options.dir, {
      name: 'vectors.lock',
      lockedMessage: catalogLockedMessage,
    });
    let bytes: Buffer;
    try {
      bytes = await readFile(this.file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    this.load(bytes);
  }

  private load(bytes: Buffer): void {
    if (bytes.length < HEADER_FIXED_BYTES || bytes.readUInt32LE(0) !== MAGIC) {
      throw new Error(`${this.file} is not a vector index file`);
    }
    const version = bytes.readUInt32LE(4);
    const dims = bytes.readUInt32LE(8);
    const count = bytes.readUInt32LE(12);
    const headerLength = bytes.readUInt32LE(16);
    if (version !== FORMAT_VERSION) throw new Error(`${this.file}: unknown format version ${version}`);
    if (dims !== this.dims)
      throw new Error(`${this.file} holds ${dims}-dimension vectors, expected ${this.dims}`);
    const header = JSON.parse(
      bytes.subarray(HEADER_FIXED_BYTES, HEADER_FIXED_BYTES + headerLength).toString('utf8'),
    ) as [string, string, string, string][];
    const start = HEADER_FIXED_BYTES + headerLength;
    if (header.length !== count || bytes.length !== start + count * dims * 4) {
      throw new Error(`${this.file} is truncated or inconsistent`);
    }
    this.ensureCapacity(count);
    // Copy: the Buffer's offset need not be 4-byte aligned for a Float32Array view.
    const vectors = new Float32Array(
      bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + bytes.length),
    );
    this.data.set(vectors, 0);
    header.forEach(([id, providerSlug, indicatorId, contentHash], slot) => {
      this.ids.push(id);
      this.payloads.push({ providerSlug, indicatorId, contentHash });
      this.slotById.set(id, slot);
    });
  }

  private ensureCapacity(count: number): void {
    if (count * this.dims <= this.data.length) return;
    let capacity = this.data.length / this.dims;
    while (capacity < count) capacity *= 2;
    const grown = new Float32Array(capacity * this.dims);
    grown.set(this.data.subarray(0, this.ids.length * this.dims));
    this.data = grown;
  }

  async upsert(points: readonly VectorPoint[]): Promise<void> {
    for (const point of points) {
      if (point.vector.length !== this.dims) {
        throw new Error(`vector of ${point.vector.length} dimensions, the index has ${this.dims}`);
      }
      let slot = this.slotById.get(point.id);
      if (slot === undefined) {
        slot = this.ids.length;
        this.ensureCapacity(slot + 1);
        this.ids.push(point.id);
        this.payloads.push(point.payload);
        this.slotById.set(point.id, slot);
      } else {
        this.payloads[slot] = point.payload;
      }
      this.data.set(point.vector, slot * this.dims);
    }
    if (points.length > 0) this.dirty = true;
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const slot = this.slotById.get(id);
      if (slot === undefined) continue;
      // Swap-remove: the last point moves into the freed slot.
      const last = this.ids.length - 1;
      if (slot !== last) {
        const lastId = this.ids[last] as string;
        this.ids[slot] = lastId;
        this.payloads[slot] = this.payloads[last] as PointPayload;
        this.data.copyWithin(slot * this.dims, last * this.dims, (last + 1) * this.dims);
        this.slotById.set(lastId, slot);
      }
      this.ids.pop();
      this.payloads.pop();
      this.slotById.delete(id);
      this.dirty = true;
    }
  }

  async removeProvider(providerSlug: string): Promise<void> {
    await this.remove(this.ids.filter((_, slot) => this.payloads[slot]?.providerSlug === providerSlug));
  }

  async query(
    vector: Float32Array,
    options: { limit: number; providerSlugs?: readonly string[] },
  ): Promise<VectorHit[]> {
    const allowed = options.providerSlugs ? new Set(options.providerSlugs) : undefined;
    const n = this.ids.length;
    const dims = this.dims;
    const data = this.data;
    const slots: number[] = [];
    const scores = new Float32Array(n);
    for (let slot = 0; slot < n; slot++) {
      if (allowed && !allowed.has((this.payloads[slot] as PointPayload).providerSlug)) continue;
      let dot = 0;
      const base = slot * dims;
      for (let i = 0; i < dims; i++) dot += (data[base + i] as number) * (vector[i] as number);
      scores[slot] = dot;
      slots.push(slot);
    }
    slots.sort((a, b) => (scores[b] as number) - (scores[a] as number));
    return slots.slice(0, options.limit).map((slot) => ({
      id: this.ids[slot] as string,
      score: scores[slot] as number,
      payload: { ...(this.payloads[slot] as PointPayload) },
    }));
  }

  async listProvider(providerSlug: string): Promise<Map<string, PointPayload>> {
    const out = new Map<string, PointPayload>();
    this.payloads.forEach((payload, slot) => {
      if (payload.providerSlug === providerSlug) out.set(this.ids[slot] as string, { ...payload });
    });
    return out;
  }

  async count(providerSlug?: string): Promise<number> {
    if (providerSlug === undefined) return this.ids.length;
    return this.payloads.filter((p) => p.providerSlug === providerSlug).length;
  }

  /** Writes the file when something changed since the last write; writes are serialized. */
  persist(): Promise<void> {
    this.persisting = this.persisting.catch(() => undefined).then(() => this.write());
    return this.persisting;
  }

  private async write(): Promise<void> {
    if (!this.file || !this.dirty) return;
    this.dirty = false;
    const count = this.ids.length;
    const header = Buffer.from(
      JSON.stringify(
        this.ids.map((id, slot) => {
          const p = this.payloads[slot] as PointPayload;
          return [id, p.providerSlug, p.indicatorId, p.contentHash];
        }),
      ),
      'utf8',
    );
    const fixed = Buffer.alloc(HEADER_FIXED_BYTES);
    fixed.writeUInt32LE(MAGIC, 0);
    fixed.writeUInt32LE(FORMAT_VERSION, 4);
    fixed.writeUInt32LE(this.dims, 8);
    fixed.writeUInt32LE(count, 12);
    fixed.writeUInt32LE(header.length, 16);
    // A copy: upserts may run while the file is being written, and the header above is a snapshot too.
    const vectors = Buffer.from(this.data.slice(0, count * this.dims).buffer);
    const temp = `${this.file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      const handle = await open(temp, 'w');
      try {
        await handle.writev([fixed, header, vectors]);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, this.file);
    } catch (e) {
      this.dirty = true;
      await rm(temp, { force: true });
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.persist().catch((e: unknown) =>
      (this.options.log ?? silentLogger).error({ err: e }, '[catalog] vector index not written'),
    );
    await this.lock?.release();
  }
}
