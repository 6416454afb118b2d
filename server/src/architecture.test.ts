import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = import.meta.dirname;
const ROOT = path.resolve(SRC, '../..');

/** A test file: never checked by the layer rules (tests may wire anything). */
const TEST = /\.test\.tsx?$/;
/** Test support beside the code: checked like its folder, but no product file may import it. */
const TEST_SUPPORT = /\.testing\.tsx?$/;

/** Every TypeScript file under `dir` (absolute), tests left out, build output and dependencies skipped. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !/[/\\](node_modules|dist|out|build)[/\\]/.test(path.relative(dir, f)))
    .filter((f) => !TEST.test(f));
}

/** Every non-test TypeScript file under `server/src/<dir>`, relative to `server/src`. */
function sources(dir: string): string[] {
  return filesUnder(path.join(SRC, dir)).map((f) => path.relative(SRC, f));
}

/** One import of a file: its specifier and whether the whole statement is `import type`/`export type`. */
interface Import {
  specifier: string;
  typeOnly: boolean;
}

/** The imports of `file` (absolute): static, dynamic, side-effect and `export … from`. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(/\b(import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?'([^']+)'/g)) {
    found.push({ specifier: m[3] ?? '', typeOnly: m[2] !== undefined });
  }
  for (const m of text.matchAll(/\bimport\s*\(\s*'([^']+)'\s*\)/g)) {
    found.push({ specifier: m[1] ?? '', typeOnly: false });
  }
  return found;
}

/** The `server/src`-relative targets of a file's relative imports (`file` relative to `server/src`). */
function relativeImports(file: string): string[] {
  return importsOf(path.join(SRC, file))
    .filter((i) => i.specifier.startsWith('.'))
    .map((i) =>
      path.relative(SRC, path.resolve(SRC, path.dirname(file), i.specifier)).replace(/\.tsx?$/, ''),
    );
}

/** Whether `target` (relative to `server/src`, no extension) is `folder` or inside it. */
function inFolder(target: string, folder: string): boolean {
  return target === folder || target.startsWith(`${folder}/`);
}

/** Files of `files` whose imports reach a folder of `forbidden`: `file -> target` lines. */
function breaches(files: string[], forbidden: string[]): string[] {
  const out: string[] = [];
  for (const file of files) {
    for (const target of relativeImports(file)) {
      if (forbidden.some((f) => inFolder(target, f))) out.push(`${file} -> ${target}`);
    }
  }
  return out;
}

/** Files of `from` (a folder of `server/src`) whose imports reach a folder of `forbidden`. */
function violations(from: string, forbidden: string[]): string[] {
  return breaches(sources(from), forbidden);
}

/** Product files of a workspace folder (absolute) whose package imports or relative escapes `bad` names. */
function workspaceBreaches(
  dir: string,
  bad: (i: Import, escapesTo: string | undefined) => boolean,
): string[] {
  const out: string[] = [];
  for (const file of filesUnder(dir)) {
    for (const i of importsOf(file)) {
      const resolved = i.specifier.startsWith('.')
        ? path.resolve(path.dirname(file), i.specifier)
        : undefined;
      const escapesTo =
        resolved !== undefined && !resolved.startsWith(`${dir}${path.sep}`)
          ? path.relative(ROOT, resolved)
          : undefined;
      if (bad(i, escapesTo)) out.push(`${path.relative(ROOT, file)} -> ${i.specifier}`);
    }
  }
  return out;
}

/** The server's folders, and the top-level modules: every file of `server/src` belongs to one of them. */
const SERVER_PARTS = [
  'domain',
  'adapters',
  'ports',
  'jobs',
  'http',
  'trpc',
  'config',
  'cli',
  'db',
  'bootstrap',
  'main',
  'start',
  'metrics',
  'deps',
  'secret',
  'architecture',
];
const COMPOSITION = ['bootstrap', 'main', 'start', 'metrics'];
const FACES = ['http', 'trpc'];

