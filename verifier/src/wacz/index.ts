/**
 * Verification of a signed web archive (`notary-verify <capture.wacz>`): Webrecorder's "WACZ Signing and
 * Verification" 0.1.0 (https://specs.webrecorder.net/wacz-auth/0.1.0/, section 6; webrecorder/specs
 * `wacz-auth/0.1.0/index.html` at commit 09268ee26718fe2da4e76fe43dbc23e0b2f13365) over a WACZ 1.1.1
 * (`wacz/1.1.1/index.md`), each WARC record against its CDXJ line (the spec's "partially loaded WACZ" check;
 * `cdxj/0.1.0`), and the capture's own record. Browser-safe: fflate, pkijs and WebCrypto only.
 *
 * Checks, in order (the statuses and reasons of `report.ts`), each in its own file of this folder:
 *   1 package hashes (`package.ts`): every file `datapackage.json` lists has its SHA-256 and size; no other
 *     file is in the zip.
 *   2 datapackage digest (`signature.ts`): `datapackage-digest.json` holds the SHA-256 of `datapackage.json`,
 *     `signedData.hash` too.
 *   3 signature (`signature.ts`, `keys.ts`): `signedData` is one of the spec's two forms (no other property)
 *     and `signature` verifies over the ASCII of `hash` with `publicKey` (anonymous) or the first certificate
 *     of `domainCert` (domain). ECDSA signatures are read as DER `Ecdsa-Sig-Value` (authsign) or raw `r || s`
 *     (WebCrypto); RSA as PKCS#1 v1.5; SHA-256.
 *   4 signer identity (`signer.ts`, domain form): `domain` is the certificate's subject (common name or a DNS
 *     name), the chain is linked, `created` is within the certificate's validity, the chain reaches
 *     `--trust-ca`.
 *   5 time signature (`time-signature.ts`, domain form): `timeSignature` is an RFC 3161 answer (granted) whose
 *     token stamps the SHA-256 of the ASCII of `signature`, signed by the first certificate of
 *     `timestampCert`, reaching `--tsa-ca`; `created` is within 10 minutes of its genTime.
 *   6 WARC records (`records.ts`, reading `cdxj.ts` and `warc.ts`): each CDXJ line's record (offset, length)
 *     has its `recordDigest`, parses as one WARC record of the line's URL whose block and payload digests hold
 *     (`WARC-Block-Digest`, `WARC-Payload-Digest`, the line's `digest`); the records between indexed ones
 *     (warcinfo, requests) have their block digests; the records cover the WARC file exactly.
 *   7 capture record (`capture.ts`): `capture/capture.json` is a capture of this service, its final URL is in
 *     the index, and what it says of the signature is what `signedData` is.
 */
import { sha256Hex } from '@notary/trust/bytes';
import { EXIT_CODES, isIncomplete, type VerifyOutcome } from '../report.ts';
import { checkCapture, readCaptureRecord } from './capture.ts';
import { checkPackage } from './package.ts';
import { checkRecords } from './records.ts';
import { checkDigest, checkSignature } from './signature.ts';
import { checkSignerAndTime } from './signer.ts';
import {
  MAX_WACZ_BYTES,
  type WaczCheckResult,
  WaczFormatError,
  type WaczReport,
  type WaczVerifyInput,
} from './types.ts';
import { readZip } from './zip.ts';

export { formatWaczReport } from './format.ts';
export {
  type CaptureFacts,
  MAX_WACZ_BYTES,
  WACZ_CHECK_NAMES,
  type WaczCheckId,
  type WaczCheckResult,
  WaczFormatError,
  type WaczReport,
  type WaczVerifyInput,
} from './types.ts';
/** WARC reading, for the service's ata draft that transcribes a captured page from its own archive. */
export { gunzipAll, parseWarc, payloadOf, type WarcRecord } from './warc.ts';

/**
 * Verifies a WACZ's signature, package and records (see the module's note). Runs in Node and in browsers;
 * contacts nothing.
 * @throws WaczFormatError when `bytes` is not a zip, has no `datapackage.json`, or is past `MAX_WACZ_BYTES`.
 */
export async function verifyWacz(bytes: Uint8Array, input: WaczVerifyInput = {}): Promise<WaczReport> {
  if (bytes.length > MAX_WACZ_BYTES) throw new WaczFormatError(`larger than ${MAX_WACZ_BYTES} bytes`);
  const { files, repeated } = readZip(bytes);
  const datapackageBytes = files.get('datapackage.json');
  if (!datapackageBytes) throw new WaczFormatError('not a WACZ: no datapackage.json');

  const pkg = await checkPackage(files, repeated);
  const digest = await checkDigest(files, datapackageBytes);
  const signature = await checkSignature(digest.signed);
  const signed = signature.data;
  // The capture record first: checks 4 and 5 quote what it says of the time signature.
  const record = readCaptureRecord(files);
  const identity = await checkSignerAndTime(signed, record, input.trustCa, input.tsaCa);
  const index = await checkRecords(files, pkg.resources);
  const capture = await checkCapture(record, signed, index.urls);

  const checks: WaczCheckResult[] = [
    pkg.result,
    digest.result,
    signature.result,
    ...identity.results,
    index.result,
    capture.result,
  ].sort((a, b) => a.id - b.id);
  const failed = checks.find((c) => c.status === 'failed');
  const outcome: VerifyOutcome = failed ? 'failed' : checks.some(isIncomplete) ? 'incomplete' : 'passed';
  return {
    kind: 'wacz',
    outcome,
    exitCode: EXIT_CODES[outcome],
    ok: failed === undefined,
    failedAt: failed?.id ?? null,
    archive: {
      sha256: await sha256Hex(bytes),
      bytes: bytes.length,
      form: signed.form,
      created: signed.created,
      software: signed.software,
      signer: signed.signer,
      timeSignature: identity.timeSignature ? identity.timeSignature.toISOString() : null,
    },
    capture: capture.capture,
    checks,
  };
}
