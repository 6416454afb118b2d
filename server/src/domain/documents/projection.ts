import type { DocumentDto, PublicDocumentDto } from '@notary/shared';
import type { DocumentEntity } from '../../db/entities';
import type { ObjectStorage } from '../../ports/storage';

/** Seconds a web capture's screenshot preview URL stays valid (spec, Limits: presigned URLs last 300 s). */
export const SCREENSHOT_URL_SECONDS = 300;

/**
 * The presigned preview URL of a web capture's screenshot (spec, Document: `screenshot`, "only for web
 * captures"), inline PNG valid `SCREENSHOT_URL_SECONDS`; null for any other document and once LGPD-deleted.
 */
export async function screenshotUrl(storage: ObjectStorage, doc: DocumentEntity): Promise<string | null> {
  if (doc.sourceType !== 'web-capture' || !doc.screenshotKey || doc.deletedAt) return null;
  return storage.presignGet(doc.screenshotKey, {
    expiresInSeconds: SCREENSHOT_URL_SECONDS,
    contentType: 'image/png',
    disposition: 'inline',
    fileName: `${doc.serialNumber}-screenshot.png`,
  });
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/**
 * The owner's view of a document (spec, Document). `screenshot` is a presigned preview URL,
 * filled in by the caller for web captures.
 */
export function toDocumentDto(doc: DocumentEntity, screenshot: string | null = null): DocumentDto {
  return {
    id: doc.id,
    serialNumber: doc.serialNumber,
    fileName: doc.fileName,
    fileSize: doc.fileSize,
    mimeType: doc.mimeType,
    sha256Hash: doc.sha256Hash,
    sourceType: doc.sourceType,
    sourceUri: doc.sourceUri ?? null,
    screenshot,
    onchainStatus: doc.onchainStatus,
    onchainTxHash: doc.onchainTxHash ?? null,
    onchainAttestationUid: doc.onchainAttestationUid ?? null,
    onchainAt: iso(doc.onchainAt),
    stacksStatus: doc.stacksStatus,
    stacksTxId: doc.stacksTxId ?? null,
    stacksAnchoredAt: iso(doc.stacksAnchoredAt),
    consentGiven: doc.consentGiven,
    consentTimestamp: doc.consentTimestamp.toISOString(),
    createdAt: doc.createdAt.toISOString(),
    published: doc.published,
    publishedAt: iso(doc.publishedAt),
    acervoTitle: doc.acervoTitle ?? null,
    acervoAuthor: doc.acervoAuthor ?? null,
    metadata: doc.metadata ?? null,
  };
}

/** The public projection: exactly the spec's eight fields, never owner, IP or storage details. */
export function toPublicDto(doc: DocumentEntity): PublicDocumentDto {
  return {
    serialNumber: doc.serialNumber,
    sha256Hash: doc.sha256Hash,
    onchainStatus: doc.onchainStatus,
    onchainTxHash: doc.onchainTxHash ?? null,
    onchainAttestationUid: doc.onchainAttestationUid ?? null,
    stacksStatus: doc.stacksStatus,
    stacksTxId: doc.stacksTxId ?? null,
    createdAt: doc.createdAt.toISOString(),
  };
}
