import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test support: a loopback "RPC provider" in front of a real JSON-RPC node (the Hardhat devnet). It answers at
 * any path and query (a provider's `/v3/<key>?apikey=…`), forwards each POST body to the node and returns the
 * node's answer, and records every request. A test injects a provider's faults into the next requests (429
 * with or without `Retry-After`, 500, a JSON-RPC error, a dropped connection) and can stop listening (the
 * client then gets "connection refused") and listen again on the same port.
 */

/** One request the proxy received. */
export interface ProxiedRequest {
  /** Path and query as the client sent them (a key in the URL included). */
  url: string;
  /** The `Authorization` header (credentials of a `user:pass@` URL arrive here). */
  authorization: string | undefined;
  /** The JSON-RPC methods of the body, in order (a batch lists several). */
  methods: string[];
  /** `forwarded` to the node, or the injected fault's kind. */
  answer: 'forwarded' | ProxyFault['kind'];
  /** `RpcProxyOptions.clock` when the request arrived (ms). */
  at: number;
}

/**
 * A provider's fault: an HTTP answer (`status`; `body` may be computed from the request, as careless providers
 * echo the URL they were called at), or `reset` (the connection is destroyed without an answer).
 */
export type ProxyFault =
  | {
      kind: 'answer';
      status: number;
      headers?: Record<string, string>;
      body?: string | ((request: ProxiedRequest) => string);
    }
  | { kind: 'reset' };

export interface RpcProxyOptions {
  /** The clock stamped on each request (default `Date.now`): a test's injected clock. */
  clock?: () => number;
}

export interface RpcProxy {
  /** `http://127.0.0.1:<port>`: append a provider-style path and query. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: ProxiedRequest[];
  /**
   * The next `count` requests calling any of `methods` (every request when omitted) get `fault` instead of
   * the node's answer. Faults queue in the order given.
   */
  fault(count: number, fault: ProxyFault, methods?: string[]): void;
  /** Faults not yet used. */
  pendingFaults(): number;
  /** Stops listening and drops open connections: clients get ECONNREFUSED until `accept()`. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

function methodsOf(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as unknown;
    const items = Array.isArray(parsed) ? parsed : [parsed];
    return items
      .map((i) => (typeof i === 'object' && i !== null ? (i as { method?: unknown }).method : undefined))
      .filter((m): m is string => typeof m === 'string');
  } catch {
    return [];
  }
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the proxy on 127.0.0.1, a free port, in front of the JSON-RPC node at `target`. */
export async function startRpcProxy(target: string, options: RpcProxyOptions = {}): Promise<RpcProxy> {
  const clock = options.clock ?? Date.now;
  const requests: ProxiedRequest[] = [];
  const faults: { remaining: number; fault: ProxyFault; methods: string[] | undefined }[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    if (body === undefined) {
      res.writeHead(413).end();
      return;
    }
    const record: ProxiedRequest = {
      url: req.url ?? '',
      authorization: req.headers.authorization,
      methods: methodsOf(body),
      answer: 'forwarded',
      at: clock(),
    };
    requests.push(record);
    const entry = faults.find(
      (f) => f.remaining > 0 && (!f.methods || record.methods.some((m) => f.methods?.includes(m))),
    );
    if (entry) {
      entry.remaining -= 1;
      if (entry.remaining === 0) faults.splice(faults.indexOf(entry), 1);
      record.answer = entry.fault.kind;
      if (entry.fault.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      const text =
        typeof entry.fault.body === 'function' ? entry.fault.body(record) : (entry.fault.body ?? '');
      res.writeHead(entry.fault.status, { 'content-type': 'application/json', ...entry.fault.headers });
      res.end(text);
      return;
    }
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const answer = await upstream.text();
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(answer);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  let listening = true;

  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${port}`,
    requests,
    fault(count, fault, methods) {
      if (count > 0) faults.push({ remaining: count, fault, methods });
    },
    pendingFaults: () => faults.reduce((n, f) => n + f.remaining, 0),
    async refuse() {
      if (!listening) return;
      listening = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
    async accept() {
      if (listening) return;
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      listening = true;
    },
    close: () => proxy.refuse(),
  };
  return proxy;
}
