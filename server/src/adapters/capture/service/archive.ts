import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { type FileHandle, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Log } from '@notary/platform/log';
import { sha256HexSync } from '@notary/platform/sha256';
import { type StageTimes, timed } from '@notary/platform/stage-times';
import { AppError, LIMITS } from '@notary/shared';
import { Zip, ZipPassThrough } from 'fflate';
import { z } from 'zod';
import type { CaptureMonitoring, CaptureRecord, WebCapture, WebCapturer } from '../../../ports/capture';
import {
  PROVENANCE_FILES,
  PROVENANCE_PAGE_TITLE,
  PROVENANCE_PAGE_URL,
  renderProvenanceSummary,
} from './provenance-summary';
import { isPng, withCaptureRecord } from './screenshot-record';
import { datapackageJson, WACZ_PATHS, type WaczResource, waczDate } from './wacz-layout';
import type { WaczSigner } from './wacz-signing';

/**
 * The service's side of a capture's archive: the parts the capture process left (a WARC, its CDXJ index, the
 * screenshot, the PDF, the TLS material) are checked, since a page may have taken that process over, and
 * packed once into a WACZ 1.1.1 (https://specs.webrecorder.net/wacz/1.1.1/) with what only the service writes:
 * the provenance summary (a file, a page and a WARC `resource` record), the record and the screenshot stating
 * the signature, `datapackage.json` and the signed `datapackage-digest.json` (WACZ Signing and Verification
 * 0.1.0, `wacz-signing.ts`). The zip is written as a stream from the files: a WARC up to the archive bound
 * never sits in memory whole.
 */

/** A file the capture process wrote, open for reading, and its size as checked (bytes). */
export interface CapturePartFile {
  file: FileHandle;
  bytes: number;
}

/**
 * One capture's parts as the service received them (`IsolatedCapturer`: plain files of the capture account, of
 * the announced sizes and within bounds), not yet checked for content (`assembleWacz` does).
 */
export interface CaptureParts {
  /** The record the capture process sent, checked against its schema (`process-protocol.ts`). */
  record: CaptureRecord;
  /** The full-page screenshot as Chromium rendered it (PNG, without a record chunk). */
  screenshot: Buffer;
  /** The CDXJ index of `warc` (cdxj/0.1.0: `<SURT key> <14-digit timestamp> <JSON>` per line). */
  index: Buffer;
  /** Every origin's certificates and timestamps (`capture/tls.json`, `notary-capture-tls/1`). */
  tls: Buffer;
  /** The WARC (one gzip member per record). */
  warc: CapturePartFile;
  /** The PDF rendering; absent when Chromium made none. */
  pdf: CapturePartFile | undefined;
  /** Closes the files and removes the capture's work directory. */
  dispose(): Promise<void>;
}

/** Runs one capture and hands over its parts (`IsolatedCapturer`). */
export interface CapturePartsSource {
  /**
   * `times`, when given, gets each stage's wall time (the capture process's and its own stages inside it).
   * @throws AppError as `WebCapturer.capture` documents.
   */
  capture(url: URL, options?: { signal?: AbortSignal; times?: StageTimes }): Promise<CaptureParts>;
}

/** What the service says of the archives it assembles: who wrote them (`software`), and where to log. */
export interface ArchiveOptions {
  software: string;
  log: Log;
  /** A monitoring's run: stated in the signed record (`CaptureRecord.monitoring`). */
  monitoring?: CaptureMonitoring;
  /** Each stage's wall time (capture, WACZ packing, provenance, signing) for a bench; unset in the service. */
  times?: StageTimes;
}

/** Bytes read from a capture's file at a time. */
const CHUNK_BYTES = 1024 * 1024;
/** The name index lines give the WARC (the capture process's `data.warc.gz`, the archive's `archive/` file). */
const WARC_NAME = path.basename(WACZ_PATHS.warc);

const indexJson = z.object({
  url: z.string().max(64 * 1024),
  offset: z.union([z.number(), z.string()]),
  length: z.union([z.number(), z.string()]),
  filename: z.literal(WARC_NAME),
});

/**
 * The lines of a capture's CDXJ index, each checked to point inside its WARC (`warcBytes` long): a key, a
 * 14-digit timestamp and a JSON object naming `data.warc.gz` with a whole-number offset and a positive length.
 * @throws Error naming the first line that is not such.
 */
