import type { Logger } from '@notary/platform/log';
import type { CatalogConfig } from '../config';
import { EmbeddedVectorIndex } from './embedded';
import type { VectorIndex } from './port';
import { QdrantVectorIndex } from './qdrant';

export { EmbeddedVectorIndex } from './embedded';
export { pointId } from './point-id';
export type { PointPayload, VectorHit, VectorIndex, VectorPoint } from './port';
export { QdrantVectorIndex } from './qdrant';

/** The configured vector index: Qdrant when `QDRANT_URL` is set, else the embedded one under `dataDir`. */
export function createVectorIndex(
  config: Pick<CatalogConfig, 'qdrant' | 'dataDir'>,
  dimensions: number,
  options: { memory?: boolean; log?: Logger } = {},
): VectorIndex {
  if (config.qdrant) {
    return new QdrantVectorIndex({
      url: config.qdrant.url,
      apiKey: config.qdrant.apiKey,
      collection: config.qdrant.collection,
      dimensions,
    });
  }
  return new EmbeddedVectorIndex({
    dimensions,
    dir: options.memory ? undefined : config.dataDir,
    ...(options.log ? { log: options.log } : {}),
  });
}
