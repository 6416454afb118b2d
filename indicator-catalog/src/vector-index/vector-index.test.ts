import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/bench/lib';
import { type QdrantServer, startQdrantServer } from '../../test-support/qdrant-server.testing';
import { LocalEmbedder } from '../embeddings/local';
import { EmbeddedVectorIndex } from './embedded';
import { pointId } from './point-id';
import type { VectorIndex, VectorPoint } from './port';
import { QdrantVectorIndex } from './qdrant';

const DIMS = 1536;
const embedder = new LocalEmbedder(DIMS);

const point = (slug: string, id: string, text: string, hash = 'h1'): VectorPoint => ({
  id: pointId(slug, id),
  vector: embedder.embedOne(text),
  payload: { providerSlug: slug, indicatorId: id, contentHash: hash },
});

const TEXTS: [string, string][] = [
  ['POP', 'População residente estimada'],
  ['MORT', 'Taxa de mortalidade infantil'],
  ['PIB', 'Produto Interno Bruto municipal'],
  ['ESC', 'Número de escolas de educação básica'],
  ['AGUA', 'População atendida com abastecimento de água'],
];

interface Backend {
  name: string;
  open(): Promise<VectorIndex>;
}

let qdrant: QdrantServer;
let tempDir: string;
let collectionSeq = 0;

beforeAll(async () => {
  qdrant = await startQdrantServer({ apiKey: 'qdrant-test-key' });
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'vector-index-'));
});
afterAll(async () => {
  await qdrant.close();
  await rm(tempDir, { recursive: true, force: true });
});

const backends: Backend[] = [
  {
    name: 'embedded',
    open: async () => {
      const index = new EmbeddedVectorIndex({
        dimensions: DIMS,
        dir: path.join(tempDir, `e${collectionSeq++}`),
      });
      await index.init();
      return index;
    },
  },
  {
    name: 'qdrant (real client, loopback Qdrant API)',
    open: async () => {
      const index = new QdrantVectorIndex({
        url: qdrant.url,
        apiKey: qdrant.apiKey,
        collection: `c${collectionSeq++}`,
        dimensions: DIMS,
      });
      await index.init();
      return index;
    },
  },
];

describe.each(backends)('vector index: $name', (backend) => {
  it('upserts, queries nearest first, filters by provider, lists, counts, removes', async () => {
    const index = await backend.open();
    await index.upsert(TEXTS.map(([id, text]) => point('a', id, text)));
    await index.upsert([point('b', 'POP', 'População residente estimada', 'hb')]);
    expect(await index.count()).toBe(6);
    expect(await index.count('a')).toBe(5);

    const hits = await index.query(embedder.embedOne('mortalidade de crianças'), { limit: 3 });
    expect(hits[0]?.payload).toEqual({ providerSlug: 'a', indicatorId: 'MORT', contentHash: 'h1' });
    expect(hits[0]?.id).toBe(pointId('a', 'MORT'));
    expect(hits).toHaveLength(3);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);

    const onlyB = await index.query(embedder.embedOne('população'), { limit: 10, providerSlugs: ['b'] });
    expect(onlyB.map((h) => h.payload.providerSlug)).toEqual(['b']);

    const listed = await index.listProvider('a');
    expect([...listed.keys()].sort()).toEqual(TEXTS.map(([id]) => pointId('a', id)).sort());
    expect(listed.get(pointId('a', 'PIB'))?.indicatorId).toBe('PIB');

    // Upsert of an existing id replaces vector and payload.
    await index.upsert([point('a', 'PIB', 'Taxa de mortalidade infantil', 'h2')]);
    expect(await index.count('a')).toBe(5);
    expect((await index.listProvider('a')).get(pointId('a', 'PIB'))?.contentHash).toBe('h2');

    await index.remove([pointId('a', 'PIB'), pointId('a', 'unknown')]);
    expect(await index.count('a')).toBe(4);
    await index.removeProvider('a');
    expect(await index.count()).toBe(1);
    expect(await index.count('a')).toBe(0);
    await index.close();
  });

  it('lists providers with more points than one scroll page, and rejects other dimensions', async () => {
    const index = await backend.open();
    const many = Array.from({ length: 1200 }, (_, i) => point('big', `I${i}`, `indicador ${i} de teste`));
    await index.upsert(many);
    expect((await index.listProvider('big')).size).toBe(1200);
    await expect(
      index.upsert([
        {
          id: pointId('x', 'y'),
          vector: new Float32Array(3),
          payload: { providerSlug: 'x', indicatorId: 'y', contentHash: 'z' },
        },
      ]),
    ).rejects.toThrow();
    await index.close();
  });
});

/** The reference: a plain dot-product loop over every allowed point and a stable sort, best first. */
function bruteForce(
  points: ReadonlyMap<string, VectorPoint>,
  order: readonly string[],
  query: Float32Array,
  limit: number,
  providerSlugs?: readonly string[],
): [string, number][] {
  const scored = order
    .map((id) => points.get(id) as VectorPoint)
    .filter((p) => !providerSlugs || providerSlugs.includes(p.payload.providerSlug))
    .map((p): [string, number] => {
      let dot = 0;
      for (let i = 0; i < query.length; i++) dot += (p.vector[i] as number) * (query[i] as number);
      return [p.id, Math.fround(dot)];
    });
  return scored.sort((a, b) => b[1] - a[1]).slice(0, limit);
}

