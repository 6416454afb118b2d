/**
 * Check 6, the WARC records against the index (WACZ Signing and Verification 0.1.0, section 6, the
 * "partially loaded WACZ" check; cdxj/0.1.0): each CDXJ line's record (offset, length) has its
 * `recordDigest`, parses as one WARC record of the line's URL whose block and payload digests hold
 * (`WARC-Block-Digest`, `WARC-Payload-Digest`, the line's `digest`); the records between indexed ones
 * (warcinfo, requests) have their block digests; the records cover the WARC file exactly.
 */
import { sha256Hex } from '@notary/trust/bytes';
import { errorMessage } from '../error-message.ts';
import { data, type Message, msg } from '../messages/index.ts';
import type { CheckBuilder } from '../report.ts';
import { type IndexEntry, readIndexes } from './cdxj.ts';
import { builder, finish, notRunWacz } from './check.ts';
import type { WaczResource } from './package.ts';
import type { WaczCheckResult } from './types.ts';
import { gunzipAll, parseWarc, payloadOf, recordDigests, sha256Label, type WarcRecord } from './warc.ts';

/** Most failing records listed one by one in the evidence. */
const MAX_LISTED = 20;

/** Check 6's running counts, and its failures listed up to `MAX_LISTED`. */
interface Tally {
  c: CheckBuilder;
  indexed: number;
  others: number;
  problems: number;
}

/** A failing record: listed while fewer than `MAX_LISTED` are, then one line says more fail. */
function problem(t: Tally, label: string | Message, value: Message): void {
  if (t.problems++ < MAX_LISTED) t.c.fail(typeof label === 'string' ? data(label) : label, value);
  else if (t.problems === MAX_LISTED + 1) t.c.fail(msg('wacz.moreRecords'), msg('wacz.onlyFirstListed'));
}

/**
 * Check 6: each index line's record against its `recordDigest` and digests, the records between them, and
 * the coverage of each WARC file `resources` lists (`archive/*.warc[.gz]`, indexes `indexes/*.cdx[j][.gz]`).
 * Returns the result and the URLs of indexed records.
 */
export async function checkRecords(
  files: Map<string, Uint8Array>,
  resources: WaczResource[],
): Promise<{ result: WaczCheckResult; urls: Set<string> }> {
  const urls = new Set<string>();
  const listed = resources.map((r) => r.path);
  const warcs = listed.filter((p) => /^archive\/[^/]+\.warc(\.gz)?$/.test(p));
  const indexes = listed.filter((p) => /^indexes\/[^/]+\.(cdx|cdxj)(\.gz)?$/.test(p));
  if (warcs.length === 0 || indexes.length === 0) {
    return {
      result: notRunWacz(6, 'not-applicable', msg('wacz.noWarcOrIndex')),
      urls,
    };
  }
  const t: Tally = { c: builder(), indexed: 0, others: 0, problems: 0 };
  const byFile = readIndexes(t.c, files, indexes, warcs);
  for (const warc of warcs) {
    const bytes = files.get(warc);
    if (!bytes) continue;
    await checkWarcFile(t, warc, bytes, byFile.get(warc) ?? [], urls);
  }
  return {
    result: finish(6, t.c, msg('wacz.recordsSummary', { indexed: t.indexed, others: t.others })),
    urls,
  };
}

/** One WARC file (`warc`, its `bytes`) against its index `entries`: each record, each gap, the coverage. */
async function checkWarcFile(
  t: Tally,
  warc: string,
  bytes: Uint8Array,
  entries: IndexEntry[],
  urls: Set<string>,
): Promise<void> {
  const gz = warc.endsWith('.gz');
  entries.sort((a, b) => a.offset - b.offset);
  let covered = 0;
  for (const e of entries) {
    const where = `${warc} @${e.offset}+${e.length} ${e.url}`;
    if (
      !Number.isSafeInteger(e.offset) ||
      !Number.isSafeInteger(e.length) ||
      e.offset < covered ||
      e.length <= 0 ||
      e.offset + e.length > bytes.length
    ) {
      problem(t, where, msg('wacz.badOffset', { bytes: bytes.length }));
      continue;
    }
    await checkGap(t, warc, bytes, gz, covered, e.offset);
    covered = e.offset + e.length;
    t.indexed++;
    urls.add(e.url);
    await checkIndexedRecord(t, where, bytes.subarray(e.offset, e.offset + e.length), gz, e);
  }
  await checkGap(t, warc, bytes, gz, covered, bytes.length);
  t.c.note(data(warc), msg('wacz.warcCovered', { bytes: bytes.length, records: entries.length }));
}

/**
 * The records of `warc` between bytes `from` and `to` that no index line names: their own digests hold, and
 * none is a `response` or `revisit` (those must be indexed).
 */
async function checkGap(
  t: Tally,
  warc: string,
  bytes: Uint8Array,
  gz: boolean,
  from: number,
  to: number,
): Promise<void> {
  if (to <= from) return;
  try {
    const records = parseWarc(gz ? gunzipAll(bytes.subarray(from, to)).data : bytes.subarray(from, to));
    for (const r of records) {
      t.others++;
      const type = r.headers.get('warc-type');
      if (type === 'response' || type === 'revisit') {
        problem(
          t,
          `${warc} ${r.headers.get('warc-target-uri') ?? '?'}`,
          msg('wacz.recordOutsideIndex', { type, from, to }),
        );
      }
      for (const p of await recordDigests(r))
        problem(t, `${warc} ${type} ${r.headers.get('warc-target-uri') ?? ''}`.trim(), p);
    }
  } catch (e) {
    problem(
      t,
      msg('wacz.bytesRange', { file: warc, from, to }),
      msg('wacz.notWarcRecords', { error: errorMessage(e) }),
    );
  }
}

/**
 * One indexed record (`stored`: its bytes as stored, `where` its label) against its line `e`: the
 * `recordDigest`, one WARC record of the line's URL, its own digests and the line's payload `digest`.
 */
async function checkIndexedRecord(
  t: Tally,
  where: string,
  stored: Uint8Array,
  gz: boolean,
  e: IndexEntry,
): Promise<void> {
  if (e.recordDigest) {
    const actual = await sha256Label(stored);
    if (actual !== e.recordDigest.toLowerCase()) {
      problem(t, where, msg('wacz.recordDigestMismatch', { expected: e.recordDigest, actual }));
      return;
    }
  }
  let record: WarcRecord;
  try {
    const unzipped = gz ? gunzipAll(stored) : { data: stored, members: 1 };
    const records = parseWarc(unzipped.data);
    if (records.length !== 1 || !records[0])
      throw new Error(`${records.length} records where the index has one`);
    record = records[0];
  } catch (err) {
    problem(t, where, msg('wacz.notOneRecord', { error: errorMessage(err) }));
    return;
  }
  if (record.headers.get('warc-target-uri') !== e.url) {
    const of = record.headers.get('warc-target-uri');
    problem(t, where, msg('wacz.recordIsOf', { url: of ?? msg('wacz.noUrl') }));
  }
  for (const p of await recordDigests(record)) problem(t, where, p);
  if (e.digest && /^(sha256:)?[0-9a-f]{64}$/i.test(e.digest)) {
    const expected = e.digest.toLowerCase().replace(/^sha256:/, '');
    const actual = await sha256Hex(payloadOf(record));
    if (actual !== expected) {
      problem(t, where, msg('wacz.payloadMismatch', { expected: e.digest, actual: `sha256:${actual}` }));
    }
  }
  if (!e.recordDigest) t.c.skip(msg('wacz.noRecordDigest', { where }));
}
