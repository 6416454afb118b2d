import { v5 as uuidv5 } from 'uuid';

/** Fixed namespace of the catalog's point ids (a random UUID chosen once; changing it re-keys every point). */
const POINT_NAMESPACE = '1b0e2a4c-6f1d-4f53-9a52-3c7d8e5b9f10';

/**
 * Point id of a definition: UUID v5 of `providerSlug:indicatorId` (Qdrant accepts only unsigned integers or
 * UUIDs as ids; a name-based UUID keeps the id stable across syncs and instances).
 */
export function pointId(providerSlug: string, indicatorId: string): string {
  return uuidv5(`${providerSlug}:${indicatorId}`, POINT_NAMESPACE);
}
