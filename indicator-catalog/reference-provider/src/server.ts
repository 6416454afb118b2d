import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReferenceProviderApp } from './app';
import { loadReferenceData, type ReferenceData } from './data';

export interface RunningProvider {
  /** `http://host:port` */
  url: string;
  close(): Promise<void>;
}

/** Starts the reference provider on `host:port` (port 0 picks a free one). */
export async function startReferenceProvider(options: {
  host: string;
  port: number;
  data?: ReferenceData;
}): Promise<RunningProvider> {
  const app = createReferenceProviderApp(options.data ?? loadReferenceData());
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port, options.host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
