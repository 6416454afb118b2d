import path from 'node:path';
import type { IcpBrasilArtifacts } from '@notary/pdf/ltv';
import { validateStacksAddress } from '@stacks/transactions';
import { z } from 'zod';
import { type AllowEntry, parseAllowHosts } from './adapters/capture/address-policy';
import {
  ICP_BRASIL_ARTIFACT_FILES,
  ICP_BRASIL_ARTIFACTS_URL,
  loadIcpBrasilArtifacts,
} from './adapters/signer/icp-brasil-artifacts';

/**
 * Service configuration, parsed once from the environment with zod.
 * This module is the only reader of `process.env` in the server; everything else receives a `Config`.
 * Every variable, its default and its meaning is listed in the README (Configuration).
 */
const bool = z
  .enum(['0', '1', 'true', 'false'])
  .transform((v) => v === '1' || v === 'true')
  .optional();

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** A svix signing secret as Clerk shows it: optional `whsec_`, then padded base64 of at least 16 bytes. */
/**
 * A Clarity contract identifier, `<standard principal>.<contract name>` (SIP-002: names start with a letter, at
 * most 40 characters of letters, digits and `-`). The principal's c32check checksum is verified.
 */
function isContractId(value: string): boolean {
  const dot = value.indexOf('.');
  if (dot < 0) return false;
  return (
    validateStacksAddress(value.slice(0, dot)) && /^[a-zA-Z][a-zA-Z0-9-]{0,39}$/.test(value.slice(dot + 1))
  );
}

function isSvixSecret(value: string): boolean {
  const key = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  return (
    /^[A-Za-z0-9+/]+={0,2}$/.test(key) && key.length % 4 === 0 && Buffer.from(key, 'base64').length >= 16
  );
}

/** Where IPFS imports fetch blocks by default: a public trustless gateway (IPFS Trustless Gateway spec). */
export const DEFAULT_IPFS_GATEWAY = 'https://trustless-gateway.link';
/** Base of the download and view links of IPFS imports by default. */
export const DEFAULT_IPFS_PUBLIC_GATEWAY = 'https://ipfs.io';

/** An http(s) URL usable as a base: no query, no fragment, no credentials. */
function isBaseUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === ''
  );
}

