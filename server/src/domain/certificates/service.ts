import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/core';
import type { CertificateData, CertificateLanguage, MerkleProofView } from '@notary/pdf/model';
import type { GatherValidationData, SignatureLevel } from '@notary/pdf/pades';
import type { PdfAttachment, RenderedCertificate } from '@notary/pdf/render';
import type { PlaceholderShape } from '@notary/pdf/sign-at-level';
import { AppError, errorMessage } from '@notary/shared';
import { formatBrasiliaAndUtc } from '@notary/shared/time';
import { firstRevoked, type ValidationMaterial } from '@notary/trust/revocation';
import { RECEIPT_FILE_NAME, type Receipt, serializeReceipt } from '@notary/verify/receipt';
import type { Config } from '../../config';
import {
  AnchorTx,
  type AnchorTxEntity,
  DocumentAnchor,
  type DocumentEntity,
  DocumentTimestamp,
} from '../../db/entities';
import type { ServiceActivity } from '../../ports/activity';
import type { CaptureRecordReader, WaczSignatureFacts } from '../../ports/capture';
import { EAS_SCHEMA, EAS_SCHEMA_UID } from '../../ports/chains';
import type { IpfsGateways } from '../../ports/ipfs';
import type { OriginalSignatureReader } from '../../ports/original-signatures';
import type { RevocationSource } from '../../ports/revocation';
import type { DocumentSigner } from '../../ports/signer';
import type { ObjectStorage } from '../../ports/storage';
import type { TimestampAuthority, TimestampResult } from '../../ports/tsa';
import type { MerkleProof } from '../anchoring/merkle';
import { originalSignaturesOf, readAtMost } from '../documents/original-signatures';
import { buildReceipt, type ReceiptContext } from '../documents/receipt';
import { findDocumentInTenant, ipfsCidOf } from '../documents/service';
import { onchainInfo } from '../onchain/info';
import type { Actor } from '../tenancy/actor';
import { certificateText } from './messages';
import { validarAccessCode } from './validar';

/**
 * Source PDFs larger than this get a separate certificate instead of being stamped: pdf-lib holds the whole
 * file and its object graph in memory (several times the file size), and certificates are generated on
 * request. 64 MiB covers ordinary documents with room to spare.
 */
export const STAMP_MAX_BYTES = 64 * 1024 * 1024;

/** What issuing certificates and timestamps needs from the composition root. */
export interface CertificateContext {
  config: Pick<Config, 'anchoring' | 'serviceName' | 'signing'>;
  /** Base URL of the service, no trailing slash. */
  publicUrl: string;
  storage: ObjectStorage;
  /** Where the bytes of an IPFS import (reference-only) are fetched from, verified, to be stamped. */
  ipfs: Pick<IpfsGateways, 'fetchFile'>;
  /** Configured signing key (`SIGNING_CERT`); undefined: certificates are never signed. */
  signer: DocumentSigner | undefined;
  /** Configured TSA (`TSA_URL`): timestamps, and PAdES B-T signature timestamps. */
  tsa: TimestampAuthority | undefined;
  /** OCSP responses and CRLs for PAdES B-LT and B-LTA; without it those levels stop at B-T and say why. */
  revocation?: RevocationSource | undefined;
  /** The service secret: the VALIDAR access code printed on the certificate is derived from it (`validar.ts`). */
  secret: string;
  /** Lists a PDF source's own signatures (certificate section, receipt `originalSignatures`). */
  originalSignatures: OriginalSignatureReader;
  /** Reads a web capture's record from its stored screenshot (what its certificate states). */
  captureRecords: CaptureRecordReader;
  /** The transparency log whose proof the embedded receipt carries (`ReceiptContext`). */
  transparencyLog?: ReceiptContext['transparencyLog'];
  /** The current time of the tabelião's signing sessions (their expiry); default the system clock. */
  now?: (() => Date) | undefined;
  /** Where each certificate request's end is counted for the operator (`/metrics`); absent: not counted. */
  activity?: Pick<ServiceActivity, 'certificateIssued'>;
  /** The log's witnesses whose cosignatures the embedded receipt's checkpoint carries (`ReceiptContext`). */
  logWitnessing?: ReceiptContext['logWitnessing'];
}

