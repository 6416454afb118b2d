import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../../../../test/harness/fixtures';
import { uploadFile } from '../../../../../test/harness/http';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The access (sharing) router called without HTTP (tRPC's server-side caller over an inner context). */
describe('access router (createCaller)', () => {
  let t: TestService;
  let alice: string;
  let docId: string;
  const as = (bearer: string | null) =>
    createCaller(createInnerContext(t.service.deps, { bearer, ip: '127.0.0.1' }));

  beforeAll(async () => {
    t = await startTestService('pglite');
    alice = await t.token('alice@example.com');
    const upload = await uploadFile(t.url, alice, path.join(FIXTURES_DIR, 'files/contrato.txt'));
    expect(upload.status).toBe(201);
    docId = String(upload.body.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("policies: another tenant may not list or create a document's policies (FORBIDDEN)", async () => {
    const bob = as(await t.token('bob@example.com'));
    await expect(bob.access.listPolicies({ id: docId })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(bob.access.createPolicy({ id: docId, kind: 'public' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });

  it("publicAccess: NOT_FOUND until shared publicly; then a URL, logged with the caller's address; GONE (410) once spent", async () => {
    const anyone = as(null);
    await expect(anyone.access.publicAccess({ documentId: docId })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      cause: { code: 'NOT_FOUND' },
    });
    const created = await as(alice).access.createPolicy({ id: docId, kind: 'public', maxAccesses: 1 });
    expect(created.policy).toMatchObject({ kind: 'public', maxAccesses: 1 });
    const opened = await anyone.access.publicAccess({ documentId: docId });
    expect(opened).toMatchObject({ documentId: docId, fileName: 'contrato.txt' });
    expect(opened.accessUrl).toMatch(/^http/);
    await expect(anyone.access.publicAccess({ documentId: docId })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      cause: { code: 'GONE' },
    });
    // The inner context's address is the one the access log records.
    const { log } = await as(alice).access.accessLog({ documentId: docId });
    expect(log.map((e) => [e.accessorType, e.accessorIdentifier, e.ip])).toContainEqual([
      'anonymous',
      'public',
      '127.0.0.1',
    ]);
  });
});