/** A comma-separated list of URLs, trimmed, without trailing slashes or empty entries. */
function urlList(value: string): string[] {
  return value
    .split(',')
    .map((s) => stripSlash(s.trim()))
    .filter(Boolean);
}

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: optionalString,
  DATA_DIR: z.string().default('./data'),
  PUBLIC_URL: optionalString,
  DATABASE_URL: optionalString,
  SECRET: optionalString,
  ALLOWED_ORIGINS: z.string().default(''),
  TRUST_PROXY: z.string().default('loopback'),
  HTTP_KEEP_ALIVE_SECONDS: z.coerce.number().int().min(1).max(3600).default(65),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().int().min(10).max(86_400).default(1800),
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
  // 10 GiB per tenant; 0 means no quota.
  TENANT_STORAGE_QUOTA_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(10 * 1024 ** 3),
  ORPHAN_SWEEP_HOURS: z.coerce
    .number()
    .min(0)
    .max(24 * 7)
    .default(6),
  ANCHORING: z.enum(['devnet', 'off', 'configured']).optional(),
  ANCHOR_BATCH_SECONDS: z.coerce.number().positive().max(86_400).optional(),
  ANCHOR_BATCH_MAX: z.coerce.number().int().min(1).max(100_000).default(1000),
  ANCHOR_STUCK_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  ANCHOR_FEE_BUMP_PERCENT: z.coerce
    .number()
    .min(10, 'must be at least 10 (nodes refuse a replacement that raises its fees by less)')
    .max(1000)
    .optional(),
  EVM_RPC_URL: optionalString.pipe(z.url().optional()),
  EVM_PRIVATE_KEY: optionalString.refine(
    (v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v),
    'must be 0x followed by 64 hex digits',
  ),
  EVM_NETWORK: optionalString,
  EVM_CHAIN_ID: z.coerce.number().int().positive().optional(),
  EAS_ADDRESS: optionalString.refine((v) => v === undefined || EVM_ADDRESS.test(v), 'must be 0x + 40 hex'),
  EAS_SCHEMA_REGISTRY_ADDRESS: optionalString.refine(
    (v) => v === undefined || EVM_ADDRESS.test(v),
    'must be 0x + 40 hex',
  ),
  EAS_SCHEMA_UID: optionalString.refine(
    (v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v),
    'must be 0x followed by 64 hex digits',
  ),
  EVM_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).optional(),
  EVM_EXPLORER_TX_PREFIX: optionalString,
  EAS_SCAN_PREFIX: optionalString,
  STACKS_API_URL: optionalString.pipe(z.url().optional()),
  STACKS_PRIVATE_KEY: optionalString.refine(
    (v) => v === undefined || /^(0x)?[0-9a-fA-F]{64}(01)?$/.test(v),
    'must be 64 hex digits, optionally followed by 01 (compressed)',
  ),
  // The address part is checked with its c32check checksum (a mistyped address is refused at start); its length
  // varies with the hash (38 to 40 characters after the `S`).
  STACKS_CONTRACT_ID: optionalString.refine(
    (v) => v === undefined || isContractId(v),
    'must be <address>.<contract name>',
  ),
  STACKS_NETWORK: z.enum(['mainnet', 'testnet', 'devnet']).default('testnet'),
  STACKS_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).optional(),
  STACKS_EXPLORER_TX_PREFIX: z.string().default('https://explorer.hiro.so/txid'),
  STACKS_API_KIND: z.enum(['auto', 'hiro-v3', 'hiro-v1', 'node']).default('auto'),
  STACKS_API_KEY: optionalString,
  STACKS_API_RPM: z.coerce.number().int().min(1).max(100_000).default(40),
  SERVICE_NAME: z.string().trim().min(1).max(80).default('Notary'),
  SIGNING_CERT: optionalString,
  SIGNING_KEY: optionalString,
  SIGNING_CERT_PASSWORD: z.string().optional(),
  SIGNING_LOCATION: z.string().max(120).default(''),
  SIGNING_LEVEL: z.enum(['B-B', 'B-T', 'B-LT', 'B-LTA']).optional(),
  SIGNING_POLICY: z
    .enum(['etsi', 'icp-brasil-ad-rb', 'icp-brasil-ad-rt', 'icp-brasil-ad-rc', 'icp-brasil-ad-ra'])
    .default('etsi'),
  ICP_BRASIL_ARTIFACTS_DIR: optionalString,
  TSA_URL: optionalString.pipe(z.url().optional()),
  TSA_CA_CERTS: optionalString,
  SIGNATURE_TRUST_CERTS: optionalString,
  TSA_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  REVOCATION_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  REVOCATION_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(4 * 1024 ** 2)
    .default(1024 ** 2),
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  CAPTURE_TIMEOUT_MS: z.coerce.number().int().min(2_000).max(600_000).default(30_000),
  CAPTURE_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(1),
  CAPTURE_ALLOW_HOSTS: z
    .string()
    .default('')
    .refine((v) => {
      try {
        parseAllowHosts(v);
        return true;
      } catch {
        return false;
      }
    }, 'comma-separated host, host:port, [IPv6]:port or CIDR entries'),
  CAPTURE_CA_CERTS: optionalString,
  CAPTURE_EGRESS_IP: optionalString.pipe(z.union([z.ipv4(), z.ipv6()]).optional()),
  CAPTURE_USER: z
    .string()
    .regex(/^[a-z_][a-z0-9_-]{0,31}\$?$/i, 'a user name')
    .refine((v) => v !== 'root', 'not root: the capture browser must run unprivileged')
    .default('nobody'),
  CAPTURE_TENANT_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  SIGNIN_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10),
  SIGNUP_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(10),
  CODE_MAIL_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(5),
  // 1 GiB; 0 turns the guard off.
  DISK_FREE_FLOOR_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(1024 ** 3),
  IPFS_GATEWAYS: z
    .string()
    .default(DEFAULT_IPFS_GATEWAY)
    .transform((v) =>
      v
        .split(',')
        .map((s) => stripSlash(s.trim()))
        .filter(Boolean),
    )
    .refine((list) => list.length > 0, 'at least one gateway URL')
    .refine((list) => list.every(isBaseUrl), 'comma-separated http(s) URLs without query or fragment'),
  IPFS_PUBLIC_GATEWAY: z
    .string()
    .default(DEFAULT_IPFS_PUBLIC_GATEWAY)
    .transform((v) => stripSlash(v.trim()))
    .refine(isBaseUrl, 'an http(s) URL without query or fragment'),
  IPFS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  // 5 minutes: a 250 MB file at 1 MB/s, with room; past it the import is 504.
  IPFS_IMPORT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  IPFS_IMPORT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  VERIFY_EVM_RPC_URLS: z
    .string()
    .default('')
    .transform(urlList)
    .refine((list) => list.every(isBaseUrl), 'comma-separated http(s) URLs without query or fragment'),
  VERIFY_STACKS_API_URLS: z
    .string()
    .default('')
    .transform(urlList)
    .refine((list) => list.every(isBaseUrl), 'comma-separated http(s) URLs without query or fragment'),
  REDIS_URL: optionalString.pipe(z.url().optional()),
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

