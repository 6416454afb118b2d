/**
 * Long-term validation data of a signed PDF (PAdES baseline B-LT and B-LTA, ETSI EN 319 142-1 clauses 5.4 and
 * 6.3): the Document Security Store (`/DSS`, ISO 32000-2 12.8.4.3; ETSI EN 319 142-1 5.4.2) holding the
 * certificates, OCSP responses and CRLs a verifier needs once the responders are gone, and the document
 * timestamp (`/Type /DocTimeStamp`, `/SubFilter /ETSI.RFC3161`, ISO 32000-2 12.8.5; ETSI EN 319 142-1 5.4.3)
 * that seals the file with that data. Each is an incremental update (ISO 32000-1 7.5.6, `incremental.ts`):
 * the bytes before it, earlier signatures included, never change.
 */
import { createHash } from 'node:crypto';
import {
  ParseSpeeds,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { decodeBounded } from './bounded-decode';
import { PdfBoundError } from './bounds';
import type { SignatureTimestamper } from './cades';
import { IncrementalUpdate, inspectOriginal, UnsoundPdfError } from './incremental';
import { installFastStreamScan } from './stream-scan';

/** DER blobs, as a PAdES /DSS holds them (ETSI EN 319 142-1 5.4.2). */
export interface ValidationMaterial {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

/** The validation data of one signature, for its /VRI entry (ETSI EN 319 142-1 5.4.2.2). */
export interface SignatureValidationData extends ValidationMaterial {
  /**
   * The signature's /Contents bytes: the DER CMS (a trailing zero padding, as the placeholder leaves it, is
   * ignored: the key is over the DER value only).
   */
  signatureContents: Uint8Array;
}

/**
 * The AD-RA artifacts (DOC-ICP-15.03 Tabelas A.19 and A.20), DER as ITI publishes them: the policy file
 * (`PA_PAdES_AD_RA_v1_4.der`), the list of approved policies (`LPA_PAdES.der`) and its detached CMS signature
 * (`LPA_PAdES.p7s`).
 */
export interface IcpBrasilArtifacts {
  policy: Uint8Array;
  lpa: Uint8Array;
  lpaSignature: Uint8Array;
}

/** /DSS array and /VRI key of each artifact (Tabela A.19 / Tabela A.20). */
const ARTIFACT_KEYS = [
  ['policy', 'PBAD_PolicyArtifacts', 'PBAD_PolicyArtifact'],
  ['lpa', 'PBAD_LpaArtifacts', 'PBAD_LpaArtifact'],
  ['lpaSignature', 'PBAD_LpaSignatures', 'PBAD_LpaSignature'],
] as const;

/**
 * Most entries an existing /DSS array or /VRI dictionary may have: a store of a real file holds tens. Past
 * it the file is refused (hostile input), not read.
 */
export const DSS_MAX_ENTRIES = 10_000;

/** Largest decoded size of one existing /DSS stream read to find duplicates (a large CA's CRL is a few MB). */
export const DSS_MAX_STREAM_BYTES = 32 * 1024 * 1024;

/** Largest decoded size of all existing /DSS streams read together: past it the file is refused. */
export const DSS_MAX_TOTAL_BYTES = 128 * 1024 * 1024;

/**
 * Bytes reserved at first for a document timestamp token (/Contents holds twice as many hex digits). The
 * test TSA's token with its chain is about 5 KiB; public TSAs' up to about 8. A larger token is fitted by a
 * second attempt with a placeholder its size plus `DOC_TIMESTAMP_SLACK_BYTES`.
 */
export const DOC_TIMESTAMP_PLACEHOLDER_BYTES = 16 * 1024;
const DOC_TIMESTAMP_SLACK_BYTES = 2 * 1024;
/** Largest token ever placed (the second attempt's bound): a TSA answering more is refused. */
export const DOC_TIMESTAMP_MAX_BYTES = 256 * 1024;

const name = (n: string) => PDFName.of(n);

/**
 * The /VRI key of a signature: uppercase hex SHA-1 of its /Contents DER value (ETSI EN 319 142-1 5.4.2.2;
 * ISO 32000-2 12.8.4.4). `contents` may carry the placeholder's zero padding after the DER value.
 * @throws Error when `contents` does not start with a DER length the bytes can hold.
 */
export function vriKey(contents: Uint8Array): string {
  return createHash('sha1').update(derValue(contents)).digest('hex').toUpperCase();
}

/** The first DER TLV of `bytes` (X.690 8.1: definite length, short or long form up to 4 length bytes). */
function derValue(bytes: Uint8Array): Uint8Array {
  const first = bytes[1];
  if (bytes.length < 2 || first === undefined) throw new Error('signature contents: not DER');
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new Error('signature contents: unsupported DER length');
    length = 0;
    for (let i = 0; i < count; i += 1) length = length * 256 + (bytes[2 + i] ?? 0);
    header += count;
  }
  if (header + length > bytes.length) throw new Error('signature contents: DER value longer than the bytes');
  return bytes.subarray(0, header + length);
}

/**
 * A PDF parsed for the long-term updates (`loadForUpdates`) and the bytes its objects hold now: an update
 * made on it (`appendValidationDataOn`, `appendValidationDataWithTimestampFieldOn`) moves `bytes` to its
 * output, so that the next update of the same signing needs no parse.
 */
export interface LoadedPdf {
  doc: PDFDocument;
  bytes: Uint8Array;
  /** The update that wrote `bytes` from `doc`, when one did (its snapshot serves the next update). */
  update?: IncrementalUpdate | undefined;
}

/**
 * `pdf` parsed for incremental updates.
 * @throws UnsoundPdfError for files that cannot get one (broken cross-reference chain, encryption);
 *   pdf-lib's parsing errors; `PdfBoundError` past the bounds of `inspectOriginal`.
 */
export async function loadForUpdates(pdf: Uint8Array): Promise<LoadedPdf> {
  const structure = inspectOriginal(pdf);
  if (structure.encrypted) throw new UnsoundPdfError('encrypted PDF: validation data cannot be added');
  // Parsed in one go: pdf-lib's default pauses for a timer tick every 100 objects, which only delays the
  // long-term steps (the service runs them in a worker thread with nothing else to serve, callers of the
  // in-thread writer are command-line tools).
  installFastStreamScan();
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, parseSpeed: ParseSpeeds.Fastest });
  return { doc, bytes: pdf };
}

