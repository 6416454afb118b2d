import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The workspaces' product code (and test support beside it): every folder a helper could be copied into. */
const PRODUCT = [
  'shared/src',
  'platform/src',
  'trust/src',
  'pdf/src',
  'verifier/src',
  'verifier/web',
  'server/src',
  'desktop/src',
  'indicator-catalog',
];
/** Product code, plus the test workspace's harness, benches and end-to-end support. */
const WITH_TEST_WORKSPACE = [...PRODUCT, 'test'];

const TEST = /\.test\.tsx?$/;
const TEST_SUPPORT = /\.testing\.tsx?$/;

/** Every TypeScript file under the ROOT-relative `dirs` (ROOT-relative), build output and dependencies skipped. */
function typescriptUnder(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
      .filter((f) => !/[/\\](node_modules|dist|out|build)[/\\]/.test(f)),
  );
}

/** `file:line: text` of each line of `files` that `pattern` matches. */
function linesMatching(files: readonly string[], pattern: RegExp): string[] {
  const out: string[] = [];
  for (const file of files) {
    const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (pattern.test(line)) out.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

/**
 * The one home of each small helper (ROOT-relative): the lowest workspace all its users may import. Node's
 * synchronous SHA-256 and the trust library's WebCrypto one (browsers too, asynchronous) are one per runtime,
 * under two names.
 */
const HOMES: Record<string, string> = {
  sha256Hex: 'trust/src/bytes.ts',
  sha256HexSync: 'platform/src/sha256.ts',
  describeFetchError: 'shared/src/fetch-error.ts',
  readBounded: 'shared/src/fetch-body.ts',
  isLoopbackHost: 'shared/src/loopback.ts',
  endpointProblem: 'shared/src/endpoint.ts',
  formatBytes: 'shared/src/format-bytes.ts',
  escapeHtml: 'shared/src/escape-html.ts',
  evenHex: 'shared/src/hex.ts',
  stripHex: 'shared/src/hex.ts',
  errorMessage: 'shared/src/error-message.ts',
};

describe('architecture: one home per helper', () => {
  const files = typescriptUnder(WITH_TEST_WORKSPACE).filter((f) => !TEST.test(f));

  it.each(Object.entries(HOMES))('%s is defined once, in %s', (name, home) => {
    const definition = new RegExp(`(?:\\bfunction\\s*\\*?\\s*|\\b(?:const|let|var)\\s+)${name}\\b(?!\\w)`);
    const homes = [...new Set(linesMatching(files, definition).map((l) => l.split(':')[0]))];
    expect(homes).toEqual([home]);
  });

  it('the Crockford base32 alphabet is spelled once, as CROCKFORD_ALPHABET of @notary/shared', () => {
    const spelled = linesMatching(files, /['"`]0123456789ABCDEFGHJKMNPQRSTVWXYZ['"`]/);
    expect(spelled.map((l) => l.split(':')[0])).toEqual(['shared/src/serial-prefix.ts']);
  });
});

/**
 * Log lines that keep a `[module]` prefix in their message: the listening lines, which scripts and tests wait
 * for in production's JSON lines as in the text lines (the text format shows the module as the prefix of any
 * other message).
 */
const KEPT_PREFIXED_LINES = ['[notary] listening on', '[catalog] listening on'];

describe('architecture: log lines and errors', () => {
  const product = typescriptUnder(PRODUCT).filter((f) => !TEST.test(f) && !TEST_SUPPORT.test(f));

  it('no message passed to a logger starts with a `[module]` prefix (the logger carries the module)', () => {
    // A logger call (console's aside), its fields object if any, then a message that opens with `[word]`.
    const call =
      /(?<!\bconsole)\.(?:trace|debug|info|warn|error|fatal)\(\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}\s*,\s*)?['"`](\[[A-Za-z][\w:.-]*\][^'"`\n]*)/g;
    const found: string[] = [];
    for (const file of product) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(call)) {
        const message = m[1] ?? '';
        if (!KEPT_PREFIXED_LINES.some((kept) => message.startsWith(kept))) found.push(`${file}: ${message}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('a thrown value is read with errorMessage, never through a cast to Error (tests included)', () => {
    const cast =
      /\(\s*[\w.]+\s+as\s+Error\s*\)\??\.message|\b(\w+) instanceof Error \? \1\.message : String\(\1\)/;
    const everywhere = typescriptUnder(WITH_TEST_WORKSPACE).filter((f) => f !== HOMES.errorMessage);
    expect(linesMatching(everywhere, cast)).toEqual([]);
  });

  it('code logs through the Log interface: no `(line: string) => void` logger parameter or option', () => {
    const lineCallback =
      /\b(?:log|logger|progress|warn|info|debug|error)\??\s*:\s*\(\s*\w+\s*:\s*string\s*\)\s*=>\s*void/;
    expect(linesMatching(product, lineCallback)).toEqual([]);
  });
});