/**
 * Imports of concrete adapters by the Express face that predate the rule: each is a breach to remove, not a
 * pattern (the `Content-Disposition` header the storage adapters also write, the fs storage's signed-URL
 * route, the hosted provider's svix check). A new one fails; one removed must be struck from here too, so the
 * list stays true.
 */
const KNOWN_FACE_ADAPTER_IMPORTS = [
  'http/certificates.ts -> adapters/storage/validate',
  'http/files.ts -> adapters/storage/fs',
  'http/files.ts -> adapters/storage/validate',
  'http/identity-webhook.ts -> adapters/identity/clerk/webhook',
];

/**
 * Files of the capture process's folder (`adapters/capture/child/`) under `src` (a `server/src`, absolute) that
 * import anything of the server but that folder, the process protocol and its pipes, or a workspace other than
 * `@notary/platform` and `@notary/shared`: `file -> target` lines. The capture process renders pages anyone
 * names; what it loads of the service (the signer, the archive assembly) is what a page that takes it over
 * could reach. Test harnesses outside `server/src` are test support's own business.
 */
function captureChildBreaches(src: string): string[] {
  const CHILD = 'adapters/capture/child';
  const allowed = [CHILD, 'adapters/capture/process-protocol', 'adapters/capture/process-pipes'];
  const out: string[] = [];
  for (const abs of filesUnder(path.join(src, CHILD))) {
    const file = path.relative(src, abs);
    for (const i of importsOf(abs)) {
      if (i.specifier.startsWith('.')) {
        const target = path
          .relative(src, path.resolve(path.dirname(abs), i.specifier))
          .replace(/\.tsx?$/, '');
        if (!target.startsWith('..') && !allowed.some((a) => inFolder(target, a)))
          out.push(`${file} -> ${target}`);
      } else if (/^@notary\//.test(i.specifier) && !/^@notary\/(platform|shared)(\/|$)/.test(i.specifier)) {
        out.push(`${file} -> ${i.specifier}`);
      }
    }
  }
  return out;
}

/**
 * The dependency rules of docs/architecture.md (Which folder may import which), one `it` per folder. Tests
 * (`*.test.ts`) may wire anything and are not checked; test support (`*.testing.ts`) is checked with its folder.
 */
