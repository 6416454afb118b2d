/**
 * `notary-verify extend` (also `augment`: ETSI EN 319 142-1 calls raising a signature's level "augmentation"):
 * a holder keeps a signed PDF verifiable for longer without the service that issued
 * it (ETSI EN 319 142-1 5.4: PAdES B-LT validation data and B-LTA document timestamps). Any PAdES file, ours
 * or another's: every signature and document timestamp it carries is read, the certificates they and the
 * file's /DSS hold are collected, fresh revocation data is fetched from the certificates' own AIA OCSP and
 * CRL distribution point URLs (public addresses only unless `allowPrivate`: anyone can make a certificate
 * naming a LAN, loopback or metadata address), and three incremental updates are appended (ISO 32000-1
 * 7.5.6: the input stays a byte prefix of the output):
 *   1. that validation data into the /DSS, with a /VRI entry per signature;
 *   2. a new document timestamp (`/SubFilter /ETSI.RFC3161`) from the TSA the holder names, over it all;
 *   3. the validation data of that timestamp's own TSA chain.
 * Before the newest document timestamp's TSA certificate expires (or its algorithms weaken), extending
 * again renews the proof.
 *
 * Node only (it writes with `@notary/pdf`, which hashes with node:crypto, and reads and writes files).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { SignatureTimestamper } from '@notary/pdf/cades';
import { UnsoundPdfError } from '@notary/pdf/incremental';
import { appendDocumentTimestamp, appendValidationData, vriKey } from '@notary/pdf/ltv';
import { policedFetch } from '@notary/platform/net/policed-fetch';
import { asn1js, pkijs } from '@notary/trust/asn1';
import { pemCertificates, toArrayBuffer, toHex } from '@notary/trust/bytes';
import { certificateDer, OID, parseSignedData, subjectName } from '@notary/trust/cms';
import {
  crlUrls,
  gatherValidationMaterial,
  ocspUrls,
  type ValidationMaterial,
} from '@notary/trust/revocation';
import { TsaClient, TsaError, type TsaTimestamp } from '@notary/trust/tsa-client';
import { errorMessage } from './error-message.ts';
import { ICP_BRASIL_ROOTS_PEM } from './icp-brasil-roots.ts';
import {
  type Dss,
  MAX_DSS_STREAM_BYTES,
  PdfSignatureError,
  readDss,
  readPdfSignatures,
} from './pdf-signatures.ts';
import { formatBrasiliaAndUtc } from './time.ts';

/** The PDF cannot be extended as it is (not a PDF, no signature, encrypted, a broken structure). */
export class ExtendInputError extends Error {
  override name = 'ExtendInputError';
}

/** What `extendPdf` needs besides the PDF. */
export interface ExtendOptions {
  /** The TSA of the new document timestamp: its checked token, genTime and TSA name (`TsaClient`). */
  tsa: { timestamp(digest: Uint8Array): Promise<TsaTimestamp> };
  /** Extra DER certificates to build chains with (e.g. `--tsa-ca`: a TSA token carrying only its leaf). */
  extraCertificates?: readonly Uint8Array[];
  /**
   * For the revocation requests (`gatherValidationMaterial`): fetch, per-request timeout and size bound (at
   * most, and by default, `MAX_DSS_STREAM_BYTES`, the largest /DSS stream the verifier reads). The fetch is by
   * default the address policy's (`policedFetch`): the URLs come from certificates anyone can put in a PDF, so
   * only public addresses are asked, each redirect hop checked, unless `allowPrivate`.
   */
  fetch?: typeof fetch;
  /** Let the default fetch reach private, loopback and link-local addresses too (never cloud metadata). */
  allowPrivate?: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** The time freshness is judged at (default now). */
  now?: Date;
}

