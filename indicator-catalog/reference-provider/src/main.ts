/**
 * `npm run start:reference-provider -w @notary/indicator-catalog`: the reference provider alone, on
 * `PROVIDER_HOST:PROVIDER_PORT` (default 127.0.0.1:3200). `npm run start:catalog` starts it with the catalog.
 */
import { loadConfig } from '../../src/config';
import { startReferenceProvider } from './server';

const config = loadConfig();
const provider = await startReferenceProvider(config.referenceProvider);
console.log(`[reference-provider] listening on ${provider.url}`);
const stop = () => {
  void provider.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
