import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/core';
import type { CertificateData, CertificateLanguage, MerkleProofView } from '@notary/pdf/model';
import type { GatherValidationData, SignatureLevel } from '@notary/pdf/pades';
import type { PdfAttachment, RenderedCertificate } from '@notary/pdf/render';
import { AppError, errorMessage } from '@notary/shared';
import { formatBrasiliaAndUtc } from '@notary/shared/time';
import { RECEIPT_FILE_NAME, type Receipt, serializeReceipt } from '@notary/verify/receipt';
import { firstRevoked, type ValidationMaterial } from '@notary/verify/revocation';
import type { Config } from '../../config';
import {
  AnchorTx,
  type AnchorTxEntity,
  DocumentAnchor,
  type DocumentEntity,
  DocumentTimestamp,
  Tenant,
} from '../../db/entities';
import { readCaptureRecord, type WaczSignatureFacts } from '../../ports/capture';
import { EAS_SCHEMA, EAS_SCHEMA_UID } from '../../ports/chains';
import type { IpfsGateways } from '../../ports/ipfs';
import type { OriginalSignatureReader } from '../../ports/original-signatures';
import type { RevocationSource } from '../../ports/revocation';
import type { DocumentSigner } from '../../ports/signer';
import type { ObjectStorage } from '../../ports/storage';
import type { TimestampAuthority, TimestampResult } from '../../ports/tsa';
import type { MerkleProof } from '../anchoring/merkle';
import { originalSignaturesOf, readAtMost } from '../documents/original-signatures';
import { buildReceipt } from '../documents/receipt';
import { findDocumentInTenant, ipfsCidOf } from '../documents/service';
import { onchainInfo } from '../onchain/info';
import type { Actor } from '../tenancy/actor';
import { documentForValidar, validarAccessCode } from './validar';

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
 * `GET /api/documents/:id/certificate[?signed=1]` (spec, Documents rule 5): the certificate of a document of the
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
 * `GET /api/public/documents/:serial/certificate?_secretCode=` (ITI's VALIDAR downloading what the QR code's
 * URL named, `validar.ts`): the certificate of the document of `serialNumber`, issued as its owner would get
 * it, PAdES-signed whenever a signer is configured, for whoever holds the access code printed on it.
 * @throws AppError NOT_FOUND unknown serial; UNAUTHENTICATED wrong or missing code; as `issueCertificate`.
 */
export async function issuePublicCertificate(
  em: EntityManager,
  ctx: CertificateContext,
  request: {
    serialNumber: string;
    code: string | undefined;
    lang: CertificateLanguage;
    signal?: AbortSignal;
  },
): Promise<IssuedCertificate> {
  const doc = await documentForValidar(em, ctx.secret, request.serialNumber, request.code);
  const tenant = await em.findOneOrFail(Tenant, { id: doc.tenant.id });
  return issueCertificateOf(em, ctx, doc, tenant.name, { ...request, signed: true });
}

/**
 * The PDF writing code (pdf-lib, fontkit, the page layout, PAdES signing), loaded at the first certificate: an
 * idle service does not hold it (tens of MB). One loading, shared by every later certificate.
 */
let pdfWritingModules: Promise<PdfWriting> | undefined;
type PdfWriting = typeof import('@notary/pdf/icp-brasil') &
  typeof import('@notary/pdf/ltv-bounded') &
  typeof import('@notary/pdf/pades') &
  typeof import('@notary/pdf/render');
function pdfWriting(): Promise<PdfWriting> {
  pdfWritingModules ??= Promise.all([
    import('@notary/pdf/icp-brasil'),
    import('@notary/pdf/ltv-bounded'),
    import('@notary/pdf/pades'),
    import('@notary/pdf/render'),
  ]).then(([icpBrasil, ltv, pades, render]) => ({ ...icpBrasil, ...ltv, ...pades, ...render }));
  return pdfWritingModules;
}

