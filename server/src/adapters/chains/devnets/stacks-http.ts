/**
 * The Stacks devnet's HTTP answers: how stacks-core and Hiro's API (Fastify) write them, and how a request body
 * is read or discarded. Shared by the node's and the indexer's routes (stacks-node-routes.ts,
 * stacks-indexer-routes.ts) and the servers (stacks-server.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An answer: status, headers and a body already serialized (JSON or text). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A JSON answer (bigints written as decimal strings). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: text };
}

/** stacks-core's text answers (`HttpBadRequest::new`, `HttpNotFound::new`, …: text/plain). */
export function text(status: number, body: string, headers: Record<string, string> = {}): Answer {
  return { status, headers: { 'content-type': 'text/plain', ...headers }, body };
}

/** Hiro's (Fastify's) error body: `{ statusCode, error, message }`. */
export function hiroError(status: number, message: string, headers: Record<string, string> = {}): Answer {
  const names: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 410: 'Gone' };
  return json(status, { statusCode: status, error: names[status] ?? 'Error', message }, headers);
}

/**
 * A Fastify validation error as Hiro answers it (`{ statusCode: 400, code: 'FST_ERR_VALIDATION', error, message }`).
 */
export function validationError(message: string): Answer {
  return json(400, { statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message });
}

/** Reads at most `max` bytes; undefined when the body is larger (the rest is discarded). */
export async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) over = true;
    if (!over) chunks.push(chunk as Buffer);
  }
  return over ? undefined : Buffer.concat(chunks);
}

/** Discards a body; resolves to its size (counting stops past `upTo` when > 0). */
export async function drain(req: IncomingMessage, upTo: number): Promise<number> {
  let size = 0;
  for await (const chunk of req) {
    if (upTo === 0 || size <= upTo) size += (chunk as Buffer).length;
  }
  return size;
}

/** Sends `answer`, with the CORS header of the public Stacks APIs. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  // CORS as the public Stacks APIs answer it: the web verify page reads the devnet from the browser.
  res.writeHead(answer.status, { 'access-control-allow-origin': '*', ...answer.headers });
  res.end(answer.body);
}