export interface IssuedCertificate {
  pdf: Uint8Array;
  /** Whether a PAdES signature was applied (`X-Service-Signed: pades`). */
  signed: boolean;
  /** The PAdES level the signed file reached (`X-Signature-Level`); undefined when unsigned. */
  level: SignatureLevel | undefined;
  /** Why `level` is below `SIGNING_LEVEL` (logged, not shown to the client); empty when it is not. */
  levelShortfall: string[];
  layout: RenderedCertificate['layout'];
  /** Attachment name, e.g. `certificado-ABC-123.pdf`. */
  fileName: string;
  /** Why a PDF source was issued as a separate certificate (logged, not shown to the client). */
  fallbackReason: string | undefined;
  /**
   * What the file declares of PDF/A (ISO 19005): PDF/A-3b for every separate certificate, what a stamped copy of
   * a PDF/A original declares, null when stamped onto an original that is not PDF/A (`X-Pdfa`).
   */
  pdfa: RenderedCertificate['pdfa'];
  /** Stamped only: what the original declared (null: not PDF/A); undefined for a separate certificate. */
  originalPdfA: RenderedCertificate['originalPdfA'];
}

/**
 * The `X-Pdfa` header of a certificate answer: `PDF/A-3b` (a separate certificate: the whole file is written to
 * ISO 19005-3 level B), `PDF/A-3b; original declared PDF/A-2b` (a stamped PDF/A original kept PDF/A: what the copy
 * declares, then what the original did), `none; original not PDF/A` (stamped onto an original that declares no
 * PDF/A: the file as a whole is not PDF/A, only the appended pages follow its rules).
 */
export function pdfaHeader(issued: Pick<IssuedCertificate, 'pdfa' | 'originalPdfA'>): string {
  const label = (id: { part: number; conformance: string }) =>
    `PDF/A-${id.part}${id.conformance.toLowerCase()}`;
  if (!issued.pdfa) return 'none; original not PDF/A';
  if (!issued.originalPdfA) return label(issued.pdfa);
  return `${label(issued.pdfa)}; original declared ${label(issued.originalPdfA)}`;
}

/**
 * `GET /api/documents/:id/certificate[?signed=1]` (spec, Documents: rule 5): the certificate of a document of the
 * caller's tenant. PDF sources (up to `STAMP_MAX_BYTES`, not LGPD-deleted) are stamped on every page with the
 * certificate appended as an incremental update; anything else gets a separate certificate. `signed` applies a PAdES
 * signature at `SIGNING_LEVEL` (B-B to B-LTA) when a signer is configured, else it is ignored; the level reached is
 * returned (lower than asked when revocation data could not be had). The stored original is only read, and parsed only
 * inside the bounded stamping worker (`@notary/pdf/render`): a PDF past its bounds gets a separate certificate. A web
 * capture's screenshot is decoded only there too, and only up to `SCREENSHOT_MAX_PIXELS` (read from its header first);
 * one past its bounds is left out, the certificate saying that it is in the WACZ. `signal` (the client left) stops the
 * work between steps and terminates a running stamping worker. Every certificate carries the document's receipt
 * (`buildReceipt`) as the associated file `receipt.json`, inside the signed range when signed, so that the certificate
 * alone proves the document without this service.
 * @throws AppError NOT_FOUND / FORBIDDEN as `findDocumentInTenant`; BAD_GATEWAY when the TSA of a B-T or higher
 *   signature fails (a TSA failure never downgrades a signature); SERVICE_UNAVAILABLE when the revocation data
 *   gathered for B-LT or B-LTA says the signing certificate (or a certificate of its or the TSA's chain) is
 *   revoked; BAD_GATEWAY under ICP-Brasil AD-RC when the revocation data for B-LTA could not all be had;
 *   `signal`'s reason once it aborts. When B-LT or B-LTA falls short otherwise, the certificate is issued again
 *   at the level reached, so its page states the level its signature has.
 */