/** The certificate of `doc` (of the tenant named `tenantName`), as `issueCertificate` describes. */
async function issueCertificateOf(
  em: EntityManager,
  ctx: CertificateContext,
  doc: DocumentEntity,
  tenantName: string,
  request: { signed: boolean; lang: CertificateLanguage; signal?: AbortSignal },
): Promise<IssuedCertificate> {
  const { signal } = request;
  const {
    icpBrasilSignaturePolicy,
    boundedLtvWriter,
    expectedLevel,
    PADES_SIGNATURE_LENGTH,
    signPdfAtLevel,
    renderCertificate,
  } = await pdfWriting();
  const sign = request.signed && ctx.signer !== undefined;
  const level = signingLevel(ctx);
  // An ICP-Brasil policy (SIGNING_POLICY) changes the signature dictionary and adds the policy identifier.
  const policy = ctx.config.signing?.policy ?? 'etsi';
  const icpBrasil = policy === 'etsi' ? undefined : icpBrasilSignaturePolicy(policy);
  const data = await certificateData(em, ctx, doc, {
    signed: sign,
    issuedAt: new Date(),
    tenantName,
  });
  const source = await readStampableSource(ctx, doc, signal);
  signal?.throwIfAborted();
  if (source.unavailable) data.notes = [notStampedNote(request.lang, doc, source.unavailable)];
  const captured = await webCaptureFacts(ctx.storage, doc, request.lang);
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
  data.notes = [...(data.notes ?? []), receiptNote(request.lang, ctx.publicUrl)];
  const gather = revocationGatherer(ctx.revocation);
  // A token carrying only the TSA's certificate is completed from the TSA's anchors.
  const issuers = ctx.tsa?.trustAnchors ?? [];
  /** Renders with the page stating `stated` and signs at `asked` (whose extras stay even when it falls short). */
  const renderAndSign = async (stated: SignatureLevel, asked: SignatureLevel) => {
    // The page is rendered before signing: it states the level expected.
    if (sign) data.signatureLevel = stated;
    const rendered = await renderCertificate(data, source.bytes, {
      lang: request.lang,
      attachments: [receiptAttachment(receipt, data.issuedAt)],
      ...(signal ? { signal } : {}),
      ...(sign
        ? {
            signaturePlaceholder: {
              signatureLength: PADES_SIGNATURE_LENGTH,
              name: ctx.config.serviceName,
              reason:
                request.lang === 'en'
                  ? `Notarization certificate ${doc.serialNumber}`
                  : `Certificado de notarização ${doc.serialNumber}`,
              location: ctx.config.signing?.location ?? '',
              contactInfo: ctx.publicUrl,
              ...(icpBrasil ? { dictionary: 'icp-brasil' as const } : {}),
            },
          }
        : {}),
    });
    signal?.throwIfAborted();
    const signature =
      sign && ctx.signer
        ? await signPdfAtLevel(rendered.pdf, ctx.signer, {
            level: asked,
            ...(ctx.tsa ? { tsa: ctx.tsa } : {}),
            ...(asked === 'B-LT' || asked === 'B-LTA' ? { gather, issuers } : {}),
            ...(icpBrasil ? { policy: icpBrasil } : {}),
            // AD-RA: the policy, the list of approved policies and its signature in the DSS (Tabela A.19).
            ...(policy === 'icp-brasil-ad-ra' && ctx.config.signing?.artifacts
              ? { artifacts: ctx.config.signing.artifacts }
              : {}),
            // The certificate may hold the uploaded original: its long-term updates parse it off this thread.
            writer: boundedLtvWriter,
          })
        : undefined;
    return { rendered, signature };
  };
  // Known before signing when the signer's own chain has no revocation data (a CA without OCSP or CRL URLs):
  // the page then states B-T, and the long-term extras (/DSS, document timestamp) are still added.
  const expected = sign && ctx.signer ? await expectedLevel(level, ctx.signer, { gather, issuers }) : level;
  let { rendered, signature } = await renderAndSign(expected, level);
  const shortfall = signature?.shortfall ?? [];
  if (
    signature &&
    (policy === 'icp-brasil-ad-rc' || policy === 'icp-brasil-ad-ra') &&
    signature.level !== 'B-LTA'
  ) {
    // AD-RC and AD-RA mandate the /DSS, /VRI and document timestamp (DOC-ICP-15.03 Tabela A.22): a file
    // without them would declare a policy it breaks.
    throw new AppError(
      'BAD_GATEWAY',
      `ICP-Brasil ${policy === 'icp-brasil-ad-ra' ? 'AD-RA' : 'AD-RC'} needs revocation data for every certificate, which could not all be had: ${shortfall.join('; ')}`,
    );
  }
  // Rare (the TSA's chain without revocation data, a responder failing in between): issued again at the level
  // reached, so the page states the level the file has. B-T never falls short, so this ends.
  for (let tries = 0; signature && signature.level !== data.signatureLevel && tries < 3; tries += 1) {
    signal?.throwIfAborted();
    ({ rendered, signature } = await renderAndSign(signature.level, signature.level));
  }
  const base = request.lang === 'en' ? 'certificate' : 'certificado';
  return {
    pdf: signature?.pdf ?? rendered.pdf,
    signed: sign,
    level: signature?.level,
    levelShortfall: shortfall,
    layout: rendered.layout,
    fileName: `${base}-${doc.serialNumber}.pdf`,
    fallbackReason: rendered.fallbackReason ?? source.skipReason,
    pdfa: rendered.pdfa,
    originalPdfA: rendered.originalPdfA,
  };
}

