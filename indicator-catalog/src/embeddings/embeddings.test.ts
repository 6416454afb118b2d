import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/bench/lib';
import { CountingEmbedder } from '../../test-support/harness.testing';
import { type OpenAIServer, startOpenAIServer } from '../../test-support/openai-server.testing';
import { fold, stem, synonymHeads } from '../text/portuguese';
import { LocalEmbedder } from './local';
import { OpenAIEmbedder } from './openai';
import { QueryEmbeddingCache } from './query-cache';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);
const local = new LocalEmbedder();

describe('text normalization', () => {
  it('folds accents and case, stems plurals and suffixes, maps synonyms by word or stem', () => {
    expect(fold('População ÁGUA')).toBe('populacao agua');
    expect(stem(fold('Vacinação'))).toBe(stem('vacinacao'));
    expect(stem(fold('vacinações'))).toBe(stem('vacinacao'));
    expect(stem('escolas')).toBe(stem('escola'));
    expect(synonymHeads('desemprego')).toEqual(['desocupacao']);
    expect(synonymHeads('asfaltadas')).toEqual(['pavimentacao']);
    expect(synonymHeads('mesa')).toEqual([]);
  });
});

describe('local embedder', () => {
  it('is deterministic, 1536-dimensional and unit length', async () => {
    const [a, b] = await local.embed(['Taxa de mortalidade infantil', 'Taxa de mortalidade infantil']);
    expect(a).toHaveLength(1536);
    expect(Array.from(a as Float32Array)).toEqual(Array.from(b as Float32Array));
    expect(cosine(a as Float32Array, a as Float32Array)).toBeCloseTo(1, 5);
    expect(local.id).toBe('local-hash-v1:1536');
  });

  it('ignores accents and case, tolerates typos, knows the synonym table, and has no semantics beyond it', () => {
    const doc = local.embedOne('Taxa de mortalidade infantil | Saúde');
    expect(cosine(local.embedOne('TAXA DE MORTALIDADE INFANTIL'), doc)).toBeGreaterThan(0.8);
    const typo = cosine(local.embedOne('mortalidde infantill'), doc);
    const unrelated = cosine(local.embedOne('frota de veículos'), doc);
    // Typos keep only the character trigrams in common: a weak but clearly non-zero similarity.
    expect(typo).toBeGreaterThan(0.1);
    expect(unrelated).toBeLessThan(0.05);
    expect(
      cosine(local.embedOne('taxa de desemprego'), local.embedOne('Taxa de desocupação')),
    ).toBeGreaterThan(0.4);
    // A paraphrase sharing no word, stem or synonym scores near zero: the limit of a hashing embedder.
    expect(
      cosine(local.embedOne('quem perdeu o ganha-pão'), local.embedOne('Taxa de desocupação')),
    ).toBeLessThan(0.1);
  });
});

describe('OpenAI-compatible embedder (real openai client, loopback server)', () => {
  let server: OpenAIServer;
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  afterAll(() => server?.close());

  it('asks for base64 and 1536 dimensions and decodes the vectors', async () => {
    const embedder = new OpenAIEmbedder({ apiKey: server.apiKey, baseUrl: server.baseUrl, dimensions: 1536 });
    const vectors = await embedder.embed(['População residente estimada', 'Taxa de desocupação']);
    expect(vectors).toHaveLength(2);
    expect(server.stats.encodings).toEqual(['base64']);
    expect(server.stats.dimensions).toEqual([1536]);
    expect(Array.from(vectors[0] as Float32Array)).toEqual(
      Array.from(local.embedOne('População residente estimada')),
    );
    expect(embedder.id).toBe('openai:text-embedding-3-small:1536');
  });

  it('retries a failing request, and fails after its retries; a wrong key is refused', async () => {
    const embedder = new OpenAIEmbedder({
      apiKey: server.apiKey,
      baseUrl: server.baseUrl,
      dimensions: 1536,
      maxRetries: 1,
    });
    server.failNext(1, 503);
    expect(await embedder.embed(['a'])).toHaveLength(1);
    server.failNext(2, 500);
    await expect(embedder.embed(['a'])).rejects.toThrow(/500/);
    const wrong = new OpenAIEmbedder({
      apiKey: 'sk-wrong',
      baseUrl: server.baseUrl,
      dimensions: 1536,
      maxRetries: 0,
    });
    await expect(wrong.embed(['a'])).rejects.toThrow(/401/);
  });

  it('fails without any piece of its configured URL nor its key in the error', async () => {
    // A port that was just free: nothing listens there any more.
    const port = await freePort();
    const refused = new OpenAIEmbedder({
      apiKey: 'sk-hushapikey',
      baseUrl: `http://operator:pw4u@127.0.0.1:${port}/hushkey;apikey=mk1/v1?token=qv9`,
      dimensions: 1536,
      maxRetries: 0,
    });
    const error = await refused.embed(['a']).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    const told = `${error?.message}\n${error?.stack}\n${JSON.stringify(error)}\n${String(error?.cause)}`;
    for (const secret of ['sk-hushapikey', 'operator', 'pw4u', 'hushkey', 'mk1', 'qv9']) {
      expect(told).not.toContain(secret);
    }
  });
});

describe('query embedding cache', () => {
  it('embeds a text once, shares a call in flight, keeps no failure, evicts the least recently used', async () => {
    const counting = new CountingEmbedder(local);
    const cache = new QueryEmbeddingCache(counting, 2);
    const [a1, a2] = await Promise.all([
      cache.embed('taxa de mortalidade'),
      cache.embed('taxa de mortalidade'),
    ]);
    expect(a1).toBe(a2);
    expect(Array.from(a1)).toEqual(Array.from(local.embedOne('taxa de mortalidade')));
    expect(await cache.embed('taxa de mortalidade')).toBe(a1);
    expect(counting.calls).toBe(1);

    counting.failNext = 1;
    await expect(cache.embed('pib')).rejects.toThrow(/unavailable/);
    expect(Array.from(await cache.embed('pib'))).toEqual(Array.from(local.embedOne('pib')));
    expect(counting.calls).toBe(2);

    // Capacity 2: "taxa de mortalidade" was used before "pib" and is evicted by a third text.
    await cache.embed('pib');
    await cache.embed('escolas');
    expect(counting.calls).toBe(3);
    await cache.embed('pib');
    expect(counting.calls).toBe(3);
    await cache.embed('taxa de mortalidade');
    expect(counting.calls).toBe(4);
    expect(counting.texts).toEqual(['taxa de mortalidade', 'pib', 'escolas', 'taxa de mortalidade']);
  });
});