/** What was read and added. */
export interface ExtendResult {
  /** The extended PDF: the input, then the incremental updates. */
  pdf: Uint8Array;
  /** Signatures (`/Type /Sig`) and document timestamps found in the input. */
  read: { signatures: number; documentTimestamps: number };
  /** Entries of the /DSS the output has and the input had not (by their bytes). */
  added: { certs: number; ocsps: number; crls: number };
  /** The new document timestamp. */
  timestamp: TsaTimestamp;
  /**
   * Certificates for which no revocation data could be had, and why (the file is written all the same);
   * `unavailable`: the certificate names responders (OCSP, CRL) and none gave a usable answer, so extending
   * again later may get it; false when there was nothing to ask (no responder named, no issuer known).
   */
  missing: { subject: string; reason: string; unavailable: boolean }[];
  /** What could not be read in the input (a signature's CMS, a certificate) and was left out. */
  warnings: string[];
}

/** Most certificates gathered from one file (its signatures, tokens and /DSS). */
const MAX_CERTIFICATES = 4000;
/** Most certificates of one signature's chain (its own, issuers, cross-certificates): real ones have 3-6. */
const MAX_CHAIN = 64;

/** A distinguished name with case and surrounding spaces ignored, to index certificates by subject. */
function looseName(name: pkijs.RelativeDistinguishedNames): string {
  return name.typesAndValues
    .map((tv) => `${tv.type}=${String(tv.value.valueBlock.value).trim().toLowerCase()}`)
    .join(',');
}

/**
 * Extends `pdf` as described at the top of this file.
 * @throws ExtendInputError when the PDF cannot be read or updated, has no signature, or none of its
 *   signatures' CMS parses; TsaError when the TSA fails (nothing is written then); Error when the token does
 *   not fit the placeholder (`@notary/pdf/ltv`'s bounds).
 */
export async function extendPdf(pdf: Uint8Array, options: ExtendOptions): Promise<ExtendResult> {
  let read: Awaited<ReturnType<typeof readPdfSignatures>>;
  try {
    read = await readPdfSignatures(pdf);
  } catch (e) {
    throw new ExtendInputError(errorMessage(e));
  }
  if (read.signatures.length === 0)
    throw new ExtendInputError('the PDF has no signature or document timestamp to extend');

  const warnings: string[] = [];
  const pool = new CertificatePool(warnings);
  for (const der of read.dss?.certs ?? []) pool.add(der, 'the /DSS');
  for (const der of options.extraCertificates ?? []) pool.add(der, '--tsa-ca');

  // Each signature's own certificates (its CMS and its signature timestamp tokens).
  const groups: { contents: Uint8Array; own: Uint8Array[] }[] = [];
  for (const [i, signature] of read.signatures.entries()) {
    const what = `${signature.documentTimestamp ? 'document timestamp' : 'signature'} ${i + 1} (${signature.ref})`;
    const own = cmsCertificates(signature.cms, what, warnings);
    if (own === null) continue;
    for (const der of own) pool.add(der, what);
    groups.push({ contents: signature.cms, own });
  }
  if (groups.length === 0)
    throw new ExtendInputError('none of the PDF signatures has a readable CMS: there is nothing to extend');

  const gatherer = new Gatherer(options);
  const vri: (ValidationMaterial & { signatureContents: Uint8Array })[] = [];
  const material: ValidationMaterial = { certs: [], ocsps: [], crls: [] };
  for (const group of groups) {
    const chain = pool.chainOf(group.own);
    const gathered = await gatherer.gather(chain);
    vri.push({ signatureContents: group.contents, ...gathered, certs: union(chain, gathered.certs) });
    merge(material, { ...gathered, certs: union(chain, gathered.certs) });
  }
  let out = pdf;
  // An update for nothing new is not written: a file extended minutes ago gets only a timestamp.
  const vriLacking = groups.some((g) => !read.dss?.vri.has(vriKey(g.contents)));
  if (vriLacking || somethingNew(read.dss, material))
    out = await writing(() => appendValidationData(out, material, vri));

  // The new document timestamp; its TSA's name and time come from the client's checked answer.
  let stamped: TsaTimestamp | undefined;
  const recording: SignatureTimestamper = {
    timestamp: async (digest) => {
      stamped = await options.tsa.timestamp(digest);
      return stamped;
    },
  };
  const timestamped = await writing(() => appendDocumentTimestamp(out, recording));
  if (!stamped) throw new Error('the document timestamp was written without a TSA answer');
  out = timestamped.pdf;

  // The document timestamp's own TSA chain, so that it too can be checked once the TSA's responders are gone.
  const tokenCerts = cmsCertificates(timestamped.token, 'the new document timestamp', warnings) ?? [];
  for (const der of tokenCerts) pool.add(der, 'the new document timestamp');
  const tsaChain = pool.chainOf(tokenCerts);
  const tsaMaterial = await gatherer.gather(tsaChain);
  const tsaEntry = { ...tsaMaterial, certs: union(tsaChain, tsaMaterial.certs) };
  // Always written: at least the /VRI entry of the new timestamp is new.
  out = await writing(() =>
    appendValidationData(out, tsaEntry, [{ signatureContents: timestamped.token, ...tsaEntry }]),
  );

  const after = await dssAfter(out);
  return {
    pdf: out,
    read: {
      signatures: read.signatures.filter((s) => !s.documentTimestamp).length,
      documentTimestamps: read.signatures.filter((s) => s.documentTimestamp).length,
    },
    added: {
      certs: countNew(read.dss?.certs ?? [], after?.certs ?? []),
      ocsps: countNew(read.dss?.ocsps ?? [], after?.ocsps ?? []),
      crls: countNew(read.dss?.crls ?? [], after?.crls ?? []),
    },
    timestamp: stamped,
    missing: [...pool.orphans(), ...gatherer.missing()],
    warnings,
  };
}

