/**
 * `npm start` (and the built service's `main.mjs`): turns Node's compile cache on (`module.enableCompileCache`,
 * in the OS's temporary directory, or `NODE_COMPILE_CACHE`), then starts the service (`start.ts`). A restart then
 * reads V8's cached code of the service's modules and their dependencies instead of compiling them again; the
 * service is imported only here, since a static import graph is compiled before any of its code runs.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./start');
