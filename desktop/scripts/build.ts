/**
 * Builds the desktop client into `desktop/dist/` (configurations in `vite-config.ts`): `web/` (the renderer;
 * the server serves it at `/app/`), `main/index.cjs` with `main/certificate-worker.cjs`, and
 * `preload/index.cjs` (Electron).
 * `tsx scripts/build.ts` builds all three (root `prepare` on `npm install`/`npm ci`, and `npm run build`);
 * `tsx scripts/build.ts web` only the web client.
 */
import { build } from 'vite';
import { electronConfig, webConfig } from './vite-config';

const only = process.argv[2];
const started = Date.now();
await build(webConfig);
if (only !== 'web') {
  await build(electronConfig('src/main/index.ts', 'dist/main'));
  await build(electronConfig('src/main/certificate-worker.ts', 'dist/main', 'certificate-worker.cjs', true));
  await build(electronConfig('src/preload/index.ts', 'dist/preload'));
}
console.log(
  `desktop: built ${only === 'web' ? 'dist/web' : 'dist/{web,main,preload}'} in ${Date.now() - started} ms`,
);
