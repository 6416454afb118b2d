import { createLogger, type Logger, logFormatFor } from '@notary/platform/log';
import { joinSecrets, secretsOfUrl } from '@notary/platform/redact';
import type { CatalogConfig } from './config';
import { type Database, openDatabase } from './db';
import { createEmbedder, type Embedder, LocalEmbedder } from './embeddings';
import { QueryEmbeddingCache } from './embeddings/query-cache';
import { createConnector } from './providers/connectors';
import { ProviderEgress } from './providers/egress';
import type { ProviderConnector } from './providers/port';
import { CatalogCache } from './search/catalog-cache';
import { SyncRunner } from './sync/runner';
import { createVectorIndex, type VectorIndex } from './vector-index';

/** Readiness of `GET /health`: `ok` once the startup syncs are done (until then the reference catalog may not be searchable). */
export interface Readiness {
  status: 'starting' | 'ok' | 'error';
  detail?: string;
}

/** Everything the HTTP layer and the CLI-facing code need; built once by `openCatalog`. */
export interface CatalogDeps {
  config: CatalogConfig;
  /** The root logger (`LOG_LEVEL`); code logs through a child naming its module, requests through `req.log`. */
  log: Logger;
  db: Database;
  embedder: Embedder;
  /** The search's recently embedded queries; none with the local embedder (it costs less than a lookup's memory). */
  queryEmbeddings: QueryEmbeddingCache | undefined;
  index: VectorIndex;
  catalog: CatalogCache;
  sync: SyncRunner;
  connectorFor(provider: { kind: string; baseUrl: string }): ProviderConnector;
  /** The only way out to providers: connect-time address checks, redirects re-checked, bodies capped. */
  egress: ProviderEgress;
  readiness: Readiness;
}

export interface Catalog {
  deps: CatalogDeps;
  /** Stops running syncs, writes the embedded index, closes the database. */
  close(): Promise<void>;
}

export interface CatalogOptions {
  /** In-memory database and vector index (tests): nothing under `dataDir`. */
  memory?: boolean;
  /** Replaces the configured embedder (tests count its calls). */
  embedder?: Embedder;
  /** Replaces the configured vector index. */
  index?: VectorIndex;
  /** Sync heartbeat and staleness, ms. */
  heartbeatMs?: number;
  staleAfterMs?: number;
  /** The root logger (default: `catalogLogger(config)`). */
  log?: Logger;
}

/** The catalog's root logger as configured: `LOG_LEVEL`, JSON lines in production (`NODE_ENV`). */
export function catalogLogger(config: Pick<CatalogConfig, 'logLevel' | 'nodeEnv'>): Logger {
  return createLogger({ level: config.logLevel, format: logFormatFor(config.nodeEnv) });
}

/**
 * Composition root of the catalog: database (PGlite under `dataDir`, or PostgreSQL), embedder (local, or
 * OpenAI-compatible), vector index (embedded, or Qdrant), connectors by kind, the sync runner and the
 * search cache, and the egress (`ProviderEgress`) every provider request goes through, allowing
 * `config.provider.allowHosts`. Marks syncs left `running` by a stopped catalog as `failed`.
 * @throws DirectoryLockedError when another process uses `dataDir`; errors of the index's `init`.
 */
export async function openCatalog(config: CatalogConfig, options: CatalogOptions = {}): Promise<Catalog> {
  const log = options.log ?? catalogLogger(config);
  const embedder = options.embedder ?? createEmbedder(config);
  const index =
    options.index ??
    createVectorIndex(config, embedder.dimensions, {
      memory: options.memory ?? false,
      log: log.child({ module: 'vector-index' }),
    });
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...(options.memory ? { memory: true } : {}),
  });
  try {
    await index.init();
  } catch (e) {
    await db.close();
    throw e;
  }
  const egress = new ProviderEgress(config.provider.allowHosts, {
    connectTimeoutMs: config.provider.timeoutMs,
  });
  const connectorFor = (provider: { kind: string; baseUrl: string }) =>
    createConnector(provider.kind, provider.baseUrl, {
      timeoutMs: config.provider.timeoutMs,
      retries: config.provider.retries,
      maxPages: config.provider.maxPages,
      egress,
    });
  const catalog = new CatalogCache(db);
  const sync = new SyncRunner({
    db,
    embedder,
    index,
    connectorFor,
    onCommitted: () => catalog.invalidate(),
    log: log.child({ module: 'sync' }),
    secrets: joinSecrets(
      config.openai?.baseUrl === undefined ? undefined : secretsOfUrl(config.openai.baseUrl),
      config.openai?.apiKey,
      config.qdrant === undefined ? undefined : secretsOfUrl(config.qdrant.url),
      config.qdrant?.apiKey,
    ),
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.staleAfterMs !== undefined ? { staleAfterMs: options.staleAfterMs } : {}),
  });
  const recovered = await sync.recoverInterrupted();
  if (recovered) {
    log.child({ module: 'sync' }).warn(`${recovered} sync(s) interrupted by a previous stop marked failed`);
  }
  const deps: CatalogDeps = {
    config,
    log,
    db,
    embedder,
    queryEmbeddings: embedder instanceof LocalEmbedder ? undefined : new QueryEmbeddingCache(embedder),
    index,
    catalog,
    sync,
    connectorFor,
    egress,
    readiness: { status: 'starting' },
  };
  return {
    deps,
    close: async () => {
      await sync.close();
      await egress.close();
      await index.close();
      await db.close();
    },
  };
}
