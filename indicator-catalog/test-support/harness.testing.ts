import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Catalog, type CatalogOptions, openCatalog } from '../src/catalog';
import { loadConfig } from '../src/config';
import type { Embedder } from '../src/embeddings/port';
import { startHttp } from '../src/http/server';

export interface TestCatalog {
  catalog: Catalog;
  /** `http://127.0.0.1:<port>` of the catalog's HTTP face. */
  url: string;
  dataDir: string;
  /** Stops HTTP and the catalog; removes the data directory unless `keepData`. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/**
 * A catalog for tests on 127.0.0.1 (free port): configuration from `env` over test defaults (no reference
 * provider, temp `CATALOG_DATA_DIR` unless given, `CATALOG_ADMIN_OPEN=1`: a loopback listen), in-memory
 * database and index unless `memory: false`. Providers on loopback must be allowed explicitly
 * (`CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(url)`).
 */
export async function startTestCatalog(
  options: { env?: Record<string, string>; dataDir?: string } & CatalogOptions = {},
): Promise<TestCatalog> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'catalog-test-')));
  const config = loadConfig({
    NODE_ENV: 'test',
    CATALOG_DATA_DIR: dataDir,
    CATALOG_REFERENCE_PROVIDER: '0',
    CATALOG_ADMIN_OPEN: '1',
    LOG_LEVEL: 'warn',
    ...options.env,
  });
  const { env: _env, dataDir: _dir, ...catalogOptions } = options;
  const catalog = await openCatalog(config, { memory: true, ...catalogOptions });
  catalog.deps.readiness = { status: 'ok' };
  const http = await startHttp(catalog.deps, '127.0.0.1', 0);
  return {
    catalog,
    url: http.url,
    dataDir,
    close: async (closeOptions = {}) => {
      await http.close();
      await catalog.close();
      if (!closeOptions.keepData && !options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** `CATALOG_PROVIDER_ALLOW_HOSTS` allowing exactly these providers' `host:port` (loopback test providers). */
export function allowProviders(...urls: string[]): string {
  return urls.map((u) => new URL(u).host).join(',');
}

/** Wraps an embedder to count calls and texts, and to fail on demand. */
export class CountingEmbedder implements Embedder {
  calls = 0;
  texts: string[] = [];
  /** When > 0, the next `embed` calls throw (counted down). */
  failNext = 0;

  constructor(private readonly inner: Embedder) {}

  get id() {
    return this.inner.id;
  }
  get dimensions() {
    return this.inner.dimensions;
  }
  get batchSize() {
    return this.inner.batchSize;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('embeddings service unavailable (injected)');
    }
    this.calls++;
    this.texts.push(...texts);
    return this.inner.embed(texts);
  }

  reset(): void {
    this.calls = 0;
    this.texts = [];
  }
}

/** JSON request to a test server: status and parsed body. */
export async function request<T = unknown>(
  url: string,
  init: { method?: string; body?: unknown; token?: string } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : undefined) as T,
    headers: response.headers,
  };
}
