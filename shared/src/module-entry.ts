/**
 * Where the services find their own files, whether they run from the TypeScript sources (under tsx: `npm start`,
 * the tests, the CLI) or built (`npm run build:server`: every entry and shared chunk of the server in one
 * directory, `server/dist/`, as `.mjs`; see docs/deployment.md, "Production build").
 */

/**
 * The URL of the entry module `name` of a worker thread or child process started by the module at `callerUrl`
 * (its `import.meta.url`): `./<name>.ts` beside the caller in the sources, `./<name>.mjs` beside the bundle
 * when built (the build emits each such entry under that name).
 */
export function moduleEntry(callerUrl: string, name: string): URL {
  return new URL(`./${name}${runsFromSource(callerUrl) ? '.ts' : '.mjs'}`, callerUrl);
}

/**
 * The URL of `relative` (e.g. `desktop/dist/web/`) under the repository's root. This module sits two
 * directories below the root in the sources (`shared/src/`) and so do the built server's modules
 * (`server/dist/`), into which it is bundled: one relative step serves both.
 */
export function repositoryFile(relative: string): URL {
  return new URL(`../../${relative}`, import.meta.url);
}

/**
 * Whether the module at `url` (a URL or a path) runs from the TypeScript sources: then a thread or process
 * started on it needs tsx's loader; the built service's `.mjs` needs none.
 */
export function runsFromSource(url: string): boolean {
  return url.endsWith('.ts');
}