/**
 * An update of `pdf` on `loaded`, which holds `pdf` itself or the bytes `pdf` was made from by filling a
 * signature placeholder (`onlySignatureFilled`); else `pdf` is parsed.
 */
async function beginUpdateOn(
  loaded: LoadedPdf,
  pdf: Uint8Array,
): Promise<{ doc: PDFDocument; update: IncrementalUpdate }> {
  const current =
    loaded.bytes === pdf || onlySignatureFilled(loaded.bytes, pdf) ? loaded : await loadForUpdates(pdf);
  const structure = inspectOriginal(pdf);
  const update = current.update?.next(pdf, structure) ?? IncrementalUpdate.begin(current.doc, pdf, structure);
  loaded.doc = current.doc;
  loaded.bytes = pdf;
  loaded.update = update;
  return { doc: current.doc, update };
}

/**
 * `/ByteRange [numbers or placeholder names] /Contents <hex>`: the part of a signature dictionary signing fills
 * (@signpdf's placeholder holds NUL bytes between the angle brackets until then).
 */
const SIGNATURE_VALUES = /^\/ByteRange\s*\[[0-9*/\s]*\]\s*\/Contents\s*<[0-9A-Fa-f\0]*>$/;

/**
 * Whether `next` holds the same objects as `previous` but for the /ByteRange and /Contents of the last
 * signature dictionary: the same length (or one end of line less at the end), every byte equal outside
 * `/ByteRange [...] /Contents <...>` (what filling a placeholder writes, @signpdf's or `fillByteRange`'s,
 * both in that order). A document parsed from
 * `previous` can then take the updates of `next`: they never rewrite a signature's dictionary, and the
 * offsets are the same.
 */
export function onlySignatureFilled(previous: Uint8Array, next: Uint8Array): boolean {
  // @signpdf drops the end of line after the last %%EOF: the objects and their offsets stay the same.
  const dropped = previous.subarray(next.length);
  if (dropped.length > 2 || dropped.some((byte) => byte !== 0x0a && byte !== 0x0d)) return false;
  const a = Buffer.from(previous.buffer, previous.byteOffset, next.byteLength);
  const b = Buffer.from(next.buffer, next.byteOffset, next.byteLength);
  const at = b.lastIndexOf('/ByteRange', undefined, 'latin1');
  const contents = at < 0 ? -1 : b.indexOf('/Contents', at, 'latin1');
  const end = contents < 0 ? -1 : b.indexOf('>', contents) + 1;
  if (end <= 0) return false;
  return (
    a.compare(b, 0, at, 0, at) === 0 &&
    a.compare(b, end, b.length, end, a.length) === 0 &&
    SIGNATURE_VALUES.test(a.toString('latin1', at, end)) &&
    SIGNATURE_VALUES.test(b.toString('latin1', at, end))
  );
}