describe('embedded index: exact search', () => {
  it('answers what a plain dot-product loop answers (sparse and dense queries, after growth, removals, replacements and a reopen)', async () => {
    const dir = path.join(tempDir, 'exact');
    const index = new EmbeddedVectorIndex({ dimensions: DIMS, dir });
    await index.init();
    // Past the initial capacity (1,024 points), so that the matrix is regrown once.
    const points = new Map<string, VectorPoint>();
    let order: string[] = [];
    const put = (p: VectorPoint) => {
      if (!points.has(p.id)) order.push(p.id);
      points.set(p.id, p);
    };
    for (let i = 0; i < 2100; i++) {
      put(point(i % 3 === 0 ? 'b' : 'a', `I${i}`, `indicador ${i % 700} de ${TEXTS[i % 5]?.[1]}`));
    }
    await index.upsert([...points.values()]);
    // Swap-removal moves the last points into the freed slots: the reference follows the same slot order.
    const removed = ['I5', 'I6', 'I1000', 'I2099'].map((id, k) => pointId(k % 2 === 0 ? 'a' : 'b', id));
    await index.remove(removed.filter((id) => points.has(id)));
    for (const id of removed) {
      if (!points.has(id)) continue;
      const slot = order.indexOf(id);
      const last = order.pop() as string;
      if (last !== id) order[slot] = last;
      points.delete(id);
    }
    const replaced = point('a', 'I1', 'Taxa de mortalidade infantil', 'h2');
    await index.upsert([replaced]);
    put(replaced);

    let dense = new Float32Array(DIMS).map((_, i) => Math.sin(i * 12.9898) * 0.5);
    const norm = Math.hypot(...dense);
    dense = dense.map((x) => x / norm);
    const queries = [
      embedder.embedOne('mortalidade de crianças'),
      embedder.embedOne('indicador 42'),
      dense,
      new Float32Array(DIMS),
    ];
    const check = async (target: EmbeddedVectorIndex) => {
      for (const q of queries) {
        for (const [limit, slugs] of [
          [10, undefined],
          [50, ['b']],
          [3000, undefined],
        ] as const) {
          const hits = await target.query(q, { limit, ...(slugs ? { providerSlugs: slugs } : {}) });
          expect(hits.map((h) => [h.id, h.score])).toEqual(bruteForce(points, order, q, limit, slugs));
        }
      }
    };
    await check(index);
    await index.close();

    // The file holds the same points in the same slots.
    const reopened = new EmbeddedVectorIndex({ dimensions: DIMS, dir });
    await reopened.init();
    expect(await reopened.count()).toBe(points.size);
    await check(reopened);
    expect(await reopened.query(dense, { limit: 0 })).toEqual([]);
    await expect(reopened.query(new Float32Array(3), { limit: 1 })).rejects.toThrow(/dimensions/);
    order = [];
    await reopened.close();
  });
});

describe('embedded index persistence', () => {
  it('survives a reopen (atomic file write) and refuses a second process on the same directory', async () => {
    const dir = path.join(tempDir, 'persist');
    const first = new EmbeddedVectorIndex({ dimensions: DIMS, dir });
    await first.init();
    await first.upsert(TEXTS.map(([id, text]) => point('a', id, text)));
    await first.remove([pointId('a', 'ESC')]);
    await first.persist();
    await first.close();

    const second = new EmbeddedVectorIndex({ dimensions: DIMS, dir });
    await second.init();
    expect(await second.count()).toBe(4);
    const [hit] = await second.query(embedder.embedOne('abastecimento de água'), { limit: 1 });
    expect(hit?.payload.indicatorId).toBe('AGUA');
    expect(hit?.score).toBeCloseTo(
      Array.from(embedder.embedOne('abastecimento de água')).reduce(
        (s, x, i) => s + x * (embedder.embedOne('População atendida com abastecimento de água')[i] as number),
        0,
      ),
      5,
    );
    await second.close();
  });
});

describe('qdrant adapter against the loopback server', () => {
  it('creates the collection with cosine distance and keyword payload indexes, once', async () => {
    const name = `c${collectionSeq++}`;
    const options = { url: qdrant.url, apiKey: qdrant.apiKey, collection: name, dimensions: DIMS };
    await new QdrantVectorIndex(options).init();
    await new QdrantVectorIndex(options).init();
    const collection = qdrant.collections.get(name);
    expect(collection?.size).toBe(DIMS);
    expect(collection?.distance).toBe('Cosine');
    expect([...(collection?.indexes.entries() ?? [])]).toEqual([
      ['providerSlug', 'keyword'],
      ['indicatorId', 'keyword'],
    ]);
    expect(qdrant.calls.filter((c) => c === `PUT /collections/${name}`)).toHaveLength(1);
    await expect(new QdrantVectorIndex({ ...options, dimensions: 8 }).init()).rejects.toThrow(
      /1536|8-dimension/,
    );
  });

  it('searches through the Query API', async () => {
    const index = await backends[1]?.open();
    await index?.query(embedder.embedOne('x'), { limit: 1 });
    expect(qdrant.calls.some((c) => /^POST \/collections\/c\d+\/points\/query$/.test(c))).toBe(true);
    expect(qdrant.calls.some((c) => c.endsWith('/points/search'))).toBe(false);
  });

  it('fails without any piece of its configured URL nor its key in the error', async () => {
    // A port that was just free: nothing listens there any more.
    const port = await freePort();
    for (const url of [`http://127.0.0.1:${port}/hushkey`, 'http://acct7781.qdrant.invalid:6333']) {
      const index = new QdrantVectorIndex({ url, apiKey: 'hushapikey', collection: 'c', dimensions: DIMS });
      const error = await index.init().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      const told = `${error?.message}\n${error?.stack}\n${JSON.stringify(error)}\n${String(error?.cause)}`;
      for (const secret of ['hushkey', 'hushapikey', 'acct7781']) expect(told).not.toContain(secret);
    }
  });
});
