import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** The metrics server: where it listens, and how to stop it. */
export interface MetricsServer {
  /** `http://<host>:<port>` (the port chosen by the system when 0 was asked). */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` of `registry` (Prometheus text exposition format 0.0.4) on `host:port`, a listener of its
 * own: never on the public port, so what the operator watches is not published by accident (`METRICS_HOST`
 * defaults to loopback; a scraper on another machine needs it set, and a firewall). Anything else is 404.
 * @throws the listen error (port taken, address not local).
 */
export async function startMetricsServer(
  registry: Registry,
  where: { port: number; host: string },
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?', 1)[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n'),
    );
  });
  // A scraper keeps its connection; nothing else should hold one for long.
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