/**
 * The array under `key` of `dict` for appending: an indirect array is changed in place (only that object is
 * rewritten), a direct one too, a missing one created direct. Bounded by `DSS_MAX_ENTRIES`.
 * @throws UnsoundPdfError when the entry is not an array or is too long.
 */
function arrayOf(doc: PDFDocument, dict: PDFDict, key: string): PDFArray {
  const value = dict.lookup(name(key));
  if (value === undefined) {
    const created = doc.context.obj([]);
    dict.set(name(key), created);
    return created;
  }
  if (!(value instanceof PDFArray)) throw new UnsoundPdfError(`/${key} is not an array`);
  if (value.size() > DSS_MAX_ENTRIES)
    throw new UnsoundPdfError(`/${key} has more than ${DSS_MAX_ENTRIES} entries`);
  return value;
}

/** One /DSS stream array (/Certs, /OCSPs or /CRLs) with the SHA-256 of each blob already in it. */
class StreamArray {
  private readonly byDigest = new Map<string, PDFRef>();
  /** Streams appended by `add`. */
  added = 0;

  /**
   * Reads the digests of `array`'s streams, decoding at most `DSS_MAX_STREAM_BYTES` of each and what is left
   * of `budget` (bytes, shared by the store's arrays) in all.
   * @throws PdfBoundError when the budget is spent (a store of Flate bombs, not validation data).
   */
  private readonly doc: PDFDocument;
  private readonly array: PDFArray;

  constructor(doc: PDFDocument, array: PDFArray, budget: { remaining: number }) {
    this.doc = doc;
    this.array = array;
    for (const item of array.asArray()) {
      if (!(item instanceof PDFRef)) continue;
      const stream = doc.context.lookup(item);
      if (!(stream instanceof PDFRawStream)) continue;
      const limit = Math.min(DSS_MAX_STREAM_BYTES, budget.remaining);
      let bytes: Uint8Array;
      try {
        bytes = decodeBounded(stream, limit);
      } catch (error) {
        if (error instanceof PdfBoundError && limit < DSS_MAX_STREAM_BYTES) {
          throw new PdfBoundError(`the /DSS streams decode to more than ${DSS_MAX_TOTAL_BYTES} bytes`);
        }
        // An undecodable (or oversized) entry of another writer stays as it is; it just cannot be matched.
        budget.remaining -= error instanceof PdfBoundError ? limit : stream.contents.length;
        continue;
      }
      budget.remaining -= bytes.length;
      this.byDigest.set(createHash('sha256').update(bytes).digest('hex'), item);
    }
  }

  /** The reference of the stream holding `der`: the existing one, else a new Flate stream appended. */
  add(der: Uint8Array): PDFRef {
    const digest = createHash('sha256').update(der).digest('hex');
    const existing = this.byDigest.get(digest);
    if (existing) return existing;
    const ref = this.doc.context.register(this.doc.context.flateStream(der));
    this.array.push(ref);
    this.added += 1;
    this.byDigest.set(digest, ref);
    return ref;
  }
}

/**
 * Appends an incremental update merging `material` into the catalog's /DSS (ETSI EN 319 142-1 5.4.2; ISO
 * 32000-2 12.8.4.3), creating it (an indirect dictionary) when absent, with /Type /DSS (and /Type /VRI in each
 * /VRI entry it writes, as ICP-Brasil requires):
 * - /Certs, /OCSPs, /CRLs: arrays of indirect streams (Flate) holding each DER blob; blobs already in the
 *   store (same decoded bytes, whoever wrote them) are not written again, and existing entries are kept;
 * - /VRI: per signature of `vri`, the entry keyed by `vriKey(signatureContents)` with /Cert, /OCSP, /CRL
 *   arrays referencing the same streams (merged with an existing entry of that key). Empty arrays are left out;
 * - with `artifacts` (ICP-Brasil AD-RA, DOC-ICP-15.03 Tabela A.19): /PBAD_PolicyArtifacts, /PBAD_LpaArtifacts,
 *   /PBAD_LpaSignatures arrays holding each artifact once (same dedup as the other arrays), and in each /VRI
 *   entry written /PBAD_PolicyArtifact, /PBAD_LpaArtifact, /PBAD_LpaSignature referencing them (Tabela A.20).
 * Returns the original bytes followed by the update (only the changed objects: the catalog when the /DSS is
 * new, the store's dictionaries and arrays, the new streams), or `pdf` itself when everything was there.
 * @throws UnsoundPdfError when the file cannot be updated incrementally (broken cross-reference chain,
 *   encryption, a /DSS that is not a dictionary or has more than `DSS_MAX_ENTRIES` entries); pdf-lib's
 *   parsing errors; `PdfBoundError` past the bounds of `inspectOriginal` or `DSS_MAX_TOTAL_BYTES`.
 */
