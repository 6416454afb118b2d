import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { makeOrg } from '../../../../../test/harness/tenants';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The session router called without HTTP (tRPC's server-side caller over an inner context). */
describe('session router (createCaller)', () => {
  let t: TestService;
  const as = (bearer: string | null) => createCaller(createInnerContext(t.service.deps, { bearer }));

  beforeAll(async () => {
    t = await startTestService('pglite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('me: the personal workspace without an active organization, the organization and role with one', async () => {
    const personal = await as(await t.token('carla@example.com')).session.me();
    expect(personal).toMatchObject({
      email: 'carla@example.com',
      tenantKind: 'personal',
      orgId: null,
      role: 'owner',
    });
    const org = await makeOrg(t, 'Cartório', [
      ['dora@example.com', 'owner'],
      ['carla@example.com', 'editor'],
    ]);
    const inOrg = await as(org.tokens['carla@example.com'] ?? '').session.me();
    expect(inOrg).toEqual({
      userId: personal.userId,
      email: 'carla@example.com',
      tenantId: org.tenantId,
      tenantKind: 'organization',
      orgId: org.id,
      role: 'editor',
    });
  });

  it('me: no session or a token that does not verify is UNAUTHORIZED', async () => {
    await expect(as(null).session.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(as('not.a.jwt').session.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
