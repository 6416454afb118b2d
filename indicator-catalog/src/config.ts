import path from 'node:path';
import { type AllowEntry, parseAllowList } from '@notary/platform/net/address-policy';
import { errorMessage } from '@notary/shared';
import { z } from 'zod';

/**
 * Catalog configuration, parsed once from the environment with zod. This module is the only reader of
 * `process.env` in the catalog and its reference provider; everything else receives a `CatalogConfig`.
 * Every variable is listed in docs/catalog.md (Configuration).
 */
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const bool = (fallback: boolean) =>
  z
    .enum(['0', '1', 'true', 'false'])
    .optional()
    .transform((v) => (v === undefined ? fallback : v === '1' || v === 'true'));

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  CATALOG_HOST: z.string().default('127.0.0.1'),
  CATALOG_PORT: port(3100),
  CATALOG_DATA_DIR: z.string().default('./data/catalog'),
  CATALOG_DATABASE_URL: optionalString,
  CATALOG_PUBLIC_URL: optionalString.pipe(
    z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  ),
  CATALOG_ALLOWED_HOSTS: optionalString.transform((v, ctx) => {
    const hosts = (v ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    const bad = hosts.find((h) => !/^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(:\d{1,5})?$/.test(h));
    if (bad) ctx.addIssue({ code: 'custom', message: `"${bad}" is not host or host:port` });
    return hosts;
  }),
  CATALOG_ADMIN_TOKEN: optionalString.refine(
    (v) => v === undefined || v.length >= 16,
    'at least 16 characters',
  ),
  CATALOG_ADMIN_OPEN: bool(false),
  CATALOG_PROVIDER_ALLOW_HOSTS: optionalString.transform((v, ctx): AllowEntry[] => {
    try {
      return parseAllowList(v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: errorMessage(e) });
      return [];
    }
  }),
  CATALOG_REFERENCE_PROVIDER: bool(true),
  PROVIDER_HOST: z.string().default('127.0.0.1'),
  PROVIDER_PORT: port(3200),
  QDRANT_URL: optionalString.pipe(z.url().optional()),
  QDRANT_API_KEY: optionalString,
  QDRANT_COLLECTION: z.string().default('indicator_catalog'),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
  OPENAI_EMBEDDING_MODEL: z.string().default('text-embedding-3-small'),
  CATALOG_PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  CATALOG_PROVIDER_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  CATALOG_PROVIDER_MAX_PAGES: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  CATALOG_VALUES_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  CATALOG_VALUES_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  CATALOG_VALUES_PER_RESULT: z.coerce.number().int().min(1).max(1000).default(10),
  CATALOG_URL: z.url().default('http://127.0.0.1:3100'),
});

export interface CatalogConfig {
  nodeEnv: 'development' | 'production' | 'test';
  /** `LOG_LEVEL`, as the notary service reads it; lines are JSON in production, readable elsewhere. */
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  host: string;
  port: number;
  /** Absolute directory of the embedded database (`pglite/`) and the embedded vector index (`vectors.bin`). */
  dataDir: string;
  /** PostgreSQL URL; when unset the embedded PGlite database under `dataDir` is used. */
  databaseUrl: string | undefined;
  /**
   * The catalog's public base URL (`CATALOG_PUBLIC_URL`): the OpenAPI document's `servers` URL and an allowed
   * `Host`; when unset, `http://<listen host>:<port>`. Never taken from a request.
   */
  publicUrl: string | undefined;
  /** Further `Host` header names accepted (`CATALOG_ALLOWED_HOSTS`, lower-case; a port given is ignored). */
  allowedHosts: string[];
  /**
   * Registering, updating, removing providers and triggering syncs need `Authorization: Bearer <token>`
   * (`http/admin-access.ts`); without a token they are refused unless `adminOpen` on a loopback-only listen.
   */
  adminToken: string | undefined;
  /** `CATALOG_ADMIN_OPEN=1`: admin routes without a token, allowed only when the catalog listens on loopback. */
  adminOpen: boolean;
  referenceProvider: { enabled: boolean; host: string; port: number };
  qdrant: { url: string; apiKey: string | undefined; collection: string } | undefined;
  openai: { apiKey: string; baseUrl: string | undefined; model: string } | undefined;
  provider: {
    timeoutMs: number;
    retries: number;
    maxPages: number;
    /** `CATALOG_PROVIDER_ALLOW_HOSTS`: non-public provider addresses allowed (`host[:port]` or CIDR). */
    allowHosts: AllowEntry[];
  };
  search: { valuesTimeoutMs: number; valuesConcurrency: number; valuesPerResult: number };
  /** Where the CLI finds a running catalog. */
  catalogUrl: string;
}

/**
 * Parses `env` (default `process.env`).
 * @throws Error listing every invalid variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): CatalogConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid catalog configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    nodeEnv: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    host: e.CATALOG_HOST,
    port: e.CATALOG_PORT,
    dataDir: path.resolve(e.CATALOG_DATA_DIR),
    databaseUrl: e.CATALOG_DATABASE_URL,
    publicUrl: e.CATALOG_PUBLIC_URL,
    allowedHosts: e.CATALOG_ALLOWED_HOSTS,
    adminToken: e.CATALOG_ADMIN_TOKEN,
    adminOpen: e.CATALOG_ADMIN_OPEN,
    referenceProvider: {
      enabled: e.CATALOG_REFERENCE_PROVIDER,
      host: e.PROVIDER_HOST,
      port: e.PROVIDER_PORT,
    },
    qdrant: e.QDRANT_URL
      ? { url: e.QDRANT_URL, apiKey: e.QDRANT_API_KEY, collection: e.QDRANT_COLLECTION }
      : undefined,
    openai: e.OPENAI_API_KEY
      ? { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL, model: e.OPENAI_EMBEDDING_MODEL }
      : undefined,
    provider: {
      timeoutMs: e.CATALOG_PROVIDER_TIMEOUT_MS,
      retries: e.CATALOG_PROVIDER_RETRIES,
      maxPages: e.CATALOG_PROVIDER_MAX_PAGES,
      allowHosts: e.CATALOG_PROVIDER_ALLOW_HOSTS,
    },
    search: {
      valuesTimeoutMs: e.CATALOG_VALUES_TIMEOUT_MS,
      valuesConcurrency: e.CATALOG_VALUES_CONCURRENCY,
      valuesPerResult: e.CATALOG_VALUES_PER_RESULT,
    },
    catalogUrl: e.CATALOG_URL,
  };
}