export function checkIndexLines(index: Buffer, warcBytes: number): string[] {
  const text = index.toString('utf8');
  const lines = text.split('\n').filter((l) => l !== '');
  for (const [n, line] of lines.entries()) {
    const match = /^\S+ \d{14} (\{.*\})$/.exec(line);
    let parsed: z.infer<typeof indexJson> | undefined;
    try {
      parsed = match?.[1] ? indexJson.parse(JSON.parse(match[1])) : undefined;
    } catch {
      parsed = undefined;
    }
    const offset = Number(parsed?.offset);
    const length = Number(parsed?.length);
    const inside =
      Number.isSafeInteger(offset) &&
      Number.isSafeInteger(length) &&
      offset >= 0 &&
      length > 0 &&
      offset + length <= warcBytes;
    if (!parsed || !inside) throw new Error(`capture index line ${n + 1} is not a record of the WARC`);
  }
  return lines;
}

/**
 * The capture's parts checked for what they must be before they are packed: the index (`checkIndexLines`),
 * the screenshot a PNG, `tls.json` JSON of its format, the PDF a PDF.
 * @throws Error naming the part that is not.
 */
async function checkParts(parts: CaptureParts): Promise<string[]> {
  const lines = checkIndexLines(parts.index, parts.warc.bytes);
  if (!isPng(parts.screenshot)) throw new Error('the capture screenshot is not a PNG');
  let tls: unknown;
  try {
    tls = JSON.parse(parts.tls.toString('utf8'));
  } catch {
    tls = undefined;
  }
  if (!z.object({ format: z.literal('notary-capture-tls/1') }).safeParse(tls).success) {
    throw new Error('the capture tls.json is not of its format');
  }
  if (parts.pdf) {
    const head = Buffer.alloc(5);
    await parts.pdf.file.read(head, 0, 5, 0);
    if (head.toString('latin1') !== '%PDF-') throw new Error('the capture page.pdf is not a PDF');
  }
  return lines;
}

/** The first `bytes` bytes of `part`'s file, in chunks. @throws Error when the file is shorter. */
async function* chunksOf(part: CapturePartFile): AsyncGenerator<Buffer> {
  const buf = Buffer.alloc(CHUNK_BYTES);
  for (let at = 0; at < part.bytes; ) {
    const { bytesRead } = await part.file.read(buf, 0, Math.min(buf.length, part.bytes - at), at);
    if (bytesRead === 0) throw new Error('a capture file is shorter than announced');
    at += bytesRead;
    yield Buffer.from(buf.subarray(0, bytesRead));
  }
}

/** SHA-256 (hex) of a capture's file. */
async function hashPart(part: CapturePartFile): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of chunksOf(part)) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * A zip file written entry by entry as a stream (PKWARE APPNOTE.TXT, through fflate), every entry stored, not
 * deflated (WACZ asks for it: replay reads WARC records by offset), each entry's SHA-256 and size taken as it
 * is written, for `datapackage.json`.
 */
class StoredZipFile {
  private readonly out: WriteStream;
  private readonly zip: Zip;
  private failure: Error | undefined;

  constructor(file: string) {
    this.out = createWriteStream(file, { mode: 0o600 });
    this.out.on('error', (e) => {
      this.failure ??= e;
    });
    this.zip = new Zip((err, chunk, final) => {
      if (err) {
        this.failure ??= err;
        return;
      }
      this.out.write(chunk);
      if (final) this.out.end();
    });
  }

  /** Adds the entry `name` with the bytes of `chunks`; returns its `datapackage.json` resource. */
  async add(name: string, chunks: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<WaczResource> {
    const entry = new ZipPassThrough(name);
    this.zip.add(entry);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of chunks) {
      hash.update(chunk);
      bytes += chunk.length;
      entry.push(chunk, false);
      if (this.failure) throw this.failure;
      if (this.out.writableNeedDrain) await once(this.out, 'drain');
    }
    entry.push(new Uint8Array(0), true);
    return { name: path.basename(name), path: name, hash: `sha256:${hash.digest('hex')}`, bytes };
  }

  /** Writes the central directory and closes the file. @returns the zip's size, bytes. */
  async close(): Promise<number> {
    this.zip.end();
    if (!this.out.writableFinished && !this.failure) await once(this.out, 'finish');
    if (this.failure) throw this.failure;
    return this.out.bytesWritten;
  }

