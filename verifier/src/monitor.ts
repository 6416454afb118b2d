import { fromBase64, toBase64, toHex } from '@notary/trust/bytes';
import { type Checkpoint, parseVerifierKey, verifyCheckpoint } from '@notary/trust/signed-note';
import {
  HASH_SIZE,
  leafHash,
  parseEntryBundle,
  subtreeOf,
  TILE_WIDTH,
  tilePath,
  tileReader,
  tileWidth,
  treeRoot,
} from '@notary/trust/tlog';
import { decodeLeaf, type NotaryLeaf } from '@notary/trust/tlog-leaf';
import { errorMessage } from './error-message.ts';
import { indentNote } from './transparency-log.ts';

/**
 * `notary-verify monitor`: follows a notary's transparency log from its static resources (C2SP tlog-tiles) as any
 * auditor can, trusting nothing the log says about itself but what its key signed:
 * - each source's checkpoint is verified against the log key given;
 * - every tile and entry bundle is fetched; each entry must hash to its level-0 tile hash, each full tile to its
 *   hash one level up, and the tiles must give the checkpoint's root;
 * - the checkpoint a previous run saw (`previous`) must be a prefix of the tree now served (its root recomputed
 *   from the new tiles): a leaf changed, removed or inserted below it, or a rollback, is reported with both
 *   signed checkpoints;
 * - two sources (two mirrors, or the log seen from two places) must show one history: two checkpoints of one size
 *   with different roots, or a smaller one that is not a prefix of the larger, is a fork, reported with both;
 * - the entries under a serial prefix are listed, so a cartório sees everything recorded in its name.
 */

/** A checkpoint as the monitor keeps it between runs and shows it as evidence. */
export interface SeenCheckpoint {
  url: string;
  size: number;
  /** Base64 root hash. */
  root: string;
  /** The signed note as served. */
  note: string;
}

/** Two signed checkpoints that cannot both be true of one append-only log. */
export interface Fork {
  reason: string;
  a: SeenCheckpoint;
  b: SeenCheckpoint;
}

export interface MonitorReport {
  ok: boolean;
  sources: Array<{ url: string; checkpoint: SeenCheckpoint | null; problems: string[] }>;
  forks: Fork[];
  /** Entries whose serial starts with the prefix asked for (`--prefix`), with their leaf index. */
  entries: Array<NotaryLeaf & { index: number }>;
  /** The newest checkpoint that verified, to keep for the next run. */
  latest: SeenCheckpoint | null;
}

export interface MonitorInput {
  /** URL prefixes of the log (`https://notary.example/log`), one or more sources of the same log. */
  urls: string[];
  /** The log's verifier key (C2SP signed-note), obtained apart from the log. */
  logKey: string;
  /** The checkpoint a previous run saw (its `latest`). */
  previous?: SeenCheckpoint;
  /** List the entries whose serial starts with this (case-insensitive). */
  serialPrefix?: string;
  fetch?: typeof fetch;
}

/** What one source serves, read and checked. */
interface Audited {
  seen: SeenCheckpoint;
  checkpoint: Checkpoint;
  /** Tiles by `level/index`, what `tileReader` reads. */
  tiles: Map<string, Uint8Array>;
  entries: Uint8Array[];
}

async function fetchBytes(f: typeof fetch, url: string): Promise<Uint8Array> {
  const res = await f(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Fetches and checks one source (see the module comment); problems go to `problems`. */
async function audit(
  f: typeof fetch,
  url: string,
  key: ReturnType<typeof parseVerifierKey>,
  problems: string[],
): Promise<Audited | undefined> {
  const base = url.replace(/\/+$/, '');
  const note = new TextDecoder().decode(await fetchBytes(f, `${base}/checkpoint`));
  let checkpoint: Checkpoint;
  try {
    checkpoint = await verifyCheckpoint(note, key);
  } catch (e) {
    problems.push(`checkpoint: ${errorMessage(e)}`);
    return undefined;
  }
  const size = checkpoint.size;
  const seen = { url: base, size, root: toBase64(checkpoint.root), note };
  const tiles = new Map<string, Uint8Array>();
  for (let level = 0; TILE_WIDTH ** level <= Math.max(size, 1); level++) {
    for (let index = 0; tileWidth(level, index, size) > 0; index++) {
      const width = tileWidth(level, index, size);
      const bytes = await fetchBytes(f, `${base}/${tilePath({ level, index, width })}`);
      if (bytes.length !== width * HASH_SIZE) problems.push(`tile ${level}/${index}: ${bytes.length} bytes`);
      tiles.set(`${level}/${index}`, bytes);
    }
  }
  // Each full tile is one hash of the level above.
  for (const [name, bytes] of tiles) {
    if (bytes.length !== TILE_WIDTH * HASH_SIZE) continue;
    const [level, index] = name.split('/').map(Number) as [number, number];
    const above = tiles.get(`${level + 1}/${Math.floor(index / TILE_WIDTH)}`);
    const at = (index % TILE_WIDTH) * HASH_SIZE;
    const parts = Array.from({ length: TILE_WIDTH }, (_, i) =>
      bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE),
    );
    if (!above || toHex(above.subarray(at, at + HASH_SIZE)) !== toHex(subtreeOf(parts))) {
      problems.push(`tile ${level}/${index} does not hash to its hash at level ${level + 1}`);
    }
  }
  const entries: Uint8Array[] = [];
  for (let index = 0; tileWidth(0, index, size) > 0; index++) {
    const width = tileWidth(0, index, size);
    const bundle = parseEntryBundle(
      await fetchBytes(f, `${base}/${tilePath({ level: 'entries', index, width })}`),
    );
    const hashes = tiles.get(`0/${index}`) ?? new Uint8Array(0);
    if (bundle.length !== width)
      problems.push(`entry bundle ${index}: ${bundle.length} entries, ${width} expected`);
    bundle.forEach((entry, i) => {
      if (toHex(leafHash(entry)) !== toHex(hashes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE))) {
        problems.push(`entry ${index * TILE_WIDTH + i} does not hash to its level-0 tile hash`);
      }
    });
    entries.push(...bundle);
  }
  const root = rootAt(tiles, size);
  if (root === undefined || toHex(root) !== toHex(checkpoint.root)) {
    problems.push(`the tiles do not give the checkpoint's root at size ${size}`);
  }
  return { seen, checkpoint, tiles, entries };
}