export async function appendValidationData(
  pdf: Uint8Array,
  material: ValidationMaterial,
  vri?: SignatureValidationData[],
  artifacts?: IcpBrasilArtifacts,
): Promise<Uint8Array> {
  return appendValidationDataOn(await loadForUpdates(pdf), pdf, material, vri, artifacts);
}

/**
 * `appendValidationData` on `loaded` (see `LoadedPdf`; `pdf` is parsed when `loaded` does not hold it).
 * @throws as `appendValidationData`.
 */
export async function appendValidationDataOn(
  loaded: LoadedPdf,
  pdf: Uint8Array,
  material: ValidationMaterial,
  vri?: SignatureValidationData[],
  artifacts?: IcpBrasilArtifacts,
): Promise<Uint8Array> {
  const out = await mergeIntoStore(await beginUpdateOn(loaded, pdf), pdf, material, vri, artifacts);
  // Nothing new, nothing written: the next update takes a fresh snapshot.
  if (out === pdf) loaded.update = undefined;
  loaded.bytes = out;
  return out;
}

/**
 * `appendValidationData` then `addDocumentTimestampField` (with `DOC_TIMESTAMP_PLACEHOLDER_BYTES`) on its
 * result, the file parsed once: the same two incremental updates as the two calls, one parse of the whole file
 * fewer (a B-LTA signature's /DSS is followed at once by its document timestamp's field).
 * @returns `validated`, the file with the /DSS update (as `appendValidationData` returns it), and `prepared`,
 *   `validated` followed by the field update.
 * @throws as `appendValidationData` and `addDocumentTimestampField`.
 */
export async function appendValidationDataWithTimestampField(
  pdf: Uint8Array,
  material: ValidationMaterial,
  vri?: SignatureValidationData[],
  artifacts?: IcpBrasilArtifacts,
): Promise<{ validated: Uint8Array; prepared: Uint8Array }> {
  return appendValidationDataWithTimestampFieldOn(await loadForUpdates(pdf), pdf, material, vri, artifacts);
}

/**
 * `appendValidationDataWithTimestampField` on `loaded` (see `LoadedPdf`).
 * @throws as `appendValidationDataWithTimestampField`.
 */
export async function appendValidationDataWithTimestampFieldOn(
  loaded: LoadedPdf,
  pdf: Uint8Array,
  material: ValidationMaterial,
  vri?: SignatureValidationData[],
  artifacts?: IcpBrasilArtifacts,
): Promise<{ validated: Uint8Array; prepared: Uint8Array }> {
  const validated = await appendValidationDataOn(loaded, pdf, material, vri, artifacts);
  // The parsed document now holds what `validated` holds: the field's update starts from it without a parse.
  const prepared = await fieldUpdate(
    await beginUpdateOn(loaded, validated),
    DOC_TIMESTAMP_PLACEHOLDER_BYTES,
    DOC_TIMESTAMP_FIELD,
  );
  loaded.bytes = prepared;
  return { validated, prepared };
}