/** `SIGNING_LEVEL`; without a signing configuration (a signer given directly), B-T with a TSA, else B-B. */
function signingLevel(ctx: Pick<CertificateContext, 'config' | 'tsa'>): SignatureLevel {
  return ctx.config.signing?.level ?? (ctx.tsa ? 'B-T' : 'B-B');
}

/** The revocation source as `signPdfAtLevel` takes it; without one, every chain is reported uncovered. */
function revocationGatherer(source: RevocationSource | undefined): GatherValidationData {
  if (source) {
    return async (chain) => {
      const found = await source.gather(chain);
      await refuseRevoked(chain, found.material, new Date());
      return found;
    };
  }
  return async () => ({
    material: { certs: [], ocsps: [], crls: [] },
    missing: [{ subject: 'every certificate', reason: 'this service has no revocation source' }],
  });
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
  const verify = `${publicUrl}/verify/`;
  return lang === 'en'
    ? `Attached: ${RECEIPT_FILE_NAME}, the verification receipt. Check this document without this service: with Node 20 or later, node notary-verify.mjs <file> --certificate <this PDF> --evm-rpc <URL> --stacks-api <URL> (download ${verify}notary-verify.mjs; SHA-256 in ${verify}SHA256SUMS); or in a browser, the page ${verify} (saved, it works from your own computer).`
    : `Anexo: ${RECEIPT_FILE_NAME}, o recibo de verificação. Verifique este documento sem este serviço: com Node 20 ou mais recente, node notary-verify.mjs <arquivo> --certificate <este PDF> --evm-rpc <URL> --stacks-api <URL> (baixe ${verify}notary-verify.mjs; SHA-256 em ${verify}SHA256SUMS); ou no navegador, a página ${verify} (salva, ela funciona no seu próprio computador).`;
}

/**
 * `POST /api/documents/:id/timestamp` (spec, Documents rule 6): an RFC 3161 token over the document's SHA-256,
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
 * not an error here: the certificate is issued separately and says why (`unavailable`).
 * @throws `signal`'s reason once it aborts.
 */
