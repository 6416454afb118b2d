import type { DocumentDto } from '@notary/shared';
import { api } from './http';
import type { TestService } from './service';

/** Uploads `bytes` as `name` through `POST /api/documents/upload` (consent given); returns the Document. */
export async function uploadBytes(
  t: Pick<TestService, 'url'>,
  token: string,
  bytes: Uint8Array,
  name: string,
): Promise<DocumentDto> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([bytes]), name);
  const res = await fetch(`${t.url}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  if (res.status !== 201) throw new Error(`upload of ${name}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as DocumentDto;
}

/**
 * Polls `GET /api/documents/:id` until the document is registered on both chains; throws after
 * `timeoutMs` (a deadline for a broken pipeline, not a duration the test relies on).
 */
export async function waitRegistered(
  t: Pick<TestService, 'url'>,
  token: string,
  id: string,
  timeoutMs = 60_000,
): Promise<DocumentDto> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api<{ document: DocumentDto }>(t.url, `/api/documents/${id}`, { token });
    const d = res.body.document;
    if (d.onchainStatus === 'registered' && d.stacksStatus === 'registered') return d;
    if (Date.now() > deadline) throw new Error(`not registered in time: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Has document `id` time-stamped (`POST /api/documents/:id/timestamp`, RFC 3161).
 * @returns the TimeStampResp (`.tsr`) the route answered.
 * @throws unless it answers HTTP 200.
 */
export async function stampDocument(t: TestService, token: string, id: string): Promise<Uint8Array> {
  const res = await fetch(`${t.url}/api/documents/${id}/timestamp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) throw new Error(`timestamp of ${id}: HTTP ${res.status} ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}
