import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { Document } from '../../db/entities';

/**
 * Test support for the anchoring pipeline: persists (on the next flush of `em`) a pending Document as an
 * upload leaves it (consent given, both chains `pending`), with a SHA-256 derived from its id so every leaf
 * differs. `createdAt` defaults to now (tests of the batch cut pass their injected clock's time).
 * @returns the document id.
 */
export function addPendingDocument(
  em: EntityManager,
  tenantId: string,
  serialNumber: string,
  createdAt?: Date,
): string {
  const id = randomUUID();
  em.create(Document, {
    id,
    tenant: tenantId,
    serialNumber,
    fileName: 'f.txt',
    fileSize: 1,
    mimeType: 'text/plain',
    sha256Hash: createHash('sha256').update(id).digest('hex'),
    sourceType: 'upload',
    consentGiven: true,
    consentTimestamp: new Date(),
    uploaderUserId: 'u1',
    ...(createdAt ? { createdAt } : {}),
  });
  return id;
}
