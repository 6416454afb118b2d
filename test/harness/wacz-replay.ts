/**
 * Whether a WACZ would replay (test support for the web capture tests): every line of its CDXJ index must
 * point at one whole gzip member of its WARC (offset and length) holding a record of that URL and time, whose
 * payload has the digest the line gives; every response and resource record of the WARC must be indexed; every
 * page of `pages/pages.jsonl` and every URL the test's sites served must have a record. A replay tool reads
 * records by these offsets (WACZ 1.1.1, "indexes"; CDXJ as pywb and warcio write it), so an archive failing
 * here shows a broken or missing resource in ReplayWeb.page.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { errorMessage } from '@notary/shared';
import { unzipSync } from 'fflate';
import { WARCParser } from 'warcio';

interface CdxLine {
  url: string;
  ts: string;
  offset: number;
  length: number;
  filename: string;
  status?: string;
  digest?: string;
  line: number;
}

/** The CDXJ lines of `text` (`<surt> <timestamp> <json>`); a line that does not parse is a problem. */
function parseCdxj(text: string, problems: string[]): CdxLine[] {
  const out: CdxLine[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    if (!raw.trim()) continue;
    const m = /^(\S+) (\d{14}) (\{.*\})$/.exec(raw);
    if (!m?.[2] || !m[3]) {
      problems.push(`index line ${i + 1} does not parse`);
      continue;
    }
    const j = JSON.parse(m[3]) as Record<string, string>;
    out.push({
      url: j.url ?? '',
      ts: m[2],
      offset: Number(j.offset),
      length: Number(j.length),
      filename: j.filename ?? '',
      ...(j.status !== undefined ? { status: j.status } : {}),
      ...(j.digest !== undefined ? { digest: j.digest } : {}),
      line: i + 1,
    });
  }
  return out;
}

/** The first record of `bytes` (one WARC record), read whole: type, URI, date, HTTP status, payload. */
async function readRecord(bytes: Uint8Array) {
  for await (const record of WARCParser.iterRecords([bytes])) {
    const payload = await record.readFully();
    return {
      type: record.warcType ?? '',
      url: record.warcTargetURI ?? '',
      date: record.warcDate ?? '',
      status: record.httpHeaders?.statusCode,
      payload,
    };
  }
  return undefined;
}

/** Every record of a WARC file: its offset, type and URI (each gzip member one record, as WACZ writers do). */
async function recordsOf(warc: Uint8Array): Promise<Array<{ offset: number; type: string; url: string }>> {
  const out: Array<{ offset: number; type: string; url: string }> = [];
  const parser = new WARCParser([warc]);
  for await (const record of parser) {
    await record.readFully();
    out.push({ offset: parser.offset, type: record.warcType ?? '', url: record.warcTargetURI ?? '' });
  }
  return out;
}

/**
 * The problems that would break a replay of `wacz` (empty when it replays), checking the index against the
 * WARC byte for byte, and that each URL of `loaded` (what the test's sites served during the capture) and each
 * listed page has a record.
 */
export async function replayProblems(wacz: Uint8Array, loaded: string[] = []): Promise<string[]> {
  const problems: string[] = [];
  const files = unzipSync(wacz);
  const names = Object.keys(files);
  const indexes = names.filter((n) => /^indexes\/.+\.cdxj?$/.test(n));
  if (indexes.length === 0) problems.push('no CDXJ index under indexes/');
  const lines = indexes.flatMap((n) => parseCdxj(Buffer.from(files[n] ?? []).toString('utf8'), problems));
  const indexed = new Set<string>();
  for (const l of lines) {
    const where = `index line ${l.line} (${l.url})`;
    const warc = files[`archive/${l.filename}`];
    if (!warc) {
      problems.push(`${where}: no archive/${l.filename}`);
      continue;
    }
    if (!(l.offset >= 0 && l.length > 0 && l.offset + l.length <= warc.length)) {
      problems.push(`${where}: offset ${l.offset} and length ${l.length} fall outside the WARC`);
      continue;
    }
    const slice = warc.subarray(l.offset, l.offset + l.length);
    let raw: Buffer;
    try {
      // One whole gzip member: a wrong offset starts mid-member, a wrong length cuts one or runs into the next.
      raw = gunzipSync(slice);
    } catch (e) {
      problems.push(`${where}: not one whole gzip member (${errorMessage(e)})`);
      continue;
    }
    const record = await readRecord(raw).catch(() => undefined);
    if (!record) {
      problems.push(`${where}: no WARC record there`);
      continue;
    }
    if (record.url !== l.url) problems.push(`${where}: the record there is of ${record.url}`);
    if (record.date.replace(/\D/g, '').slice(0, 14) !== l.ts) {
      problems.push(`${where}: the record there is dated ${record.date}, not ${l.ts}`);
    }
    if (l.status !== undefined && String(record.status) !== l.status) {
      problems.push(`${where}: the record there has status ${record.status}, not ${l.status}`);
    }
    if (l.digest !== undefined) {
      const hex = createHash('sha256').update(record.payload).digest('hex');
      if (l.digest.replace(/^sha256:/, '') !== hex) problems.push(`${where}: payload digest differs`);
    }
    indexed.add(`${l.filename}@${l.offset}`);
  }
  for (const name of names.filter((n) => /^archive\/.+\.warc\.gz$/.test(n))) {
    const filename = name.slice('archive/'.length);
    for (const r of await recordsOf(files[name] ?? new Uint8Array())) {
      if ((r.type === 'response' || r.type === 'resource') && !indexed.has(`${filename}@${r.offset}`)) {
        problems.push(`${r.type} record of ${r.url} at ${filename}@${r.offset} is not indexed`);
      }
    }
  }
  const urls = new Set(lines.map((l) => l.url));
  const pages = Buffer.from(files['pages/pages.jsonl'] ?? [])
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { url?: string })
    .filter((p) => p.url);
  if (pages.length === 0) problems.push('no page in pages/pages.jsonl');
  for (const p of pages) if (!urls.has(p.url ?? '')) problems.push(`page ${p.url} has no record`);
  for (const u of loaded) if (!urls.has(u)) problems.push(`loaded resource ${u} has no record`);
  return problems;
}