async function readStampableSource(
  ctx: Pick<CertificateContext, 'storage' | 'ipfs'>,
  doc: DocumentEntity,
  signal: AbortSignal | undefined,
): Promise<StampableSource> {
  if (doc.mimeType !== 'application/pdf') return { bytes: null, skipReason: undefined };
  if (doc.deletedAt) return { bytes: null, skipReason: 'the stored file is gone (LGPD deletion)' };
  if (doc.fileSize > STAMP_MAX_BYTES) {
    return { bytes: null, skipReason: `larger than ${STAMP_MAX_BYTES} bytes: not stamped in memory` };
  }
  const cid = ipfsCidOf(doc);
  if (!doc.storageKey && cid !== undefined) return readFromIpfs(ctx.ipfs, doc, cid, signal);
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
): Promise<StampableSource> {
  const failed = (why: string): StampableSource => ({
    bytes: null,
    skipReason: `IPFS: ${why}`,
    unavailable: why,
  });
  try {
    const file = await ipfs.fetchFile(cid, { signal: signal ?? new AbortController().signal });
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
  return lang === 'en'
    ? `This PDF was not stamped: its bytes (${doc.sourceUri}) could not be fetched and verified from the IPFS gateways (${reason}). This certificate is issued as a separate document.`
    : `Este PDF não foi carimbado: seus bytes (${doc.sourceUri}) não puderam ser obtidos e verificados nos gateways IPFS (${reason}). Este certificado é emitido como documento separado.`;
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
 * (`readCaptureRecord`; the same bytes as the WACZ's `screenshot.png`, whose digest is in its `datapackage.json`). None
 * for other documents, or when the screenshot is gone (LGPD deletion). `screenshot`: the PNG bytes themselves, printed
 * on the certificate when they carry the record (one too large or unreadable to print leaves a sentence saying it is in
 * the WACZ).
 */
async function webCaptureFacts(
  storage: ObjectStorage,
  doc: DocumentEntity,
  lang: CertificateLanguage,
): Promise<{ notes: string[]; screenshot?: Uint8Array }> {
  if (doc.sourceType !== 'web-capture' || !doc.screenshotKey || doc.deletedAt) return { notes: [] };
  const png = await storage
    .get(doc.screenshotKey)
    .then((s) => readAll(s, SCREENSHOT_READ_MAX))
    .catch(() => undefined);
  const record = png ? readCaptureRecord(png) : undefined;
  if (!png || !record) return { notes: [] };
  // Brasília time and UTC, as every time of the certificate; a value that is no time is printed as recorded.
  const when = (iso: string) => {
    const at = new Date(iso);
    return Number.isNaN(at.getTime()) ? iso : formatBrasiliaAndUtc(at, lang);
  };
  const en = lang === 'en';
  const lines = [
    en
      ? `Web capture of ${record.requestedUrl}, final URL ${record.finalUrl} (HTTP ${record.status}${record.redirects.length > 0 ? `, after ${record.redirects.length} redirect(s)` : ''}).`
      : `Captura web de ${record.requestedUrl}, URL final ${record.finalUrl} (HTTP ${record.status}${record.redirects.length > 0 ? `, após ${record.redirects.length} redirecionamento(s)` : ''}).`,
    en
      ? `Captured from ${when(record.startedAt)} to ${when(record.finishedAt)} by ${record.browser.name} ${record.browser.version}; server address ${record.serverIp ?? 'unknown'}.`
      : `Capturada de ${when(record.startedAt)} a ${when(record.finishedAt)} por ${record.browser.name} ${record.browser.version}; endereço do servidor ${record.serverIp ?? 'desconhecido'}.`,
  ];
  if (record.tls) {
    lines.push(
      en
        ? `Server TLS certificate SHA-256: ${record.tls.sha256Fingerprint} (${record.tls.subject}; issuer ${record.tls.issuer}; valid from ${when(record.tls.validFrom)} to ${when(record.tls.validTo)}).`
        : `Certificado TLS do servidor, SHA-256: ${record.tls.sha256Fingerprint} (${record.tls.subject}; emissor ${record.tls.issuer}; válido de ${when(record.tls.validFrom)} a ${when(record.tls.validTo)}).`,
    );
  }
  if (record.tlsOrigins) {
    const n = record.tlsOrigins.length + (record.tlsOriginsOmitted ?? 0);
    lines.push(
      en
        ? `TLS connections of ${n} origin(s) recorded (protocol, cipher, certificates as Chromium verified them${record.tlsOriginsOmitted ? `; ${record.tlsOrigins.length} kept, the rest counted` : ''}): see the provenance summary in the WACZ.`
        : `Conexões TLS de ${n} origem(ns) registradas (protocolo, cifra, certificados como o Chromium os verificou${record.tlsOriginsOmitted ? `; ${record.tlsOrigins.length} guardadas, as demais contadas` : ''}): veja o resumo de proveniência no WACZ.`,
    );
  }
  lines.push(
    en
      ? 'The file is a WACZ web archive (every HTTP exchange as WARC, screenshot, PDF rendering, capture.json); the SHA-256 above is that of the archive. Replay it in ReplayWeb.page.'
      : 'O arquivo é um arquivo web WACZ (cada troca HTTP em WARC, captura de tela, renderização em PDF, capture.json); o SHA-256 acima é o do arquivo. Reproduza-o no ReplayWeb.page.',
  );
  if (record.signature) lines.push(waczSignatureNote(record.signature, en));
  return { notes: lines, screenshot: png };
}

/**
 * How the WACZ is signed (WACZ Signing and Verification 0.1.0, `datapackage-digest.json`), as the capture's
 * record states it: the domain form's certificate and time signature (or why there is none), or the anonymous
 * form's key fingerprint; and the command that checks it.
 */
function waczSignatureNote(facts: WaczSignatureFacts, en: boolean): string {
  const clip = (why: string) =>
    why.length > NOTE_REASON_MAX_CHARS ? `${why.slice(0, NOTE_REASON_MAX_CHARS)}…` : why;
  const check = en
    ? 'Check it with notary-verify <file>.wacz.'
    : 'Verifique-o com notary-verify <arquivo>.wacz.';
  if (facts.form === 'anonymous') {
    return en
      ? `The WACZ is signed (WACZ Signing and Verification 0.1.0, anonymous form) with this service's own key; SHA-256 of its public key: ${facts.publicKeySha256}. ${check}`
      : `O WACZ é assinado (WACZ Signing and Verification 0.1.0, forma anônima) com a chave própria deste serviço; SHA-256 da sua chave pública: ${facts.publicKeySha256}. ${check}`;
  }
  const t = facts.timeSignature;
  const time =
    t.status === 'included'
      ? en
        ? `with an RFC 3161 time signature from ${t.tsa}`
        : `com assinatura de tempo RFC 3161 de ${t.tsa}`
      : t.status === 'unavailable'
        ? en
          ? `without time signature: the time-stamping authority ${t.tsa} was unavailable at capture time (${t.at}: ${clip(t.reason)})`
          : `sem assinatura de tempo: a autoridade de carimbo do tempo ${t.tsa} estava indisponível no momento da captura (${t.at}: ${clip(t.reason)})`
        : en
          ? 'without time signature (no time-stamping authority configured)'
          : 'sem assinatura de tempo (nenhuma autoridade de carimbo do tempo configurada)';
  return en
    ? `The WACZ is signed (WACZ Signing and Verification 0.1.0) with the certificate of ${facts.domain} (SHA-256 ${facts.certificateSha256}), ${time}. ${check}`
    : `O WACZ é assinado (WACZ Signing and Verification 0.1.0) com o certificado de ${facts.domain} (SHA-256 ${facts.certificateSha256}), ${time}. ${check}`;
}

/** The stream's bytes. @throws AppError INTERNAL past `max` bytes (the stream is destroyed, the rest not read). */
async function readAll(stream: Readable, max: number): Promise<Uint8Array> {
  const bytes = await readAtMost(stream, max);
  if (!bytes) throw new AppError('INTERNAL', 'Stored object is larger than its record says');
  return bytes;
}
