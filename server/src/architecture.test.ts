import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = import.meta.dirname;

/** Every non-test TypeScript file under `dir`, relative to `server/src`. */
function sources(dir: string): string[] {
  return readdirSync(path.join(SRC, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !/\.test\.ts$|\.fixture\.ts$/.test(e.name))
    .map((e) => path.relative(SRC, path.join(e.parentPath, e.name)));
}

/** The `server/src`-relative targets of a file's relative imports (static, dynamic and `export … from`). */
function relativeImports(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1] ?? '');
  return specifiers.map((s) => path.relative(SRC, path.resolve(SRC, path.dirname(file), s)));
}

/** Files of `from` whose imports reach a folder of `forbidden`: `file -> target` lines. */
function violations(from: string, forbidden: string[]): string[] {
  const out: string[] = [];
  for (const file of sources(from)) {
    for (const target of relativeImports(file)) {
      if (forbidden.some((f) => target === f || target.startsWith(`${f}/`))) out.push(`${file} -> ${target}`);
    }
  }
  return out;
}

/**
 * The dependency rule of docs/architecture.md (DESIGN.md, Layout): the domain imports ports, shared and the
 * database entities, never a face, a job or a concrete adapter; adapters implement ports and never import the
 * domain. Tests beside the code may wire concrete adapters and are not checked.
 */
describe('architecture: which folder may import which', () => {
  it('domain/ imports no face (http, trpc), no job, no concrete adapter, no composition root', () => {
    expect(violations('domain', ['http', 'trpc', 'jobs', 'adapters', 'cli', 'bootstrap', 'main'])).toEqual(
      [],
    );
  });

  it('adapters/ never import the domain, a face or a job', () => {
    expect(violations('adapters', ['domain', 'http', 'trpc', 'jobs', 'cli', 'bootstrap', 'main'])).toEqual(
      [],
    );
  });

  it('@notary/pdf knows how a PDF is written, nothing of the server or its database', () => {
    const root = path.resolve(SRC, '../../pdf/src');
    const bad: string[] = [];
    for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!e.isFile() || !e.name.endsWith('.ts')) continue;
      const file = path.join(e.parentPath, e.name);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        const spec = m[1] ?? '';
        const escapes = spec.startsWith('.') && !path.resolve(path.dirname(file), spec).startsWith(root);
        if (escapes || /^@notary\/(server|platform)|^@mikro-orm|^express|^@trpc/.test(spec))
          bad.push(`${path.relative(root, file)} -> ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('test support (`*.testing.ts`) is imported by tests and other test support only', () => {
    const product = sources('.').filter((f) => !f.endsWith('.testing.ts'));
    const bad = product.flatMap((file) =>
      relativeImports(file)
        .filter((target) => /\.testing(\.ts)?$/.test(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(bad).toEqual([]);
  });

  it('ports/ import nothing of the server but other ports (and shared types)', () => {
    expect(
      violations('ports', ['domain', 'http', 'trpc', 'jobs', 'adapters', 'cli', 'bootstrap', 'main', 'db']),
    ).toEqual([]);
  });
});
