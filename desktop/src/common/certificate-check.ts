/**
 * Checking a file against its certificate on the verify screen (issue 16): checks 1 to 4 of `@notary/verify`
 * (file SHA-256, Merkle proof, EAS attestation, Stacks anchor), which need no trust anchor, against the chain
 * endpoints the service announces (`GET /api/onchain/info` `verification`) and any the user enters. The same
 * code runs in the browser (web client) and in Electron's main process (the renderer makes no request there).
 *
 * Platform-neutral: no Node module, no DOM beyond `fetch` and WebCrypto.
 */
import type { CheckId, VerifyReport } from '@notary/verify';
import type { AttachedReceipt } from '@notary/verify/certificate';

/** The checks the verify screen runs: 5 and 6 need trust anchors the user would have to supply. */
export const SCREEN_CHECKS: readonly CheckId[] = [1, 2, 3, 4];

/** Largest file checked against a certificate: the service's upload limit (spec: 250 MB), bytes. */
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
  | { kind: 'bad-receipt'; message: string };

/**
 * Why `value` cannot be a chain endpoint, or null when it can: an http(s) URL without credentials, query or
 * fragment; plain http only on loopback (the web client's CSP allows https and loopback, and an answer read
 * in clear from elsewhere could be altered on the way).
 */
export function endpointProblem(value: string): 'not-url' | 'scheme' | 'credentials' | 'insecure' | null {
  if (!URL.canParse(value)) return 'not-url';
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'scheme';
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return 'credentials';
  if (url.protocol === 'http:' && url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    return 'insecure';
  }
  return null;
}

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
 * Runs checks 1 to 4 on `file` against the receipt attached to `certificate`, asking every endpoint given
 * (they must agree; a redirect is never followed). Network failures are failures of their check, in the
 * report; `@notary/verify` is loaded on first use (it brings ethers, pdf-lib and the Stacks codec).
 * `options.attachedReceipt`: the receipt already read from `certificate` (Electron main reads it in a bounded
 * worker), so the certificate is not parsed here.
 */
export async function checkAgainstCertificate(
  file: Uint8Array,
  certificate: Uint8Array,
  endpoints: ChainEndpoints,
  options: { fetch?: typeof fetch; attachedReceipt?: AttachedReceipt } = {},
): Promise<CertificateCheck> {
  const { CertificateError, ReceiptFormatError, verify } = await import('@notary/verify');
  try {
    const report = await verify({
      file,
      certificate,
      evmRpcUrls: endpoints.evmRpcUrls.slice(0, MAX_ENDPOINTS),
      stacksApiUrls: endpoints.stacksApiUrls.slice(0, MAX_ENDPOINTS),
      checks: SCREEN_CHECKS,
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
