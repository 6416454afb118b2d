/**
 * Builds the verifier that travels without the service (docs/verify.md, "Verify without us") into `dist/`:
 * - `notary-verify.mjs`: the command line (every check and option, `--dir` and `extend` included) as one ES
 *   module for Node >= 20, its dependencies inside: `node notary-verify.mjs <file> --certificate cert.pdf`.
 * - `verify.html`: one self-contained page (its script and styles inline, no external resource) that runs the
 *   same six checks in a browser, from `file://` or any static host; its Content-Security-Policy allows no
 *   request but to the chain endpoints the user types (https, or http on loopback).
 * - `SHA256SUMS`: both files' SHA-256, as `sha256sum -c SHA256SUMS` reads it.
 * The same sources give the same bytes: esbuild's output depends only on its inputs and options (paths are
 * relative to this package), nothing here adds a time or a machine's path.
 *
 * Usage: `node build/build.ts [--out DIR]` (`npm run build -w @notary/verify`; the root `prepare` runs it on
 * `npm install`/`npm ci`). Prints each file's SHA-256.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BuildOptions, build, type Plugin } from 'esbuild';

/** The package's directory (`verifier/`): esbuild's working directory, so output paths are relative to it. */
export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** Where `npm run build` writes, and where the service reads what it serves at `/verify/`. */
export const DIST_DIR = path.join(PACKAGE_DIR, 'dist');

export const NODE_BUNDLE = 'notary-verify.mjs';
export const PAGE = 'verify.html';
export const SUMS = 'SHA256SUMS';

/** The browsers the page's syntax is lowered for (the versions of early 2023 and later). */
const BROWSERS = ['chrome109', 'edge109', 'firefox115', 'safari16'];

/** What a build produced: each file's name, bytes and SHA-256 (hex). */
export interface BuiltFile {
  name: string;
  bytes: Uint8Array;
  sha256: string;
}

/**
 * Builds the two files in memory (nothing written).
 * @throws Error when esbuild fails, or the page would not be self-contained (a Node module in its graph, a
 *   script that would end the inline `<script>` element early).
 */
export async function buildVerifier(): Promise<BuiltFile[]> {
  const version = await packageVersion();
  const [node, page] = await Promise.all([buildNodeBundle(version), buildPage(version)]);
  return [withSum(NODE_BUNDLE, node), withSum(PAGE, page)];
}

/**
 * Writes the files and `SHA256SUMS` into `dir` (each written to a temporary name first, then renamed, so a
 * server reading them never sees half a file).
 */
export async function writeBuilt(files: BuiltFile[], dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const sums = new TextEncoder().encode(sha256sums(files));
  for (const { name, bytes } of [...files, { name: SUMS, bytes: sums }]) {
    const target = path.join(dir, name);
    await writeFile(`${target}.tmp`, bytes);
    await rename(`${target}.tmp`, target);
  }
}

/** `sha256sum` output for `files` (two spaces: text mode, as `sha256sum -c` expects). */
export function sha256sums(files: readonly BuiltFile[]): string {
  return files.map((f) => `${f.sha256}  ${f.name}\n`).join('');
}

async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function withSum(name: string, bytes: Uint8Array): BuiltFile {
  return { name, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Options both builds share. */
const COMMON = {
  absWorkingDir: PACKAGE_DIR,
  bundle: true,
  write: false,
  format: 'esm',
  // Readable output: whoever relies on the proof can read what checks it. Licences stay, at the end.
  minify: false,
  legalComments: 'eof',
  charset: 'utf8',
  logLevel: 'warning',
  // ES modules first: CommonJS builds of the Stacks codec and its hashes would be bundled whole.
  mainFields: ['module', 'main'],
} satisfies BuildOptions;

async function buildNodeBundle(version: string): Promise<Uint8Array> {
  const result = await build({
    ...COMMON,
    entryPoints: ['build/node-main.ts'],
    platform: 'node',
    target: 'node20',
    outfile: NODE_BUNDLE,
    banner: {
      js: [
        '#!/usr/bin/env node',
        `// notary-verify ${version}: the notarization receipt's verifier as one file (Node >= 20).`,
        '// Usage: node notary-verify.mjs --help. Built from @notary/verify by `npm run build -w @notary/verify`.',
        // Some dependencies are CommonJS that `require` Node's own modules: give them Node's require.
        "import { createRequire as __notaryCreateRequire } from 'node:module';",
        'const require = __notaryCreateRequire(import.meta.url);',
      ].join('\n'),
    },
  });
  return single(result.outputFiles);
}

/** Refuses a Node-only module in the page's graph: the page must run in a browser alone. */
const browserOnly: Plugin = {
  name: 'browser-only',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => ({
      errors: [
        { text: `${args.path} is a Node module: the page cannot use it (imported by ${args.importer})` },
      ],
    }));
  },
};

async function buildPage(version: string): Promise<Uint8Array> {
  const result = await build({
    ...COMMON,
    entryPoints: ['web/main.ts'],
    platform: 'browser',
    target: BROWSERS,
    format: 'iife',
    outfile: 'verify.js',
    plugins: [browserOnly],
    define: { __NOTARY_VERIFY_VERSION__: JSON.stringify(version) },
  });
  const script = new TextDecoder().decode(single(result.outputFiles));
  // Inside <script>, `</script` would end the element and `<!--` would change how the rest is parsed.
  if (/<\/script|<!--/i.test(script)) throw new Error('the page script contains </script or <!--');
  const styles = await readFile(path.join(PACKAGE_DIR, 'web', 'styles.css'), 'utf8');
  const csp = [
    "default-src 'none'",
    `script-src '${cspHash(script)}'`,
    `style-src '${cspHash(styles)}'`,
    'img-src data:',
    // Chain endpoints: the user types them, so no fixed list; plain http only on loopback (devnets, own nodes).
    'connect-src https: http://127.0.0.1:* http://localhost:*',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return new TextEncoder().encode(pageHtml({ csp, version, styles, script }));
}

/**
 * The page: the policy in a `<meta>` (it holds from `file://` too), the styles and the script inline, their
 * text exactly what the policy's hashes are of (no whitespace added inside the elements).
 */
function pageHtml(p: { csp: string; version: string; styles: string; script: string }): string {
  return [
    '<!doctype html>',
    '<html lang="pt-BR">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="${p.csp}">`,
    '<meta name="referrer" content="no-referrer">',
    `<meta name="generator" content="notary-verify ${p.version}">`,
    '<title>Verificar sem nós · Verify without us</title>',
    `<style>${p.styles}</style>`,
    '</head>',
    '<body>',
    '<main id="app"></main>',
    '<noscript>Esta página precisa de JavaScript para verificar arquivos. This page needs JavaScript to verify files.</noscript>',
    `<script>${p.script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** CSP 3 hash source of an inline element's text: `sha256-<base64>`. */
function cspHash(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}

function single(files: { contents: Uint8Array }[] | undefined): Uint8Array {
  const [file, ...more] = files ?? [];
  if (!file || more.length > 0) throw new Error(`esbuild gave ${files?.length ?? 0} files, expected 1`);
  return file.contents;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const dir = values.out ? path.resolve(values.out) : DIST_DIR;
  const started = Date.now();
  const files = await buildVerifier();
  await writeBuilt(files, dir);
  console.log(`@notary/verify: built in ${Date.now() - started} ms into ${dir} (SHA-256):`);
  for (const f of files) console.log(`${f.sha256}  ${f.name}  (${f.bytes.length} bytes)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
