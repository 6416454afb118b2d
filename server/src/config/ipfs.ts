import { z } from 'zod';
import { isBaseUrl, stripSlash } from './env';

/** Where IPFS imports fetch blocks by default: a public trustless gateway (IPFS Trustless Gateway spec). */
export const DEFAULT_IPFS_GATEWAY = 'https://trustless-gateway.link';
/** Base of the download and view links of IPFS imports by default. */
export const DEFAULT_IPFS_PUBLIC_GATEWAY = 'https://ipfs.io';

/** IPFS import (README, Configuration). */
export const IpfsEnv = z.object({
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
});
export type IpfsEnv = z.infer<typeof IpfsEnv>;

/**
 * IPFS import (a file notarized by its CID): trustless gateways the bytes are fetched from and verified
 * (`IPFS_GATEWAYS`), the public gateway of download and view links (`IPFS_PUBLIC_GATEWAY`), how long one block
 * request and one whole import may take, and how many imports run at once.
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
   * Imports read from IPFS at once in this process (`IPFS_IMPORT_CONCURRENCY`, default 4), as many waiting
   * their turn across tenants, one tenant holding at most as many; past that RATE_LIMITED (429) with a
   * `retryAfterSeconds`. Certificate reads have their own slots, half as many (`createIpfsReadQueues`).
   */
  concurrency: number;
}

/** The IPFS import settings of `e`. */
export function ipfsConfig(e: IpfsEnv): IpfsConfig {
  return {
    gateways: e.IPFS_GATEWAYS,
    publicGateway: e.IPFS_PUBLIC_GATEWAY,
    timeoutMs: e.IPFS_TIMEOUT_MS,
    importTimeoutMs: e.IPFS_IMPORT_TIMEOUT_MS,
    concurrency: e.IPFS_IMPORT_CONCURRENCY,
  };
}