/** The root of the first `size` leaves from tiles of a tree at least that large; undefined when a tile is missing. */
function rootAt(tiles: Map<string, Uint8Array>, size: number): Uint8Array | undefined {
  try {
    return treeRoot(
      size,
      tileReader((level, index) => tiles.get(`${level}/${index}`) ?? new Uint8Array(0)),
    );
  } catch {
    return undefined;
  }
}

/** Whether the smaller checkpoint is a prefix of the larger one's tree (read from the larger one's tiles). */
function consistent(small: SeenCheckpoint, large: Audited): boolean {
  if (small.size > large.seen.size) return false;
  const root = rootAt(large.tiles, small.size);
  return root !== undefined && toBase64(root) === small.root;
}

/**
 * Runs the monitor (see the module comment).
 * @throws TypeError for a bad log key; a source that cannot be fetched is a problem of its own, not a throw.
 */
export async function monitorLog(input: MonitorInput): Promise<MonitorReport> {
  const key = parseVerifierKey(input.logKey);
  const f = input.fetch ?? globalThis.fetch.bind(globalThis);
  const sources: MonitorReport['sources'] = [];
  const audited: Audited[] = [];
  for (const url of input.urls) {
    const problems: string[] = [];
    let result: Audited | undefined;
    try {
      result = await audit(f, url, key, problems);
    } catch (e) {
      problems.push(errorMessage(e));
    }
    if (result) audited.push(result);
    sources.push({ url, checkpoint: result?.seen ?? null, problems });
  }
  const forks: Fork[] = [];
  for (const [i, a] of audited.entries()) {
    for (const b of audited.slice(i + 1)) {
      const [small, large] = a.seen.size <= b.seen.size ? [a, b] : [b, a];
      if (!consistent(small.seen, large)) {
        forks.push({
          reason:
            small.seen.size === large.seen.size
              ? `two checkpoints of size ${small.seen.size} with different roots`
              : `the checkpoint of size ${small.seen.size} is not a prefix of the one of size ${large.seen.size}`,
          a: small.seen,
          b: large.seen,
        });
      }
    }
  }
  const previous = input.previous;
  if (previous) {
    for (const a of audited) {
      if (!consistent(previous, a)) {
        forks.push({
          reason:
            previous.size > a.seen.size
              ? `rolled back: ${a.seen.url} serves size ${a.seen.size} after size ${previous.size} was seen`
              : `the checkpoint seen before (size ${previous.size}) is not a prefix of the one served now (size ${a.seen.size})`,
          a: previous,
          b: a.seen,
        });
      }
    }
  }
  const newest = [...audited].sort((x, y) => y.seen.size - x.seen.size)[0];
  const prefix = input.serialPrefix?.toUpperCase();
  const entries: MonitorReport['entries'] = [];
  if (prefix !== undefined && newest) {
    newest.entries.forEach((bytes, index) => {
      const leaf = decodeLeaf(bytes);
      if (leaf?.serial.toUpperCase().startsWith(prefix)) entries.push({ ...leaf, index });
    });
  }
  return {
    ok: forks.length === 0 && sources.every((s) => s.problems.length === 0),
    sources,
    forks,
    entries,
    latest: newest?.seen ?? null,
  };
}

/** The report as text for a terminal. */
export function formatMonitorReport(report: MonitorReport): string {
  const lines: string[] = [];
  for (const s of report.sources) {
    lines.push(
      s.checkpoint
        ? `${s.url}: size ${s.checkpoint.size}, root ${toHex(fromBase64(s.checkpoint.root))}${s.problems.length ? '' : ', tiles and entries match'}`
        : `${s.url}: unreadable`,
    );
    for (const p of s.problems) lines.push(`  PROBLEM: ${p}`);
  }
  for (const fork of report.forks) {
    lines.push(
      `FORK: ${fork.reason}`,
      `  from ${fork.a.url}:`,
      ...indentNote(fork.a.note),
      `  from ${fork.b.url}:`,
      ...indentNote(fork.b.note),
    );
  }
  for (const e of report.entries) lines.push(`entry ${e.index}: ${e.serial} ${e.sha256} ${e.time}`);
  lines.push(report.ok ? 'The log is consistent.' : 'The log is NOT consistent: keep the evidence above.');
  return `${lines.join('\n')}\n`;
}
