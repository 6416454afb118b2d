import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import { toBase64 } from '@notary/trust/bytes';
import {
  MERKLE_HASHING,
  RECEIPT_FORMAT,
  type Receipt,
  type ReceiptAct,
  type ReceiptAnchoredCheckpoint,
  type ReceiptEvmAnchor,
  type ReceiptOriginalSignatures,
  ReceiptSchema,
  type ReceiptStacksAnchor,
  type ReceiptTransparencyLog,
  receiptVersionOf,
} from '@notary/verify/receipt';
import { computeAddress, getAddress, hexlify, Transaction } from 'ethers';
import type { Config } from '../../config';
import {
  type AnchorBatchEntity,
  AnchorTx,
  type AnchorTxEntity,
  DocumentAnchor,
  type DocumentEntity,
  DocumentTimestamp,
  NotarialAct,
  type NotarialActEntity,
} from '../../db/entities';
import { DEVNET_EAS_CONTRACTS, DEVNET_EVM_NETWORK, EAS_SCHEMA, EAS_SCHEMA_UID } from '../../ports/chains';
import type { OriginalSignatureReader } from '../../ports/original-signatures';
import type { ObjectStorage } from '../../ports/storage';
import type { MerkleProof } from '../anchoring/merkle';
import type { LeafProof, TransparencyLog } from '../log/transparency-log';
import type { LogWitnessing } from '../log/witnessing';
import { onchainInfo } from '../onchain/info';
import type { Actor } from '../tenancy/actor';
import { storedOriginalSignatures } from './original-signatures';
import { findDocumentInTenant } from './service';

/** What a receipt needs besides the database: the service's name, URL and anchoring configuration. */
export interface ReceiptContext {
  config: Pick<Config, 'anchoring' | 'serviceName'>;
  /** Base URL of the service, no trailing slash. */
  publicUrl: string;
  /** The transparency log whose proof the receipt carries (absent: no `transparencyLog` block). */
  transparencyLog?:
    | Pick<TransparencyLog, 'proofFor' | 'identity' | 'inclusionAt' | 'consistency'>
    | undefined;
  /** The log's witnesses (`LOG_WITNESSES`): the receipt's checkpoint carries the cosignatures collected. */
  logWitnessing?: Pick<LogWitnessing, 'cosigned'> | undefined;
}

/** What the receipt served alone also needs: the stored original and its signature reader. */
export interface StoredReceiptContext extends ReceiptContext {
  storage: ObjectStorage;
  originalSignatures: OriginalSignatureReader;
}

/**
 * `GET /api/documents/:id/receipt`: the receipt of a document of the caller's tenant.
 * @throws AppError NOT_FOUND / FORBIDDEN as `findDocumentInTenant`.
 */
export async function getReceipt(
  em: EntityManager,
  ctx: StoredReceiptContext,
  actor: Actor,
  id: string,
): Promise<Receipt> {
  const doc = await findDocumentInTenant(em, actor, id);
  const originalSignatures = await storedOriginalSignatures(ctx, doc);
  return buildReceipt(em, ctx, doc, originalSignatures ? { originalSignatures } : {});
}

/**
 * The receipt of `doc` (`@notary/verify/receipt`, docs/receipt.schema.json), from the database and
 * configuration only (no chain is contacted), the same bytes whenever nothing changed (no generation time):
 * - the Merkle proof from its DocumentAnchor and AnchorBatch rows;
 * - each chain leg from the batch's AnchorTx row (network, chain id and contract recorded at signing, block
 *   number at inclusion; the EVM attester is the sender of the signed transaction bytes) and the Document's
 *   registration (hash, attestation UID, time); a leg not registered is `pending` with what is known;
 * - the first RFC 3161 token issued over the document's hash (`DocumentTimestamp`), if any;
 * - `originalSignatures`, when given: the signatures the original PDF carried (`original-signatures.ts`);
 * - `act`, when the tenant recorded one: the document's notarial act (type, MNE, selo, book, page, when);
 * - `transparencyLog`, once the document's leaf is in the log: the leaf, its inclusion proof and the latest
 *   signed checkpoint with the witnesses' cosignatures collected so far (the proof changes as the log grows; any
 *   later checkpoint is consistent with it); once its batch is cut with the log's checkpoint, `anchored`: that
 *   checkpoint, its leaf's proof in the batch tree and the proof that ties the document's leaf to it.
 * - `version`: the oldest that holds the receipt (`receiptVersionOf`: 4 with `anchored`, else 3).
 * @throws AppError INTERNAL when the rows make a receipt that fails its own schema (a bug, never the caller's).
 */
