import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../../../../test/harness/fixtures';
import { uploadFile } from '../../../../../test/harness/http';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The documents router called without HTTP (tRPC's server-side caller over an inner context). */
describe('documents router (createCaller)', () => {
  let t: TestService;
  let alice: string;
  let bob: string;
  let docId: string;
  const as = (bearer: string | null) => createCaller(createInnerContext(t.service.deps, { bearer }));

  beforeAll(async () => {
    t = await startTestService('pglite');
    alice = await t.token('alice@example.com');
    bob = await t.token('bob@example.com');
    const upload = await uploadFile(t.url, alice, path.join(FIXTURES_DIR, 'files/contrato.txt'));
    expect(upload.status).toBe(201);
    docId = String(upload.body.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("get: the uploader's tenant reads it; another tenant FORBIDDEN; an unknown id NOT_FOUND; no session UNAUTHORIZED", async () => {
    const { document } = await as(alice).documents.get({ id: docId });
    expect(document).toMatchObject({ id: docId, fileName: 'contrato.txt', consentGiven: true });
    await expect(as(bob).documents.get({ id: docId })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      cause: { code: 'FORBIDDEN' },
    });
    await expect(as(alice).documents.get({ id: crypto.randomUUID() })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(as(null).documents.get({ id: docId })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it("list: only the active tenant's documents", async () => {
    expect((await as(alice).documents.list()).documents.map((d) => d.id)).toEqual([docId]);
    expect((await as(bob).documents.list()).documents).toEqual([]);
  });

  it('list: pages by cursor, searches by q, refuses a malformed cursor or limit', async () => {
    const more: string[] = [];
    for (const f of ['files/diagram.png', 'files/ferris.svg']) {
      const up = await uploadFile(t.url, alice, path.join(FIXTURES_DIR, f));
      more.push(String(up.body.id));
    }
    const all = [more[1], more[0], docId];
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await as(alice).documents.list({ limit: 1, ...(cursor ? { cursor } : {}) });
      expect(page.documents.length).toBeLessThanOrEqual(1);
      seen.push(...page.documents.map((d) => d.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(all);
    const byName = await as(alice).documents.list({ q: 'FERRIS' });
    expect(byName).toEqual({ documents: [expect.objectContaining({ id: more[1] })], nextCursor: null });
    const { document } = await as(alice).documents.get({ id: docId });
    const byHash = await as(alice).documents.list({ q: document.sha256Hash.slice(0, 10).toUpperCase() });
    expect(byHash.documents.map((d) => d.id)).toEqual([docId]);
    const bySerial = await as(alice).documents.list({ q: document.serialNumber.toLowerCase() });
    expect(bySerial.documents.map((d) => d.id)).toEqual([docId]);
    // Bob's cursor names a document he cannot see: an empty page, nothing revealed.
    const aliceCursor = (await as(alice).documents.list({ limit: 1 })).nextCursor as string;
    expect(await as(bob).documents.list({ cursor: aliceCursor })).toEqual({
      documents: [],
      nextCursor: null,
    });
    for (const input of [{ cursor: 'not-a-cursor' }, { cursor: 'ZDE6eA' }, { limit: 101 }, { q: 'ab' }]) {
      await expect(as(alice).documents.list(input)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
  });
});
