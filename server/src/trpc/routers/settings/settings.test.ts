import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { makeOrg, type TestOrg } from '../../../../../test/harness/tenants';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The settings router called without HTTP (tRPC's server-side caller over an inner context). */
describe('settings router (createCaller)', () => {
  let t: TestService;
  let org: TestOrg;
  const as = (email: string) =>
    createCaller(createInnerContext(t.service.deps, { bearer: org.tokens[email] ?? null }));

  beforeAll(async () => {
    t = await startTestService('pglite');
    org = await makeOrg(t, 'Acervo', [
      ['owner@acervo.example', 'owner'],
      ['admin@acervo.example', 'admin'],
      ['reader@acervo.example', 'reader'],
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('acervo token: below admin FORBIDDEN; an admin creates it, its status says since when, and it opens the feed', async () => {
    await expect(as('reader@acervo.example').settings.acervoTokenStatus()).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(as('reader@acervo.example').settings.createAcervoToken()).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const admin = as('admin@acervo.example');
    expect(await admin.settings.acervoTokenStatus()).toEqual({ enabled: false, createdAt: null });
    const created = await admin.settings.createAcervoToken();
    expect(await admin.settings.acervoTokenStatus()).toEqual({ enabled: true, createdAt: created.createdAt });
    const feed = createCaller(createInnerContext(t.service.deps, { bearer: created.token }));
    expect(await feed.public.acervo({ limit: 10, offset: 0 })).toEqual({ documents: [], total: 0 });
  });
});
