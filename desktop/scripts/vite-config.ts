/**
 * Vite configurations of the desktop client (docs/desktop.md, Desktop client), used by `build.ts` and
 * `vite.dev.config.ts`:
 * - `dist/web/`: the renderer, a static React app. Electron loads it at `app://notary/`; the server serves the
 *   same files at `/app/` as the web client. Relative asset paths (`base: './'`) make both work.
 * - `dist/main/index.cjs`: the Electron main process, every dependency bundled but `electron` and the native
 *   addon `pkcs11js` (`NATIVE_EXTERNALS`); `dist/main/certificate-worker.cjs` beside it: the worker thread that
 *   parses certificate PDFs; the token's signing module a chunk of its own (`token-signing-<hash>.cjs`), loaded
 *   on first use, so that main starts where the optional addon is not installed.
 * - `dist/preload/index.cjs`: the sandboxed preload (a sandboxed preload may only require `electron`).
 */
import path from 'node:path';
import type { InlineConfig } from 'vite';

const desktopDir = path.resolve(import.meta.dirname, '..');

/**
 * Modules main requires at run time instead of bundling: Electron itself, and `pkcs11js`, a native N-API addon
 * (its `.node` binary cannot be bundled; the packaged app carries it in `node_modules`, electron-builder.yml).
 */
export const NATIVE_EXTERNALS = ['electron', 'pkcs11js'];

const shared: InlineConfig = { configFile: false, logLevel: 'warn', envPrefix: 'NOTARY_PUBLIC_' };

/** The renderer as a static site. */
export const webConfig: InlineConfig = {
  ...shared,
  root: path.join(desktopDir, 'src/renderer'),
  base: './',
  publicDir: path.join(desktopDir, 'src/renderer/public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: path.join(desktopDir, 'dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    // One stylesheet and one script: the strict CSP allows only same-origin files, nothing inline.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 2048,
  },
};

/**
 * A Node-side bundle for Electron (main, preload, or a worker of main), CommonJS, written as `fileName` in
 * `outDir` (relative to `desktop/`, or absolute; emptied first unless `keepOutDir`: a second bundle beside the
 * first).
 */
export function electronConfig(
  entry: string,
  outDir: string,
  fileName = 'index.cjs',
  keepOutDir = false,
): InlineConfig {
  return {
    ...shared,
    root: desktopDir,
    publicDir: false,
    build: {
      ssr: path.join(desktopDir, entry),
      outDir: path.resolve(desktopDir, outDir),
      emptyOutDir: !keepOutDir,
      target: 'node22',
      minify: false,
      rolldownOptions: {
        external: NATIVE_EXTERNALS,
        // `.cjs` chunks too: the package is `"type": "module"`, so a `.js` chunk would be read as ESM.
        output: { format: 'cjs', entryFileNames: fileName, chunkFileNames: '[name]-[hash].cjs' },
      },
    },
    ssr: { noExternal: true, external: NATIVE_EXTERNALS, target: 'node' },
  };
}