export async function buildReceipt(
  em: EntityManager,
  ctx: ReceiptContext,
  doc: DocumentEntity,
  extra: { originalSignatures?: ReceiptOriginalSignatures } = {},
): Promise<Receipt> {
  const anchor = await em.findOne(DocumentAnchor, { document: doc.id }, { populate: ['batch'] });
  const txs = anchor ? await em.find(AnchorTx, { batch: anchor.batch.id }) : [];
  const [stamp] = await em.find(
    DocumentTimestamp,
    { document: doc.id },
    { orderBy: { genTime: 'asc' }, limit: 1 },
  );
  const act = await em.findOne(NotarialAct, { document: doc.id });
  const transparencyLog = ctx.transparencyLog
    ? await logBlock(ctx, ctx.transparencyLog, doc.id, anchor?.batch)
    : undefined;
  let merkle: Receipt['merkle'] = null;
  if (anchor) {
    const proof = anchor.proof as MerkleProof;
    merkle = {
      hashing: MERKLE_HASHING,
      leafIndex: anchor.leafIndex,
      leafCount: anchor.batch.leafCount,
      siblings: proof.siblings.map((s) => ({ position: s.position, hash: s.hash })),
      root: anchor.batch.root,
    };
  }
  const receipt: Receipt = {
    format: RECEIPT_FORMAT,
    version: receiptVersionOf({ transparencyLog }),
    service: { name: ctx.config.serviceName, url: ctx.publicUrl },
    document: {
      id: doc.id,
      serialNumber: doc.serialNumber,
      sha256: doc.sha256Hash,
      fileName: doc.fileName,
      fileSize: doc.fileSize,
      mimeType: doc.mimeType,
      registeredAt: doc.createdAt.toISOString(),
    },
    merkle,
    evm: evmLeg(
      ctx.config,
      doc,
      txs.find((t) => t.chain === 'evm'),
    ),
    stacks: stacksLeg(
      ctx.config,
      doc,
      txs.find((t) => t.chain === 'stacks'),
    ),
    timestamp: stamp
      ? { token: Buffer.from(stamp.token).toString('base64'), genTime: stamp.genTime.toISOString() }
      : null,
    ...(extra.originalSignatures ? { originalSignatures: extra.originalSignatures } : {}),
    ...(act ? { act: receiptAct(act) } : {}),
    ...(transparencyLog ? { transparencyLog } : {}),
  };
  const checked = ReceiptSchema.safeParse(receipt);
  if (!checked.success) {
    throw new AppError('INTERNAL', `the receipt of ${doc.id} fails its schema: ${checked.error.message}`);
  }
  return checked.data;
}

/** The receipt's `transparencyLog` block, or undefined while the document's leaf is pending. */
async function logBlock(
  ctx: ReceiptContext,
  log: NonNullable<ReceiptContext['transparencyLog']>,
  documentId: string,
  batch: AnchorBatchEntity | undefined,
): Promise<ReceiptTransparencyLog | undefined> {
  const proof = await log.proofFor(documentId);
  if (!proof) return undefined;
  const anchored = batch ? await anchoredBlock(ctx, log, batch, proof) : undefined;
  return {
    origin: log.identity.origin,
    url: `${ctx.publicUrl}/log`,
    verifierKey: log.identity.verifierKey,
    leafIndex: proof.leafIndex,
    entry: toBase64(proof.entry),
    inclusionProof: proof.proof.map(toBase64),
    checkpoint: ctx.logWitnessing
      ? await ctx.logWitnessing.cosigned(proof.checkpoint)
      : proof.checkpoint.note,
    ...(anchored ? { anchored } : {}),
  };
}

/**
 * The checkpoint `batch` anchored, with the witnesses' cosignatures collected for it, its leaf's proof in the
 * batch tree and what ties the document's leaf (`proof`) to it: the leaf's inclusion proof at the anchored size,
 * or, for a leaf the log integrated after the cut, the consistency proof from the anchored size to the receipt's
 * checkpoint. Undefined for a batch cut without a checkpoint.
 */
async function anchoredBlock(
  ctx: ReceiptContext,
  log: NonNullable<ReceiptContext['transparencyLog']>,
  batch: AnchorBatchEntity,
  proof: LeafProof,
): Promise<ReceiptAnchoredCheckpoint | undefined> {
  const { checkpointSize: size, checkpointRoot: root, checkpointNote: note } = batch;
  const place = batch.checkpointProof;
  if (size == null || root == null || note == null || place == null) return undefined;
  let link: { kind: 'inclusion' | 'consistency'; proof: Uint8Array[] };
  try {
    link =
      proof.leafIndex < size
        ? { kind: 'inclusion', proof: await log.inclusionAt(proof.leafIndex, size) }
        : { kind: 'consistency', proof: await log.consistency(size, proof.checkpoint.size) };
  } catch (e) {
    // The log holds fewer leaves than it anchored (it was cut back): no proof to give.
    if (e instanceof RangeError) return undefined;
    throw e;
  }
  const checkpoint = { size, root: new Uint8Array(root), note };
  return {
    checkpoint: ctx.logWitnessing ? await ctx.logWitnessing.cosigned(checkpoint) : note,
    batchRoot: batch.root,
    leafIndex: place.index,
    siblings: place.siblings.map((s) => ({ position: s.position, hash: s.hash })),
    link: { kind: link.kind, proof: link.proof.map(toBase64) },
  };
}

