import net from 'node:net';

/** A devnet started on its first use (`startLazyDevnet`): its addresses, the start, and `stop`. */
export interface LazyDevnet<D, K extends string = string> {
  /** `http://127.0.0.1:<port>` of each target, by its name: they listen from the start. */
  readonly urls: Readonly<Record<K, string>>;
  /**
   * The running devnet, started by this call if nothing started it yet. A failed start rejects this call and
   * every call waiting on it; the next call tries again. Rejects once `stop` was called.
   */
  use(): Promise<D>;
  /** True once a start has succeeded (a connection or a `use`). */
  started(): boolean;
  /** Closes the addresses, cuts their open connections, and stops the devnet if it was started (idempotent). */
  stop(): Promise<void>;
}

/**
 * The devnets of the service (`ANCHORING=devnet`) cost memory (a VM, its modules, its chain) that a service
 * which has not anchored anything yet does not need, yet their addresses must be known at start: printed,
 * recorded for `devnet:info`, announced to verifiers, configured in the chain adapters. Each address given by
 * `targets` (by name) listens here at once, on a free loopback port; the first connection to any of them (or the first
 * `use()`) runs `start`, and every connection is then forwarded, bytes as they are, to the address `target`
 * picks from the started devnet. A failed start is reported to `onStartError` and the waiting connections are
 * closed, as a node that is down; the next use tries again. The listeners are unref'd: as the devnets' own
 * servers, they keep no process alive.
 * @throws the listen error when a loopback port cannot be had (nothing is left listening then).
 */
export async function startLazyDevnet<D extends { stop(): Promise<void> }, K extends string>(
  start: () => Promise<D>,
  targets: Record<K, (devnet: D) => string>,
  onStartError: (e: unknown) => void,
): Promise<LazyDevnet<D, K>> {
  let devnet: Promise<D> | undefined;
  let running: D | undefined;
  let stopped = false;
  const use = (): Promise<D> => {
    if (stopped) return Promise.reject(new Error('the devnet is stopped'));
    devnet ??= start().then(
      (d) => {
        running = d;
        return d;
      },
      (e: unknown) => {
        devnet = undefined;
        onStartError(e);
        throw e;
      },
    );
    return devnet;
  };
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const forward = (target: (d: D) => string) => (socket: net.Socket) => {
    track(socket);
    use().then(
      (d) => {
        if (socket.destroyed) return;
        const upstream = net.connect(Number(new URL(target(d)).port), '127.0.0.1');
        track(upstream);
        upstream.on('close', () => socket.destroy());
        socket.on('close', () => upstream.destroy());
        socket.pipe(upstream).pipe(socket);
      },
      () => socket.destroy(),
    );
  };
  const servers: net.Server[] = [];
  const closeAll = () =>
    Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  const urls = {} as Record<K, string>;
  try {
    for (const [name, target] of Object.entries(targets) as [K, (devnet: D) => string][]) {
      const server = await listen(forward(target));
      servers.push(server);
      urls[name] = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    }
  } catch (e) {
    await closeAll();
    throw e;
  }
  return {
    urls,
    use,
    started: () => running !== undefined,
    stop: async () => {
      stopped = true;
      const closed = closeAll();
      // `close` waits for the open connections: kept-alive clients' are cut here.
      for (const socket of sockets) socket.destroy();
      await closed;
      const d = await devnet?.catch(() => undefined);
      await d?.stop();
    },
  };
}

/** A loopback server on a free port whose connections arrive paused (nothing is read before the start). */
async function listen(onConnection: (socket: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer({ pauseOnConnect: true }, onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  return server;
}

/**
 * The methods `names` of what `target` picks from the started devnet, as functions that start it first
 * (`lazy.use()`): a devnet control called before any connection starts the devnet, then runs.
 * @returns one function per name, with the method's arguments, resolving with its result.
 */
export function callsAfterStart<D, K extends string>(
  lazy: Pick<LazyDevnet<D>, 'use'>,
  names: readonly K[],
  target: (devnet: D) => Record<K, unknown>,
): Record<K, (...args: unknown[]) => Promise<unknown>> {
  return Object.fromEntries(
    names.map((name) => [
      name,
      async (...args: unknown[]) => {
        const method = target(await lazy.use())[name] as (...a: unknown[]) => unknown;
        return method(...args);
      },
    ]),
  ) as Record<K, (...args: unknown[]) => Promise<unknown>>;
}
