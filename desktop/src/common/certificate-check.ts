/**
 * Checking a file against its certificate on the verify screen: the six checks of `@notary/verify` (file
 * SHA-256, Merkle proof, EAS attestation, Stacks anchor against the chain endpoints the service announces,
 * `GET /api/onchain/info` `verification`, and any the user enters; then, offline, the RFC 3161 token and the
 * certificate's PAdES signature against the trust anchors the user chooses). The same code runs in the
 * browser (web client) and in Electron's main process and its certificate worker (the renderer makes no
 * request there).
 *
 * Platform-neutral: no Node module, no DOM beyond `fetch` and WebCrypto.
 */

import { endpointProblem } from '@notary/shared/endpoint';
import { pemCertificates } from '@notary/trust/bytes';
import type { CheckId, CheckResult, VerifyReport } from '@notary/verify';
import type { AttachedReceipt } from '@notary/verify/certificate';
import { outcomeOf } from '@notary/verify/report';
import { ClientError } from './errors';

/** The checks the verify screen runs: all six. */
export const SCREEN_CHECKS: readonly CheckId[] = [1, 2, 3, 4, 5, 6];
/** The checks that ask the chain endpoints (the network); check 1 reads only the two files. */
export const NETWORK_CHECKS: readonly CheckId[] = [1, 2, 3, 4];
/**
 * The checks that read only the receipt and the certificate (RFC 3161 token, PAdES signature with the
 * validation data the file carries): no request at all, and in Electron they run in the certificate worker,
 * where the certificate's CMS is parsed under the PDF bounds.
 */
export const OFFLINE_CHECKS: readonly CheckId[] = [5, 6];

/**
 * What the RFC 3161 tokens (check 5 and the certificate's signature timestamp) and the certificate's signer
 * (check 6) must chain to, one set for both, as `notary-verify --tsa-ca/--trust-ca` (or `--trust icp-brasil`):
 * - `none`: the checks still run (integrity, signatures, timestamps), the chains are reported "not checked"
 *   (the check is then partial at best, never passed);
 * - `icp-brasil`: the ICP-Brasil root certificates shipped with `@notary/verify`;
 * - `files`: PEM files the user picked (ids of `Bridge.pickFiles`/`dropFiles`), every certificate in them.
 */
export type TrustChoice = { kind: 'none' } | { kind: 'icp-brasil' } | { kind: 'files'; fileIds: string[] };

/** Most PEM files picked as trust anchors. */
export const MAX_ANCHOR_FILES = 8;
/** Largest PEM file read as trust anchors, bytes (a bundle of a few hundred certificates fits). */
export const MAX_ANCHOR_FILE_BYTES = 1024 * 1024;
/** Most certificates taken from the picked files together (each is parsed by every chain check). */
export const MAX_ANCHOR_CERTIFICATES = 256;

/** How a check is run, besides the files and endpoints. */
export interface CheckOptions {
  trust: TrustChoice;
  /**
   * The time the certificates are judged at (expiry, revocation; `notary-verify --at`), an ISO 8601 UTC
   * date-time (`Date.toISOString()`); null: now.
   */
  at: string | null;
}

/**
 * The date of `CheckOptions.at`: null for null.
 * @throws ClientError `invalid-input` when `at` is not an ISO 8601 UTC date-time as `toISOString` writes it.
 */
export function judgeAt(at: string | null): Date | null {
  if (at === null) return null;
  const date = new Date(at);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(at) || Number.isNaN(date.getTime())) {
    throw new ClientError({ kind: 'invalid-input', message: `Not a UTC date-time: ${at.slice(0, 40)}` });
  }
  return date;
}

/** A picked trust anchor file that cannot be used, and why (shown to the user with the file's name). */
export class AnchorFileError extends Error {
  override name = 'AnchorFileError';
  constructor(
    readonly fileName: string,
    readonly problem: 'no-certificate' | 'too-large' | 'too-many',
  ) {
    super(
      problem === 'no-certificate'
        ? `${fileName} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`
        : problem === 'too-large'
          ? `${fileName} is larger than ${MAX_ANCHOR_FILE_BYTES} bytes`
          : `more than ${MAX_ANCHOR_CERTIFICATES} certificates in the trust anchor files`,
    );
  }
}

