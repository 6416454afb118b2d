/**
 * `npm run start:catalog`: the indicator catalog on `CATALOG_HOST:CATALOG_PORT` (default 127.0.0.1:3100)
 * with the reference provider on `PROVIDER_HOST:PROVIDER_PORT` (default 127.0.0.1:3200; off with
 * `CATALOG_REFERENCE_PROVIDER=0`), allowed by its exact address (`host:port`) besides
 * `CATALOG_PROVIDER_ALLOW_HOSTS`. On start it registers the reference provider and syncs it; `GET /health`
 * answers `{status:'ok'}` once that first sync is done. Refuses to start (exit 1, before listening) when it
 * would listen beyond loopback without `CATALOG_ADMIN_TOKEN`.
 */
import { lifecycleLogger } from '@notary/platform/log';
import { exactEntryFor } from '@notary/platform/net/address-policy';
import { errorMessage } from '@notary/shared';
import { startReferenceProvider } from '../reference-provider/src/server';
import { bootstrap } from './bootstrap';
import { catalogLogger, openCatalog } from './catalog';
import { loadConfig } from './config';
import { adminAccessFor } from './http/admin-access';
import { startHttp } from './http/server';

const loaded = loadConfig();
const log = catalogLogger(loaded);
// The start, its warnings, its failures and the listening lines are printed at every LOG_LEVEL.
const lifecycle = lifecycleLogger(log, 'catalog');
try {
  const admin = adminAccessFor(loaded, loaded.host);
  if (admin.mode === 'open') {
    lifecycle.warn('CATALOG_ADMIN_OPEN=1: admin routes need no token (loopback listen only)');
  } else if (admin.mode === 'token' && loaded.adminOpen) {
    lifecycle.warn('CATALOG_ADMIN_OPEN=1 ignored: CATALOG_ADMIN_TOKEN is set');
  }
} catch (e) {
  lifecycle.error(errorMessage(e));
  process.exit(1);
}
const provider = loaded.referenceProvider.enabled
  ? await startReferenceProvider(loaded.referenceProvider)
  : undefined;
if (provider) lifecycle.info(`reference provider listening on ${provider.url}`);
// The reference provider runs on loopback: allowed by its exact address, nothing wider.
const config = provider
  ? {
      ...loaded,
      provider: {
        ...loaded.provider,
        allowHosts: [...loaded.provider.allowHosts, exactEntryFor(provider.url)],
      },
    }
  : loaded;
const catalog = await openCatalog(config, { log });
const { deps } = catalog;
const http = await startHttp(deps, config.host, config.port);
// The one line that keeps its `[catalog]` prefix in the message: scripts and tests wait for `[catalog] listening
// on <url>` in the JSON lines of production as in the text lines elsewhere.
lifecycle.info(
  `[catalog] listening on ${http.url} (database: ${deps.db.kind}, vector index: ${deps.index.kind}, embedder: ${deps.embedder.id}, data: ${config.dataDir})`,
);

const shutdown = new AbortController();
const started = bootstrap(deps, {
  ...(provider ? { referenceUrl: provider.url } : {}),
  signal: shutdown.signal,
}).catch((e: unknown) => {
  deps.readiness = { status: 'error', detail: errorMessage(e) };
  lifecycle.error({ err: e }, 'startup failed');
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  shutdown.abort();
  await http.close();
  await catalog.close();
  await started;
  await provider?.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
