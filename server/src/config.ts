import path from 'node:path';
import { z } from 'zod';

/**
 * Service configuration, parsed once from the environment with zod.
 * This module is the only reader of `process.env` in the server; everything else receives a `Config`.
 * Every variable, its default and its meaning is listed in the README (Configuration).
 */
const bool = z
  .enum(['0', '1', 'true', 'false'])
  .transform((v) => v === '1' || v === 'true')
  .optional();

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** A svix signing secret as Clerk shows it: optional `whsec_`, then padded base64 of at least 16 bytes. */
function isSvixSecret(value: string): boolean {
  const key = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  return (
    /^[A-Za-z0-9+/]+={0,2}$/.test(key) && key.length % 4 === 0 && Buffer.from(key, 'base64').length >= 16
  );
}

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  PUBLIC_URL: optionalString,
  DATABASE_URL: optionalString,
  SECRET: optionalString,
  ALLOWED_ORIGINS: z.string().default(''),
  TRUST_PROXY: z.string().default('loopback'),
  S3_ENDPOINT: optionalString,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: bool,
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('Notary <no-reply@notary.local>'),
  MAIL_DEV: bool,
  SESSION_TTL_SECONDS: z.coerce.number().int().min(30).max(300).default(300),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  IDENTITY_WEBHOOK_SECRET: optionalString.refine(
    (v) => v === undefined || isSvixSecret(v),
    'must be a svix signing secret: whsec_ followed by base64 of at least 16 bytes',
  ),
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(300).default(60),
});

export type StorageConfig =
  | { kind: 'fs'; root: string }
  | {
      kind: 's3';
      endpoint: string | undefined;
      bucket: string;
      region: string;
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      forcePathStyle: boolean;
    };

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  dataDir: string;
  /** Base URL the service is reached at; used in signed file URLs, mail links and the auth issuer. */
  publicUrl: string | undefined;
  /** `undefined` selects the embedded PGlite database under `dataDir/pglite`. */
  databaseUrl: string | undefined;
  /** Secret for HMAC-signed file URLs and the identity provider; generated and kept in dataDir when unset. */
  secret: string | undefined;
  allowedOrigins: string[];
  /** Express `trust proxy` setting: which proxies may set X-Forwarded-For (client IPs in records, rate limits). */
  trustProxy: string | boolean | number;
  storage: StorageConfig;
  mail: { smtpUrl: string | undefined; from: string; devMailbox: string; devCountsAsConfigured: boolean };
  sessionTtlSeconds: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /**
   * Signing secret of the identity provider's webhook (svix, `whsec_...` as Clerk shows it). Unset: the route
   * `POST /api/webhooks/identity` answers 503.
   */
  identityWebhookSecret: string | undefined;
  /**
   * Seconds between two reconciliations of the role table with the provider's memberships, at most 300 (the
   * longest session lifetime, so a removal made behind the provider's API stops access within it); 0 disables.
   */
  reconcileIntervalSeconds: number;
}

/**
 * Parses `env` (default `process.env`) into a `Config`.
 * @throws Error listing every invalid variable (the process should exit with it).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  let storage: StorageConfig = { kind: 'fs', root: path.join(dataDir, 'objects') };
  if (e.S3_BUCKET) {
    storage = {
      kind: 's3',
      endpoint: e.S3_ENDPOINT,
      bucket: e.S3_BUCKET,
      region: e.S3_REGION,
      accessKeyId: e.S3_ACCESS_KEY_ID,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY,
      // Self-hosted S3 servers (MinIO, radosgw) rarely have wildcard DNS for virtual-hosted buckets.
      forcePathStyle: e.S3_FORCE_PATH_STYLE ?? e.S3_ENDPOINT !== undefined,
    };
  } else if (e.S3_ENDPOINT) {
    throw new Error('Invalid configuration:\n  S3_BUCKET: required when S3_ENDPOINT is set');
  }
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    dataDir,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    secret: e.SECRET,
    allowedOrigins: e.ALLOWED_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    storage,
    mail: {
      smtpUrl: e.SMTP_URL,
      from: e.MAIL_FROM,
      devMailbox: path.join(dataDir, 'mail'),
      devCountsAsConfigured: e.MAIL_DEV ?? false,
    },
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    logLevel: e.LOG_LEVEL,
    identityWebhookSecret: e.IDENTITY_WEBHOOK_SECRET,
    reconcileIntervalSeconds: e.RECONCILE_INTERVAL_SECONDS,
  };
}

function parseTrustProxy(value: string): string | boolean | number {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
