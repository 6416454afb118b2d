import type { Server } from 'node:http';
import express from 'express';

/**
 * Whether an address is one of the proxies `TRUST_PROXY` names, compiled by Express exactly as it decides whom
 * to believe in `X-Forwarded-For` (`trust proxy`): `loopback`, a list of addresses or subnets, `true` (every
 * address) or a hop count (every address, as the first hop).
 */
export function trustedProxy(trustProxy: string | boolean | number): (address: string) => boolean {
  const trust = express().set('trust proxy', trustProxy).get('trust proxy fn') as (
    address: string,
    hop: number,
  ) => boolean;
  return (address) => trust(address, 0);
}

/**
 * Caps the connections `server` holds open at once per client address (the socket's remote address) at `max`:
 * a connection past it is closed as soon as it is accepted, before a byte of it is read, so one address cannot
 * hold every socket and file descriptor of the service with slow or idle connections. Addresses for which
 * `exempt` is true are not counted: a trusted proxy is one address for all of its clients (it caps per client
 * itself, e.g. nginx's `limit_conn`).
 * @returns the number of connections each counted address holds now (for tests and diagnostics).
 */
export function capConnectionsPerAddress(
  server: Server,
  max: number,
  exempt: (address: string) => boolean,
): ReadonlyMap<string, number> {
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || exempt(address)) return;
    const held = open.get(address) ?? 0;
    if (held >= max) {
      socket.destroy();
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
  return open;
}
