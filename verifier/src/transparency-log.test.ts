import { type Checkpoint, verifyCheckpoint } from '@notary/trust/signed-note';
import {
  HASH_SIZE,
  leafHash,
  subtreeOf,
  TILE_WIDTH,
  tilePath,
  tileReader,
  tileWidth,
  treeRoot,
} from '@notary/trust/tlog';
import { testLogSigner } from '@notary/trust/tlog.testing';
import { describe, expect, it } from 'vitest';
import { checkOnline } from './transparency-log.ts';

/**
 * The online consistency check against a log served from memory: the receipt's checkpoint (size 100) against a
 * log grown to 300 leaves (across a full level-0 tile), one rewritten below 100, one rolled back, one with a tile
 * missing. Only the tiles the proof reads are fetched.
 */

const ORIGIN = 'notary.test/log';
const log = testLogSigner(ORIGIN);
const key = log.key;

/** The tiles (`tile/...` paths at `size`'s widths) and signed checkpoint of a log of `entries`. */
function served(entries: Uint8Array[]): { note: string; resources: Map<string, Uint8Array | string> } {
  const size = entries.length;
  const levels: Uint8Array[][] = [entries.map(leafHash)];
  for (let level = 0; (levels[level]?.length ?? 0) >= TILE_WIDTH; level++) {
    const below = levels[level] ?? [];
    const above: Uint8Array[] = [];
    for (let i = 0; i + TILE_WIDTH <= below.length; i += TILE_WIDTH)
      above.push(subtreeOf(below.slice(i, i + TILE_WIDTH)));
    levels.push(above);
  }
  const resources = new Map<string, Uint8Array | string>();
  const tiles = new Map<string, Uint8Array>();
  levels.forEach((hashes, level) => {
    for (let index = 0; tileWidth(level, index, size) > 0; index++) {
      const width = tileWidth(level, index, size);
      const bytes = new Uint8Array(width * HASH_SIZE);
      hashes.slice(index * TILE_WIDTH, index * TILE_WIDTH + width).forEach((h, i) => {
        bytes.set(h, i * HASH_SIZE);
      });
      tiles.set(`${level}/${index}`, bytes);
      resources.set(tilePath({ level, index, ...(width < TILE_WIDTH ? { width } : {}) }), bytes);
    }
  });
  const root = treeRoot(
    size,
    tileReader((level, index) => tiles.get(`${level}/${index}`) ?? new Uint8Array(0)),
  );
  const note = log.signCheckpoint(size, root);
  resources.set('checkpoint', note);
  return { note, resources };
}

/** A fetch answering `http://log.test/log/<path>` from `resources`, noting the paths asked. */
function fetchOf(resources: Map<string, Uint8Array | string>, asked: string[] = []): typeof fetch {
  return async (input) => {
    const path = String(input).replace('http://log.test/log/', '');
    asked.push(path);
    const body = resources.get(path);
    return body === undefined ? new Response(null, { status: 404 }) : new Response(body);
  };
}

const entries = Array.from({ length: 300 }, (_, i) => new TextEncoder().encode(`entry ${i}`));

async function receiptAt(size: number): Promise<{ checkpoint: Checkpoint; note: string }> {
  const { note } = served(entries.slice(0, size));
  return { checkpoint: await verifyCheckpoint(note, key), note };
}

describe('the online consistency check of a receipt against its log', () => {
  it('passes when the log grew from the receipt, fetching only the tiles the proof reads', async () => {
    const asked: string[] = [];
    const log = served(entries);
    const report = await checkOnline(
      fetchOf(log.resources, asked),
      'http://log.test/log/',
      key,
      await receiptAt(100),
    );
    expect(report).toMatchObject({ status: 'consistent', servedSize: 300, url: 'http://log.test/log' });
    expect(report.reason).toContain('consistent');
    expect(report.evidence).toBeUndefined();
    expect(asked.sort()).toEqual(['checkpoint', 'tile/0/000', 'tile/0/001.p/44']);
  });

  it('reports a rewritten history and a rollback as forks, with both signed checkpoints', async () => {
    const receipt = await receiptAt(100);
    const rewritten = served(entries.map((e, i) => (i === 42 ? new TextEncoder().encode('forged') : e)));
    const fork = await checkOnline(fetchOf(rewritten.resources), 'http://log.test/log', key, receipt);
    expect(fork).toMatchObject({
      status: 'fork',
      servedSize: 300,
      reasonMessage: { code: 'log.online.fork' },
      evidence: { receipt: receipt.note, served: rewritten.note },
    });
    const sameSize = served(entries.slice(0, 99).concat(new TextEncoder().encode('other')));
    expect((await checkOnline(fetchOf(sameSize.resources), 'http://log.test/log', key, receipt)).status).toBe(
      'fork',
    );
    const rolledBack = served(entries.slice(0, 80));
    const back = await checkOnline(fetchOf(rolledBack.resources), 'http://log.test/log', key, receipt);
    expect(back).toMatchObject({
      status: 'fork',
      servedSize: 80,
      reasonMessage: { code: 'log.online.rolledBack' },
      evidence: { served: rolledBack.note },
    });
  });

  it('is unavailable, not a fork, when a tile is missing or the checkpoint is not signed by the log key', async () => {
    const receipt = await receiptAt(100);
    const log = served(entries);
    log.resources.delete('tile/0/001.p/44');
    expect(await checkOnline(fetchOf(log.resources), 'http://log.test/log', key, receipt)).toMatchObject({
      status: 'unavailable',
      servedSize: 300,
      reasonMessage: { code: 'log.online.unavailable' },
    });
    const unsigned = served(entries);
    unsigned.resources.set('checkpoint', `${ORIGIN}\n300\n${'A'.repeat(43)}=\n\n— ${ORIGIN} AAAA\n`);
    const bad = await checkOnline(fetchOf(unsigned.resources), 'http://log.test/log', key, receipt);
    expect(bad).toMatchObject({ status: 'unavailable', servedSize: null });
    expect(bad.evidence).toBeUndefined();
  });
});