/** `appendValidationData` on a document ready for an update of `pdf`. */
async function mergeIntoStore(
  { doc, update }: { doc: PDFDocument; update: IncrementalUpdate },
  pdf: Uint8Array,
  material: ValidationMaterial,
  vri: SignatureValidationData[] | undefined,
  artifacts: IcpBrasilArtifacts | undefined,
): Promise<Uint8Array> {
  const { context, catalog } = doc;
  // Whether anything is new: an update with nothing in it would be an empty xref section (invalid).
  let changed = false;
  let dss = catalog.lookup(name('DSS'));
  if (dss === undefined) {
    changed = true;
    dss = context.obj({});
    catalog.set(name('DSS'), context.register(dss));
  }
  if (!(dss instanceof PDFDict)) throw new UnsoundPdfError('/DSS is not a dictionary');
  const store = dss;
  // /Type is optional in ISO 32000-2 but mandatory for ICP-Brasil (DOC-ICP-15.03 Tabelas A.19, A.20).
  if (store.get(name('Type')) !== name('DSS')) {
    store.set(name('Type'), name('DSS'));
    changed = true;
  }
  const lazy = new Map<string, StreamArray>();
  const budget = { remaining: DSS_MAX_TOTAL_BYTES };
  type StoreArray = 'Certs' | 'OCSPs' | 'CRLs' | (typeof ARTIFACT_KEYS)[number][1];
  const streams = (key: StoreArray): StreamArray => {
    let found = lazy.get(key);
    if (!found) {
      found = new StreamArray(doc, arrayOf(doc, store, key), budget);
      lazy.set(key, found);
    }
    return found;
  };
  const addAll = (key: StoreArray, blobs: readonly Uint8Array[]) => blobs.map((der) => streams(key).add(der));

  addAll('Certs', material.certs);
  addAll('OCSPs', material.ocsps);
  addAll('CRLs', material.crls);
  const artifactRefs = artifacts
    ? ARTIFACT_KEYS.map(([field, dssKey, vriKeyName]) => {
        const [ref] = addAll(dssKey, [artifacts[field]]);
        return [vriKeyName, ref] as const;
      })
    : [];

  if (vri && vri.length > 0) {
    let vriDict = store.lookup(name('VRI'));
    if (vriDict === undefined) {
      changed = true;
      vriDict = context.obj({});
      store.set(name('VRI'), vriDict);
    }
    if (!(vriDict instanceof PDFDict)) throw new UnsoundPdfError('/DSS /VRI is not a dictionary');
    if (vriDict.keys().length > DSS_MAX_ENTRIES) {
      throw new UnsoundPdfError(`/DSS /VRI has more than ${DSS_MAX_ENTRIES} entries`);
    }
    for (const signature of vri) {
      const key = name(vriKey(signature.signatureContents));
      let entry = vriDict.lookup(key);
      if (entry === undefined) {
        changed = true;
        entry = context.obj({});
        vriDict.set(key, entry);
      }
      if (!(entry instanceof PDFDict))
        throw new UnsoundPdfError(`/VRI /${key.decodeText()} is not a dictionary`);
      const vriEntry = entry;
      if (vriEntry.get(name('Type')) !== name('VRI')) {
        vriEntry.set(name('Type'), name('VRI'));
        changed = true;
      }
      const link = (vriName: 'Cert' | 'OCSP' | 'CRL', refs: PDFRef[]) => {
        if (refs.length === 0) return;
        const array = arrayOf(doc, vriEntry, vriName);
        const present = new Set(array.asArray().filter((r): r is PDFRef => r instanceof PDFRef));
        for (const ref of refs) {
          if (!present.has(ref)) {
            array.push(ref);
            changed = true;
          }
          present.add(ref);
        }
      };
      link('Cert', addAll('Certs', signature.certs));
      link('OCSP', addAll('OCSPs', signature.ocsps));
      link('CRL', addAll('CRLs', signature.crls));
      for (const [vriName, ref] of artifactRefs) {
        if (ref && vriEntry.get(name(vriName)) !== ref) {
          vriEntry.set(name(vriName), ref);
          changed = true;
        }
      }
    }
  }
  // Arrays created for nothing are left out (an empty /CRLs says nothing).
  for (const key of ['Certs', 'OCSPs', 'CRLs']) {
    const value = store.get(name(key));
    if (value instanceof PDFArray && value.size() === 0) store.delete(name(key));
  }
  if (!changed && [...lazy.values()].every((s) => s.added === 0)) return pdf;
  await doc.flush();
  return update.write();
}

/**
 * The PDF work of the long-term steps (parsing the whole file with pdf-lib): in this thread
 * (`inThreadLtvWriter`), or in a bounded worker thread (`ltv-bounded.ts`) for files that came from users.
 */
