import { startService } from './bootstrap';
import { loadConfig } from './config';

/** Composition root: `npm start`. Reads the configuration once, starts HTTP, stops cleanly on signals. */
async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  console.log(
    `[notary] listening on ${service.url} (database: ${service.deps.db.kind}, storage: ${service.deps.storage.kind}, data: ${config.dataDir})`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[notary] ${signal}: shutting down`);
    await service.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e: unknown) => {
  console.error(`[notary] failed to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
