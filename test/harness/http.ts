import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestService } from './service';

/** GET/POST JSON with an optional bearer token; returns status, headers and parsed body. */
export async function api<T = unknown>(
  base: string,
  route: string,
  init: { token?: string; method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: T }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${route}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * `api` without the response headers, method first: `{status, body}` compares whole with `toEqual`.
 */
export async function jsonRequest<T = Record<string, unknown>>(
  base: string,
  method: string,
  route: string,
  init: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: T }> {
  const { status, body } = await api<T>(base, route, { ...init, method });
  return { status, body };
}

/** `jsonRequest` against a test service: `request(t, 'POST', '/api/team/invite', { token, body })`. */
export function request<T = Record<string, unknown>>(
  t: TestService,
  method: string,
  route: string,
  init: Parameters<typeof jsonRequest>[3] = {},
): Promise<{ status: number; body: T }> {
  return jsonRequest<T>(t.url, method, route, init);
}

/** Uploads a file from disk as `POST /api/documents/upload` would receive it from a browser form. */
export async function uploadFile(
  base: string,
  token: string,
  file: string,
  fields: Record<string, string> = { consent: 'true' },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set('file', new Blob([await readFile(file)]), path.basename(file));
  const res = await fetch(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
