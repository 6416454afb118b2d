import path from 'node:path';
import type { IcpBrasilArtifacts } from '@notary/pdf/ltv';
import { type AllowEntry, parseAllowList } from '@notary/platform/net/address-policy';
import { z } from 'zod';
import { allowListVariable, optionalString } from './env';
import {
  ICP_BRASIL_ARTIFACT_FILES,
  ICP_BRASIL_ARTIFACTS_URL,
  loadIcpBrasilArtifacts,
} from './icp-brasil-artifacts';

/**
 * Signing of certificates, the Time-Stamping Authority, revocation data, and the trust anchors of uploaded
 * PDFs' own signatures (README, Configuration).
 */
export const SigningEnv = z.object({
  SIGNING_CERT: optionalString,
  SIGNING_KEY: optionalString,
  SIGNING_CERT_PASSWORD: z.string().optional(),
  SIGNING_LOCATION: z.string().max(120).default(''),
  SIGNING_LEVEL: z.enum(['B-B', 'B-T', 'B-LT', 'B-LTA']).optional(),
  SIGNING_POLICY: z
    .enum(['etsi', 'icp-brasil-ad-rb', 'icp-brasil-ad-rt', 'icp-brasil-ad-rc', 'icp-brasil-ad-ra'])
    .default('etsi'),
  ICP_BRASIL_ARTIFACTS_DIR: optionalString,
  TSA_URL: optionalString.pipe(z.url().optional()),
  TSA_CA_CERTS: optionalString,
  SIGNATURE_TRUST_CERTS: optionalString,
  TSA_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  REVOCATION_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  REVOCATION_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(4 * 1024 ** 2)
    .default(1024 ** 2),
  REVOCATION_ALLOW_HOSTS: allowListVariable,
});
export type SigningEnv = z.infer<typeof SigningEnv>;

/**
 * PAdES signing of certificates, so a PDF reader shows who issued a certificate and that it is unchanged:
 * `SIGNING_CERT` is a PKCS#12 file (`.p12`/`.pfx`, password in `SIGNING_CERT_PASSWORD`) or a PEM chain (signer
 * first) with the PEM key in `SIGNING_KEY`. Read at start.
 */
export interface SigningConfig {
  certPath: string;
  keyPath: string | undefined;
  password: string | undefined;
  /** `/Location` of the PDF signature dictionary; empty to omit. */
  location: string;
  /**
   * PAdES baseline level asked for (`SIGNING_LEVEL`, ETSI EN 319 142-1): B-B, B-T (a TSA's signature
   * timestamp), B-LT (plus revocation data in a /DSS), B-LTA (plus a document timestamp). Default B-LTA with
   * `TSA_URL`, else B-B; B-T and up without `TSA_URL` is refused at start.
   */
  level: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';
  /**
   * Signature policy (`SIGNING_POLICY`): `etsi` (default) a plain ETSI EN 319 142-1 signature; an ICP-Brasil
   * policy (DOC-ICP-15.03 v9.1) adds its signature-policy-identifier and the PBAD signature dictionary.
   * AD-RT needs `TSA_URL` and B-T or higher, AD-RC needs B-LTA (Tabela A.22: DSS, VRI and a document
   * timestamp); both are checked at start. AD-RA needs B-LTA too and `ICP_BRASIL_ARTIFACTS_DIR`: its DSS must
   * carry the policy, the list of approved policies and that list's signature (Tabela A.19).
   */
  policy: 'etsi' | 'icp-brasil-ad-rb' | 'icp-brasil-ad-rt' | 'icp-brasil-ad-rc' | 'icp-brasil-ad-ra';
  /** AD-RA only: the artifacts read and checked at start from `ICP_BRASIL_ARTIFACTS_DIR`. */
  artifacts?: IcpBrasilArtifacts;
}

/** RFC 3161 Time-Stamp Authority (`TSA_URL`; spec, Documents rule 6). */
export interface TsaConfig {
  url: string;
  /** PEM file of the certificates that may anchor the TSA's chain; unset: Node's bundled Mozilla roots. */
  caCertsPath: string | undefined;
  timeoutMs: number;
}

/**
 * Fetching of OCSP answers and CRLs for PAdES B-LT/B-LTA (RFC 6960, RFC 5280) from the URLs the signing and
 * TSA chains' certificates name.
 */
export interface RevocationConfig {
  /** One request, connect to last byte, ms (`REVOCATION_TIMEOUT_MS`, default 10 000). */
  timeoutMs: number;
  /** Largest OCSP answer or CRL read, bytes (`REVOCATION_MAX_BYTES`, default 1 MiB). */
  maxBytes: number;
  /**
   * `REVOCATION_ALLOW_HOSTS`, parsed: private hosts and ranges (a private CA's responders) the requests may reach
   * although not public (default none: public addresses only).
   */
  allowHosts: AllowEntry[];
}