/**
 * The DER certificates of picked PEM files (each `-----BEGIN CERTIFICATE-----` block, RFC 7468 section 5),
 * in order. A block whose content is not a DER SEQUENCE counts as no certificate.
 * @param files each file's name (for the error) and bytes (UTF-8 or ASCII text).
 * @throws AnchorFileError `too-large` for a file over `MAX_ANCHOR_FILE_BYTES`, `no-certificate` for a file
 *   without a readable certificate block, `too-many` past `MAX_ANCHOR_CERTIFICATES` in all.
 */
export function anchorCertificates(files: readonly { name: string; bytes: Uint8Array }[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const { name, bytes } of files) {
    if (bytes.length > MAX_ANCHOR_FILE_BYTES) throw new AnchorFileError(name, 'too-large');
    let certs: Uint8Array[];
    try {
      certs = pemCertificates(new TextDecoder('utf-8', { fatal: false }).decode(bytes));
    } catch {
      throw new AnchorFileError(name, 'no-certificate');
    }
    // A certificate is a DER SEQUENCE (X.690 8.9, tag 0x30); anything else is text that only looks like PEM.
    if (certs.some((der) => der.length < 2 || der[0] !== 0x30)) {
      throw new AnchorFileError(name, 'no-certificate');
    }
    out.push(...certs);
    if (out.length > MAX_ANCHOR_CERTIFICATES) throw new AnchorFileError(name, 'too-many');
  }
  return out;
}

/** Largest file checked against a certificate: the service's upload limit (spec, Limits: 250 MB), bytes. */
export const MAX_CHECKED_FILE_BYTES = 250 * 1024 * 1024;
/** Largest certificate read: a stamped certificate is the file plus a few hundred KB; bytes. */
export const MAX_CERTIFICATE_BYTES = MAX_CHECKED_FILE_BYTES + 16 * 1024 * 1024;
/** Most endpoints per chain: each is asked, so the list is bounded. */
export const MAX_ENDPOINTS = 8;

/** Chain endpoints to ask: EVM JSON-RPC URLs and Stacks API base URLs. */
export interface ChainEndpoints {
  evmRpcUrls: string[];
  stacksApiUrls: string[];
}

/** What checking a file against a certificate gave: a report, or why the certificate could not be read. */
export type CertificateCheck =
  | { kind: 'report'; report: VerifyReport }
  /** Not a readable PDF, or a PDF without `receipt.json` (e.g. a certificate issued before receipts). */
  | { kind: 'no-receipt'; message: string }
  /** The attached receipt is not one this version reads. */
  | { kind: 'bad-receipt'; message: string }
  /** A picked trust anchor file cannot be used (see `AnchorFileError`): nothing was checked. */
  | { kind: 'bad-anchor'; fileName: string; problem: AnchorFileError['problem'] };

/** Why a typed chain endpoint is refused (one rule with the verifier page), for the client's importers. */
export { endpointProblem };

/**
 * One endpoint per line (or comma-separated), trimmed, without trailing slash, duplicates dropped.
 * @returns the URLs, and the first entry refused with its problem (see `endpointProblem`).
 */
export function parseEndpoints(text: string): {
  urls: string[];
  refused: { value: string; problem: NonNullable<ReturnType<typeof endpointProblem>> } | null;
} {
  const urls: string[] = [];
  for (const raw of text.split(/[\n,]/)) {
    const value = raw.trim().replace(/\/+$/, '');
    if (value === '') continue;
    const problem = endpointProblem(value);
    if (problem) return { urls, refused: { value, problem } };
    if (!urls.includes(value)) urls.push(value);
  }
  return { urls, refused: null };
}

/**
 * The ICP-Brasil root certificates (DER) `@notary/verify` ships (`notary-verify --trust icp-brasil`), for the
 * `icp-brasil` trust choice; loaded on first use (the web client fetches them as a chunk of its own).
 */
