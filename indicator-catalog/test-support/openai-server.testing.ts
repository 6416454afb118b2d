import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '@notary/shared';
import { z } from 'zod';
import { LocalEmbedder } from '../src/embeddings/local';

/**
 * Request body of `POST /v1/embeddings` (OpenAI API reference, Embeddings: create). Token-array inputs are
 * valid there but not supported here (the catalog sends strings).
 */
const EmbeddingsRequest = z
  .object({
    input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(2048)]),
    model: z.string().min(1),
    dimensions: z.number().int().min(1).optional(),
    encoding_format: z.enum(['float', 'base64']).optional(),
    user: z.string().optional(),
  })
  .strict();

export interface OpenAIServerStats {
  requests: number;
  /** Texts embedded, all requests together. */
  inputs: number;
  /** `encoding_format` of each request (`float` when absent). */
  encodings: string[];
  dimensions: (number | undefined)[];
}

export interface OpenAIServer {
  /** Base URL for the `openai` client (`OPENAI_BASE_URL`), ending in `/v1`. */
  baseUrl: string;
  apiKey: string;
  stats: OpenAIServerStats;
  /** The next `count` requests answer `status` (OpenAI error body). */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

function sendError(res: ServerResponse, status: number, message: string, type: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param: null, code: null } }));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An OpenAI-compatible embeddings server on 127.0.0.1 (a free port) for tests: `POST /v1/embeddings` with
 * bearer authentication, request validation, deterministic vectors (the local embedder's feature hashing at
 * the requested `dimensions`, default 1536) and both encodings: `float` (arrays) and `base64` (little-endian
 * float32, which the `openai` client asks for and decodes).
 */
export async function startOpenAIServer(options: { apiKey?: string } = {}): Promise<OpenAIServer> {
  const apiKey = options.apiKey ?? 'sk-test-loopback';
  const stats: OpenAIServerStats = { requests: 0, inputs: 0, encodings: [], dimensions: [] };
  const embedders = new Map<number, LocalEmbedder>();
  let failures = 0;
  let failureStatus = 500;
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/embeddings') {
        return sendError(res, 404, `Unknown route ${req.method} ${req.url}`, 'invalid_request_error');
      }
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        return sendError(res, 401, 'Incorrect API key provided', 'invalid_request_error');
      }
      const text = await readBody(req);
      if (failures > 0) {
        failures--;
        return sendError(res, failureStatus, 'Injected failure', 'server_error');
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return sendError(res, 400, 'Body is not JSON', 'invalid_request_error');
      }
      const parsed = EmbeddingsRequest.safeParse(json);
      if (!parsed.success) {
        return sendError(res, 400, parsed.error.issues[0]?.message ?? 'invalid', 'invalid_request_error');
      }
      const body = parsed.data;
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      const dims = body.dimensions ?? 1536;
      let embedder = embedders.get(dims);
      if (!embedder) {
        embedder = new LocalEmbedder(dims);
        embedders.set(dims, embedder);
      }
      stats.requests++;
      stats.inputs += inputs.length;
      stats.encodings.push(body.encoding_format ?? 'float');
      stats.dimensions.push(body.dimensions);
      const data = inputs.map((input, index) => {
        const vector = (embedder as LocalEmbedder).embedOne(input);
        return {
          object: 'embedding' as const,
          index,
          embedding:
            body.encoding_format === 'base64'
              ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
              : Array.from(vector),
        };
      });
      const tokens = inputs.reduce((n, s) => n + s.split(/\s+/).length, 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data,
          model: body.model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
    })().catch((e: unknown) => sendError(res, 500, errorMessage(e), 'server_error'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    stats,
    failNext(count, status = 500) {
      failures = count;
      failureStatus = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