/** Known EVM networks: `EVM_NETWORK` fills in the chain id, EAS addresses and explorer links (README, Anchoring). */
export const EVM_NETWORK_PRESETS: Record<
  string,
  {
    chainId: number;
    easAddress: string;
    schemaRegistryAddress: string;
    explorerTxPrefix: string;
    attestationScanPrefix: string;
  }
> = {
  sepolia: {
    chainId: 11155111,
    easAddress: '0xC2679fBD37d54388Ce493F1DB75320D236e1815e',
    schemaRegistryAddress: '0x0a7E2Ff54e76B8E6659aedc9103FB21c038050D0',
    explorerTxPrefix: 'https://sepolia.etherscan.io/tx',
    attestationScanPrefix: 'https://sepolia.easscan.org/attestation/view',
  },
  'base-sepolia': {
    chainId: 84532,
    easAddress: '0x4200000000000000000000000000000000000021',
    schemaRegistryAddress: '0x4200000000000000000000000000000000000020',
    explorerTxPrefix: 'https://sepolia.basescan.org/tx',
    attestationScanPrefix: 'https://base-sepolia.easscan.org/attestation/view',
  },
};

/** An EVM chain reached over JSON-RPC (EAS attestations, `adapters/chains/evm-eas.ts`). */
export interface EvmAnchoringConfig {
  rpcUrl: string;
  privateKey: string;
  /** Display name, e.g. `base-sepolia`. */
  network: string;
  chainId: number;
  easAddress: string;
  schemaRegistryAddress: string;
  /** Checked against the adapter's schema UID when given; the schema is registered at start when missing. */
  schemaUid: string | undefined;
  /** Confirmation depth, the inclusion block counting as 1. */
  confirmations: number;
  /** `<prefix>/<0xhash>`; empty when there is no explorer. */
  explorerTxPrefix: string;
  /** `<prefix>/<uid>` (easscan); empty when there is none. */
  attestationScanPrefix: string;
}

/** A Stacks node / Hiro API and the deployed notary contract (`adapters/chains/stacks.ts`). */
export interface StacksAnchoringConfig {
  apiUrl: string;
  privateKey: string;
  /** `<address>.<name>` of `server/contracts/notary.clar` as deployed. */
  contractId: string;
  network: 'mainnet' | 'testnet' | 'devnet';
  confirmations: number;
  /** `<prefix>/0x<txid>?chain=<network>`. */
  explorerTxPrefix: string;
  /**
   * What `apiUrl` is (`STACKS_API_KIND`): a Hiro API with v3 routes, an older one with v1 routes only, a bare
   * stacks-node, or `auto` (detected); checked against the endpoint at start.
   */
  apiKind: 'auto' | 'hiro-v3' | 'hiro-v1' | 'node';
  /** `STACKS_API_KEY`, sent as `x-api-key`: a secret, never logged (redacted from every error). */
  apiKey: string | undefined;
  /** `STACKS_API_RPM`: requests per minute to `apiUrl`, shared by every anchor in flight (default 40). */
  apiRpm: number;
}

/**
 * Anchoring (issue 4, README Anchoring). `off`: nothing runs, documents stay `pending`. `devnet`: the in-process
 * Hardhat (EAS) and Clarity-VM Stacks devnets are started with the service and anchored on (a fresh chain
 * every start). `configured`: the chains whose variables are set (`evm`, `stacks`; at least one).
 */
export type AnchoringConfig =
  | { mode: 'off' }
  | ({
      mode: 'devnet';
      /** Seconds between two batch collections. */
      batchSeconds: number;
      /** Most documents in one batch (one Merkle tree, one transaction per chain). */
      batchMax: number;
      evmConfirmations: number;
      stacksConfirmations: number;
    } & AnchorReplacementConfig)
  | ({
      mode: 'configured';
      batchSeconds: number;
      batchMax: number;
      evm: EvmAnchoringConfig | undefined;
      stacks: StacksAnchoringConfig | undefined;
    } & AnchorReplacementConfig);

