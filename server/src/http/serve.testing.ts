import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';

/** An app served by `serve`: its base URL (`http://127.0.0.1:<port>`) and what stops it. */
export interface Served {
  url: string;
  close: () => Promise<void>;
}

/** Test support: serves `app` on 127.0.0.1 and a free port until `close`. */
export async function serve(app: express.Express): Promise<Served> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