describe('architecture: which folder may import which', () => {
  it('every file of server/src belongs to a folder these rules know', () => {
    const unknown = sources('.').filter(
      (f) => !SERVER_PARTS.some((p) => inFolder(f.replace(/\.ts$/, ''), p)),
    );
    expect(unknown).toEqual([]);
  });

  it('domain/ imports no face (http, trpc), no job, no concrete adapter, no CLI, no composition root', () => {
    expect(violations('domain', [...FACES, 'jobs', 'adapters', 'cli', ...COMPOSITION])).toEqual([]);
  });

  it('adapters/ never import the domain, a face, a job, the CLI or the composition root', () => {
    expect(violations('adapters', ['domain', ...FACES, 'jobs', 'cli', ...COMPOSITION])).toEqual([]);
  });

  it('adapters/capture/child/ (the unprivileged capture process) imports nothing of the server but the process protocol and its pipes', () => {
    expect(captureChildBreaches(SRC)).toEqual([]);
  });

  it('the capture process rule fails on a planted child file that takes service code or another workspace', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'notary-arch-'));
    try {
      mkdirSync(path.join(dir, 'adapters/capture/child'), { recursive: true });
      const plant = (file: string, text: string) => writeFileSync(path.join(dir, file), text);
      plant('adapters/capture/child/planted.ts', "import type { CaptureParts } from '../service/archive';\n");
      plant('adapters/capture/child/signs.ts', "import { pkijs } from '@notary/pdf/asn1';\n");
      plant('adapters/capture/child/allowed.ts', "import { CAPTURE_FILES } from '../process-protocol';\n");
      plant(
        'adapters/capture/child/planted.test.ts',
        "import { archivingCapturer } from '../service/archive';\n",
      );
      expect(captureChildBreaches(dir).sort()).toEqual([
        'adapters/capture/child/planted.ts -> adapters/capture/service/archive',
        'adapters/capture/child/signs.ts -> @notary/pdf/asn1',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ports/ import nothing of the server but other ports (and shared types)', () => {
    expect(
      violations(
        'ports',
        SERVER_PARTS.filter((p) => p !== 'ports'),
      ),
    ).toEqual([]);
  });

  it('jobs/ run what the composition root hands them: no face, no CLI, no composition root, no concrete adapter', () => {
    expect(violations('jobs', [...FACES, 'cli', ...COMPOSITION])).toEqual([]);
    // Test support of the jobs composes a pipeline with a concrete chain, as the tests do.
    const product = sources('jobs').filter((f) => !TEST_SUPPORT.test(f));
    expect(breaches(product, ['adapters'])).toEqual([]);
  });

  it('trpc/ (procedures) never import the Express face, a job, the CLI, a concrete adapter or the composition root', () => {
    expect(violations('trpc', ['http', 'jobs', 'cli', 'adapters', ...COMPOSITION])).toEqual([]);
  });

  it('http/ (the Express face) imports no job, no CLI, no composition root, and no concrete adapter beyond the known ones', () => {
    expect(violations('http', ['jobs', 'cli', ...COMPOSITION])).toEqual([]);
    expect(violations('http', ['adapters'])).toEqual(KNOWN_FACE_ADAPTER_IMPORTS);
  });

  it('config (config.ts and config/) imports nothing of the server but itself', () => {
    const files = [...sources('config'), 'config.ts'];
    expect(
      breaches(
        files,
        SERVER_PARTS.filter((p) => p !== 'config'),
      ),
    ).toEqual([]);
  });

  it('cli/ reaches the service through the composition root: no face, no job, no concrete adapter', () => {
    expect(violations('cli', [...FACES, 'jobs', 'adapters'])).toEqual([]);
  });

  it('db/ (entities, migrations) imports nothing of the server outside db/', () => {
    expect(
      violations(
        'db',
        SERVER_PARTS.filter((p) => p !== 'db'),
      ),
    ).toEqual([]);
  });

  it('only the composition root (bootstrap.ts, main.ts, start.ts, metrics.ts) and the adapters themselves import concrete adapters', () => {
    const others = sources('.').filter(
      (f) =>
        !inFolder(f, 'adapters') &&
        !COMPOSITION.includes(f.replace(/\.ts$/, '')) &&
        !TEST_SUPPORT.test(f) &&
        !inFolder(f, 'http'),
    );
    expect(breaches(others, ['adapters'])).toEqual([]);
  });

  it('test support (`*.testing.ts`) is imported by tests and other test support only, in every workspace', () => {
    const workspaces = [
      'shared/src',
      'platform/src',
      'trust/src',
      'pdf/src',
      'verifier/src',
      'server/src',
      'indicator-catalog',
      'desktop/src',
    ];
    const bad = workspaces.flatMap((w) =>
      workspaceBreaches(
        path.join(ROOT, w),
        (i) => TEST_SUPPORT.test(`${i.specifier}.ts`) || TEST_SUPPORT.test(i.specifier),
      ),
    );
    // A file of test support may import another.
    expect(bad.filter((line) => !TEST_SUPPORT.test(line.split(' -> ')[0] ?? ''))).toEqual([]);
  });
});

/**
 * The floors of the workspaces (docs/architecture.md, Workspaces): shared at the bottom, then platform, then
 * trust, then pdf and the verifier, then the services; the desktop client knows the server's router type only.
 */