/**
 * When a sent anchor transaction is replaced with higher fees (`domain/anchoring/pipeline.ts`); unset: the
 * runner's defaults (30 s on the devnet, 10 minutes on networks; +12.5 %).
 */
export interface AnchorReplacementConfig {
  /** `ANCHOR_STUCK_SECONDS`: still pending (or dropped) this long after it was first sent: replaced. */
  stuckAfterSeconds?: number;
  /** `ANCHOR_FEE_BUMP_PERCENT`: the least a replacement raises both fees, in percent (10 or more). */
  feeBumpPercent?: number;
}

/**
 * PAdES signing of certificates (issue 5): `SIGNING_CERT` is a PKCS#12 file (`.p12`/`.pfx`, password in
 * `SIGNING_CERT_PASSWORD`) or a PEM chain (signer first) with the PEM key in `SIGNING_KEY`. Read at start.
 */
export interface SigningConfig {
  certPath: string;
  keyPath: string | undefined;
  password: string | undefined;
  /** `/Location` of the PDF signature dictionary; empty to omit. */
  location: string;
  /**
   * PAdES baseline level asked for (`SIGNING_LEVEL`, ETSI EN 319 142-1): B-B, B-T (a TSA's signature
   * timestamp), B-LT (plus revocation data in a /DSS), B-LTA (plus a document timestamp). Default B-LTA with
   * `TSA_URL`, else B-B; B-T and up without `TSA_URL` is refused at start.
   */
  level: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';
  /**
   * Signature policy (`SIGNING_POLICY`): `etsi` (default) a plain ETSI EN 319 142-1 signature; an ICP-Brasil
   * policy (DOC-ICP-15.03 v9.1) adds its signature-policy-identifier and the PBAD signature dictionary.
   * AD-RT needs `TSA_URL` and B-T or higher, AD-RC needs B-LTA (Tabela A.22: DSS, VRI and a document
   * timestamp); both are checked at start. AD-RA needs B-LTA too and `ICP_BRASIL_ARTIFACTS_DIR`: its DSS must
   * carry the policy, the list of approved policies and that list's signature (Tabela A.19).
   */
  policy: 'etsi' | 'icp-brasil-ad-rb' | 'icp-brasil-ad-rt' | 'icp-brasil-ad-rc' | 'icp-brasil-ad-ra';
  /** AD-RA only: the artifacts read and checked at start from `ICP_BRASIL_ARTIFACTS_DIR`. */
  artifacts?: IcpBrasilArtifacts;
}

/**
 * IPFS import (issue 14): trustless gateways the bytes are fetched from and verified (`IPFS_GATEWAYS`), the
 * public gateway of download and view links (`IPFS_PUBLIC_GATEWAY`), how long one block request and one whole
 * import may take, and how many imports run at once.
 */
export interface IpfsConfig {
  /** Trustless gateway base URLs (no trailing slash), tried in order. */
  gateways: string[];
  /** Base URL (no trailing slash) of download and view links; never contacted by the service. */
  publicGateway: string;
  /** Longest one block request may take, connect to last byte, ms (`IPFS_TIMEOUT_MS`). */
  timeoutMs: number;
  /**
   * Longest one whole import (or certificate read) may take, root block to last byte, ms
   * (`IPFS_IMPORT_TIMEOUT_MS`, default 300 000); past it the import fails with GATEWAY_TIMEOUT (504).
   */
  importTimeoutMs: number;
  /**
   * Files read from IPFS at once in this process (`IPFS_IMPORT_CONCURRENCY`, default 4); one more is refused
   * with RATE_LIMITED (429) and a `retryAfterSeconds`.
   */
  concurrency: number;
}

/** Chain endpoints a verifier may ask (issue 16), as `GET /api/onchain/info` announces them. */
export interface VerifyEndpoints {
  /** EVM JSON-RPC URLs (no trailing slash). */
  evmRpcUrls: string[];
  /** Stacks API base URLs (stacks-core `/v2` and Hiro `/extended`), no trailing slash. */
  stacksApiUrls: string[];
}