export interface LtvWriter {
  /** `appendValidationData`; `signing` as for `preload` (the last update of that signing). */
  appendValidationData(
    pdf: Uint8Array,
    material: ValidationMaterial,
    vri?: SignatureValidationData[],
    artifacts?: IcpBrasilArtifacts,
    signing?: string,
  ): Promise<Uint8Array>;
  addDocumentTimestampField(pdf: Uint8Array, capacity: number): Promise<Uint8Array>;
  /** `appendValidationDataWithTimestampField`; `signing` as for `preload`. */
  appendValidationDataWithTimestampField(
    pdf: Uint8Array,
    material: ValidationMaterial,
    vri?: SignatureValidationData[],
    artifacts?: IcpBrasilArtifacts,
    signing?: string,
  ): Promise<{ validated: Uint8Array; prepared: Uint8Array }>;
  addSignatureField(pdf: Uint8Array, capacity: number, options: SignatureFieldOptions): Promise<Uint8Array>;
  /**
   * Optional: parses `pdf` (a file with a signature placeholder) ahead of the updates of the signing named
   * `signing` (an id of the caller's), while the caller signs it and gathers revocation data; the updates
   * given the same `signing` then start from that parse when their bytes are `pdf` with the placeholder filled
   * (`onlySignatureFilled`), and parse their own bytes otherwise. Never rejects: a failure is met again by the
   * update. Await it before the first update.
   */
  preload?(pdf: Uint8Array, signing: string): Promise<void>;
}

/** Placeholder of /ByteRange as @signpdf writes it (filled in place, padded with spaces to its length). */
const BYTE_RANGE_PLACEHOLDER = '**********';

/**
 * Appends an incremental update adding a document timestamp (ISO 32000-2 12.8.5; ETSI EN 319 142-1 5.4.3,
 * PAdES B-LTA): a new signature field (a widget with /Rect [0 0 0 0] on the last page, a /T no other field
 * has, added to the AcroForm's /Fields, /SigFlags 3) whose value dictionary is
 * `/Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 /ByteRange [...] /Contents <...>`,
 * /Contents holding the RFC 3161 TimeStampToken (DER, zero-padded) that `tsa` returns for SHA-256 of the two
 * byte ranges (everything but /Contents' hex string, up to the end of the update).
 * The placeholder holds `DOC_TIMESTAMP_PLACEHOLDER_BYTES`; a larger token (up to `DOC_TIMESTAMP_MAX_BYTES`)
 * costs one more TSA request with a placeholder sized to it.
 * `writer` does the PDF work (default: this thread; the server passes a bounded worker's); `prepared`, when
 * given, is `pdf` with that field already added (`appendValidationDataWithTimestampField`'s), used for the
 * first attempt.
 * @returns the new PDF (the original bytes, then the update) and the token.
 * @throws UnsoundPdfError as `appendValidationData`, and when the file has no page; Error when the token does
 *   not fit; the TSA's errors (the server's TSA adapter: `AppError('BAD_GATEWAY')`).
 */
export async function appendDocumentTimestamp(
  pdf: Uint8Array,
  tsa: SignatureTimestamper,
  writer: LtvWriter = inThreadLtvWriter,
  prepared?: Uint8Array,
): Promise<{ pdf: Uint8Array; token: Uint8Array }> {
  const attempt = async (capacity: number, field?: Uint8Array) =>
    timestampAttempt(pdf, tsa, capacity, field ?? (await writer.addDocumentTimestampField(pdf, capacity)));
  const first = await attempt(DOC_TIMESTAMP_PLACEHOLDER_BYTES, prepared);
  if ('pdf' in first) return first;
  if (first.tokenBytes + DOC_TIMESTAMP_SLACK_BYTES > DOC_TIMESTAMP_MAX_BYTES) {
    throw new Error(
      `document timestamp: the TSA's token is ${first.tokenBytes} bytes, more than ${DOC_TIMESTAMP_MAX_BYTES}`,
    );
  }
  const second = await attempt(first.tokenBytes + DOC_TIMESTAMP_SLACK_BYTES);
  if ('pdf' in second) return second;
  throw new Error(
    `document timestamp: the TSA's token grew to ${second.tokenBytes} bytes between two requests`,
  );
}

