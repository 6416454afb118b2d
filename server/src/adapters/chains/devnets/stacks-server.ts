/**
 * The Stacks devnet's two loopback HTTP servers (127.0.0.1, port 0): `url`, the node (with Hiro's routes too
 * when `kind` is `hiro`, as api.hiro.so serves both), and `indexerUrl`, always a Hiro API (its `/extended`
 * routes and the `/v2` ones it proxies to the node). Each answer is checked against the pinned schemas when a
 * validator is loaded, logged, and sent.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Answer, drain, text, writeAnswer } from './stacks-http';
import { hiroRoute } from './stacks-indexer-routes';
import { isNodePath, nodeRoute } from './stacks-node-routes';
import type { StacksDevnetRequest, StacksDevnetState } from './stacks-state';

/** Bound of the request log (`requests()`). */
const MAX_LOGGED_REQUESTS = 10_000;

/** The two servers, listening: their ports, and `close` (which ends every connection). */
export interface StacksServers {
  nodePort: number;
  indexerPort: number;
  close(): Promise<void>;
}

/** Starts both servers on loopback, unref'd (they never keep the process alive). */
export async function listenStacksServers(state: StacksDevnetState): Promise<StacksServers> {
  const servers: Server[] = [];
  for (const address of ['url', 'indexer'] as const) {
    const server = createServer((req, res) => {
      serve(state, address, req, res).catch((err: unknown) => {
        if (!res.headersSent) writeAnswer(res, text(500, `Internal Server Error: ${String(err)}`));
      });
    });
    servers.push(server);
  }
  for (const server of servers) {
    // Loopback only: no idle timeout on kept-alive connections, so a client that blocked its event loop (the
    // devnets start WebAssembly in-process) never sends on a socket this side is closing (ECONNRESET).
    server.keepAliveTimeout = 0;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    server.unref();
  }
  const [nodePort = 0, indexerPort = 0] = servers.map((server) => (server.address() as AddressInfo).port);
  return {
    nodePort,
    indexerPort,
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}

/** Answers one request on `address`: routes it, checks the answer against the schemas, logs it and sends it. */
async function serve(
  state: StacksDevnetState,
  address: StacksDevnetRequest['address'],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = req.url ?? '/';
  const pathname = new URL(path, 'http://devnet').pathname;
  const hiro = address === 'indexer' || state.switches.kind === 'hiro';
  const indexerRoute = pathname === '/extended' || pathname.startsWith('/extended/');
  let answer = await route(state, req, hiro);
  const { validate, record } = state.schemaCheck;
  if (validate && req.method !== 'OPTIONS') {
    const found = validate({
      method: req.method ?? 'GET',
      path,
      status: answer.status,
      contentType: answer.headers['content-type'],
      body: answer.body,
      headers: answer.headers,
      server: hiro && (indexerRoute || !isNodePath(pathname)) ? 'indexer' : 'node',
    });
    if (found.length > 0) {
      for (const v of found) record(`Stacks devnet answer breaks the pinned schemas: ${v}`);
      if (state.switches.strict) {
        answer = text(500, `Stacks devnet answer breaks the pinned schemas:\n${found.join('\n')}`);
      }
    }
  }
  const apiKey = req.headers['x-api-key'];
  const { log } = state;
  log.push({
    address,
    method: req.method ?? 'GET',
    path,
    status: answer.status,
    at: Date.now(),
    ...(typeof apiKey === 'string' ? { apiKey } : {}),
  });
  if (log.length > MAX_LOGGED_REQUESTS) log.splice(0, log.length - MAX_LOGGED_REQUESTS);
  writeAnswer(res, answer);
}

/** The answer to a request: CORS preflight, Hiro's gateway limit, then the indexer's or the node's routes. */
async function route(state: StacksDevnetState, req: IncomingMessage, hiro: boolean): Promise<Answer> {
  const method = req.method ?? 'GET';
  // CORS preflight, as stacks-core answers it (stackslib/src/net/http/response.rs); the web verify page reads
  // the devnet from a browser.
  if (method === 'OPTIONS') {
    return {
      status: 204,
      headers: {
        'access-control-allow-methods': 'POST, GET, OPTIONS',
        'access-control-allow-headers': 'origin, content-type',
        'access-control-max-age': '600',
      },
      body: '',
    };
  }
  const url = new URL(req.url ?? '/', 'http://devnet');
  const pathname = url.pathname;
  const parts = pathname.split('/').filter((p) => p !== '');
  if (hiro) {
    const limited = state.limiter(Date.now());
    if (limited) {
      await drain(req, 0);
      return limited;
    }
  }
  if (hiro && (pathname === '/extended' || pathname.startsWith('/extended/'))) {
    await drain(req, 0);
    return hiroRoute(state, method, url, parts);
  }
  return nodeRoute(state, method, url, parts, req, hiro);
}