export async function issueCertificate(
  em: EntityManager,
  ctx: CertificateContext,
  actor: Actor,
  request: { id: string; signed: boolean; lang: CertificateLanguage; signal?: AbortSignal },
): Promise<IssuedCertificate> {
  const doc = await findDocumentInTenant(em, actor, request.id);
  return issueCertificateOf(em, ctx, doc, actor.tenant.name, request);
}

/**
 * The PDF writing code (pdf-lib, fontkit, the page layout, PAdES signing), loaded at the first certificate: an
 * idle service does not hold it (tens of MB). One loading, shared by every later certificate.
 */
let pdfWritingModules: Promise<PdfWriting> | undefined;
type PdfWriting = typeof import('@notary/pdf/render') & typeof import('@notary/pdf/sign-at-level');
function pdfWriting(): Promise<PdfWriting> {
  pdfWritingModules ??= Promise.all([import('@notary/pdf/render'), import('@notary/pdf/sign-at-level')]).then(
    ([render, signing]) => ({ ...render, ...signing }),
  );
  return pdfWritingModules;
}

/**
 * The certificate of `doc` (of the tenant named `tenantName`), as `issueCertificate` describes; for a caller
 * that found the document itself (the owner's route through `issueCertificate`, the public route by serial).
 * Each request's end, issued or failed, is counted in `ctx.activity` by level and outcome.
 * @throws what `issueCertificate` throws.
 */
export async function issueCertificateOf(
  em: EntityManager,
  ctx: CertificateContext,
  doc: DocumentEntity,
  tenantName: string,
  request: CertificateRequest,
): Promise<IssuedCertificate> {
  // Counted by the level asked when it fails, by the level reached when it is issued.
  const asked = request.signed && ctx.signer ? (ctx.config.signing?.level ?? 'signed') : 'unsigned';
  try {
    const issued = await issueCertificateUncounted(em, ctx, doc, tenantName, request);
    const shortfall = issued.signed && issued.levelShortfall.length > 0;
    ctx.activity?.certificateIssued(issued.level ?? 'unsigned', shortfall ? 'shortfall' : 'ok');
    return issued;
  } catch (e) {
    ctx.activity?.certificateIssued(asked, request.signal?.aborted ? 'aborted' : { error: e });
    throw e;
  }
}

/** What `issueCertificateOf` is asked for. */
interface CertificateRequest {
  signed: boolean;
  lang: CertificateLanguage;
  signal?: AbortSignal;
  ipfsReadKey?: string;
  /** Lines the page states after the others (the tabelião's deferred signature names its signers). */
  notes?: string[];
}

