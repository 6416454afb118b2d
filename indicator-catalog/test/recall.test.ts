import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceProviderRegistration } from '../reference-provider/src/registration';
import { type RunningProvider, startReferenceProvider } from '../reference-provider/src/server';
import { loadConfig } from '../src/config';
import { createEmbedder, type Embedder, LocalEmbedder } from '../src/embeddings';
import { registerProvider } from '../src/providers/service';
import { allowProviders, startTestCatalog, type TestCatalog } from '../test-support/harness.testing';
import { LABELED_QUERIES, measureRecall } from '../test-support/labeled-queries.testing';

/**
 * recall@5 of the configured embedder (the local one unless OPENAI_API_KEY is set; a non-loopback
 * OPENAI_BASE_URL is not used by tests, which contact nothing outside 127.0.0.1) on the labeled queries over
 * the reference provider. Floors: what the local embedder reaches (docs/catalog.md, Search and ranking).
 */
function configuredEmbedder(): Embedder {
  const config = loadConfig();
  const loopback =
    config.openai?.baseUrl && /^https?:\/\/(127\.|localhost|\[::1\])/.test(config.openai.baseUrl);
  if (config.openai && !loopback) {
    console.log(
      '[recall] OPENAI_API_KEY is set without a loopback OPENAI_BASE_URL: measuring the local embedder',
    );
    return new LocalEmbedder();
  }
  return createEmbedder(config);
}

let provider: RunningProvider;
let t: TestCatalog;
beforeAll(async () => {
  provider = await startReferenceProvider({ host: '127.0.0.1', port: 0 });
  t = await startTestCatalog({
    embedder: configuredEmbedder(),
    env: { CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url) },
  });
  await registerProvider(
    t.catalog.deps.db.fork(),
    referenceProviderRegistration(provider.url),
    t.catalog.deps.egress,
  );
  expect((await t.catalog.deps.sync.run('ibge-referencia', 'test')).status).toBe('ok');
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

describe('labeled query set', () => {
  it('has at least 40 queries, each expecting a real indicator', async () => {
    expect(LABELED_QUERIES.length).toBeGreaterThanOrEqual(40);
    const snapshot = await t.catalog.deps.catalog.snapshot();
    const ids = new Set([...snapshot.docs.values()].map((d) => d.indicatorId));
    for (const q of LABELED_QUERIES) expect(ids.has(q.expected), q.expected).toBe(true);
  });

  it('reports recall@5 of the configured embedder', async () => {
    const report = await measureRecall(t.catalog.deps);
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    console.log(
      `[recall] embedder ${t.catalog.deps.embedder.id}: recall@5 hybrid ${pct(report.hybrid)}, semantic leg alone ${pct(report.semantic)} over ${report.queries} queries; ` +
        Object.entries(report.byKind)
          .map(([kind, r]) => `${kind} ${pct(r.hybrid)} (${r.queries})`)
          .join(', '),
    );
    for (const miss of report.misses)
      console.log(`[recall] miss: "${miss.q}" expected ${miss.expected}, got ${miss.got.join(', ')}`);
    expect(report.hybrid).toBeGreaterThanOrEqual(0.9);
    expect(report.semantic).toBeGreaterThanOrEqual(0.85);
    expect(report.byKind.accents.hybrid).toBe(1);
    expect(report.byKind.typo.hybrid).toBeGreaterThanOrEqual(0.9);
  });
});