/** Stamps `prepared` (`pdf` plus a document timestamp field of `capacity` bytes), or says the token's size. */
async function timestampAttempt(
  pdf: Uint8Array,
  tsa: SignatureTimestamper,
  capacity: number,
  prepared: Uint8Array,
): Promise<{ pdf: Uint8Array; token: Uint8Array } | { tokenBytes: number }> {
  if (prepared.length <= pdf.length || Buffer.compare(prepared.subarray(0, pdf.length), pdf) !== 0) {
    throw new Error('document timestamp: the update does not keep the original bytes as its prefix');
  }
  const { bytes, byteRange } = fillByteRange(prepared, pdf.length);
  const [, contentsStart = 0, contentsEnd = 0] = byteRange;
  const digest = createHash('sha256')
    .update(bytes.subarray(0, contentsStart))
    .update(bytes.subarray(contentsEnd))
    .digest();
  const { token } = await tsa.timestamp(new Uint8Array(digest));
  if (token.length > capacity) return { tokenBytes: token.length };
  const hex = Buffer.from(token)
    .toString('hex')
    .padEnd(capacity * 2, '0');
  bytes.write(hex, contentsStart + 1, 'latin1');
  return { pdf: new Uint8Array(bytes), token };
}

/**
 * `pdf` plus an incremental update adding the document timestamp field (as `appendDocumentTimestamp`
 * describes it) with a /ByteRange placeholder and a zeroed /Contents of `capacity` bytes, ready to be filled.
 * @throws UnsoundPdfError as `appendValidationData`, and when the file has no page.
 */
export async function addDocumentTimestampField(pdf: Uint8Array, capacity: number): Promise<Uint8Array> {
  return addSignatureFieldUpdate(pdf, capacity, DOC_TIMESTAMP_FIELD);
}

/** The document timestamp's value dictionary and field name (`addDocumentTimestampField`). */
const DOC_TIMESTAMP_FIELD: FieldKind = {
  value: { Type: 'DocTimeStamp', Filter: 'Adobe.PPKLite', SubFilter: 'ETSI.RFC3161' },
  title: 'DocumentTimestamp',
};

/** What a second signer's field declares: its dictionary flavour and the /Name, /Reason and /M it states. */
export interface SignatureFieldOptions {
  /** `etsi`: /Adobe.PPKLite, /ETSI.CAdES.detached; `icp-brasil`: /PBAD_PAdES, /PBAD.PAdES (Tabela A.18). */
  dictionary: 'etsi' | 'icp-brasil';
  name: string;
  reason: string;
  /** The signing time the dictionary states (/M): PAdES puts it there, never in the CMS. */
  signingTime: Date;
}

/**
 * `pdf` plus an incremental update adding a signature field for one more signer (ISO 32000-1 12.8; a PDF
 * already signed keeps its bytes, so its signatures stay valid), laid out as the document timestamp field
 * (`addDocumentTimestampField`: invisible widget on the last page, a fresh /T, /SigFlags 3) with a value
 * dictionary `/Type /Sig`, the filter of `options.dictionary`, /Name, /Reason, /M, a /ByteRange placeholder and
 * a zeroed /Contents of `capacity` bytes. `fillSignatureByteRange` then fixes the range.
 * @throws UnsoundPdfError as `appendValidationData`, and when the file has no page.
 */
export async function addSignatureField(
  pdf: Uint8Array,
  capacity: number,
  options: SignatureFieldOptions,
): Promise<Uint8Array> {
  const icp = options.dictionary === 'icp-brasil';
  return addSignatureFieldUpdate(pdf, capacity, {
    value: {
      Type: 'Sig',
      Filter: icp ? 'PBAD_PAdES' : 'Adobe.PPKLite',
      SubFilter: icp ? 'PBAD.PAdES' : 'ETSI.CAdES.detached',
    },
    strings: { Name: options.name, Reason: options.reason },
    date: options.signingTime,
    title: 'NotarySignature',
  });
}

/** A signature field's value dictionary (names, text strings, /M) and the /T it is named after. */
interface FieldKind {
  value: Record<string, string>;
  strings?: Record<string, string>;
  date?: Date;
  title: string;
}

async function addSignatureFieldUpdate(
  pdf: Uint8Array,
  capacity: number,
  kind: FieldKind,
): Promise<Uint8Array> {
  return fieldUpdate(await beginUpdateOn(await loadForUpdates(pdf), pdf), capacity, kind);
}

