import path from 'node:path';
import { z } from 'zod';
import {
  type AnchoringConfig,
  AnchoringEnv,
  anchoringConfig,
  type VerifyEndpoints,
  verifyEndpoints,
} from './config/anchoring';
import { CaptureEnv, type CaptureSettings, captureSettings } from './config/capture';
import { nodeEnv, optionalString } from './config/env';
import { HttpEnv, type HttpSettings, httpSettings } from './config/http';
import { IdentityEnv, type IdentitySettings, identitySettings } from './config/identity';
import { type IpfsConfig, IpfsEnv, ipfsConfig } from './config/ipfs';
import { LimitsEnv, type LimitsSettings, limitsSettings } from './config/limits';
import { type MailConfig, MailEnv, mailConfig } from './config/mail';
import { SigningEnv, type SigningSettings, signingSettings } from './config/signing';
import { StorageEnv, type StorageSettings, storageSettings } from './config/storage';
import { WitnessEnv, type WitnessSettings, witnessSettings } from './config/witness';

/*
 * Service configuration, parsed once from the environment with zod. This module is the only reader of
 * `process.env` in the server; everything else receives a `Config`. Each area's variables, their parsing and its
 * part of `Config` live in `config/<area>.ts`; this module composes them. Every variable, its default and its
 * meaning is listed in the README (Configuration).
 */

export type {
  AnchoringConfig,
  AnchorWorkerConfig,
  EvmAnchoringConfig,
  StacksAnchoringConfig,
  VerifyEndpoints,
} from './config/anchoring';
export { EVM_NETWORK_PRESETS } from './config/anchoring';
export type { CaptureSettings } from './config/capture';
export { DEFAULT_IPFS_GATEWAY, DEFAULT_IPFS_PUBLIC_GATEWAY, type IpfsConfig } from './config/ipfs';
export type { MailConfig } from './config/mail';
export type { RevocationConfig, SigningConfig, TsaConfig } from './config/signing';
export type { StorageConfig } from './config/storage';

/** What the whole service shares: the environment, where its data lives, its log level and its name. */
const CoreEnv = z.object({
  NODE_ENV: nodeEnv,
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalString,
  JOB_POLLING_INTERVAL_SECONDS: z.coerce.number().min(0.5).max(60).default(2),
  SECRET: optionalString,
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  SERVICE_NAME: z.string().trim().min(1).max(80).default('Notary'),
});

/** Every variable the service reads, area by area. */
const EnvSchema = z.object({
  ...CoreEnv.shape,
  ...HttpEnv.shape,
  ...StorageEnv.shape,
  ...MailEnv.shape,
  ...IdentityEnv.shape,
  ...AnchoringEnv.shape,
  ...SigningEnv.shape,
  ...CaptureEnv.shape,
  ...LimitsEnv.shape,
  ...IpfsEnv.shape,
  ...WitnessEnv.shape,
});

/** The service's configuration as `loadConfig` builds it: every area's part (`config/<area>.ts`) in one object. */
export interface Config
  extends HttpSettings,
    StorageSettings,
    IdentitySettings,
    SigningSettings,
    LimitsSettings,
    WitnessSettings {
  env: 'development' | 'production' | 'test';
  dataDir: string;
  /** `undefined` selects the embedded PGlite database under `dataDir/pglite`. */
  databaseUrl: string | undefined;
  /**
   * How often an idle job-queue worker (pg-boss: anchoring windows, monitoring runs) looks for due jobs, in
   * seconds (`JOB_POLLING_INTERVAL_SECONDS`, default 2, pg-boss's least 0.5): how late at most a due job starts.
   */
  jobPollingIntervalSeconds: number;
  /** Secret for HMAC-signed file URLs and the identity provider; generated and kept in dataDir when unset. */
  secret: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Name printed on certificates and on the mark stamped on every page (`SERVICE_NAME`). */
  serviceName: string;
  mail: MailConfig;
  /** Anchoring of document hashes on chains (`ANCHORING` and the chain variables). */
  anchoring: AnchoringConfig;
  /** Web capture: Chromium, bounds, allowed destinations. */
  capture: CaptureSettings;
  /**
   * Public endpoints announced to verifiers (`VERIFY_EVM_RPC_URLS`, `VERIFY_STACKS_API_URLS`), so a receipt can
   * be checked against the chains without the service: the web verify page asks them, with CORS, from the
   * user's browser. Never the service's own `EVM_RPC_URL` / `STACKS_API_URL`, which may carry an API key. The
   * devnets' endpoints are added at start (`ANCHORING=devnet`).
   */
  verifyEndpoints: VerifyEndpoints;
  /** IPFS import: gateways, public links, timeouts, concurrency. */
  ipfs: IpfsConfig;
}

/**
 * Parses `env` (default `process.env`) into a `Config`: every area's variables in one parse, then each area's
 * own checks across its variables.
 * @throws Error listing every invalid variable, or naming the first contradiction between variables (the
 *   process should exit with it).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  // In this order, as the checks across variables have always run: limits, storage, anchoring, signing.
  const limits = limitsSettings(e, e.NODE_ENV);
  const storage = storageSettings(e, dataDir);
  const anchoring = anchoringConfig(e, e.NODE_ENV);
  const signing = signingSettings(e);
  return {
    env: e.NODE_ENV,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    jobPollingIntervalSeconds: e.JOB_POLLING_INTERVAL_SECONDS,
    secret: e.SECRET,
    logLevel: e.LOG_LEVEL,
    serviceName: e.SERVICE_NAME,
    ...httpSettings(e, e.NODE_ENV),
    ...limits,
    ...storage,
    mail: mailConfig(e, dataDir),
    ...identitySettings(e),
    anchoring,
    ...signing,
    capture: captureSettings(e),
    verifyEndpoints: verifyEndpoints(e),
    ipfs: ipfsConfig(e),
    ...witnessSettings(e, dataDir),
  };
}