/** What signs and time-stamps, and what the signatures of uploaded PDFs are checked against. */
export interface SigningSettings {
  /** Undefined: `?signed=1` certificates come back unsigned (`X-Service-Signed: none`). */
  signing: SigningConfig | undefined;
  /** Undefined: the timestamp route answers 503 and signatures are PAdES B-B (no signature timestamp). */
  tsa: TsaConfig | undefined;
  /** Revocation data fetching for B-LT and B-LTA signatures. */
  revocation: RevocationConfig;
  /**
   * PEM file of the certificates the signers of an uploaded PDF's own signatures may chain to, as the
   * certificate and receipt report them (`SIGNATURE_TRUST_CERTS`); unset: chains are not checked.
   */
  signatureTrustCertsPath: string | undefined;
}

/**
 * The signing settings of `e`: the signer (`signingConfig`), the TSA, revocation fetching and the trust
 * anchors of uploaded signatures; file paths resolved against the working directory.
 * @throws Error "Invalid configuration" as `signingConfig` does.
 */
export function signingSettings(e: SigningEnv): SigningSettings {
  return {
    signing: signingConfig(e),
    tsa:
      e.TSA_URL === undefined
        ? undefined
        : { url: e.TSA_URL, caCertsPath: e.TSA_CA_CERTS, timeoutMs: e.TSA_TIMEOUT_MS },
    revocation: {
      timeoutMs: e.REVOCATION_TIMEOUT_MS,
      maxBytes: e.REVOCATION_MAX_BYTES,
      allowHosts: parseAllowList(e.REVOCATION_ALLOW_HOSTS),
    },
    signatureTrustCertsPath:
      e.SIGNATURE_TRUST_CERTS === undefined ? undefined : path.resolve(e.SIGNATURE_TRUST_CERTS),
  };
}

/**
 * The certificate signer of `e`, undefined without `SIGNING_CERT`: the level (`SIGNING_LEVEL`, default B-LTA
 * with `TSA_URL`, else B-B), the policy (`SIGNING_POLICY`) and, for ICP-Brasil AD-RA, the artifacts read from
 * `ICP_BRASIL_ARTIFACTS_DIR`.
 * @throws Error "Invalid configuration" naming what a level or policy needs and is not set (DOC-ICP-15.03).
 */
export function signingConfig(e: SigningEnv): SigningConfig | undefined {
  const level = e.SIGNING_LEVEL ?? (e.TSA_URL === undefined ? 'B-B' : 'B-LTA');
  if (level !== 'B-B' && e.TSA_URL === undefined) {
    throw new Error(
      `Invalid configuration:\n  SIGNING_LEVEL=${level} needs a Time-Stamping Authority for its timestamps: set TSA_URL, or SIGNING_LEVEL=B-B`,
    );
  }
  const policy = e.SIGNING_POLICY;
  const needs: Partial<Record<typeof policy, { level: typeof level; why: string }>> = {
    'icp-brasil-ad-rt': { level: 'B-T', why: 'a signature timestamp (DOC-ICP-15.03 Tabela A.15)' },
    'icp-brasil-ad-rc': {
      level: 'B-LTA',
      why: 'a DSS, a VRI and a document timestamp (DOC-ICP-15.03 Tabela A.22)',
    },
    'icp-brasil-ad-ra': {
      level: 'B-LTA',
      why: 'a DSS, a VRI and a document timestamp (DOC-ICP-15.03 Tabela A.22)',
    },
  };
  const need = needs[policy];
  if (need && e.TSA_URL === undefined) {
    throw new Error(
      `Invalid configuration:\n  SIGNING_POLICY=${policy} needs ${need.why}: set TSA_URL (a Time-Stamping Authority)`,
    );
  }
  const order = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
  if (need && order.indexOf(level) < order.indexOf(need.level)) {
    throw new Error(
      `Invalid configuration:\n  SIGNING_POLICY=${policy} needs ${need.why}: set SIGNING_LEVEL=${need.level} (it is ${level})`,
    );
  }
  let artifacts: IcpBrasilArtifacts | undefined;
  if (policy === 'icp-brasil-ad-ra') {
    if (e.ICP_BRASIL_ARTIFACTS_DIR === undefined) {
      throw new Error(
        'Invalid configuration:\n  SIGNING_POLICY=icp-brasil-ad-ra needs the policy file, the list of approved policies and ' +
          'its signature in the DSS (DOC-ICP-15.03 Tabela A.19): set ICP_BRASIL_ARTIFACTS_DIR to a directory holding ' +
          `${Object.values(ICP_BRASIL_ARTIFACT_FILES).join(', ')} (download them from ${ICP_BRASIL_ARTIFACTS_URL})`,
      );
    }
    artifacts = loadIcpBrasilArtifacts(path.resolve(e.ICP_BRASIL_ARTIFACTS_DIR));
  }
  if (e.SIGNING_CERT === undefined) {
    if (e.SIGNING_KEY !== undefined) {
      throw new Error('Invalid configuration:\n  SIGNING_KEY is set: also set SIGNING_CERT (the PEM chain)');
    }
    return undefined;
  }
  return {
    certPath: path.resolve(e.SIGNING_CERT),
    keyPath: e.SIGNING_KEY === undefined ? undefined : path.resolve(e.SIGNING_KEY),
    password: e.SIGNING_CERT_PASSWORD,
    location: e.SIGNING_LOCATION,
    level,
    policy,
    ...(artifacts ? { artifacts } : {}),
  };
}
