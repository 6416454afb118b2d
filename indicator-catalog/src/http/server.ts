import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CatalogDeps } from '../catalog';
import { createHttpApp } from './app';

export interface RunningHttp {
  /** `http://host:port` */
  url: string;
  close(): Promise<void>;
}

/** Starts the catalog's HTTP face on `host:port` (port 0 picks a free one). */
export async function startHttp(deps: CatalogDeps, host: string, port: number): Promise<RunningHttp> {
  const app = createHttpApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  const address = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
