/**
 * Builds the notarization service for production into `server/dist/` (docs/deployment.md, "Production build"):
 * - `main.mjs`: the service (`node --max-semi-space-size=16 --heap-growing-percent=100 server/dist/main.mjs` with
 *   glibc's malloc settings, what `npm run start:production` runs); like `npm start`, it turns Node's compile
 *   cache on before loading the rest (server/src/main.ts);
 * - `cli.mjs`: the operator CLI (`node server/dist/cli.mjs <command>`);
 * - one `.mjs` per worker thread and child process the service starts (`moduleEntry` finds them beside the
 *   bundle by these names), and the chunks they share (`chunk-<hash>.mjs`), all in the one directory.
 * This repository's code (the `@notary/*` workspaces) is bundled and its TypeScript compiled once, here, instead
 * of by tsx at every start. A package of `node_modules` stays an import that Node resolves at run time when Node
 * would find the same package from `server/dist/` as from the module importing it; a workspace that keeps its own
 * version (e.g. platform's `ipaddr.js` 2) gets it bundled, so the built service runs exactly the versions the
 * sources do. `node_modules` must therefore be present beside the build (`npm ci --omit=dev` is not enough: the
 * devnets and PGlite are dependencies of the embedded defaults, and they are there).
 *
 * Usage: `node server/build/build.ts` (`npm run build:server`, also part of `npm run build`); prints each file and
 * its size. The output depends only on the sources and the installed packages.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Plugin } from 'esbuild';

/** The repository's root: esbuild's working directory, so the names in the bundle are relative to it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the build goes; `repositoryFile` and `moduleEntry` (shared/src/module-entry.ts) depend on this place. */
export const SERVER_DIST_DIR = path.join(ROOT, 'server', 'dist');

/**
 * Every entry: the two programs, and each worker thread's and child process's module under the name its
 * starter asks `moduleEntry` for.
 */
export const SERVER_ENTRIES: Readonly<Record<string, string>> = {
  main: 'server/src/main.ts',
  cli: 'server/src/cli/main.ts',
  'pglite-worker.thread': 'platform/src/db/pglite-worker.thread.ts',
  'stacks-devnet.thread': 'server/src/adapters/chains/stacks-devnet.thread.ts',
  'signature-reader-worker': 'server/src/adapters/original-signatures/signature-reader-worker.ts',
  'stamp-worker': 'pdf/src/stamp-worker.ts',
  'ltv-worker': 'pdf/src/ltv-worker.ts',
  'capture-process': 'server/src/adapters/capture/child/capture-process.ts',
};

/** Marks as external a package import that resolves to the same file from the bundle's directory (see above). */
const installedPackages: Plugin = {
  name: 'installed-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('@notary/') || args.path.startsWith('node:')) return undefined;
      if (args.pluginData === 'probe') return undefined;
      const probe = { kind: args.kind, pluginData: 'probe' };
      const fromImporter = await b.resolve(args.path, { ...probe, resolveDir: args.resolveDir });
      const fromDist = await b.resolve(args.path, { ...probe, resolveDir: SERVER_DIST_DIR });
      // Unresolvable (an optional dependency not installed): esbuild's own handling (tolerated in a try).
      if (fromImporter.errors.length > 0) return undefined;
      if (fromDist.errors.length === 0 && fromDist.path === fromImporter.path) {
        return { path: args.path, external: true };
      }
      return { path: fromImporter.path };
    });
  },
};

const OPTIONS = {
  absWorkingDir: ROOT,
  entryPoints: Object.entries(SERVER_ENTRIES).map(([out, input]) => ({ out, in: input })),
  outdir: SERVER_DIST_DIR,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node24',
  // Whitespace and syntax only: V8 keeps every loaded function's source text in memory, and the names stay for
  // stack traces and logs.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'linked',
  charset: 'utf8',
  logLevel: 'warning',
  metafile: true,
  plugins: [installedPackages],
  banner: {
    js: [
      // CommonJS code bundled from a workspace's own dependencies may `require` Node's modules.
      "import { createRequire as __notaryCreateRequire } from 'node:module';",
      'const require = __notaryCreateRequire(import.meta.url);',
    ].join('\n'),
  },
} satisfies BuildOptions;

/** A file the build wrote: its path from the repository's root, its size, and what it imports (esbuild's metafile). */
export interface BuiltFile {
  file: string;
  bytes: number;
  /** Other built files (by path from the root) and installed packages (`external`), statically or by `import()`. */
  imports: Array<{ path: string; kind: string; external?: boolean }>;
}

/**
 * Builds into `server/dist/` (emptied first).
 * @returns the files written (`BuiltFile`), relative to the repository's root, sorted by path.
 * @throws Error when esbuild fails (an import it cannot resolve, a syntax error).
 */
export async function buildServer(): Promise<BuiltFile[]> {
  await rm(SERVER_DIST_DIR, { recursive: true, force: true });
  // The plugin resolves from here.
  await mkdir(SERVER_DIST_DIR, { recursive: true });
  const result = await build(OPTIONS);
  return Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.mjs'))
    .map(([file, out]) => ({ file, bytes: out.bytes, imports: out.imports }))
    .sort((a, b) => a.file.localeCompare(b.file));
}

async function main(): Promise<void> {
  const started = Date.now();
  const files = await buildServer();
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  console.log(
    `@notary/server: built ${files.length} modules (${(total / 1e6).toFixed(1)} MB) in ${Date.now() - started} ms into ${path.relative(process.cwd(), SERVER_DIST_DIR) || '.'}`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
