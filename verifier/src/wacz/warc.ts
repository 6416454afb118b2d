/**
 * Reading WARC records (WARC 1.1, section 4: version line, named fields, CRLF, block, CRLF CRLF), gzipped
 * member by member as WACZ stores them, and checking a record's own digests (`WARC-Block-Digest`,
 * `WARC-Payload-Digest`).
 */

import { sha256Hex } from '@notary/trust/bytes';
import { Gunzip } from 'fflate';
import { type Message, msg } from '../messages/index.ts';

/** Largest WARC record (or run of records between indexed ones) decompressed, bytes. */
const MAX_RECORD_BYTES = 512 * 1024 * 1024;

/** One WARC record parsed from its uncompressed bytes: header fields by lower-case name, and its block. */
export interface WarcRecord {
  headers: Map<string, string>;
  block: Uint8Array;
}

const CRLFCRLF = [13, 10, 13, 10];

function indexOfCrlfCrlf(bytes: Uint8Array, from: number): number {
  for (let i = from; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/**
 * Splits uncompressed WARC bytes into records (WARC 1.1 section 4: version, fields, CRLF, block, CRLF CRLF).
 * @throws Error naming the byte where the bytes stop being WARC records.
 */
export function parseWarc(bytes: Uint8Array): WarcRecord[] {
  const out: WarcRecord[] = [];
  const latin1 = new TextDecoder('latin1');
  let at = 0;
  while (at < bytes.length) {
    const end = indexOfCrlfCrlf(bytes, at);
    if (end < 0) throw new Error(`no WARC header end after byte ${at}`);
    const lines = latin1.decode(bytes.subarray(at, end)).split('\r\n');
    if (!/^WARC\/1\.[01]$/.test(lines[0] ?? '')) throw new Error(`not a WARC record at byte ${at}`);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get('content-length'));
    if (!Number.isSafeInteger(length) || length < 0)
      throw new Error(`record at byte ${at}: no Content-Length`);
    const start = end + 4;
    if (start + length + 4 > bytes.length)
      throw new Error(`record at byte ${at}: shorter than its Content-Length`);
    const trailer = bytes.subarray(start + length, start + length + 4);
    if (!CRLFCRLF.every((b, i) => trailer[i] === b))
      throw new Error(`record at byte ${at}: no CRLF CRLF after its block`);
    out.push({ headers, block: bytes.subarray(start, start + length) });
    at = start + length + 4;
  }
  return out;
}

/** Gunzips every member of `gz` (bounded); `members` counts them. @throws Error past the bound or on bad data. */
export function gunzipAll(gz: Uint8Array): { data: Uint8Array; members: number } {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let members = 1;
  const g = new Gunzip((chunk) => {
    size += chunk.length;
    if (size > MAX_RECORD_BYTES) throw new Error(`more than ${MAX_RECORD_BYTES} bytes once decompressed`);
    chunks.push(chunk);
  });
  g.onmember = () => {
    members++;
  };
  g.push(gz, true);
  const data = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.length;
  }
  return { data, members };
}

/** `sha256:<hex>` of `bytes` (WARC digests here are SHA-256 in hex, as warcio writes them). */
export async function sha256Label(bytes: Uint8Array): Promise<string> {
  return `sha256:${await sha256Hex(bytes)}`;
}

/** The HTTP payload of a WARC `response`/`request` block (after the HTTP headers), else the block. */
export function payloadOf(record: WarcRecord): Uint8Array {
  if (!/^application\/http/i.test(record.headers.get('content-type') ?? '')) return record.block;
  const end = indexOfCrlfCrlf(record.block, 0);
  return end < 0 ? new Uint8Array() : record.block.subarray(end + 4);
}

/** Checks a record's own digests (block, payload; SHA-256 ones only); returns the problems, as messages. */
export async function recordDigests(record: WarcRecord): Promise<Message[]> {
  const problems: Message[] = [];
  const block = record.headers.get('warc-block-digest');
  if (block && /^sha256:/i.test(block) && block.toLowerCase() !== (await sha256Label(record.block))) {
    problems.push(msg('wacz.blockDigestMismatch'));
  }
  const payload = record.headers.get('warc-payload-digest');
  if (
    payload &&
    /^sha256:/i.test(payload) &&
    payload.toLowerCase() !== (await sha256Label(payloadOf(record)))
  ) {
    problems.push(msg('wacz.payloadDigestMismatch'));
  }
  return problems;
}