  /** Stops writing (after a failure); the file is the caller's to remove. */
  destroy(): void {
    this.zip.terminate();
    this.out.destroy();
  }
}

/**
 * The provenance summary's WARC `resource` record (one gzip member, dated the capture's end) and its CDXJ line
 * at `offset` of the WARC, with its `recordDigest` (as the capture process indexes its own records).
 */
async function summaryRecord(
  summary: Buffer,
  record: CaptureRecord,
  offset: number,
): Promise<{ member: Buffer; line: string }> {
  // Loaded at the first capture, not at the service's start (as the browser's driver is).
  const { CDXIndexer, WARCRecord, WARCSerializer } = await import('warcio');
  const warcRecord = WARCRecord.create(
    {
      url: PROVENANCE_PAGE_URL,
      date: record.finishedAt,
      type: 'resource',
      warcVersion: 'WARC/1.1',
      warcHeaders: { 'Content-Type': 'text/html; charset=utf-8' },
    },
    [summary],
  );
  const member = Buffer.from(await WARCSerializer.serialize(warcRecord, { gzip: true }));
  const indexer = new CDXIndexer({ format: 'cdxj' });
  let line = '';
  for await (const cdx of indexer.iterIndex([{ reader: Readable.from([member]), filename: WARC_NAME }])) {
    cdx.offset = offset + Number(cdx.offset);
    cdx.recordDigest = `sha256:${sha256HexSync(member)}`;
    line = indexer.serializeCDXJ(cdx).trimEnd();
  }
  if (!line) throw new Error('the provenance summary record was not indexed');
  return { member, line };
}

/** `pages/pages.jsonl` (WACZ 1.1.1, json-pages-1.0): the captured page, then the provenance summary. */
function pagesJsonl(record: CaptureRecord): Buffer {
  return Buffer.from(
    `${[
      JSON.stringify({ format: 'json-pages-1.0', id: 'pages', title: 'All Pages' }),
      JSON.stringify({ id: 'page-1', url: record.finalUrl, ts: record.startedAt, title: record.title }),
      JSON.stringify({
        id: 'page-2',
        url: PROVENANCE_PAGE_URL,
        ts: record.finishedAt,
        title: PROVENANCE_PAGE_TITLE,
      }),
    ].join('\n')}\n`,
  );
}

/**
 * The entries the service signs, last in the archive: the screenshot and `capture.json` stating the signature
 * (`CaptureRecord.signature`), `datapackage.json` over `packed` and them, and `datapackage-digest.json`. When
 * the TSA fails, the record is written again saying so and the archive is signed without time signature.
 */
async function signedEntries(
  parts: CaptureParts,
  packed: WaczResource[],
  signer: WaczSigner,
  options: ArchiveOptions,
): Promise<{ record: CaptureRecord; screenshot: Buffer; entries: Array<[string, Buffer]> }> {
  let facts = signer.facts;
  for (;;) {
    const record: CaptureRecord = {
      ...parts.record,
      ...(options.monitoring ? { monitoring: options.monitoring } : {}),
      signature: facts,
    };
    const screenshot = withCaptureRecord(parts.screenshot, record);
    const json = Buffer.from(JSON.stringify(record, null, 2));
    const created = waczDate(new Date());
    const resourceOf = (p: string, data: Buffer): WaczResource => ({
      name: path.basename(p),
      path: p,
      hash: `sha256:${sha256HexSync(data)}`,
      bytes: data.length,
    });
    const datapackage = datapackageJson(
      [...packed, resourceOf(WACZ_PATHS.screenshot, screenshot), resourceOf(WACZ_PATHS.record, json)],
      {
        title: record.title || record.finalUrl,
        mainPageUrl: record.finalUrl,
        mainPageDate: record.startedAt,
        software: options.software,
      },
      created,
    );
    const hash = `sha256:${sha256HexSync(datapackage)}`;
    const outcome = await timed(options.times, 'signing', () => signer.sign(hash, created, facts));
    if ('unavailable' in outcome) {
      options.log.warn(
        { url: record.requestedUrl, timeSignature: outcome.unavailable.timeSignature },
        'capture archive signed without time signature: the TSA failed',
      );
      facts = outcome.unavailable;
      continue;
    }
    const digest = { path: WACZ_PATHS.datapackage, hash, signedData: outcome.signedData };
    return {
      record,
      screenshot,
      entries: [
        [WACZ_PATHS.screenshot, screenshot],
        [WACZ_PATHS.record, json],
        [WACZ_PATHS.datapackage, datapackage],
        [WACZ_PATHS.digest, Buffer.from(JSON.stringify(digest, null, 2))],
      ],
    };
  }
}

