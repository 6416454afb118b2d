import { joinSecrets, redactError, type SecretSet, secretsOfUrl } from '@notary/platform/redact';
import OpenAI from 'openai';
import { type Embedder, normalize } from './port';

export interface OpenAIEmbedderOptions {
  apiKey: string;
  /** OpenAI-compatible base URL (`OPENAI_BASE_URL`), e.g. `http://127.0.0.1:8080/v1`; default OpenAI's. */
  baseUrl?: string | undefined;
  /** Default `text-embedding-3-small`. */
  model?: string;
  dimensions: number;
  /** Texts per request (default 128; OpenAI accepts up to 2048). */
  batchSize?: number;
  /** Per-request timeout in ms (default 60 s); the client retries timeouts and 429/5xx itself. */
  timeoutMs?: number;
  maxRetries?: number;
}

/**
 * Embeddings through an OpenAI-compatible `POST /embeddings` with the official `openai` client (which asks
 * for `encoding_format: 'base64'` and decodes it). Requests `dimensions` explicitly (text-embedding-3-*
 * support shortening; 1536 is text-embedding-3-small's native size). Vectors are re-normalized so that
 * cosine equals dot product in the embedded index. Its errors leave it redacted of the API key and of every
 * piece of `baseUrl` (`secretsOfUrl`: a gateway may carry a key in its path, query or host).
 */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly batchSize: number;
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly secrets: SecretSet;

  constructor(options: OpenAIEmbedderOptions) {
    this.secrets = joinSecrets(
      options.baseUrl === undefined ? undefined : secretsOfUrl(options.baseUrl),
      options.apiKey,
    );
    this.model = options.model ?? 'text-embedding-3-small';
    this.dimensions = options.dimensions;
    this.batchSize = options.batchSize ?? 128;
    this.id = `openai:${this.model}:${this.dimensions}`;
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseUrl,
      timeout: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 3,
    });
  }

  /**
   * @throws Error (the client's `APIError` as a plain redacted `Error`: name, message, code and cause kept,
   * `redactError`) after the client's retries; also when the answer has the wrong count or size of vectors.
   */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    let response: Awaited<ReturnType<OpenAI['embeddings']['create']>>;
    try {
      response = await this.client.embeddings.create({
        model: this.model,
        input: [...texts],
        dimensions: this.dimensions,
      });
    } catch (e) {
      throw redactError(e, this.secrets);
    }
    if (response.data.length !== texts.length) {
      throw new Error(`embeddings API answered ${response.data.length} vectors for ${texts.length} texts`);
    }
    const out = new Array<Float32Array>(texts.length);
    for (const item of response.data) {
      if (item.embedding.length !== this.dimensions) {
        throw new Error(
          `embeddings API answered ${item.embedding.length} dimensions, expected ${this.dimensions}`,
        );
      }
      out[item.index] = normalize(Float32Array.from(item.embedding));
    }
    return out;
  }
}
