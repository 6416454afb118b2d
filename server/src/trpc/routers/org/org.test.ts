import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { makeOrg, type TestOrg } from '../../../../../test/harness/tenants';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The org router called without HTTP (tRPC's server-side caller over an inner context). */
describe('org router (createCaller)', () => {
  let t: TestService;
  let org: TestOrg;
  const as = (bearer: string | null) => createCaller(createInnerContext(t.service.deps, { bearer }));

  beforeAll(async () => {
    t = await startTestService('pglite');
    org = await makeOrg(t, 'Perfil', [
      ['owner@perfil.example', 'owner'],
      ['admin@perfil.example', 'admin'],
      ['editor@perfil.example', 'editor'],
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('updateProfile: admin ok, editor FORBIDDEN, personal workspace BAD_REQUEST, nothing to update BAD_REQUEST', async () => {
    const admin = as(org.tokens['admin@perfil.example'] ?? null);
    expect(await admin.org.updateProfile({ name: 'Perfil renomeado' })).toEqual({ ok: true });
    await expect(
      as(org.tokens['editor@perfil.example'] ?? null).org.updateProfile({ name: 'Tomada' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      as(await t.token('solo@example.com')).org.updateProfile({ name: 'Solo' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'No active organization' });
    await expect(admin.org.updateProfile({})).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('serventia: NOT_FOUND before, editor FORBIDDEN, personal BAD_REQUEST, admin declares, members read; shortening CONFLICT', async () => {
    const editor = as(org.tokens['editor@perfil.example'] ?? null);
    const admin = as(org.tokens['admin@perfil.example'] ?? null);
    await expect(editor.org.serventia()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(editor.org.declareServentia({ cns: '123456', retentionYears: 5 })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(
      as(await t.token('solo@example.com')).org.declareServentia({ cns: '123456', retentionYears: 5 }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'No active organization' });
    await expect(admin.org.declareServentia({ cns: '12345', retentionYears: 5 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(await admin.org.declareServentia({ cns: '123456', retentionYears: 5 })).toMatchObject({
      cns: '123456',
      retention: { years: 5 },
    });
    expect(await editor.org.serventia()).toMatchObject({ cns: '123456', retention: { years: 5 } });
    await expect(admin.org.declareServentia({ cns: '123456', retentionYears: 1 })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('deleteRequest: below admin FORBIDDEN, before any mail is considered', async () => {
    await expect(as(org.tokens['editor@perfil.example'] ?? null).org.deleteRequest()).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
