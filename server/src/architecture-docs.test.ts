import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The workspaces whose product code and tests cite the specification and the docs pages. */
const WORKSPACES = [
  'shared',
  'platform',
  'trust',
  'pdf',
  'verifier',
  'server',
  'desktop',
  'indicator-catalog',
  'test',
];
/** The pages of the binding interface specification (docs/spec/README.md). */
const SPEC_PAGES = ['docs/spec/notarization-service.md', 'docs/spec/indicator-provider.md'];

/** How TypeScript parses a source, by extension; `.ts` and `.mts` are the default. */
const SCRIPT_KINDS: Record<string, ts.ScriptKind> = { '.tsx': ts.ScriptKind.TSX, '.mjs': ts.ScriptKind.JS };

/**
 * The section names a citation may use: the text of every `##`/`###` heading of the spec pages up to its
 * first ` (`, so `Team (Bearer session token, active organization required)` is cited as `Team`.
 */
function specSections(): Set<string> {
  const names = new Set<string>();
  for (const page of SPEC_PAGES) {
    for (const m of readFileSync(path.join(ROOT, page), 'utf8').matchAll(/^#{2,3} (.+)$/gm)) {
      names.add((m[1] ?? '').split(' (')[0]?.trim() ?? '');
    }
  }
  return names;
}

/** Every TypeScript or JavaScript source of the workspaces, relative to the root; dependencies and builds left out. */
function sourceFiles(): string[] {
  return WORKSPACES.flatMap((ws) =>
    readdirSync(path.join(ROOT, ws), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|tsx|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
      .filter((f) => !/[/\\](node_modules|dist|out)[/\\]/.test(f)),
  );
}

/**
 * The comments of a source, each as one line of text: a comment's line breaks and the ` * ` or `//` that
 * starts its next line become one space, so a citation wrapped over two lines reads as one.
 */
function commentsOf(text: string, file: string): string[] {
  const kind = SCRIPT_KINDS[path.extname(file)] ?? ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const ranges = new Map<number, ts.CommentRange>();
  const collect = (node: ts.Node): void => {
    for (const r of ts.getLeadingCommentRanges(text, node.pos) ?? []) ranges.set(r.pos, r);
    for (const r of ts.getTrailingCommentRanges(text, node.end) ?? []) ranges.set(r.pos, r);
    for (const child of node.getChildren(source)) collect(child);
  };
  collect(source);
  // Consecutive `//` lines are separate ranges; joined in file order they read as the prose they are.
  const sorted = [...ranges.values()].sort((a, b) => a.pos - b.pos);
  const out: string[] = [];
  sorted.forEach((r, i) => {
    const body = text
      .slice(r.pos, r.end)
      .replace(/\s*\n\s*(\*(?!\/)|\/\/)?\s*/g, ' ')
      .replace(/^\/\/\s*/, '');
    const previous = sorted[i - 1];
    const continues =
      r.kind === ts.SyntaxKind.SingleLineCommentTrivia &&
      previous?.kind === ts.SyntaxKind.SingleLineCommentTrivia &&
      /^[ \t]*\r?\n[ \t]*$/.test(text.slice(previous.end, r.pos));
    if (continues && out.length > 0) out[out.length - 1] += ` ${body}`;
    else out.push(body);
  });
  return out;
}

/** `file: citation` for every spec citation of `comments` whose section is not a heading of the spec pages. */
function badCitations(file: string, comments: string[], sections: Set<string>): string[] {
  const bad: string[] = [];
  for (const comment of comments) {
    for (const m of comment.matchAll(/\(spec\b(?=(.{0,80}))/g)) {
      const rest = m[1] ?? '';
      const named =
        rest.startsWith(', ') &&
        [...sections].some((s) => rest.startsWith(`, ${s})`) || rest.startsWith(`, ${s}: `));
      if (!named) bad.push(`${file}: (spec${rest.slice(0, 60)}`);
    }
  }
  return bad;
}

/** `file: path` for every `docs/….md` a comment of `comments` names that is not in the repository. */
function missingPages(file: string, comments: string[]): string[] {
  const missing: string[] = [];
  for (const comment of comments) {
    for (const m of comment.matchAll(/(?<![\w./-])docs\/[\w./-]+?\.md\b/g)) {
      if (!existsSync(path.join(ROOT, m[0]))) missing.push(`${file}: ${m[0]}`);
    }
  }
  return missing;
}

describe('comments point at pages of the repository', () => {
  const sections = specSections();
  const comments = new Map(
    sourceFiles().map((f) => [f, commentsOf(readFileSync(path.join(ROOT, f), 'utf8'), f)] as const),
  );

  it('reads the section names of both spec pages and the comments that cite them', () => {
    expect(sections).toContain('Team');
    expect(sections).toContain('Documents');
    expect(sections).toContain('Public, no credentials');
    expect(sections).toContain('Pagination envelope');
    expect(comments.size).toBeGreaterThan(100);
    // Comments are read at all: the code base cites the spec about 190 times.
    const cited =
      [...comments.values()]
        .flat()
        .join(' ')
        .match(/\(spec, /g) ?? [];
    expect(cited.length).toBeGreaterThan(150);
  });

  it('every spec citation is `(spec, <heading>)` or `(spec, <heading>: <detail>)` of docs/spec', () => {
    const bad = [...comments].flatMap(([file, list]) => badCitations(file, list, sections));
    expect(bad).toEqual([]);
  });

  it('every docs page a comment names exists', () => {
    const missing = [...comments].flatMap(([file, list]) => missingPages(file, list));
    expect(missing).toEqual([]);
  });
});

/**
 * The source paths the README and the docs pages name (`server/src/…/x.ts`, or a path relative to a workspace's
 * folder such as `domain/documents/capture.ts`), each with the page that names it. Built output (`dist/`) is left
 * out: a fresh checkout has none.
 */
function pathsNamedByDocs(): Array<{ page: string; named: string }> {
  const pages = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((p) =>
    p.endsWith('.md'),
  );
  return pages.flatMap((page) =>
    [...readFileSync(path.join(ROOT, page), 'utf8').matchAll(/\.?[\w-]+\/[\w./-]+\.(?:ts|tsx|mjs|py|sh)\b/g)]
      .map((m) => m[0])
      .filter((named) => !/(^|\/)dist\//.test(named) && !named.startsWith('verify/'))
      .map((named) => ({ page, named })),
  );
}

describe('the docs name files that exist', () => {
  it('every source path the README and docs pages name is a file of the repository', () => {
    const files = [
      ...sourceFiles(),
      ...readdirSync(ROOT, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && /\.(py|sh)$/.test(e.name))
        .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
        .filter((f) => !/node_modules/.test(f)),
    ];
    const missing = pathsNamedByDocs().filter(
      ({ named }) => !files.some((f) => f === named || f.endsWith(`/${named}`)),
    );
    expect(missing).toEqual([]);
  });
});
