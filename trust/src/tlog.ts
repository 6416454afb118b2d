/**
 * The Merkle tree of a transparency log as RFC 9162 (section 2.1, the same tree as RFC 6962) defines it: leaf and
 * node hashing with the 0x00 and 0x01 domain prefixes, the root of any size, inclusion and consistency proofs
 * (made and checked), and the tile layout of C2SP tlog-tiles (paths, and hashes read back from tiles). Synchronous
 * SHA-256 (`@noble/hashes`), so that a proof over millions of leaves costs microseconds; browser-safe.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes } from './bytes.ts';

/** Bytes of a SHA-256 tree hash. */
export const HASH_SIZE = 32;
/** Height of a tile (C2SP tlog-tiles): a tile holds 2^8 = 256 hashes of one level. */
export const TILE_HEIGHT = 8;
/** Hashes in a full tile. */
export const TILE_WIDTH = 256;

/** MTH of the empty tree: SHA-256 of nothing (RFC 9162, 2.1.1). */
export const EMPTY_ROOT: Uint8Array = sha256(new Uint8Array(0));

/** The leaf hash of an entry: SHA-256(0x00 || entry) (RFC 9162, 2.1.1). */
export function leafHash(entry: Uint8Array): Uint8Array {
  const data = new Uint8Array(entry.length + 1);
  data.set(entry, 1);
  return sha256(data);
}

/** An interior node's hash: SHA-256(0x01 || left || right) (RFC 9162, 2.1.1). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  const data = new Uint8Array(1 + 2 * HASH_SIZE);
  data[0] = 1;
  data.set(left, 1);
  data.set(right, 1 + HASH_SIZE);
  return sha256(data);
}

/**
 * The hash of a complete, aligned subtree: height `height` (0: a leaf hash), the `index`-th of its height, so it covers
 * leaves `[index * 2^height, (index + 1) * 2^height)`. Only asked for subtrees complete in the tree being read.
 * @throws whatever the store throws when it does not hold it.
 */
export type SubtreeReader = (height: number, index: number) => Uint8Array;

/** The largest power of two strictly below `n` (n >= 2), as RFC 9162's `k`. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && 2 ** Math.round(Math.log2(n)) === n;
}

/** MTH(D[lo:hi]) from complete subtrees; the ranges RFC 9162 decomposes into are always aligned. */
function rangeHash(lo: number, hi: number, read: SubtreeReader): Uint8Array {
  const n = hi - lo;
  if (n === 0) return EMPTY_ROOT;
  if (isPowerOfTwo(n) && lo % n === 0) {
    const height = Math.round(Math.log2(n));
    return read(height, lo / n);
  }
  const k = splitPoint(n);
  return nodeHash(rangeHash(lo, lo + k, read), rangeHash(lo + k, hi, read));
}

/** The root (MTH) of the tree of the first `size` leaves (RFC 9162, 2.1.1). */
export function treeRoot(size: number, read: SubtreeReader): Uint8Array {
  return rangeHash(0, size, read);
}

/**
 * The inclusion proof of leaf `index` in the tree of `size` leaves, bottom-up (RFC 9162, 2.1.3.1 PATH).
 * @throws RangeError when `index` is not below `size`.
 */
export function inclusionProof(index: number, size: number, read: SubtreeReader): Uint8Array[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const path: Uint8Array[] = [];
  const walk = (m: number, lo: number, hi: number): void => {
    const n = hi - lo;
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, lo, lo + k);
      path.push(rangeHash(lo + k, hi, read));
    } else {
      walk(m - k, lo + k, hi);
      path.push(rangeHash(lo, lo + k, read));
    }
  };
  walk(index, 0, size);
  return path;
}

/**
 * The consistency proof between the trees of `oldSize` and `newSize` leaves (RFC 9162, 2.1.4.1 PROOF); empty when
 * `oldSize` is 0 or equals `newSize`.
 * @throws RangeError when `oldSize` > `newSize`.
 */
