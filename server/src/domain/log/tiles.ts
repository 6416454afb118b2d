import {
  HASH_SIZE,
  leafHash,
  type SubtreeReader,
  subtreeOf,
  TILE_WIDTH,
  tileReader,
} from '@notary/trust/tlog';

const FULL = TILE_WIDTH * HASH_SIZE;

/**
 * Tiles of the log's tree (C2SP tlog-tiles) held in memory while they are read or grown: the right edge of the tree
 * loaded from the database before leaves are appended, or the tiles a proof needs. Each tile is its hashes, 32
 * bytes each, as many as the tree holds (a partial tile is the prefix of the full one it becomes).
 */
export class TileSet {
  private readonly tiles = new Map<string, { bytes: Uint8Array; width: number }>();
  /** Tiles changed since loaded (`level/idx`), for writing back. */
  readonly changed = new Set<string>();

  /** Adds a tile read from storage. */
  load(level: number, idx: number, hashes: Uint8Array): void {
    const bytes = new Uint8Array(FULL);
    bytes.set(hashes.subarray(0, FULL));
    this.tiles.set(`${level}/${idx}`, {
      bytes,
      width: Math.floor(Math.min(hashes.length, FULL) / HASH_SIZE),
    });
  }

  /** The hashes of a tile (empty when unknown). */
  hashes(level: number, idx: number): Uint8Array {
    const tile = this.tiles.get(`${level}/${idx}`);
    return tile ? tile.bytes.subarray(0, tile.width * HASH_SIZE) : new Uint8Array(0);
  }

  /** Every changed tile with its hashes. */
  *dirty(): Generator<{ level: number; idx: number; hashes: Uint8Array }> {
    for (const key of this.changed) {
      const [level, idx] = key.split('/').map(Number) as [number, number];
      yield { level, idx, hashes: this.hashes(level, idx) };
    }
  }

  /**
   * Appends the hash at `position` of `level` (the root of 256^level leaves); a tile that becomes full hands its
   * own root up to the level above (C2SP tlog-tiles: each hash of level L+1 is the root of a full tile of level L).
   * @throws RangeError when `position` is not the next one of its tile (a gap or a rewrite).
   */
  push(level: number, position: number, hash: Uint8Array): void {
    const idx = Math.floor(position / TILE_WIDTH);
    const key = `${level}/${idx}`;
    let tile = this.tiles.get(key);
    if (!tile) {
      tile = { bytes: new Uint8Array(FULL), width: 0 };
      this.tiles.set(key, tile);
    }
    if (tile.width !== position % TILE_WIDTH) {
      throw new RangeError(`tile ${key} holds ${tile.width} hashes; hash ${position} cannot be appended`);
    }
    tile.bytes.set(hash, tile.width * HASH_SIZE);
    tile.width++;
    this.changed.add(key);
    if (tile.width === TILE_WIDTH) {
      const parts: Uint8Array[] = [];
      for (let i = 0; i < TILE_WIDTH; i++)
        parts.push(tile.bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
      this.push(level + 1, idx, subtreeOf(parts));
    }
  }

  /** Appends `entries` as the leaves `size`, `size + 1`... */
  appendEntries(size: number, entries: readonly Uint8Array[]): void {
    entries.forEach((entry, i) => {
      this.push(0, size + i, leafHash(entry));
    });
  }

  /** A `SubtreeReader` over these tiles. */
  reader(): SubtreeReader {
    return tileReader((level, idx) => this.hashes(level, idx));
  }
}

/**
 * The tiles that hold the right edge of a tree of `size` leaves, one per level: those that appending to it, or
 * computing its root, reads (their partial content is what the tree has).
 */
export function edgeTiles(size: number): Array<{ level: number; idx: number }> {
  const out: Array<{ level: number; idx: number }> = [];
  for (
    let level = 0, span = TILE_WIDTH;
    level === 0 || span / TILE_WIDTH <= size;
    level++, span *= TILE_WIDTH
  ) {
    out.push({ level, idx: Math.floor(size / span) });
  }
  return out;
}

export { tilesRead } from '@notary/trust/tlog';
