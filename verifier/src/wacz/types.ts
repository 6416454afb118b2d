/**
 * The signed web archive report's shapes and bounds (`verifyWacz`, `formatWaczReport`): the seven checks' ids
 * and names, what a capture record says, the report itself and the error for input that is not a WACZ.
 */
import type { CheckResult, ExitCode, VerifyOutcome } from '../report.ts';

/** Largest WACZ read, bytes. */
export const MAX_WACZ_BYTES = 1024 * 1024 * 1024;

export type WaczCheckId = 1 | 2 | 3 | 4 | 5 | 6 | 7;

export const WACZ_CHECK_NAMES: Readonly<Record<WaczCheckId, string>> = {
  1: 'package hashes (datapackage.json)',
  2: 'datapackage digest',
  3: 'signature (signedData)',
  4: 'signer identity (domainCert)',
  5: 'time signature (RFC 3161)',
  6: 'WARC records against the index',
  7: 'capture record (capture.json)',
};

/** A check of the WACZ report: `CheckResult`'s shape, with the WACZ checks' ids and names. */
export interface WaczCheckResult extends Omit<CheckResult, 'id' | 'name' | 'pades'> {
  id: WaczCheckId;
  name: string;
}

/** What the capture's record says (capture.json), as printed. */
export interface CaptureFacts {
  requestedUrl: string;
  finalUrl: string;
  status: number | null;
  startedAt: string;
  finishedAt: string;
  serverIp: string | null;
  title: string;
  browser: string | null;
  /** The main document's TLS certificate as the capture recorded it; null for http or when unknown. */
  tls: {
    subject: string;
    issuer: string;
    validFrom: string;
    validTo: string;
    sha256Fingerprint: string;
  } | null;
}

export interface WaczReport {
  kind: 'wacz';
  /** `passed`, `failed` or `incomplete`, as for a receipt (`report.ts`). */
  outcome: VerifyOutcome;
  /** `notary-verify`'s exit status: 0 passed, 1 failed, 3 incomplete. */
  exitCode: ExitCode;
  ok: boolean;
  failedAt: WaczCheckId | null;
  archive: {
    sha256: string;
    bytes: number;
    /** The signature's form; null when the archive is not signed. */
    form: 'domain' | 'anonymous' | null;
    created: string | null;
    software: string | null;
    /** Domain form: `domain`; anonymous form: the SHA-256 of the public key (hex). */
    signer: string | null;
    /** genTime of a time signature that verified, ISO 8601. */
    timeSignature: string | null;
  };
  capture: CaptureFacts | null;
  checks: WaczCheckResult[];
}

export interface WaczVerifyInput {
  /** DER certificates the domain certificate must chain to (`--trust-ca`). */
  trustCa?: Uint8Array[];
  /** DER certificates the time signature's TSA must chain to (`--tsa-ca`). */
  tsaCa?: Uint8Array[];
}

/** The input is not a WACZ that can be checked (not a zip, no `datapackage.json`, past a bound): exit 2. */
export class WaczFormatError extends Error {
  override name = 'WaczFormatError';
}
