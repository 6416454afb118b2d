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
/** Points per block when vectors are copied between point-major rows and the dimension-major matrix. */
const TRANSPOSE_BLOCK = 64;

export interface EmbeddedIndexOptions {
  dimensions: number;
  /** Directory of `vectors.bin`; undefined keeps the index in memory only (tests). */
  dir: string | undefined;
  /** Where a failed write at `close()` is reported (default: nowhere). */
  log?: Logger;
}

/**
 * Embedded vector index: exact (brute-force) cosine search over an in-memory matrix of unit vectors, so a
 * dot product is the cosine. The matrix is held dimension-major (one column of `capacity` floats per
 * dimension), so that a query streams through the columns of its non-zero components only: about 0.5 ms
 * for a local-embedder query (a few dozen non-zero components) and about 10 ms for a dense one over
 * 10,000 x 1536 on this machine; enough for catalogs of tens of thousands of definitions (use Qdrant beyond
 * that, or with several catalog instances).
 * Persisted to `<dir>/vectors.bin` on `persist()`, atomically (temp file, fsync, rename), so a crash leaves
 * the previous file whole. One process per directory (lock file `vectors.lock`).
 * File: u32 magic, u32 version, u32 dimensions, u32 count, u32 header length, header JSON
 * (`[[id, providerSlug, indicatorId, contentHash], ...]`), then count x dimensions float32 (little-endian).
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly kind = 'embedded';
  private readonly dims: number;
  private readonly file: string | undefined;
  /** Dimension-major: component `i` of the point in `slot` is at `i * capacity + slot`. */
  private data: Float32Array;
  private capacity = 1024;
  private ids: string[] = [];
  private payloads: PointPayload[] = [];
  private readonly slotById = new Map<string, number>();
  private dirty = false;
  private lock: DirectoryLock | undefined;
  private persisting: Promise<void> = Promise.resolve();

  constructor(private readonly options: EmbeddedIndexOptions) {
    this.dims = options.dimensions;
    this.file = options.dir ? path.join(options.dir, 'vectors.bin') : undefined;
    this.data = new Float32Array(this.dims * this.capacity);
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
    this.transpose(vectors, count, 'in');
    header.forEach(([id, providerSlug, indicatorId, contentHash], slot) => {
      this.ids.push(id);
      this.payloads.push({ providerSlug, indicatorId, contentHash });
      this.slotById.set(id, slot);
    });
  }

  private ensureCapacity(count: number): void {
    if (count <= this.capacity) return;
    let capacity = this.capacity;
    while (capacity < count) capacity *= 2;
    const grown = new Float32Array(capacity * this.dims);
    const used = this.ids.length;
    for (let i = 0; i < this.dims; i++) {
      const from = i * this.capacity;
      grown.set(this.data.subarray(from, from + used), i * capacity);
    }
    this.data = grown;
    this.capacity = capacity;
  }

  /**
   * Copies `rows` (point-major, `count` x `dims`: the file's layout) into the slots 0..count-1 (`in`), or
   * those slots out into `rows` (`out`). By blocks of points, so that each column is walked a few cache
   * lines at a time instead of one float per point.
   */
  private transpose(rows: Float32Array, count: number, direction: 'in' | 'out'): void {
    const { data, capacity, dims } = this;
    for (let first = 0; first < count; first += TRANSPOSE_BLOCK) {
      const end = Math.min(count, first + TRANSPOSE_BLOCK);
      for (let i = 0; i < dims; i++) {
        const column = i * capacity;
        if (direction === 'in') {
          for (let slot = first; slot < end; slot++) data[column + slot] = rows[slot * dims + i] as number;
        } else {
          for (let slot = first; slot < end; slot++) rows[slot * dims + i] = data[column + slot] as number;
        }
      }
    }
  }

  /** Stores `vectors[k]` as the vector of `slots[k]`, a block of points per walk of the columns. */
  private setVectors(slots: readonly number[], vectors: readonly Float32Array[]): void {
    const { data, capacity, dims } = this;
    for (let first = 0; first < slots.length; first += TRANSPOSE_BLOCK) {
      const end = Math.min(slots.length, first + TRANSPOSE_BLOCK);
      for (let i = 0; i < dims; i++) {
        const column = i * capacity;
        for (let k = first; k < end; k++) {
          data[column + (slots[k] as number)] = (vectors[k] as Float32Array)[i] as number;
        }
      }
    }
  }

  async upsert(points: readonly VectorPoint[]): Promise<void> {
    // Vectors are copied in once per batch; the points before a wrong one are stored, as one by one.
    const slots: number[] = [];
    const vectors: Float32Array[] = [];
    for (const point of points) {
      if (point.vector.length !== this.dims) {
        this.setVectors(slots, vectors);
        if (slots.length > 0) this.dirty = true;
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
      slots.push(slot);
      vectors.push(point.vector);
    }
    this.setVectors(slots, vectors);
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
        const { data, capacity, dims } = this;
        for (let i = 0; i < dims; i++) data[i * capacity + slot] = data[i * capacity + last] as number;
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

  /**
   * Exact cosine top-`limit`, best first; equal scores keep slot order (as a stable sort would).
   * Only the columns of the query's non-zero components are visited (the local embedder's vectors hold a
   * few dozen of 1,536): zero terms add nothing, and each point's terms are added in ascending dimension
   * order into a float64 sum starting at 0, so the scores are those of a plain dot-product loop to the bit.
   * The top `limit` are kept by insertion into a small sorted array instead of sorting every slot.
   */
  async query(
    vector: Float32Array,
    options: { limit: number; providerSlugs?: readonly string[] },
  ): Promise<VectorHit[]> {
    if (vector.length !== this.dims) {
      throw new Error(`query vector of ${vector.length} dimensions, the index has ${this.dims}`);
    }
    const limit = Math.max(0, Math.floor(options.limit));
    const n = this.ids.length;
    if (limit === 0 || n === 0) return [];
    const { data, capacity, dims } = this;
    const columns: number[] = [];
    const weights: number[] = [];
    for (let i = 0; i < dims; i++) {
      const weight = vector[i] as number;
      if (weight === 0) continue;
      columns.push(i * capacity);
      weights.push(weight);
    }
    const sums = new Float64Array(n);
    let j = 0;
    // Four columns per pass over the sums (a dense query makes 384 passes instead of 1,536); the four terms
    // are still added one after the other, in dimension order.
    for (; j + 4 <= columns.length; j += 4) {
      const [c0, c1, c2, c3] = columns.slice(j, j + 4) as [number, number, number, number];
      const [w0, w1, w2, w3] = weights.slice(j, j + 4) as [number, number, number, number];
      for (let slot = 0; slot < n; slot++) {
        let sum = sums[slot] as number;
        sum += (data[c0 + slot] as number) * w0;
        sum += (data[c1 + slot] as number) * w1;
        sum += (data[c2 + slot] as number) * w2;
        sum += (data[c3 + slot] as number) * w3;
        sums[slot] = sum;
      }
    }
    for (; j < columns.length; j++) {
      const column = columns[j] as number;
      const weight = weights[j] as number;
      for (let slot = 0; slot < n; slot++) {
        sums[slot] = (sums[slot] as number) + (data[column + slot] as number) * weight;
      }
    }
    const allowed = options.providerSlugs ? new Set(options.providerSlugs) : undefined;
    // Best first: topScores descending, topSlots their slots; `size` of them filled.
    const topSlots = new Int32Array(limit);
    const topScores = new Float32Array(limit);
    let size = 0;
    for (let slot = 0; slot < n; slot++) {
      // Compared as reported: rounded to float32.
      const score = Math.fround(sums[slot] as number);
      // A later slot with an equal score ranks after the kept ones, so it must beat the last strictly.
      if (size === limit && !(score > (topScores[size - 1] as number))) continue;
      if (allowed && !allowed.has((this.payloads[slot] as PointPayload).providerSlug)) continue;
      let k = size < limit ? size++ : size - 1;
      while (k > 0 && score > (topScores[k - 1] as number)) {
        topScores[k] = topScores[k - 1] as number;
        topSlots[k] = topSlots[k - 1] as number;
        k--;
      }
      topScores[k] = score;
      topSlots[k] = slot;
    }
    const hits: VectorHit[] = [];
    for (let k = 0; k < size; k++) {
      const slot = topSlots[k] as number;
      hits.push({
        id: this.ids[slot] as string,
        score: topScores[k] as number,
        payload: { ...(this.payloads[slot] as PointPayload) },
      });
    }
    return hits;
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
    // Point-major as the file wants it, and a copy: upserts may run while the file is being written (the
    // header above is a snapshot too).
    const rows = new Float32Array(count * this.dims);
    this.transpose(rows, count, 'out');
    const vectors = Buffer.from(rows.buffer);
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
      (this.options.log ?? silentLogger).error({ err: e }, 'vector index not written'),
    );
    await this.lock?.release();
  }
}