/** Web capture (issue 15): the browser, the bounds, and the exceptions to the public-addresses-only rule. */
export interface CaptureSettings {
  /** The Chromium executable (`CHROMIUM_PATH`); when missing the capture route answers 503. */
  chromiumPath: string;
  /** The whole capture's bound, ms (`CAPTURE_TIMEOUT_MS`, default 30 000). */
  timeoutMs: number;
  /** Browsers at once (`CAPTURE_CONCURRENCY`, default 1); a short queue waits behind them. */
  concurrency: number;
  /** `CAPTURE_ALLOW_HOSTS`, parsed: hosts and ranges a capture may reach although not public (default none). */
  allowHosts: AllowEntry[];
  /** PEM file of private CAs the capture browser trusts as anchors (`CAPTURE_CA_CERTS`); unset: none. */
  caCertsPath: string | undefined;
  /**
   * The public address captures leave from, as the operator declares it (`CAPTURE_EGRESS_IP`): stated in each
   * capture's record and provenance summary, never looked up from outside. Unset: not stated.
   */
  egressIp: string | undefined;
  /**
   * The account capture processes run as when the service runs as root (`CAPTURE_USER`, default `nobody`;
   * a dedicated system account is better, see docs/api.md, Web capture). Ignored when the service is not root.
   */
  user: string;
  /**
   * Captures one tenant may have running or waiting at once on this instance (`CAPTURE_TENANT_MAX`); undefined:
   * half of the browsers and the waiting queue together, at least 1 (resolved where the capturer is built).
   */
  tenantMax: number | undefined;
}

/** RFC 3161 Time-Stamp Authority (`TSA_URL`; spec, Documents rule 6). */
export interface TsaConfig {
  url: string;
  /** PEM file of the certificates that may anchor the TSA's chain; unset: Node's bundled Mozilla roots. */
  caCertsPath: string | undefined;
  timeoutMs: number;
}

/**
 * Fetching of OCSP answers and CRLs for PAdES B-LT/B-LTA (RFC 6960, RFC 5280) from the URLs the signing and
 * TSA chains' certificates name.
 */
