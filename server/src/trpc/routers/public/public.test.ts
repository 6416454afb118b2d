import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, sha256sum } from '../../../../../test/harness/fixtures';
import { uploadFile } from '../../../../../test/harness/http';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The public router called without HTTP and without a session (tRPC's server-side caller). */
describe('public router (createCaller)', () => {
  let t: TestService;
  const anyone = () => createCaller(createInnerContext(t.service.deps));

  beforeAll(async () => {
    t = await startTestService('pglite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('verify: an unknown hash is found:false; a notarized file is found with its serial; a malformed hash BAD_REQUEST', async () => {
    expect(await anyone().public.verify({ hash: 'a'.repeat(64) })).toEqual({ found: false });
    const file = path.join(FIXTURES_DIR, 'files/contrato.txt');
    const upload = await uploadFile(t.url, await t.token('alice@example.com'), file);
    expect(upload.status).toBe(201);
    const found = await anyone().public.verify({ hash: await sha256sum(file) });
    expect(found).toMatchObject({ found: true, document: { serialNumber: upload.body.serialNumber } });
    await expect(anyone().public.verify({ hash: 'abc' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('documentBySerial: a malformed serial BAD_REQUEST, an unknown one NOT_FOUND', async () => {
    await expect(anyone().public.documentBySerial({ serial: 'not-a-serial' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(anyone().public.documentBySerial({ serial: 'ZZ-0000000000' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('acervo: without an acervo token UNAUTHORIZED', async () => {
    await expect(anyone().public.acervo({ limit: 10, offset: 0 })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      cause: { code: 'UNAUTHENTICATED' },
    });
  });
});
