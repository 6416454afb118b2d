import type { CatalogConfig } from '../config';
import { LocalEmbedder } from './local';
import { OpenAIEmbedder } from './openai';
import { EMBEDDING_DIMENSIONS, type Embedder } from './port';

export { LocalEmbedder } from './local';
export { OpenAIEmbedder } from './openai';
export { EMBEDDING_DIMENSIONS, type Embedder } from './port';

/**
 * The configured embedder: OpenAI-compatible when `OPENAI_API_KEY` is set, else the local one, so that the catalog
 * runs with no configuration.
 */
export function createEmbedder(config: Pick<CatalogConfig, 'openai'>): Embedder {
  if (config.openai) {
    return new OpenAIEmbedder({
      apiKey: config.openai.apiKey,
      baseUrl: config.openai.baseUrl,
      model: config.openai.model,
      dimensions: EMBEDDING_DIMENSIONS,
    });
  }
  return new LocalEmbedder(EMBEDDING_DIMENSIONS);
}