export interface RevocationConfig {
  /** One request, connect to last byte, ms (`REVOCATION_TIMEOUT_MS`, default 10 000). */
  timeoutMs: number;
  /** Largest OCSP answer or CRL read, bytes (`REVOCATION_MAX_BYTES`, default 1 MiB). */
  maxBytes: number;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  /** Listen address: `HOST`, else `127.0.0.1` in development (its conveniences stay local), else `0.0.0.0`. */
  host: string;
  /** True when `HOST` was set: development conveniences on a non-local listen get a warning at start. */
  hostExplicit: boolean;
  /**
   * The spec's rate limits (`RATE_LIMITS`, `REDIS_URL`): off only on an operator's explicit `RATE_LIMITS=off`
   * (refused in production); counted in Redis when `redisUrl` is set (one budget for all instances).
   */
  rateLimits: { enabled: boolean; redisUrl: string | undefined };
  /**
   * Sign-in and sign-up budgets per client IP (`SIGNIN_LIMIT_PER_MINUTE`, `SIGNUP_LIMIT_PER_HOUR`), counted in
   * the rate limit store (Redis with `REDIS_URL`); off with `RATE_LIMITS=off`. `signInPerMinute`: requests to
   * the endpoints that start or finish a sign-in (SIWE nonce and verify, code e-mail and code sign-in);
   * `signUpPerHour`: accounts and organizations created; `codeMailPerHour`: code e-mails to one address
   * (`CODE_MAIL_LIMIT_PER_HOUR`), whatever the client IP.
   */
  authLimits: { signInPerMinute: number; signUpPerHour: number; codeMailPerHour: number };
  /**
   * Free bytes the volumes holding `DATA_DIR` (and the stored files) and the capture's temporary directory keep
   * (`DISK_FREE_FLOOR_BYTES`, default 1 GiB): below it every intake is refused with 507. 0: no guard.
   */
  diskFreeFloorBytes: number;
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
  /**
   * Timeouts of the HTTP server (`HTTP_KEEP_ALIVE_SECONDS`, default 65: longer than the 60 s idle timeout of
   * common load balancers; `HTTP_REQUEST_TIMEOUT_SECONDS`, default 1800: a whole request, a 250 MB upload on a
   * slow line included). See `applyHttpTimeouts`.
   */
  http: { keepAliveSeconds: number; requestTimeoutSeconds: number };
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
  /**
   * Bytes a tenant may keep in object storage, summed over its live documents' files (`TENANT_STORAGE_QUOTA_BYTES`,
   * default 10 GiB); an upload that would pass it is 413. 0: no quota.
   */
  tenantStorageQuotaBytes: number;
  /** Hours between two sweeps of orphaned objects (`ORPHAN_SWEEP_HOURS`, default 6); 0 disables the timer. */
  orphanSweepHours: number;
  /** Anchoring of document hashes on chains (`ANCHORING` and the chain variables). */
  anchoring: AnchoringConfig;
  /** Name printed on certificates and on the mark stamped on every page (`SERVICE_NAME`). */
  serviceName: string;
  /** Undefined: `?signed=1` certificates come back unsigned (`X-Service-Signed: none`). */
  signing: SigningConfig | undefined;
  /** Undefined: the timestamp route answers 503 and signatures are PAdES B-B (no signature timestamp). */
  tsa: TsaConfig | undefined;
  /** Revocation data fetching for B-LT and B-LTA signatures. */
  revocation: RevocationConfig;
  /**
   * PEM file of the certificates the signers of an uploaded PDF's own signatures may chain to, as the
   * certificate and receipt report them (`SIGNATURE_TRUST_CERTS`); unset: chains are not checked.
   */
  signatureTrustCertsPath: string | undefined;
  /** Web capture: Chromium, bounds, allowed destinations. */
  capture: CaptureSettings;
  /**
   * Public endpoints announced to verifiers (`VERIFY_EVM_RPC_URLS`, `VERIFY_STACKS_API_URLS`; issue 16): the
   * web verify page asks them, with CORS, from the user's browser. Never the service's own `EVM_RPC_URL` /
   * `STACKS_API_URL`, which may carry an API key. The devnets' endpoints are added at start (`ANCHORING=devnet`).
   */
  verifyEndpoints: VerifyEndpoints;
  /** IPFS import: gateways, public links, timeouts, concurrency. */
  ipfs: IpfsConfig;
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
  if (e.NODE_ENV === 'production' && e.RATE_LIMITS === 'off') {
    throw new Error('Invalid configuration:\n  RATE_LIMITS=off is refused with NODE_ENV=production');
  }
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
    host: e.HOST ?? (e.NODE_ENV === 'development' ? '127.0.0.1' : '0.0.0.0'),
    hostExplicit: e.HOST !== undefined,
    rateLimits: { enabled: e.RATE_LIMITS === 'on', redisUrl: e.REDIS_URL },
    authLimits: {
      signInPerMinute: e.SIGNIN_LIMIT_PER_MINUTE,
      signUpPerHour: e.SIGNUP_LIMIT_PER_HOUR,
      codeMailPerHour: e.CODE_MAIL_LIMIT_PER_HOUR,
    },
    diskFreeFloorBytes: e.DISK_FREE_FLOOR_BYTES,
    dataDir,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    secret: e.SECRET,
    allowedOrigins: e.ALLOWED_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    http: {
      keepAliveSeconds: e.HTTP_KEEP_ALIVE_SECONDS,
      requestTimeoutSeconds: e.HTTP_REQUEST_TIMEOUT_SECONDS,
    },
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
    tenantStorageQuotaBytes: e.TENANT_STORAGE_QUOTA_BYTES,
    orphanSweepHours: e.ORPHAN_SWEEP_HOURS,
    anchoring: anchoringConfig(e),
    serviceName: e.SERVICE_NAME,
    signing: signingConfig(e),
    tsa:
      e.TSA_URL === undefined
        ? undefined
        : { url: e.TSA_URL, caCertsPath: e.TSA_CA_CERTS, timeoutMs: e.TSA_TIMEOUT_MS },
    revocation: { timeoutMs: e.REVOCATION_TIMEOUT_MS, maxBytes: e.REVOCATION_MAX_BYTES },
    signatureTrustCertsPath:
      e.SIGNATURE_TRUST_CERTS === undefined ? undefined : path.resolve(e.SIGNATURE_TRUST_CERTS),
    capture: {
      chromiumPath: e.CHROMIUM_PATH,
      timeoutMs: e.CAPTURE_TIMEOUT_MS,
      concurrency: e.CAPTURE_CONCURRENCY,
      allowHosts: parseAllowHosts(e.CAPTURE_ALLOW_HOSTS),
      caCertsPath: e.CAPTURE_CA_CERTS === undefined ? undefined : path.resolve(e.CAPTURE_CA_CERTS),
      egressIp: e.CAPTURE_EGRESS_IP,
      user: e.CAPTURE_USER,
      tenantMax: e.CAPTURE_TENANT_MAX,
    },
    verifyEndpoints: { evmRpcUrls: e.VERIFY_EVM_RPC_URLS, stacksApiUrls: e.VERIFY_STACKS_API_URLS },
    ipfs: {
      gateways: e.IPFS_GATEWAYS,
      publicGateway: e.IPFS_PUBLIC_GATEWAY,
      timeoutMs: e.IPFS_TIMEOUT_MS,
      importTimeoutMs: e.IPFS_IMPORT_TIMEOUT_MS,
      concurrency: e.IPFS_IMPORT_CONCURRENCY,
    },
  };
}

