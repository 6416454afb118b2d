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
  return new URL(`./${name}${callerUrl.endsWith('.ts') ? '.ts' : '.mjs'}`, callerUrl);
}

/**
 * The URL of `relative` (e.g. `desktop/dist/web/`) under the repository's root. This module sits two
 * directories below the root in the sources (`shared/src/`) and so do the built server's modules
 * (`server/dist/`), into which it is bundled: one relative step serves both.
 */
export function repositoryFile(relative: string): URL {
  return new URL(`../../${relative}`, import.meta.url);
}

/** Whether the module at `callerUrl` runs from the TypeScript sources (and its workers need tsx's loader). */
export function runsFromSource(callerUrl: string): boolean {
  return callerUrl.endsWith('.ts');
}
