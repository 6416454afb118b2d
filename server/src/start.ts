import { createLogger, type Logger, lifecycleLogger } from '@notary/platform/log';
import { errorMessage } from '@notary/shared';
import { serviceLogger, startService } from './bootstrap';
import { loadConfig } from './config';

/** The lifecycle lines' logger (printed at every `LOG_LEVEL`), once the configuration is read. */
let notary: Logger | undefined;

/** Composition root (`npm start`, through `main.ts`): reads the configuration once, starts HTTP, stops cleanly on signals. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = serviceLogger(config);
  const lifecycle = lifecycleLogger(log, 'notary');
  notary = lifecycle;
  const service = await startService(config, { log });
  // The one line that keeps its `[notary]` prefix in the message: scripts and tests wait for `[notary] listening
  // on <url>` in the JSON lines of production as in the text lines elsewhere.
  lifecycle.info(
    `[notary] listening on ${service.url} (database: ${service.deps.db.kind}, storage: ${service.deps.storage.kind}, data: ${config.dataDir})`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    lifecycle.info(`${signal}: shutting down`);
    await service.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e: unknown) => {
  // An invalid configuration fails before LOG_LEVEL and NODE_ENV are known: a readable line on stderr.
  (notary ?? createLogger({ level: 'info', format: 'text' }).child({ module: 'notary' })).error(
    `failed to start: ${errorMessage(e)}`,
  );
  process.exit(1);
});