/** Runs a write step, turning the writer's refusals of the file into `ExtendInputError`. */
async function writing<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (e instanceof TsaError) throw e;
    const err = e as Error;
    if (err instanceof UnsoundPdfError || err.name === 'PdfBoundError')
      throw new ExtendInputError(`the PDF cannot be extended: ${err.message}`);
    throw e;
  }
}

async function dssAfter(pdf: Uint8Array): Promise<Dss | null> {
  try {
    return await readDss(pdf);
  } catch (e) {
    if (e instanceof PdfSignatureError) throw new Error(`the extended PDF does not read back: ${e.message}`);
    throw e;
  }
}

/**
 * The certificates a CMS carries, with those of its signature timestamp tokens (RFC 3161 appendix A) for a
 * signature; null (and a warning) when it does not parse.
 */
function cmsCertificates(cms: Uint8Array, what: string, warnings: string[]): Uint8Array[] | null {
  try {
    const parsed = parseSignedData(cms, what);
    const out = parsed.certificates.map(certificateDer);
    for (const attribute of parsed.signerInfo.unsignedAttrs?.attributes ?? []) {
      if (attribute.type !== OID.signatureTimeStampToken) continue;
      for (const value of attribute.values) {
        if (!(value instanceof asn1js.Sequence)) continue;
        try {
          const token = parseSignedData(new Uint8Array(value.toBER(false)), `${what}: signature timestamp`);
          out.push(...token.certificates.map(certificateDer));
        } catch (e) {
          warnings.push(errorMessage(e));
        }
      }
    }
    return out;
  } catch (e) {
    warnings.push(`${errorMessage(e)}: left out`);
    return null;
  }
}

/** Certificates by their DER (hex), parsed once, with issuer lookup by name. */
class CertificatePool {
  private readonly byKey = new Map<string, { der: Uint8Array; cert: pkijs.Certificate }>();
  /** Certificate keys by a loose form of their subject, to find issuers without scanning the pool. */
  private readonly bySubject = new Map<string, string[]>();
  private readonly noIssuer = new Map<string, string>();
  private readonly warnings: string[];

  constructor(warnings: string[]) {
    this.warnings = warnings;
  }