export function consistencyProof(oldSize: number, newSize: number, read: SubtreeReader): Uint8Array[] {
  if (!(oldSize >= 0 && oldSize <= newSize)) throw new RangeError(`no proof from ${oldSize} to ${newSize}`);
  const proof: Uint8Array[] = [];
  if (oldSize === 0) return proof;
  const sub = (m: number, lo: number, hi: number, whole: boolean): void => {
    const n = hi - lo;
    if (m === n) {
      if (!whole) proof.push(rangeHash(lo, hi, read));
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, lo, lo + k, whole);
      proof.push(rangeHash(lo + k, hi, read));
    } else {
      sub(m - k, lo + k, hi, false);
      proof.push(rangeHash(lo, lo + k, read));
    }
  };
  sub(oldSize, 0, newSize, true);
  return proof;
}

const odd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/**
 * Whether `proof` shows the leaf hash `leaf` at `index` in the tree of `size` leaves whose root is `root`
 * (RFC 9162, 2.1.3.2). Never throws.
 */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size))
    return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (p.length !== HASH_SIZE || sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(r, root);
}

/**
 * Whether `proof` shows that the tree of `oldSize` leaves with root `oldRoot` is a prefix of the tree of `newSize`
 * leaves with root `newRoot` (RFC 9162, 2.1.4.2). An empty old tree is a prefix of anything. Never throws.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  proof: readonly Uint8Array[],
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
): boolean {
  if (!(Number.isSafeInteger(oldSize) && Number.isSafeInteger(newSize) && oldSize >= 0)) return false;
  if (oldSize > newSize) return false;
  if (oldSize === 0) return proof.length === 0;
  if (oldSize === newSize) return proof.length === 0 && equalBytes(oldRoot, newRoot);
  if (proof.some((p) => p.length !== HASH_SIZE)) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(fr, oldRoot) && equalBytes(sr, newRoot);
}

/** The hash of a complete subtree over `hashes` (a power-of-two count of sibling hashes of one height). */
export function subtreeOf(hashes: readonly Uint8Array[]): Uint8Array {
  let level = [...hashes];
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(nodeHash(level[i] as Uint8Array, level[i + 1] as Uint8Array));
    level = next;
  }
  const [only] = level;
  if (!only) throw new RangeError('no hash to combine');
  return only;
}

/**
 * A `SubtreeReader` over C2SP tlog-tiles: `tile(level, index)` returns the stored bytes of that tile (full, or the
 * partial one as far as it goes). A subtree whose height is a multiple of 8 is one stored hash; any other is hashed
 * from at most 128 hashes of one tile.
 * @throws RangeError when a tile does not hold a hash asked for.
 */
export function tileReader(tile: (level: number, index: number) => Uint8Array): SubtreeReader {
  return (height, index) => {
    const level = Math.floor(height / TILE_HEIGHT);
    const below = height % TILE_HEIGHT;
    const count = 2 ** below;
    const first = index * count;
    const tileIndex = Math.floor(first / TILE_WIDTH);
    const bytes = tile(level, tileIndex);
    const start = (first % TILE_WIDTH) * HASH_SIZE;
    if (bytes.length < start + count * HASH_SIZE) {
      throw new RangeError(`tile ${level}/${tileIndex} does not hold hash ${height}/${index}`);
    }
    const hashes: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      hashes.push(bytes.subarray(start + i * HASH_SIZE, start + (i + 1) * HASH_SIZE));
    }
    return subtreeOf(hashes);
  };
}

/**
 * The tiles (C2SP tlog-tiles) a computation over the tree reads, as `{ level, idx }`: `compute` is run once against
 * a reader that notes each tile asked for and answers zero hashes (the shape of a proof depends only on sizes and
 * indexes, never on hash values). Fetch or load those, then run the computation again over them.
 */
