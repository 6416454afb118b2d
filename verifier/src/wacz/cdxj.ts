/**
 * Reading the WACZ's CDXJ indexes (`indexes/*.cdx[j][.gz]`, cdxj/0.1.0: `<key> <timestamp> <JSON>` per line)
 * into the records each WARC file should hold.
 */
import { z } from 'zod';
import { errorMessage } from '../error-message.ts';
import { data, msg } from '../messages/index.ts';
import type { CheckBuilder } from '../report.ts';
import { gunzipAll } from './warc.ts';

/** Most index lines read. */
const MAX_INDEX_LINES = 1_000_000;

const cdxSchema = z.object({
  url: z.string(),
  offset: z.union([z.string(), z.number()]),
  length: z.union([z.string(), z.number()]),
  filename: z.string().optional(),
  digest: z.string().optional(),
  recordDigest: z.string().optional(),
});

/** One index line: the record of `url` at `offset` (bytes) for `length` bytes, with its digests. */
export interface IndexEntry {
  url: string;
  offset: number;
  length: number;
  /** The HTTP payload's digest (`sha256:<hex>` or bare hex), as the line gives it. */
  digest?: string;
  /** The SHA-256 of the record's stored (compressed) bytes, `sha256:<hex>`. */
  recordDigest?: string;
}

/**
 * The lines of the index files `indexes` (paths in `files`), by the WARC file (of `warcs`) they point into;
 * a line naming no WARC goes to the only WARC when there is one. Lines that do not read are failures in `c`.
 */
export function readIndexes(
  c: CheckBuilder,
  files: Map<string, Uint8Array>,
  indexes: string[],
  warcs: string[],
): Map<string, IndexEntry[]> {
  const byFile = new Map<string, IndexEntry[]>();
  let lines = 0;
  for (const p of indexes) {
    const raw = files.get(p);
    if (!raw) continue;
    let text: string;
    try {
      text = new TextDecoder().decode(p.endsWith('.gz') ? gunzipAll(raw).data : raw);
    } catch (e) {
      c.fail(data(p), msg('wacz.doesNotDecompress', { error: errorMessage(e) }));
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      if (++lines > MAX_INDEX_LINES) {
        c.fail(data(p), msg('wacz.tooManyLines', { max: MAX_INDEX_LINES }));
        break;
      }
      const entry = indexEntry(c, p, line, warcs);
      if (!entry) continue;
      const list = byFile.get(entry.warc) ?? [];
      list.push(entry.entry);
      byFile.set(entry.warc, list);
    }
  }
  return byFile;
}

/** One line of index `p`, with the WARC file it points into; null (a failure in `c`) when it does not read. */
function indexEntry(
  c: CheckBuilder,
  p: string,
  line: string,
  warcs: string[],
): { warc: string; entry: IndexEntry } | null {
  const brace = line.indexOf('{');
  const parsed = brace < 0 ? undefined : cdxSchema.safeParse(safeJson(line.slice(brace)));
  if (!parsed?.success) {
    c.fail(data(p), msg('wacz.notCdxjLine', { line: line.slice(0, 120) }));
    return null;
  }
  const e = parsed.data;
  const warc =
    warcs.find((w) => w === `archive/${e.filename ?? ''}`) ?? (warcs.length === 1 ? warcs[0] : undefined);
  if (!warc) {
    c.fail(data(p), msg('wacz.lineNamesMissingWarc', { file: String(e.filename) }));
    return null;
  }
  const entry: IndexEntry = {
    url: e.url,
    offset: Number(e.offset),
    length: Number(e.length),
    ...(e.digest ? { digest: e.digest } : {}),
    ...(e.recordDigest ? { recordDigest: e.recordDigest } : {}),
  };
  return { warc, entry };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