export async function icpBrasilRoots(): Promise<Uint8Array[]> {
  const { ICP_BRASIL_ROOTS_PEM } = await import('@notary/verify/icp-brasil-roots');
  return ICP_BRASIL_ROOTS_PEM.flatMap((pem) => pemCertificates(pem));
}

/**
 * The trust anchors (DER) of `choice`: null for `none`, the ICP-Brasil roots, or the certificates of the
 * picked files, read through `read` (a file id to its name and bytes; it may stop reading past
 * `MAX_ANCHOR_FILE_BYTES` and throw `AnchorFileError` `too-large` itself).
 * @throws AnchorFileError for a file that cannot serve (see `anchorCertificates`); whatever `read` throws.
 */
export async function trustAnchors(
  choice: TrustChoice,
  read: (fileId: string) => Promise<{ name: string; bytes: Uint8Array }>,
): Promise<Uint8Array[] | null> {
  switch (choice.kind) {
    case 'none':
      return null;
    case 'icp-brasil':
      return icpBrasilRoots();
    case 'files': {
      const files: { name: string; bytes: Uint8Array }[] = [];
      for (const id of choice.fileIds.slice(0, MAX_ANCHOR_FILES)) files.push(await read(id));
      return anchorCertificates(files);
    }
  }
}

/** The `bad-anchor` result of an `AnchorFileError`. */
export function badAnchor(e: AnchorFileError): CertificateCheck {
  return { kind: 'bad-anchor', fileName: e.fileName, problem: e.problem };
}

/**
 * Runs `options.checks` (default all six) on `file` against the receipt attached to `certificate`, asking
 * every endpoint given (they must agree; a redirect is never followed); checks 5 and 6 chain the tokens and
 * the signer to `options.anchors` (null or absent: the chains are reported not checked), check 6 judging them
 * at `options.at` (default now) from what the certificate carries (no request). An endpoint that cannot be
 * read makes its check not run or partial (the report's outcome `incomplete`), never failed; `@notary/verify` is loaded on first use (it brings ethers, pdf-lib,
 * pkijs and the Stacks codec).
 * `options.attachedReceipt`: the receipt already read from `certificate` (Electron main reads it in a bounded
 * worker), so the certificate is not parsed here for it.
 */
export async function checkAgainstCertificate(
  file: Uint8Array,
  certificate: Uint8Array,
  endpoints: ChainEndpoints,
  options: {
    fetch?: typeof fetch;
    attachedReceipt?: AttachedReceipt;
    anchors?: Uint8Array[] | null;
    /** The time check 6 judges the certificates at (`notary-verify --at`); null or absent: now. */
    at?: Date | null;
    checks?: readonly CheckId[];
  } = {},
): Promise<CertificateCheck> {
  const { CertificateError, ReceiptFormatError, verify } = await import('@notary/verify');
  const anchors = options.anchors && options.anchors.length > 0 ? options.anchors : null;
  try {
    const report = await verify({
      file,
      certificate,
      evmRpcUrls: endpoints.evmRpcUrls.slice(0, MAX_ENDPOINTS),
      stacksApiUrls: endpoints.stacksApiUrls.slice(0, MAX_ENDPOINTS),
      checks: options.checks ?? SCREEN_CHECKS,
      ...(anchors ? { tsaCa: anchors, trustCa: anchors } : {}),
      ...(options.at ? { at: options.at } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.attachedReceipt ? { attachedReceipt: options.attachedReceipt } : {}),
    });
    return { kind: 'report', report };
  } catch (e) {
    if (e instanceof CertificateError) return { kind: 'no-receipt', message: e.message };
    if (e instanceof ReceiptFormatError) return { kind: 'bad-receipt', message: e.message };
    throw e;
  }
}

/**
 * `report` with its checks of `replaced`'s ids replaced by those (results of the same receipt run elsewhere,
 * e.g. the offline checks in Electron's certificate worker), `outcome`, `exitCode`, `ok` and `failedAt`
 * recomputed as `verify` does (`outcomeOf`).
 */
export function withChecks(report: VerifyReport, replaced: readonly CheckResult[]): VerifyReport {
  const checks = report.checks.map((c) => replaced.find((r) => r.id === c.id) ?? c);
  return { ...report, ...outcomeOf(checks), checks };
}