describe('architecture: which workspace may import which', () => {
  it('@notary/shared runs in Node and in browsers: no other workspace, no Node built-in', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'shared/src'),
      (i, escapes) => escapes !== undefined || /^@notary\//.test(i.specifier) || /^node:/.test(i.specifier),
    );
    expect(bad).toEqual([]);
  });

  it('@notary/platform imports nothing of a service (server, catalog) and of the floors above it', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'platform/src'),
      (i, escapes) =>
        escapes !== undefined ||
        (/^@notary\//.test(i.specifier) && !/^@notary\/shared(\/|$)/.test(i.specifier)),
    );
    expect(bad).toEqual([]);
  });

  it('@notary/trust (the technical trust library) imports only @notary/shared and @notary/platform', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'trust/src'),
      (i, escapes) =>
        escapes !== undefined ||
        (/^@notary\//.test(i.specifier) && !/^@notary\/(shared|platform)(\/|$)/.test(i.specifier)),
    );
    expect(bad).toEqual([]);
  });

  it('@notary/pdf knows how a PDF is written, nothing of the server, the platform or a database', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'pdf/src'),
      (i, escapes) =>
        escapes !== undefined ||
        /^@notary\/(server|platform|verify)|^@mikro-orm|^express|^@trpc/.test(i.specifier),
    );
    expect(bad).toEqual([]);
  });

  it('@notary/verify (the verifier) imports nothing of the server, the catalog or the desktop client', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'verifier/src'),
      (i, escapes) =>
        /^@notary\/(server|desktop|indicator-catalog)/.test(i.specifier) ||
        (escapes !== undefined && /^(server|desktop|indicator-catalog)\//.test(escapes)),
    );
    expect(bad).toEqual([]);
  });

  it('the indicator catalog imports nothing of the notarization service', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'indicator-catalog'),
      (i, escapes) =>
        /^@notary\/server/.test(i.specifier) || (escapes !== undefined && /^server\//.test(escapes)),
    );
    expect(bad).toEqual([]);
  });

  it('the desktop client imports only the type of the server router (`import type { AppRouter }`)', () => {
    const bad = workspaceBreaches(
      path.join(ROOT, 'desktop/src'),
      (i, escapes) =>
        (/^@notary\/server/.test(i.specifier) && !(i.typeOnly && i.specifier === '@notary/server/router')) ||
        (escapes !== undefined && /^server\//.test(escapes)),
    );
    expect(bad).toEqual([]);
  });
});

/**
 * What the service may take from `@notary/verify`: what verifying is (the receipt, reports of original
 * signatures, WACZ verification, the checks themselves, the anchored checkpoint's leaf). Its technical pieces (bytes, HTTP, CMS and RFC 3161
 * reading, the TSA client, certification paths, revocation data, the Stacks API client) are `@notary/trust`'s.
 */
const SERVER_VERIFY_IMPORTS = [
  '@notary/verify/receipt',
  '@notary/verify/original-signatures',
  '@notary/verify/wacz',
  '@notary/verify/verify',
  // What a batch anchors of the log (the checkpoint's leaf) and the shape of `/log/anchored`: the verifier's
  // definitions, which the service must produce exactly.
  '@notary/verify/anchored-checkpoint',
];

/** Product files under `dir` (absolute) that import a module of `@notary/verify` outside SERVER_VERIFY_IMPORTS. */
function verifyImportBreaches(dir: string): string[] {
  return workspaceBreaches(
    dir,
    (i) => /^@notary\/verify(\/|$)/.test(i.specifier) && !SERVER_VERIFY_IMPORTS.includes(i.specifier),
  );
}

describe('architecture: the service imports of @notary/verify only what verifying is', () => {
  it('no product file of server/src (adapters included) imports a module of @notary/verify outside the list', () => {
    expect(verifyImportBreaches(SRC)).toEqual([]);
  });

  it('the rule fails on a planted adapter that takes a technical piece from the verifier', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'notary-arch-'));
    try {
      mkdirSync(path.join(dir, 'adapters/tsa'), { recursive: true });
      const plant = (file: string, text: string) => writeFileSync(path.join(dir, file), text);
      plant('adapters/tsa/planted.ts', "import { TsaClient } from '@notary/verify/tsa-client';\n");
      plant('adapters/tsa/allowed.ts', "import { ReceiptSchema } from '@notary/verify/receipt';\n");
      plant('adapters/tsa/planted.test.ts', "import { parseSignedData } from '@notary/verify/cms';\n");
      const bad = verifyImportBreaches(dir).map((line) => line.replace(/^.*?adapters\//, 'adapters/'));
      expect(bad).toEqual(['adapters/tsa/planted.ts -> @notary/verify/tsa-client']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
