import { createHash } from 'node:crypto';

/**
 * The text embedded for one definition (spec, What the service does: synchronization step 2, "a search text
 * from the name, the
 * category and the publisher"). The description is not part of it (it feeds the lexical leg of the search).
 */
export function searchText(
  definition: { name: string; categoryName: string },
  publisherName: string,
): string {
  return `${definition.name} | ${definition.categoryName} | ${publisherName}`;
}

/**
 * SHA-256 hex of the embedder id and the search text: equal hashes mean the stored vector is still right,
 * so the definition is not embedded again.
 */
export function contentHash(embedderId: string, text: string): string {
  return createHash('sha256').update(embedderId).update('\n').update(text).digest('hex');
}