/** `addSignatureFieldUpdate` on a loaded document. */
async function fieldUpdate(
  { doc, update }: { doc: PDFDocument; update: IncrementalUpdate },
  capacity: number,
  kind: FieldKind,
): Promise<Uint8Array> {
  const { context, catalog } = doc;
  const page = doc.getPages().at(-1);
  if (!page) throw new UnsoundPdfError('the PDF has no page to hold the signature field');

  const byteRange = PDFArray.withContext(context);
  byteRange.push(PDFNumber.of(0));
  for (let i = 0; i < 3; i += 1) byteRange.push(name(BYTE_RANGE_PLACEHOLDER));
  // /ByteRange before /Contents: the filling below finds them in that order.
  const value = context.obj(kind.value);
  for (const [key, text] of Object.entries(kind.strings ?? {}))
    value.set(name(key), PDFHexString.fromText(text));
  if (kind.date) value.set(name('M'), PDFString.fromDate(kind.date));
  value.set(name('ByteRange'), byteRange);
  value.set(name('Contents'), PDFHexString.of('0'.repeat(capacity * 2)));
  const valueRef = context.register(value);

  let acroForm = catalog.lookup(name('AcroForm'));
  if (acroForm === undefined) {
    acroForm = context.obj({});
    catalog.set(name('AcroForm'), context.register(acroForm));
  }
  if (!(acroForm instanceof PDFDict)) throw new UnsoundPdfError('/AcroForm is not a dictionary');
  const fields = arrayOf(doc, acroForm, 'Fields');
  const taken = new Set<string>();
  for (const field of fields.asArray()) {
    const dict = field instanceof PDFRef ? context.lookup(field) : field;
    const title = dict instanceof PDFDict ? dict.lookup(name('T')) : undefined;
    if (title instanceof PDFString || title instanceof PDFHexString) taken.add(title.decodeText());
  }
  let title = kind.title;
  for (let i = 2; taken.has(title); i += 1) title = `${kind.title}${i}`;

  // A merged field and widget (ISO 32000-1 12.7.3.1), invisible (/Rect [0 0 0 0]), flags Print + Locked, with
  // an empty normal appearance: PDF/A (ISO 19005-3 6.3.3) wants one on every widget, and the catalog (with its
  // /Metadata and /OutputIntents) is the same object, so a PDF/A certificate stays PDF/A.
  const appearance = context.register(context.formXObject([], { BBox: [0, 0, 0, 0], Resources: {} }));
  const widget = context.obj({
    Type: 'Annot',
    Subtype: 'Widget',
    FT: 'Sig',
    Rect: [0, 0, 0, 0],
    F: 132,
    P: page.ref,
    AP: { N: appearance },
  });
  widget.set(name('T'), PDFString.of(title));
  widget.set(name('V'), valueRef);
  const widgetRef = context.register(widget);
  fields.push(widgetRef);
  // SignaturesExist | AppendOnly (12.7.2): viewers must save incrementally.
  acroForm.set(name('SigFlags'), PDFNumber.of(3));
  arrayOf(doc, page.node, 'Annots').push(widgetRef);

  await doc.flush();
  return update.write();
}

/**
 * Fills the /ByteRange placeholder of the update (after `from`) in place: [0, start of /Contents' `<`, end
 * after its `>`, rest of the file], padded with spaces to the placeholder's length (@signpdf's layout).
 */
export function fillByteRange(pdf: Uint8Array, from: number): { bytes: Buffer; byteRange: number[] } {
  const bytes = Buffer.from(pdf);
  // The placeholder name, then its key: nothing else of the update carries that name.
  const placeholder = bytes.indexOf(`/${BYTE_RANGE_PLACEHOLDER}`, from, 'latin1');
  const at = placeholder < 0 ? -1 : bytes.lastIndexOf('/ByteRange', placeholder, 'latin1');
  const close = at < from ? -1 : bytes.indexOf(']', placeholder, 'latin1');
  const contents = close < 0 ? -1 : bytes.indexOf('/Contents', close, 'latin1');
  const open = contents < 0 ? -1 : bytes.indexOf('<', contents, 'latin1');
  const end = open < 0 ? -1 : bytes.indexOf('>', open, 'latin1');
  if (end < 0) throw new Error('document timestamp: placeholder not found in the update');
  const byteRange = [0, open, end + 1, bytes.length - (end + 1)];
  const placeholderLength = close + 1 - at;
  const filled = `/ByteRange [${byteRange.join(' ')}]`;
  if (filled.length > placeholderLength) throw new Error('document timestamp: /ByteRange does not fit');
  bytes.write(filled.padEnd(placeholderLength, ' '), at, 'latin1');
  return { bytes, byteRange };
}

/** The long-term PDF work in the calling thread. */
export const inThreadLtvWriter: LtvWriter = {
  appendValidationData,
  addDocumentTimestampField,
  appendValidationDataWithTimestampField,
  addSignatureField,
};
