/**
 * `@notary/verify`: the notarization receipt and its verifier, so a notarization can be checked without the service.
 * Browser-safe: nothing here imports a Node module (the command line wrapper, `cli.ts`, is the only part that reads
 * files).
 */
export { pemCertificates, sha256Hex } from '@notary/trust/bytes';
export {
  TSA_MAX_RESPONSE_BYTES,
  TsaClient,
  type TsaClientOptions,
  TsaError,
  type TsaTimestamp,
} from '@notary/trust/tsa-client';
export { CertificateError, extractReceipt } from './certificate.ts';
export { EAS_ABI, SCHEMA_REGISTRY_ABI } from './evm.ts';
export { formatReport, statusText } from './format.ts';
export {
  checkIcpBrasilProfile,
  type IcpBrasilConformance,
  type IcpBrasilFacts,
  type IcpBrasilRow,
  icpBrasilConformance,
  type PdfEntries,
  readIcpBrasilDictionaries,
} from './icp-brasil.ts';
export { ICP_BRASIL_ROOTS_PEM } from './icp-brasil-roots.ts';
export { recomputeMerkleRoot } from './merkle.ts';
export { checkMne, type MneCheck } from './mne.ts';
export {
  type Dss,
  type DssMaterial,
  type PdfSignature,
  PdfSignatureError,
  type PdfSignatures,
  readPdfSignatures,
} from './pdf-signatures.ts';
export {
  MERKLE_HASHING,
  parseReceipt,
  RECEIPT_FILE_NAME,
  RECEIPT_FORMAT,
  RECEIPT_VERSION,
  RECEIPT_VERSIONS,
  type Receipt,
  type ReceiptAct,
  ReceiptFormatError,
  ReceiptSchema,
  serializeReceipt,
} from './receipt.ts';
export {
  type ActReport,
  type CheckId,
  type CheckReason,
  type CheckResult,
  type CheckStatus,
  type Evidence,
  EXIT_CODES,
  type ExitCode,
  isIncomplete,
  type NotRunReason,
  outcomeOf,
  type PadesLevel,
  type PadesReport,
  type PadesSignerReport,
  type VerifyOutcome,
  type VerifyReport,
} from './report.ts';
export { type VerifyInput, verify } from './verify.ts';
export {
  type CaptureFacts,
  formatWaczReport,
  MAX_WACZ_BYTES,
  verifyWacz,
  WACZ_CHECK_NAMES,
  type WaczCheckId,
  type WaczCheckResult,
  WaczFormatError,
  type WaczReport,
  type WaczVerifyInput,
} from './wacz/index.ts';