  add(der: Uint8Array, from: string): void {
    const key = toHex(der);
    if (this.byKey.has(key)) return;
    if (this.byKey.size >= MAX_CERTIFICATES) {
      this.warnings.push(`more than ${MAX_CERTIFICATES} certificates: the rest of ${from} is left out`);
      return;
    }
    try {
      const cert = pkijs.Certificate.fromBER(toArrayBuffer(der));
      this.byKey.set(key, { der, cert });
      const name = looseName(cert.subject);
      this.bySubject.set(name, [...(this.bySubject.get(name) ?? []), key]);
    } catch (e) {
      this.warnings.push(`a certificate of ${from} does not parse: ${errorMessage(e)}`);
    }
  }

  /**
   * `own` and, repeatedly, the issuers of its certificates found in the pool (by name: RFC 5280 6.1 path
   * building needs issuer = subject), up to the roots. Certificates whose issuer is nowhere are remembered
   * for `orphans`.
   */
  chainOf(own: readonly Uint8Array[]): Uint8Array[] {
    const chain = new Map<string, pkijs.Certificate>();
    const queue = own.map(toHex).filter((k) => this.byKey.has(k));
    while (queue.length > 0 && chain.size < MAX_CHAIN) {
      const key = queue.shift() as string;
      const entry = this.byKey.get(key);
      if (!entry || chain.has(key)) continue;
      chain.set(key, entry.cert);
      if (entry.cert.issuer.isEqual(entry.cert.subject)) continue;
      let found = false;
      for (const k of this.bySubject.get(looseName(entry.cert.issuer)) ?? []) {
        if (!this.byKey.get(k)?.cert.subject.isEqual(entry.cert.issuer)) continue;
        found = true;
        if (!chain.has(k)) queue.push(k);
      }
      if (!found) this.noIssuer.set(key, subjectName(entry.cert));
    }
    return [...chain.keys()].map((k) => (this.byKey.get(k) as { der: Uint8Array }).der);
  }

  /** Certificates of a chain whose issuer certificate is in neither the file nor `--tsa-ca`. */
  orphans(): { subject: string; reason: string; unavailable: boolean }[] {
    return [...this.noIssuer.values()].map((subject) => ({
      subject,
      reason: 'its issuer certificate is in neither the file nor --tsa-ca: its revocation cannot be sought',
      unavailable: false,
    }));
  }
}

/** `gatherValidationMaterial` per chain, asked once per distinct chain (signatures often share one). */
class Gatherer {
  private readonly done = new Map<string, ValidationMaterial>();
  private readonly missingBySubject = new Map<string, { reason: string; unavailable: boolean }>();
  private readonly options: ExtendOptions;
  private readonly fetch: typeof fetch;

  constructor(options: ExtendOptions) {
    this.options = options;
    this.fetch = options.fetch ?? policedFetch({ allowPrivate: options.allowPrivate === true });
  }

  async gather(chain: Uint8Array[]): Promise<ValidationMaterial> {
    const key = chain.map(toHex).sort().join(',');
    const known = this.done.get(key);
    if (known) return known;
    const { material, missing } = await gatherValidationMaterial(chain, {
      fetch: this.fetch,
      ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
      // No larger than a /DSS stream the verifier reads back: a bigger CRL would make the file's store unreadable.
      maxBytes: Math.min(this.options.maxBytes ?? MAX_DSS_STREAM_BYTES, MAX_DSS_STREAM_BYTES),
      ...(this.options.now ? { now: this.options.now } : {}),
    });
    // Subjects that name a responder: their missing data is the responders' unavailability.
    const asked = new Set<string>();
    for (const der of chain) {
      try {
        const cert = pkijs.Certificate.fromBER(toArrayBuffer(der));
        if (ocspUrls(cert).length + crlUrls(cert).length > 0) asked.add(subjectName(cert));
      } catch {
        // `gatherValidationMaterial` lists it as not parsing
      }
    }
    for (const m of missing) {
      this.missingBySubject.set(m.subject, { reason: m.reason, unavailable: asked.has(m.subject) });
    }
    this.done.set(key, material);
    return material;
  }

  missing(): { subject: string; reason: string; unavailable: boolean }[] {
    return [...this.missingBySubject].map(([subject, m]) => ({ subject, ...m }));
  }
}

