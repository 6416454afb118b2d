import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CatalogDeps } from '../catalog';
import { type AdminAccess, adminAccessFor } from './admin-access';
import { createHttpApp } from './app';
import { allowedHostNames } from './host-check';

export interface RunningHttp {
  /** `http://host:port` */
  url: string;
  /** Who may use the admin routes on this listen. */
  admin: AdminAccess;
  close(): Promise<void>;
}

/**
 * Starts the catalog's HTTP face on `host:port` (port 0 picks a free one), with the admin access of that
 * listen (`adminAccessFor`), the `Host` names it answers to (`allowedHostNames`) and its OpenAPI `servers`
 * URL (`CATALOG_PUBLIC_URL`, else this listen's URL).
 * @throws Error before listening when `host` is beyond loopback and `CATALOG_ADMIN_TOKEN` is unset.
 */
export async function startHttp(deps: CatalogDeps, host: string, port: number): Promise<RunningHttp> {
  const admin = adminAccessFor(deps.config, host);
  let listenUrl = '';
  const app = createHttpApp(deps, {
    admin,
    hostNames: allowedHostNames(deps.config, host),
    publicUrl: () => deps.config.publicUrl ?? listenUrl,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  const address = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  listenUrl = `http://${shownHost}:${address.port}`;
  return {
    url: listenUrl,
    admin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