export function tilesRead(compute: (read: SubtreeReader) => unknown): Array<{ level: number; idx: number }> {
  const seen = new Map<string, { level: number; idx: number }>();
  const zero = new Uint8Array(TILE_WIDTH * HASH_SIZE);
  compute(
    tileReader((level, idx) => {
      seen.set(`${level}/${idx}`, { level, idx });
      return zero;
    }),
  );
  return [...seen.values()];
}

/** `<N>` of a tile path: zero-padded 3-digit elements, all but the last prefixed `x` (`1234067` → `x001/x234/067`). */
export function tileIndexPath(index: number): string {
  let digits = String(index);
  while (digits.length % 3 !== 0) digits = `0${digits}`;
  const parts = digits.match(/.{3}/g) ?? ['000'];
  return parts.map((p, i) => (i < parts.length - 1 ? `x${p}` : p)).join('/');
}

/** Which tile a path names: `level` a number or `entries` (an entry bundle); `width` only for a partial one. */
export interface TileName {
  level: number | 'entries';
  index: number;
  width?: number;
}

/** The path of a tile below the log's prefix (C2SP tlog-tiles): `tile/<L>/<N>[.p/<W>]`, `tile/entries/<N>[.p/<W>]`. */
export function tilePath(name: TileName): string {
  const partial = name.width !== undefined && name.width < TILE_WIDTH ? `.p/${name.width}` : '';
  return `tile/${name.level}/${tileIndexPath(name.index)}${partial}`;
}

/**
 * Parses a tile path below the log's prefix (`tile/...` as `tilePath` writes it).
 * @returns undefined for anything that is not a canonical tile path (leading zeroes, width 0 or 256, level > 63).
 */
export function parseTilePath(path: string): TileName | undefined {
  const m = /^tile\/(entries|0|[1-9]\d?)\/((?:x\d{3}\/)*\d{3})(?:\.p\/([1-9]\d{0,2}))?$/.exec(path);
  if (!m) return undefined;
  const level = m[1] === 'entries' ? 'entries' : Number(m[1]);
  if (typeof level === 'number' && level > 63) return undefined;
  const elements = (m[2] as string).split('/');
  if (elements.length > 1 && elements[0] === 'x000') return undefined;
  const index = Number(elements.map((e) => e.replace('x', '')).join(''));
  if (!Number.isSafeInteger(index)) return undefined;
  const width = m[3] === undefined ? undefined : Number(m[3]);
  if (width !== undefined && width >= TILE_WIDTH) return undefined;
  return { level, index, ...(width === undefined ? {} : { width }) };
}

/**
 * The width of tile `index` at `level` in a tree of `size` leaves: 256 for a full tile, 1..255 for the partial one,
 * 0 when the tree has no such tile (C2SP tlog-tiles, Partial Tiles). Entry bundles count as level 0.
 */
export function tileWidth(level: number, index: number, size: number): number {
  const hashes = Math.floor(size / TILE_WIDTH ** level);
  return Math.max(0, Math.min(TILE_WIDTH, hashes - index * TILE_WIDTH));
}

/** Splits an entry bundle (big-endian uint16 length-prefixed entries) into its entries. @throws RangeError when cut. */
export function parseEntryBundle(bundle: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new RangeError('entry bundle cut in a length');
    const length = ((bundle[at] as number) << 8) | (bundle[at + 1] as number);
    at += 2;
    if (at + length > bundle.length) throw new RangeError('entry bundle cut in an entry');
    out.push(bundle.subarray(at, at + length));
    at += length;
  }
  return out;
}

/** An entry bundle of `entries` (each at most 65,535 bytes). @throws RangeError for a longer entry. */
export function entryBundle(entries: readonly Uint8Array[]): Uint8Array {
  const total = entries.reduce((n, e) => n + 2 + e.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const e of entries) {
    if (e.length > 0xffff) throw new RangeError('a log entry is longer than 65,535 bytes');
    out[at] = e.length >> 8;
    out[at + 1] = e.length & 0xff;
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}