function union(a: readonly Uint8Array[], b: readonly Uint8Array[]): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  for (const der of [...a, ...b]) {
    const key = toHex(der);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(der);
  }
  return out;
}

function merge(into: ValidationMaterial, from: ValidationMaterial): void {
  into.certs = union(into.certs, from.certs);
  into.ocsps = union(into.ocsps, from.ocsps);
  into.crls = union(into.crls, from.crls);
}

/** Whether `material` holds a blob the store has not (an update for nothing new is not written). */
function somethingNew(dss: Dss | null, material: ValidationMaterial): boolean {
  return (
    countNew(dss?.certs ?? [], material.certs) > 0 ||
    countNew(dss?.ocsps ?? [], material.ocsps) > 0 ||
    countNew(dss?.crls ?? [], material.crls) > 0
  );
}

function countNew(before: readonly Uint8Array[], after: readonly Uint8Array[]): number {
  const known = new Set(before.map(toHex));
  return new Set(after.map(toHex).filter((k) => !known.has(k))).size;
}

export const EXTEND_USAGE = `Usage: notary-verify extend <signed.pdf> --tsa URL [--out FILE] [--tsa-ca ca.pem]
  [--trust icp-brasil] [--allow-private]

Keeps a signed PDF (any PAdES file) verifiable for longer, without the service that issued it: adds the
current revocation data (OCSP responses, CRLs) of the certificates of every signature and document timestamp,
fetched from the URLs those certificates name, then a new document timestamp from the TSA given, then that
timestamp's own revocation data. Each is an incremental update: the input file is not changed and stays the
exact beginning of the output. Run it again before the last document timestamp's TSA certificate expires.

Options:
  --tsa URL       the RFC 3161 Time-Stamp Authority of the new document timestamp (required)
  --out FILE      where to write (default <name>.extended.pdf beside the input)
  --tsa-ca FILE   PEM certificates the TSA's certificate must chain to (and to build chains with)
  --trust icp-brasil
                  the ICP-Brasil roots shipped with the verifier, as --tsa-ca (an ICP-Brasil file's CMS
                  often leaves its root out)
  --allow-private also ask responders and the TSA at private, loopback and link-local addresses (a private
                  CA's); by default only public addresses are asked (the URLs come from certificates anyone
                  can put in a PDF), redirects checked at each hop; cloud metadata addresses never
  --json          print what was added as JSON
  -h, --help      this text

Exit status (as notary-verify's): 0 the extended file was written (certificates that name no responder or
whose issuer is unknown are listed); 1 the TSA failed or the file could not be written (nothing written);
2 unusable input; 3 the file was written, but the responders of some certificates gave no usable answer
(listed on stderr; extend again once they answer).
`;

