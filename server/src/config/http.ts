import { z } from 'zod';
import { type NodeEnv, optionalString } from './env';

/** The HTTP server's variables (README, Configuration). */
export const HttpEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: optionalString,
  PUBLIC_URL: optionalString,
  ALLOWED_ORIGINS: z.string().default(''),
  TRUST_PROXY: z.string().default('loopback'),
  HTTP_KEEP_ALIVE_SECONDS: z.coerce.number().int().min(1).max(3600).default(65),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().int().min(10).max(86_400).default(1800),
  HTTP_BODY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  HTTP_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).max(100_000).default(64),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  SERVER_TIMING: z.enum(['on', 'off']).default('off'),
});
export type HttpEnv = z.infer<typeof HttpEnv>;

/** Where the service listens, the name it is reached by, and what its HTTP server trusts and waits for. */
export interface HttpSettings {
  port: number;
  /** Listen address: `HOST`, else `127.0.0.1` in development (its conveniences stay local), else `0.0.0.0`. */
  host: string;
  /** True when `HOST` was set: development conveniences on a non-local listen get a warning at start. */
  hostExplicit: boolean;
  /** Base URL the service is reached at; used in signed file URLs, mail links and the auth issuer. */
  publicUrl: string | undefined;
  allowedOrigins: string[];
  /** Express `trust proxy` setting: which proxies may set X-Forwarded-For (client IPs in records, rate limits). */
  trustProxy: string | boolean | number;
  /**
   * Timeouts of the HTTP server (`HTTP_KEEP_ALIVE_SECONDS`, default 65: longer than the 60 s idle timeout of
   * common load balancers; `HTTP_REQUEST_TIMEOUT_SECONDS`, default 1800: a whole request, a 250 MB upload on a
   * slow line included; `HTTP_BODY_TIMEOUT_SECONDS`, default 30: the body of any other request). See
   * `applyHttpTimeouts` and `bodyDeadline`.
   */
  http: { keepAliveSeconds: number; requestTimeoutSeconds: number; bodyTimeoutSeconds: number };
  /**
   * Open connections one client address may hold at once (`HTTP_MAX_CONNECTIONS_PER_IP`, default 64); the
   * proxies `TRUST_PROXY` names are not counted (`capConnectionsPerAddress`).
   */
  maxConnectionsPerIp: number;
  /**
   * Where Prometheus scrapes `/metrics` (`METRICS_PORT`, unset: no metrics server; `METRICS_HOST`, default
   * `127.0.0.1`): a port of its own, never the public one, so the operator's view is not published by accident.
   */
  metrics: { port: number; host: string } | undefined;
  /**
   * `SERVER_TIMING=on` (default off): an upload's answer carries `Server-Timing` with the wall time of each of
   * its stages (the upload bench reads it to say which stage was slow); off, nothing is measured.
   */
  serverTiming: boolean;
}

/** The HTTP settings of `e` (`env` picks the default listen address). */
export function httpSettings(e: HttpEnv, env: NodeEnv): HttpSettings {
  return {
    port: e.PORT,
    host: e.HOST ?? (env === 'development' ? '127.0.0.1' : '0.0.0.0'),
    hostExplicit: e.HOST !== undefined,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    allowedOrigins: e.ALLOWED_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    http: {
      keepAliveSeconds: e.HTTP_KEEP_ALIVE_SECONDS,
      requestTimeoutSeconds: e.HTTP_REQUEST_TIMEOUT_SECONDS,
      bodyTimeoutSeconds: e.HTTP_BODY_TIMEOUT_SECONDS,
    },
    maxConnectionsPerIp: e.HTTP_MAX_CONNECTIONS_PER_IP,
    metrics: e.METRICS_PORT === undefined ? undefined : { port: e.METRICS_PORT, host: e.METRICS_HOST },
    serverTiming: e.SERVER_TIMING === 'on',
  };
}

function parseTrustProxy(value: string): string | boolean | number {
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