function signingConfig(e: Env): SigningConfig | undefined {
  const level = e.SIGNING_LEVEL ?? (e.TSA_URL === undefined ? 'B-B' : 'B-LTA');
  if (level !== 'B-B' && e.TSA_URL === undefined) {
    throw new Error(
      `Invalid configuration:\n  SIGNING_LEVEL=${level} needs a Time-Stamping Authority for its timestamps: set TSA_URL, or SIGNING_LEVEL=B-B`,
    );
  }
  const policy = e.SIGNING_POLICY;
  const needs: Partial<Record<typeof policy, { level: typeof level; why: string }>> = {
    'icp-brasil-ad-rt': { level: 'B-T', why: 'a signature timestamp (DOC-ICP-15.03 Tabela A.15)' },
    'icp-brasil-ad-rc': {
      level: 'B-LTA',
      why: 'a DSS, a VRI and a document timestamp (DOC-ICP-15.03 Tabela A.22)',
    },
    'icp-brasil-ad-ra': {
      level: 'B-LTA',
      why: 'a DSS, a VRI and a document timestamp (DOC-ICP-15.03 Tabela A.22)',
    },
  };
  const need = needs[policy];
  if (need && e.TSA_URL === undefined) {
    throw new Error(
      `Invalid configuration:\n  SIGNING_POLICY=${policy} needs ${need.why}: set TSA_URL (a Time-Stamping Authority)`,
    );
  }
  const order = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
  if (need && order.indexOf(level) < order.indexOf(need.level)) {
    throw new Error(
      `Invalid configuration:\n  SIGNING_POLICY=${policy} needs ${need.why}: set SIGNING_LEVEL=${need.level} (it is ${level})`,
    );
  }
  let artifacts: IcpBrasilArtifacts | undefined;
  if (policy === 'icp-brasil-ad-ra') {
    if (e.ICP_BRASIL_ARTIFACTS_DIR === undefined) {
      throw new Error(
        'Invalid configuration:\n  SIGNING_POLICY=icp-brasil-ad-ra needs the policy file, the list of approved policies and ' +
          'its signature in the DSS (DOC-ICP-15.03 Tabela A.19): set ICP_BRASIL_ARTIFACTS_DIR to a directory holding ' +
          `${Object.values(ICP_BRASIL_ARTIFACT_FILES).join(', ')} (download them from ${ICP_BRASIL_ARTIFACTS_URL})`,
      );
    }
    artifacts = loadIcpBrasilArtifacts(path.resolve(e.ICP_BRASIL_ARTIFACTS_DIR));
  }
  if (e.SIGNING_CERT === undefined) {
    if (e.SIGNING_KEY !== undefined) {
      throw new Error('Invalid configuration:\n  SIGNING_KEY is set: also set SIGNING_CERT (the PEM chain)');
    }
    return undefined;
  }
  return {
    certPath: path.resolve(e.SIGNING_CERT),
    keyPath: e.SIGNING_KEY === undefined ? undefined : path.resolve(e.SIGNING_KEY),
    password: e.SIGNING_CERT_PASSWORD,
    location: e.SIGNING_LOCATION,
    level,
    policy,
    ...(artifacts ? { artifacts } : {}),
  };
}

type Env = z.infer<typeof EnvSchema>;