/** The receipt's `act` block of a document's notarial act. */
function receiptAct(act: NotarialActEntity): ReceiptAct {
  return {
    type: act.type,
    mne: act.mne ?? null,
    selo: act.seloState && act.seloCode ? { state: act.seloState, code: act.seloCode } : null,
    book: act.book ?? null,
    page: act.page ?? null,
    recordedAt: act.recordedAt.toISOString(),
  };
}

/** EAS and SchemaRegistry of the EVM network a transaction row names, when the service knows them. */
function evmContracts(
  config: Pick<Config, 'anchoring'>,
  row: AnchorTxEntity | undefined,
): { eas: string | null; schemaRegistry: string | null; signer: string | null } {
  const a = config.anchoring;
  const onDevnet = row
    ? row.network === DEVNET_EVM_NETWORK.network && row.chainId === DEVNET_EVM_NETWORK.chainId
    : a.mode === 'devnet';
  if (onDevnet) {
    return {
      eas: row?.contract ?? DEVNET_EAS_CONTRACTS.eas,
      schemaRegistry: DEVNET_EAS_CONTRACTS.schemaRegistry,
      signer: DEVNET_EAS_CONTRACTS.deployer,
    };
  }
  const evm = a.mode === 'configured' ? a.evm : undefined;
  // The configuration names the registry of its own EAS contract only: a row signed for another one keeps
  // its contract, and the verifier reads that contract's registry from the chain.
  const same = evm !== undefined && (!row?.contract || sameAddress(row.contract, evm.easAddress));
  return {
    eas: row?.contract ?? evm?.easAddress ?? null,
    schemaRegistry: same && evm ? evm.schemaRegistryAddress : null,
    signer: same && evm ? computeAddress(evm.privateKey) : null,
  };
}

function evmLeg(
  config: Pick<Config, 'anchoring'>,
  doc: DocumentEntity,
  row: AnchorTxEntity | undefined,
): ReceiptEvmAnchor | null {
  const info = onchainInfo(config);
  if (!info.enabled && row?.network == null) return null;
  const contracts = evmContracts(config, row);
  const common = {
    network: row?.network ?? info.network,
    chainId: row?.chainId ?? info.chainId,
    schema: EAS_SCHEMA,
    schemaUid: EAS_SCHEMA_UID,
  };
  const registered =
    doc.onchainStatus === 'registered' &&
    doc.onchainTxHash !== null &&
    doc.onchainAttestationUid !== null &&
    doc.onchainAt !== null &&
    row?.blockNumber != null &&
    contracts.eas !== null;
  if (!registered) {
    return {
      status: 'pending',
      ...common,
      easAddress: contracts.eas,
      schemaRegistryAddress: contracts.schemaRegistry,
    };
  }
  const attester = senderOf(row?.raw ?? null) ?? contracts.signer;
  if (attester === null) {
    throw new AppError('INTERNAL', `the attester of ${doc.onchainTxHash} is not known`);
  }
  return {
    status: 'registered',
    ...common,
    easAddress: contracts.eas as string,
    schemaRegistryAddress: contracts.schemaRegistry,
    attestationUid: (doc.onchainAttestationUid as string).toLowerCase(),
    attester,
    txHash: (doc.onchainTxHash as string).toLowerCase(),
    blockNumber: Number(row?.blockNumber),
    anchoredAt: (doc.onchainAt as Date).toISOString(),
  };
}

function stacksLeg(
  config: Pick<Config, 'anchoring'>,
  doc: DocumentEntity,
  row: AnchorTxEntity | undefined,
): ReceiptStacksAnchor | null {
  const info = onchainInfo(config);
  if (!info.stacksEnabled && row?.network == null) return null;
  const a = config.anchoring;
  const network = stacksNetwork(row?.network ?? info.stacksNetwork);
  const contractId = row?.contract ?? (a.mode === 'configured' ? (a.stacks?.contractId ?? null) : null);
  const registered =
    doc.stacksStatus === 'registered' &&
    doc.stacksTxId !== null &&
    doc.stacksAnchoredAt !== null &&
    row?.blockNumber != null &&
    contractId !== null;
  if (!registered) return { status: 'pending', network, contractId };
  return {
    status: 'registered',
    network,
    contractId: contractId as string,
    txId: `0x${(doc.stacksTxId as string).replace(/^0x/, '').toLowerCase()}`,
    blockHeight: Number(row?.blockNumber),
    anchoredAt: (doc.stacksAnchoredAt as Date).toISOString(),
  };
}

function stacksNetwork(name: string): ReceiptStacksAnchor['network'] {
  if (name === 'mainnet' || name === 'testnet' || name === 'devnet') return name;
  throw new AppError('INTERNAL', `unknown Stacks network ${name}`);
}

/** The sender of signed EVM transaction bytes (EIP-55), or null when there are none or they do not parse. */
function senderOf(raw: Uint8Array | null): string | null {
  if (!raw || raw.length === 0) return null;
  try {
    const from = Transaction.from(hexlify(raw)).from;
    return from ? getAddress(from) : null;
  } catch {
    return null;
  }
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