/**
 * Packs one capture's parts into its signed WACZ, in a directory of the service's own: `archive/data.warc.gz`
 * (the capture's WARC byte for byte, then the provenance summary's `resource` record), `indexes/index.cdx`
 * (the capture's lines and the summary's, sorted), `pages/pages.jsonl`, `capture/page.pdf`,
 * `capture/provenance-summary.html`, `capture/tls.json`, then the entries the service signs
 * (`signedEntries`). The parts are checked first (`checkParts`); the capture's files are read as streams.
 * @returns the capture as the service keeps it (its record and screenshot as the archive holds them); the
 *   parts stay the caller's to dispose of.
 * @throws AppError PAYLOAD_TOO_LARGE past the archive bound; Error when a part is not what the capture
 *   process writes.
 */
export function assembleWacz(
  parts: CaptureParts,
  signer: WaczSigner,
  options: ArchiveOptions,
): Promise<WebCapture> {
  return timed(options.times, 'WACZ packing', () => packWacz(parts, signer, options));
}

/** `assembleWacz`'s work. */
async function packWacz(
  parts: CaptureParts,
  signer: WaczSigner,
  options: ArchiveOptions,
): Promise<WebCapture> {
  const lines = await checkParts(parts);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-signed-'));
  const file = path.join(dir, 'capture.wacz');
  const zip = new StoredZipFile(file);
  try {
    const { record, pdf } = parts;
    // The summary states the screenshot as rendered and the PDF: what the archive holds, the record chunk aside.
    const { summary, own } = await timed(options.times, 'provenance', async () => {
      const summary = renderProvenanceSummary(record, {
        screenshot: { sha256: sha256HexSync(parts.screenshot), bytes: parts.screenshot.length },
        pdf: pdf ? { sha256: await hashPart(pdf), bytes: pdf.bytes } : undefined,
      });
      return { summary, own: await summaryRecord(summary, record, parts.warc.bytes) };
    });
    const warcChunks = async function* () {
      yield* chunksOf(parts.warc);
      yield own.member;
    };
    const index = Buffer.from(`${[...lines, own.line].sort().join('\n')}\n`);
    const packed = [
      await zip.add(WACZ_PATHS.warc, warcChunks()),
      await zip.add(WACZ_PATHS.index, [index]),
      await zip.add(WACZ_PATHS.pages, [pagesJsonl(record)]),
      ...(pdf ? [await zip.add(WACZ_PATHS.pdf, chunksOf(pdf))] : []),
      await zip.add(PROVENANCE_FILES.summary, [summary]),
      await zip.add(PROVENANCE_FILES.tls, [parts.tls]),
    ];
    const signed = await signedEntries(parts, packed, signer, options);
    for (const [name, data] of signed.entries) await zip.add(name, [data]);
    const bytes = await zip.close();
    if (bytes > LIMITS.maxUploadBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');
    }
    let opened = false;
    return {
      waczBytes: bytes,
      screenshot: signed.screenshot,
      record: signed.record,
      openWacz: () => {
        if (opened) throw new Error('The capture archive was already read');
        opened = true;
        return createReadStream(file);
      },
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (e) {
    zip.destroy();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * The web capturer of the service: each capture's parts (`source`) packed into its signed WACZ
 * (`assembleWacz`), the capture process's files removed once packed. Parts that cannot be packed are an error
 * (INTERNAL, the cause logged).
 */
export function archivingCapturer(
  source: CapturePartsSource,
  signer: WaczSigner,
  options: ArchiveOptions,
): WebCapturer {
  return {
    capture: async (url, captureOptions) => {
      const parts = await source.capture(url, {
        ...(captureOptions?.signal ? { signal: captureOptions.signal } : {}),
        ...(options.times ? { times: options.times } : {}),
      });
      try {
        const monitoring = captureOptions?.monitoring;
        return await assembleWacz(parts, signer, monitoring ? { ...options, monitoring } : options);
      } catch (e) {
        if (e instanceof AppError) throw e;
        options.log.error({ err: e, url: url.href }, 'capture archive could not be assembled');
        throw new AppError('INTERNAL', 'The capture failed', { cause: e });
      } finally {
        await parts.dispose();
      }
    },
  };
}