/** Resolves `ANCHORING` and the chain variables; throws `Error` naming what is missing or contradictory. */
function anchoringConfig(e: Env): AnchoringConfig {
  const fail = (message: string): never => {
    throw new Error(`Invalid configuration:\n  ${message}`);
  };
  const chainsSet = e.EVM_RPC_URL !== undefined || e.STACKS_API_URL !== undefined;
  // Production never guesses: with no chain configured it would anchor on a throwaway devnet and report
  // documents as registered on a chain that vanishes at the next start.
  if (e.NODE_ENV === 'production' && e.ANCHORING === undefined && !chainsSet) {
    fail(
      'ANCHORING: NODE_ENV=production needs a chain (EVM_RPC_URL and/or STACKS_API_URL) or an explicit ANCHORING=off',
    );
  }
  const mode = e.ANCHORING ?? (chainsSet ? 'configured' : 'devnet');
  if (mode === 'off') return { mode };
  const batchMax = e.ANCHOR_BATCH_MAX;
  const replacement: AnchorReplacementConfig = {
    ...(e.ANCHOR_STUCK_SECONDS === undefined ? {} : { stuckAfterSeconds: e.ANCHOR_STUCK_SECONDS }),
    ...(e.ANCHOR_FEE_BUMP_PERCENT === undefined ? {} : { feeBumpPercent: e.ANCHOR_FEE_BUMP_PERCENT }),
  };
  if (mode === 'devnet') {
    if (chainsSet)
      fail('ANCHORING=devnet: unset EVM_RPC_URL and STACKS_API_URL (or use ANCHORING=configured)');
    return {
      mode,
      batchSeconds: e.ANCHOR_BATCH_SECONDS ?? 2,
      batchMax,
      evmConfirmations: e.EVM_CONFIRMATIONS ?? 1,
      stacksConfirmations: e.STACKS_CONFIRMATIONS ?? 1,
      ...replacement,
    };
  }
  if (!chainsSet) fail('ANCHORING=configured: set EVM_RPC_URL and/or STACKS_API_URL');
  let evm: EvmAnchoringConfig | undefined;
  if (e.EVM_RPC_URL !== undefined) {
    const preset = e.EVM_NETWORK === undefined ? undefined : EVM_NETWORK_PRESETS[e.EVM_NETWORK];
    const chainId = e.EVM_CHAIN_ID ?? preset?.chainId;
    const easAddress = e.EAS_ADDRESS ?? preset?.easAddress;
    const schemaRegistryAddress = e.EAS_SCHEMA_REGISTRY_ADDRESS ?? preset?.schemaRegistryAddress;
    const missing = [
      e.EVM_PRIVATE_KEY === undefined ? 'EVM_PRIVATE_KEY' : undefined,
      chainId === undefined ? 'EVM_CHAIN_ID' : undefined,
      easAddress === undefined ? 'EAS_ADDRESS' : undefined,
      schemaRegistryAddress === undefined ? 'EAS_SCHEMA_REGISTRY_ADDRESS' : undefined,
    ].filter((m): m is string => m !== undefined);
    if (missing.length > 0) {
      fail(
        `EVM_RPC_URL is set: also set ${missing.join(', ')} (or an EVM_NETWORK with presets: sepolia, base-sepolia)`,
      );
    }
    evm = {
      rpcUrl: e.EVM_RPC_URL,
      privateKey: e.EVM_PRIVATE_KEY as string,
      network: e.EVM_NETWORK ?? `evm-${chainId}`,
      chainId: chainId as number,
      easAddress: easAddress as string,
      schemaRegistryAddress: schemaRegistryAddress as string,
      schemaUid: e.EAS_SCHEMA_UID,
      confirmations: e.EVM_CONFIRMATIONS ?? 3,
      explorerTxPrefix: stripSlash(e.EVM_EXPLORER_TX_PREFIX ?? preset?.explorerTxPrefix ?? ''),
      attestationScanPrefix: stripSlash(e.EAS_SCAN_PREFIX ?? preset?.attestationScanPrefix ?? ''),
    };
  }
  let stacks: StacksAnchoringConfig | undefined;
  if (e.STACKS_API_URL !== undefined) {
    if (e.STACKS_PRIVATE_KEY === undefined || e.STACKS_CONTRACT_ID === undefined) {
      fail('STACKS_API_URL is set: also set STACKS_PRIVATE_KEY and STACKS_CONTRACT_ID');
    }
    stacks = {
      apiUrl: e.STACKS_API_URL,
      privateKey: (e.STACKS_PRIVATE_KEY as string).replace(/^0x/, ''),
      contractId: e.STACKS_CONTRACT_ID as string,
      network: e.STACKS_NETWORK,
      confirmations: e.STACKS_CONFIRMATIONS ?? 3,
      explorerTxPrefix: stripSlash(e.STACKS_EXPLORER_TX_PREFIX),
      apiKind: e.STACKS_API_KIND,
      apiKey: e.STACKS_API_KEY,
      apiRpm: e.STACKS_API_RPM,
    };
  }
  return { mode, batchSeconds: e.ANCHOR_BATCH_SECONDS ?? 60, batchMax, evm, stacks, ...replacement };
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function parseTrustProxy(value: string): string | boolean | number {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
