/**
 * The ICP-Brasil AD-RA artifacts an operator supplies (`ICP_BRASIL_ARTIFACTS_DIR`), read and checked once at
 * start: DOC-ICP-15.03 Tabela A.19 wants them in every AD-RA signature's /DSS (PBAD_PolicyArtifacts,
 * PBAD_LpaArtifacts, PBAD_LpaSignatures), and the list's signature is not something this service can make.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { currentIcpBrasilPolicy } from '@notary/pdf/icp-brasil';
import type { IcpBrasilArtifacts } from '@notary/pdf/ltv';
import { errorMessage } from '@notary/shared';
import { signedDataOf } from '@notary/trust/cms';

/** The three files, by the names ITI publishes them under. */
export const ICP_BRASIL_ARTIFACT_FILES = {
  policy: 'PA_PAdES_AD_RA_v1_4.der',
  lpa: 'LPA_PAdES.der',
  lpaSignature: 'LPA_PAdES.p7s',
} as const;

/** Where ITI publishes them. */
export const ICP_BRASIL_ARTIFACTS_URL = 'http://politicas.icpbrasil.gov.br/';

/** Largest artifact read: the published files are a few kB (the LPA grows with each policy version). */
const MAX_ARTIFACT_BYTES = 4 * 1024 * 1024;

/**
 * Reads `PA_PAdES_AD_RA_v1_4.der`, `LPA_PAdES.der` and `LPA_PAdES.p7s` from `dir` and checks that the policy
 * file's SHA-256 is the file hash of the current AD-RA policy (v1.4, the LPA entry `@notary/pdf/icp-brasil`
 * holds) and that the LPA's signature parses as a CMS ContentInfo holding SignedData (RFC 5652 section 5).
 * @throws Error starting "Invalid configuration:" naming the file that is missing, too large or wrong, and
 *   where to download the files.
 */
export function loadIcpBrasilArtifacts(dir: string): IcpBrasilArtifacts {
  const fail = (message: string): never => {
    throw new Error(`Invalid configuration:\n  ICP_BRASIL_ARTIFACTS_DIR=${dir}: ${message}`);
  };
  const read = (file: string): Uint8Array<ArrayBuffer> => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path.join(dir, file));
    } catch (error) {
      return fail(
        `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); the directory must hold ` +
          `${Object.values(ICP_BRASIL_ARTIFACT_FILES).join(', ')}, as published at ${ICP_BRASIL_ARTIFACTS_URL}`,
      );
    }
    if (bytes.length === 0 || bytes.length > MAX_ARTIFACT_BYTES) {
      fail(`${file} is ${bytes.length} bytes (expected 1 to ${MAX_ARTIFACT_BYTES})`);
    }
    return new Uint8Array(bytes);
  };
  const policy = read(ICP_BRASIL_ARTIFACT_FILES.policy);
  const lpa = read(ICP_BRASIL_ARTIFACT_FILES.lpa);
  const lpaSignature = read(ICP_BRASIL_ARTIFACT_FILES.lpaSignature);
  const expected = currentIcpBrasilPolicy('icp-brasil-ad-ra');
  const digest = createHash('sha256').update(policy).digest('hex');
  if (digest !== expected.fileSha256Hex) {
    fail(
      `${ICP_BRASIL_ARTIFACT_FILES.policy} has SHA-256 ${digest}, not the AD-RA v${expected.version} policy file's ` +
        `${expected.fileSha256Hex} (download it again from ${expected.uri})`,
    );
  }
  try {
    signedDataOf(lpaSignature, ICP_BRASIL_ARTIFACT_FILES.lpaSignature);
  } catch (error) {
    fail(
      `${ICP_BRASIL_ARTIFACT_FILES.lpaSignature} is not a CMS SignedData (DER, RFC 5652): ${errorMessage(error)}`,
    );
  }
  return { policy, lpa, lpaSignature };
}