/** `issueCertificateOf` without the counting. */
async function issueCertificateUncounted(
  em: EntityManager,
  ctx: CertificateContext,
  doc: DocumentEntity,
  tenantName: string,
  request: CertificateRequest,
): Promise<IssuedCertificate> {
  const { signal, lang } = request;
  const { renderCertificate, signAtLevel } = await pdfWriting();
  const signer = request.signed ? ctx.signer : undefined;
  const data = await certificateData(em, ctx, doc, {
    signed: signer !== undefined,
    issuedAt: new Date(),
    tenantName,
  });
  const source = await readStampableSource(ctx, doc, signal, request.ipfsReadKey ?? doc.tenant.id);
  signal?.throwIfAborted();
  if (source.unavailable) data.notes = [notStampedNote(lang, doc, source.unavailable)];
  const captured = await webCaptureFacts(ctx, doc, lang);
  if (captured.notes.length > 0) data.notes = [...(data.notes ?? []), ...captured.notes];
  if (captured.screenshot) data.screenshot = captured.screenshot;
  // Signatures the original already carried, read in a bounded worker, listed and put in the receipt.
  const originals = source.bytes
    ? await originalSignaturesOf(ctx.originalSignatures, doc, source.bytes, signal)
    : undefined;
  if (originals) data.originalSignatures = originals;
  // The receipt travels inside the certificate, within the signed range: proof without us.
  const receipt = await buildReceipt(em, ctx, doc, originals ? { originalSignatures: originals } : {});
  // The act as the receipt states it: the page and the attached receipt say the same thing.
  if (receipt.act) data.act = { ...receipt.act, recordedAt: new Date(receipt.act.recordedAt) };
  data.notes = [...(data.notes ?? []), receiptNote(lang, ctx.publicUrl), ...(request.notes ?? [])];
  /** The certificate, with the signature placeholder of `placeholder` when it is to be signed. */
  const render = (placeholder?: PlaceholderShape) =>
    renderCertificate(data, source.bytes, {
      lang,
      attachments: [receiptAttachment(receipt, data.issuedAt)],
      ...(signal ? { signal } : {}),
      ...(placeholder
        ? {
            signaturePlaceholder: {
              ...placeholder,
              name: ctx.config.serviceName,
              reason: certificateText(lang, 'signatureReason', { serial: doc.serialNumber }),
              location: ctx.config.signing?.location ?? '',
              contactInfo: ctx.publicUrl,
            },
          }
        : {}),
    });
  const signed = signer
    ? await signAtLevel({
        // The page is rendered before signing: it states the level expected, then the level reached.
        render: (stated, placeholder) => {
          data.signatureLevel = stated;
          return render(placeholder);
        },
        signer,
        level: ctx.config.signing?.level,
        policy: ctx.config.signing?.policy,
        artifacts: ctx.config.signing?.artifacts,
        tsa: ctx.tsa,
        // A token carrying only the TSA's certificate is completed from the TSA's anchors.
        issuers: ctx.tsa?.trustAnchors,
        gather: ctx.revocation ? refusingRevoked(ctx.revocation) : undefined,
        signal,
      })
    : undefined;
  if (signed?.kind === 'refused') throw new AppError('BAD_GATEWAY', signed.reason);
  // Unsigned, the render is the last step; signed, `signAtLevel` has checked the signal between its own.
  const rendered = signed?.rendered ?? (await render());
  if (!signed) signal?.throwIfAborted();
  return {
    pdf: signed?.pdf ?? rendered.pdf,
    signed: signer !== undefined,
    level: signed?.level,
    levelShortfall: signed?.shortfall ?? [],
    layout: rendered.layout,
    fileName: certificateText(lang, 'fileName', { serial: doc.serialNumber }),
    fallbackReason: rendered.fallbackReason ?? source.skipReason,
    pdfa: rendered.pdfa,
    originalPdfA: rendered.originalPdfA,
  };
}

/** The revocation source as `signAtLevel` takes it: a revoked certificate of the chains stops the signing. */
function refusingRevoked(source: RevocationSource): GatherValidationData {
  return async (chain) => {
    const found = await source.gather(chain);
    await refuseRevoked(chain, found.material, new Date());
    return found;
  };
}

/**
 * Refuses to hand out a signature when the revocation data just gathered says that a certificate of its
 * chains (the service's signing certificate, a TSA's) is revoked at `now` (RFC 6960 / RFC 5280 answers,
 * checked by `revocationStatus`): a relying party would reject it, and a revoked key must not keep signing.
 * @throws AppError SERVICE_UNAVAILABLE naming the certificate, the revocation time and reason.
 */
async function refuseRevoked(
  chain: readonly Uint8Array[],
  material: ValidationMaterial,
  now: Date,
): Promise<void> {
  const revoked = await firstRevoked(chain, material, now);
  if (!revoked) return;
  throw new AppError(
    'SERVICE_UNAVAILABLE',
    `The certificate "${revoked.subject}" of the signature's chain was revoked on ${revoked.revokedAt.toISOString()}` +
      `${revoked.reason ? ` (${revoked.reason})` : ''}: certificates are not signed with it (replace SIGNING_CERT, or the TSA)`,
  );
}