/** `notary-verify extend ...` (argv after `extend`); never throws. */
export async function runExtendCli(
  argv: string[],
  options: { fetch?: typeof fetch } = {},
): Promise<{ code: 0 | 1 | 2 | 3; stdout: string; stderr: string }> {
  const usage = (message: string) => ({
    code: 2 as const,
    stdout: '',
    stderr: `${message}\n\n${EXTEND_USAGE}`,
  });
  let values: {
    tsa?: string;
    out?: string;
    'tsa-ca'?: string;
    trust?: string;
    'allow-private'?: boolean;
    json?: boolean;
    help?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        tsa: { type: 'string' },
        out: { type: 'string' },
        'tsa-ca': { type: 'string' },
        trust: { type: 'string' },
        'allow-private': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    return usage(errorMessage(e));
  }
  if (values.help) return { code: 0, stdout: EXTEND_USAGE, stderr: '' };
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) return usage('give exactly one PDF to extend');
  if (!values.tsa) return usage('--tsa URL is required');
  if (values.trust !== undefined && values.trust !== 'icp-brasil') return usage('--trust: only icp-brasil');
  try {
    const url = new URL(values.tsa);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    return usage(`--tsa: not an http(s) URL: ${values.tsa}`);
  }
  const out =
    values.out ?? path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.extended.pdf`);
  if (path.resolve(out) === path.resolve(file)) return usage('--out must not be the input file');

  let pdf: Uint8Array;
  let tsaCa: Uint8Array[] | undefined;
  try {
    pdf = await readBytes(file);
    const anchors = [
      ...(values['tsa-ca']
        ? pemCertificates(new TextDecoder().decode(await readBytes(values['tsa-ca'])))
        : []),
      ...(values.trust === 'icp-brasil' ? ICP_BRASIL_ROOTS_PEM.flatMap((pem) => pemCertificates(pem)) : []),
    ];
    if (anchors.length > 0) tsaCa = anchors;
  } catch (e) {
    return { code: 2, stdout: '', stderr: `notary-verify extend: ${errorMessage(e)}\n` };
  }
  // One fetcher for the TSA and the responders: the address policy's unless a test gives its own.
  const allowPrivate = values['allow-private'] === true;
  const fetcher = options.fetch ?? policedFetch({ allowPrivate });
  let result: ExtendResult;
  try {
    result = await extendPdf(pdf, {
      tsa: new TsaClient({ url: values.tsa, ...(tsaCa ? { tsaCa } : {}), fetch: fetcher }),
      ...(tsaCa ? { extraCertificates: tsaCa } : {}),
      fetch: fetcher,
      allowPrivate,
    });
  } catch (e) {
    const code = e instanceof ExtendInputError ? 2 : 1;
    return { code, stdout: '', stderr: `notary-verify extend: ${errorMessage(e)}\nnothing written\n` };
  }
  try {
    await writeFile(out, result.pdf, { flag: 'w' });
  } catch (e) {
    return {
      code: 1,
      stdout: '',
      stderr: `notary-verify extend: cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}\n`,
    };
  }
  const stderr = [
    ...result.warnings.map((w) => `warning: ${w}`),
    ...result.missing.map((m) => `missing: ${m.subject}: ${m.reason}`),
  ]
    .map((line) => `${line}\n`)
    .join('');
  // Written, yet incomplete while a responder could not give a certificate's revocation data: 3, as
  // notary-verify's incomplete (extend again later). Nothing to ask (no responder, no issuer) is not that.
  const done = result.missing.some((m) => m.unavailable) ? 3 : 0;
  if (values.json) {
    const json = {
      out,
      bytes: result.pdf.length,
      read: result.read,
      added: result.added,
      timestamp: {
        genTime: result.timestamp.genTime.toISOString(),
        tsa: result.timestamp.tsa,
        chainChecked: result.timestamp.chainChecked,
      },
      missing: result.missing,
      warnings: result.warnings,
    };
    return { code: done, stdout: `${JSON.stringify(json, null, 2)}\n`, stderr };
  }
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const lines = [
    `extended ${file} -> ${out} (${result.pdf.length} bytes, the input unchanged at its start)`,
    `read: ${plural(result.read.signatures, 'signature', 'signatures')}, ${plural(result.read.documentTimestamps, 'document timestamp', 'document timestamps')}`,
    `added to /DSS: ${plural(result.added.certs, 'certificate', 'certificates')}, ${plural(result.added.ocsps, 'OCSP response', 'OCSP responses')}, ${plural(result.added.crls, 'CRL', 'CRLs')}`,
    `document timestamp: ${formatBrasiliaAndUtc(result.timestamp.genTime, 'en')} by ${result.timestamp.tsa} (${
      result.timestamp.chainChecked
        ? 'chain to the anchors checked'
        : 'chain not checked: no --tsa-ca or --trust given'
    })`,
    result.missing.length === 0
      ? 'revocation data: complete for every certificate with a known issuer'
      : `revocation data: missing for ${plural(result.missing.length, 'certificate', 'certificates')} (listed on stderr); extend again once they can be had`,
  ];
  return { code: done, stdout: `${lines.join('\n')}\n`, stderr };
}

async function readBytes(file: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(file));
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
}