/** The receipt as the certificate's associated file `receipt.json` (AFRelationship Supplement). */
function receiptAttachment(receipt: Receipt, issuedAt: Date): PdfAttachment {
  return {
    name: RECEIPT_FILE_NAME,
    bytes: new TextEncoder().encode(serializeReceipt(receipt)),
    mimeType: 'application/json',
    description: 'Notarization receipt: everything needed to verify this document without the service',
    relationship: 'Supplement',
    modified: issuedAt,
  };
}

/**
 * The certificate's pointer to its attached receipt and to the verifier that works without this service (the
 * one-file command line and the page it serves at `/verify/`), in its language.
 */
function receiptNote(lang: CertificateLanguage, publicUrl: string): string {
  return certificateText(lang, 'receipt', { file: RECEIPT_FILE_NAME, verify: `${publicUrl}/verify/` });
}

/**
 * `POST /api/documents/:id/timestamp` (spec, Documents: rule 6): an RFC 3161 token over the document's SHA-256,
 * also recorded for the document's receipt (`DocumentTimestamp`).
 * @throws AppError SERVICE_UNAVAILABLE when no TSA is configured; BAD_GATEWAY when the TSA fails or its
 *   answer does not check out (`adapters/tsa/http.ts`); NOT_FOUND / FORBIDDEN as `findDocumentInTenant`.
 */
export async function timestampDocument(
  em: EntityManager,
  tsa: TimestampAuthority | undefined,
  actor: Actor,
  id: string,
): Promise<{ result: TimestampResult; fileName: string }> {
  const doc = await findDocumentInTenant(em, actor, id);
  if (!tsa) throw new AppError('SERVICE_UNAVAILABLE', 'No Time-Stamping Authority is configured (TSA_URL)');
  const result = await tsa.timestamp(Buffer.from(doc.sha256Hash, 'hex'));
  // Kept for the receipt: the token proves the hash existed at genTime, without this service.
  em.create(DocumentTimestamp, {
    id: crypto.randomUUID(),
    document: doc.id,
    token: result.token,
    genTime: result.genTime,
    serialNumber: result.serialNumber,
  });
  await em.flush();
  return { result, fileName: `${doc.serialNumber}.tsr` };
}

/**
 * Everything the certificate states, from the database and configuration only. Chain details (network, chain
 * id, contract) come from the transaction row that anchored the document, falling back to the current
 * configuration while it is pending; explorer links are built as the spec says (Other shapes, on-chain info).
 */
export async function certificateData(
  em: EntityManager,
  ctx: Pick<CertificateContext, 'config' | 'publicUrl' | 'secret'>,
  doc: DocumentEntity,
  options: { signed: boolean; issuedAt: Date; tenantName: string },
): Promise<CertificateData> {
  const anchor = await em.findOne(DocumentAnchor, { document: doc.id }, { populate: ['batch'] });
  const txs = anchor ? await em.find(AnchorTx, { batch: anchor.batch.id }) : [];
  const byChain = (chain: AnchorTxEntity['chain']) => txs.find((t) => t.chain === chain);
  const info = onchainInfo(ctx.config);
  const currentTargets = configuredContracts(ctx.config);
  let merkle: MerkleProofView | null = null;
  if (anchor) {
    const proof = anchor.proof as MerkleProof;
    merkle = {
      root: anchor.batch.root,
      batchSize: anchor.batch.leafCount,
      leafIndex: anchor.leafIndex,
      siblings: proof.siblings.map((s) => ({ position: s.position, hash: s.hash })),
    };
  }
  const evmTx = byChain('evm');
  const evmRegistered = doc.onchainStatus === 'registered' && doc.onchainTxHash !== null;
  const stacksTx = byChain('stacks');
  const stacksRegistered = doc.stacksStatus === 'registered' && doc.stacksTxId !== null;
  const uid = evmRegistered ? (doc.onchainAttestationUid ?? null) : null;
  const evmTxHash = evmRegistered ? (doc.onchainTxHash ?? null) : null;
  const stacksTxId = stacksRegistered ? (doc.stacksTxId ?? null) : null;
  const recordedEvm = evmRegistered || evmTx?.network != null;
  return {
    serviceName: ctx.config.serviceName,
    serviceUrl: ctx.publicUrl,
    verifyUrl: `${ctx.publicUrl}/api/public/documents/${encodeURIComponent(doc.serialNumber)}`,
    document: {
      id: doc.id,
      serialNumber: doc.serialNumber,
      fileName: doc.fileName,
      fileSize: doc.fileSize,
      mimeType: doc.mimeType,
      sha256Hash: doc.sha256Hash,
      createdAt: doc.createdAt,
      tenantName: options.tenantName,
    },
    consent: { given: doc.consentGiven, timestamp: doc.consentTimestamp },
    merkle,
    evm:
      info.enabled || recordedEvm
        ? {
            status: evmRegistered ? 'registered' : 'pending',
            network: evmTx?.network ?? info.network,
            chainId: evmTx?.chainId ?? info.chainId,
            easContract: evmTx?.contract ?? currentTargets.eas,
            schemaUid: EAS_SCHEMA_UID,
            schema: EAS_SCHEMA,
            attestationUid: uid,
            txHash: evmTxHash,
            anchoredAt: evmRegistered ? (doc.onchainAt ?? null) : null,
            explorerTxUrl:
              evmTxHash && info.explorerTxPrefix ? `${info.explorerTxPrefix}/${evmTxHash}` : null,
            attestationUrl: uid && info.attestationScanPrefix ? `${info.attestationScanPrefix}/${uid}` : null,
          }
        : null,
    stacks:
      info.stacksEnabled || stacksRegistered || stacksTx?.network != null
        ? {
            status: stacksRegistered ? 'registered' : 'pending',
            network: stacksTx?.network ?? info.stacksNetwork,
            contract: stacksTx?.contract ?? currentTargets.stacks,
            txId: stacksTxId,
            anchoredAt: stacksRegistered ? (doc.stacksAnchoredAt ?? null) : null,
            explorerTxUrl:
              stacksTxId && info.stacksExplorerTxPrefix
                ? `${info.stacksExplorerTxPrefix}/0x${stacksTxId.replace(/^0x/, '')}?chain=${info.stacksNetwork}`
                : null,
          }
        : null,
    issuedAt: options.issuedAt,
    signed: options.signed,
    validar: { accessCode: validarAccessCode(ctx.secret, doc.serialNumber) },
  };
}

/** Contracts of the configured networks (devnet ones are only known to the running anchoring runner). */
function configuredContracts(config: Pick<Config, 'anchoring'>): {
  eas: string | null;
  stacks: string | null;
} {
  const a = config.anchoring;
  if (a.mode !== 'configured') return { eas: null, stacks: null };
  return { eas: a.evm?.easAddress ?? null, stacks: a.stacks?.contractId ?? null };
}

/** The source PDF's bytes to stamp, or why there are none (null bytes: a separate certificate). */
interface StampableSource {
  bytes: Uint8Array | null;
  skipReason: string | undefined;
  /** Why an IPFS import's bytes could not be had (gateway failure, or bytes that are not the record's). */
  unavailable?: string;
}

/**
 * The bytes of a PDF that may be stamped, or why not: from storage, or for an IPFS import fetched again
 * through the IPFS port (verified against the CID, then against the recorded SHA-256). A gateway failure is
 * not an error here: the certificate is issued separately and says why (`unavailable`). `readKey`: whose share
 * of the IPFS certificate read slots the read takes (the owner's tenant, or an anonymous caller's address).
 * @throws `signal`'s reason once it aborts.
 */
async function readStampableSource(
  ctx: Pick<CertificateContext, 'storage' | 'ipfs'>,
  doc: DocumentEntity,
  signal: AbortSignal | undefined,
  readKey: string,
): Promise<StampableSource> {
  if (doc.mimeType !== 'application/pdf') return { bytes: null, skipReason: undefined };
  if (doc.deletedAt) return { bytes: null, skipReason: 'the stored file is gone (LGPD deletion)' };
  if (doc.fileSize > STAMP_MAX_BYTES) {
    return { bytes: null, skipReason: `larger than ${STAMP_MAX_BYTES} bytes: not stamped in memory` };
  }
  const cid = ipfsCidOf(doc);
  if (!doc.storageKey && cid !== undefined) return readFromIpfs(ctx.ipfs, doc, cid, signal, readKey);
  if (!doc.storageKey) return { bytes: null, skipReason: 'reference-only record: no stored file' };
  const bytes = await readAll(await ctx.storage.get(doc.storageKey), STAMP_MAX_BYTES);
  return { bytes, skipReason: undefined };
}

/** An IPFS import's bytes, fetched and verified again; on any failure, why (`unavailable`). */
async function readFromIpfs(
  ipfs: Pick<IpfsGateways, 'fetchFile'>,
  doc: DocumentEntity,
  cid: string,
  signal: AbortSignal | undefined,
  readKey: string,
): Promise<StampableSource> {
  const failed = (why: string): StampableSource => ({
    bytes: null,
    skipReason: `IPFS: ${why}`,
    unavailable: why,
  });
  try {
    // Certificates have read slots of their own, shared in turn by the documents' owners and, on the public
    // route, by the callers' addresses: imports cannot keep certificates waiting, and anonymous callers asking
    // for one tenant's certificates spend their own share, not that tenant's.
    const file = await ipfs.fetchFile(cid, {
      signal: signal ?? new AbortController().signal,
      key: readKey,
      use: 'certificate',
    });
    if (file.size !== doc.fileSize) {
      file.stream.destroy();
      return failed(`the CID's file has ${file.size} bytes, the record ${doc.fileSize}`);
    }
    const bytes = await readAll(file.stream, STAMP_MAX_BYTES);
    if (createHash('sha256').update(bytes).digest('hex') !== doc.sha256Hash) {
      return failed("the CID's bytes do not match the recorded SHA-256");
    }
    return { bytes, skipReason: undefined };
  } catch (e) {
    signal?.throwIfAborted();
    return failed(errorMessage(e));
  }
}

/** Longest reason quoted on a certificate, in characters (gateway messages name URLs and blocks). */
const NOTE_REASON_MAX_CHARS = 300;

/** The certificate's line saying why an IPFS import's PDF was not stamped, in `lang`. */
function notStampedNote(lang: CertificateLanguage, doc: DocumentEntity, why: string): string {
  const reason = why.length > NOTE_REASON_MAX_CHARS ? `${why.slice(0, NOTE_REASON_MAX_CHARS)}…` : why;
  return certificateText(lang, 'notStamped', { sourceUri: doc.sourceUri, reason });
}

/**
 * Largest screenshot read for its capture record and printed on the certificate (a full-page PNG of the
 * height cap is far smaller). What it costs to print is bounded by its declared pixels, not its bytes:
 * `renderCertificate` decodes it only in its bounded worker, never past `SCREENSHOT_MAX_PIXELS`.
 */
const SCREENSHOT_READ_MAX = 64 * 1024 * 1024;

/**
 * What the certificate of a web capture states, in its language: requested and final URL, HTTP status, capture times
 * (Brasília time and UTC), the server's address, its TLS certificate (subject, issuer, validity, SHA-256 fingerprint) and how many
 * origins' TLS connections the archive records, read from the record the stored screenshot carries
 * (`CaptureRecordReader`; the same bytes as the WACZ's `screenshot.png`, whose digest is in its `datapackage.json`). None
 * for other documents, or when the screenshot is gone (LGPD deletion). `screenshot`: the PNG bytes themselves, printed
 * on the certificate when they carry the record (one too large or unreadable to print leaves a sentence saying it is in
 * the WACZ).
 */
async function webCaptureFacts(
  { storage, captureRecords }: Pick<CertificateContext, 'storage' | 'captureRecords'>,
  doc: DocumentEntity,
  lang: CertificateLanguage,
): Promise<{ notes: string[]; screenshot?: Uint8Array }> {
  if (doc.sourceType !== 'web-capture' || !doc.screenshotKey || doc.deletedAt) return { notes: [] };
  const png = await storage
    .get(doc.screenshotKey)
    .then((s) => readAll(s, SCREENSHOT_READ_MAX))
    .catch(() => undefined);
  const record = png ? captureRecords.readRecord(png) : undefined;
  if (!png || !record) return { notes: [] };
  // Brasília time and UTC, as every time of the certificate; a value that is no time is printed as recorded.
  const when = (iso: string) => {
    const at = new Date(iso);
    return Number.isNaN(at.getTime()) ? iso : formatBrasiliaAndUtc(at, lang);
  };
  const lines = [
    certificateText(lang, 'captureUrls', {
      requestedUrl: record.requestedUrl,
      finalUrl: record.finalUrl,
      status: record.status,
      redirects: record.redirects.length,
    }),
    certificateText(lang, 'captureRun', {
      from: when(record.startedAt),
      to: when(record.finishedAt),
      browser: record.browser.name,
      version: record.browser.version,
      serverIp: record.serverIp,
    }),
  ];
  if (record.tls) {
    lines.push(
      certificateText(lang, 'captureTls', {
        sha256: record.tls.sha256Fingerprint,
        subject: record.tls.subject,
        issuer: record.tls.issuer,
        validFrom: when(record.tls.validFrom),
        validTo: when(record.tls.validTo),
      }),
    );
  }
  if (record.tlsOrigins) {
    lines.push(
      certificateText(lang, 'captureTlsOrigins', {
        origins: record.tlsOrigins.length + (record.tlsOriginsOmitted ?? 0),
        kept: record.tlsOriginsOmitted ? record.tlsOrigins.length : undefined,
      }),
    );
  }
  lines.push(certificateText(lang, 'captureArchive'));
  if (record.signature) lines.push(waczSignatureNote(record.signature, lang));
  return { notes: lines, screenshot: png };
}

/**
 * How the WACZ is signed (WACZ Signing and Verification 0.1.0, `datapackage-digest.json`), as the capture's
 * record states it: the domain form's certificate and time signature (or why there is none), or the anonymous
 * form's key fingerprint; and the command that checks it.
 */
function waczSignatureNote(facts: WaczSignatureFacts, lang: CertificateLanguage): string {
  const clip = (why: string) =>
    why.length > NOTE_REASON_MAX_CHARS ? `${why.slice(0, NOTE_REASON_MAX_CHARS)}…` : why;
  const check = certificateText(lang, 'waczCheck');
  if (facts.form === 'anonymous') {
    return certificateText(lang, 'waczSignedAnonymous', { publicKeySha256: facts.publicKeySha256, check });
  }
  const t = facts.timeSignature;
  const time =
    t.status === 'included'
      ? certificateText(lang, 'waczTimeIncluded', { tsa: t.tsa })
      : t.status === 'unavailable'
        ? certificateText(lang, 'waczTimeUnavailable', { tsa: t.tsa, at: t.at, reason: clip(t.reason) })
        : certificateText(lang, 'waczTimeNone');
  return certificateText(lang, 'waczSignedDomain', {
    domain: facts.domain,
    certificateSha256: facts.certificateSha256,
    time,
    check,
  });
}

/** The stream's bytes. @throws AppError INTERNAL past `max` bytes (the stream is destroyed, the rest not read). */
async function readAll(stream: Readable, max: number): Promise<Uint8Array> {
  const bytes = await readAtMost(stream, max);
  if (!bytes) throw new AppError('INTERNAL', 'Stored object is larger than its record says');
  return bytes;
}
