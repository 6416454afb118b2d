import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { makeOrg, type TestOrg } from '../../../../../test/harness/tenants';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The team router called without HTTP (tRPC's server-side caller over an inner context). */
describe('team router (createCaller)', () => {
  let t: TestService;
  let org: TestOrg;
  const as = (bearer: string | null) => createCaller(createInnerContext(t.service.deps, { bearer }));

  beforeAll(async () => {
    t = await startTestService('pglite');
    org = await makeOrg(t, 'Equipe', [
      ['owner@equipe.example', 'owner'],
      ['reader@equipe.example', 'reader'],
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every team procedure answers BAD_REQUEST `No active organization` in a personal workspace', async () => {
    const personal = as(await t.token('solo@example.com'));
    const calls = [
      () => personal.team.listMembers(),
      () => personal.team.listInvitations(),
      () => personal.team.invite({ role: 'reader', email: 'x@example.com' }),
      () => personal.team.updateMember({ userId: 'someone', role: 'reader' }),
      () => personal.team.removeMember({ userId: 'someone' }),
      () => personal.team.cancelInvitation({ invitationId: 'some-invitation' }),
    ];
    for (const call of calls) {
      await expect(call()).rejects.toMatchObject({ code: 'BAD_REQUEST', message: 'No active organization' });
    }
  });

  it("listMembers: the organization's members with the service's roles; a reader may not invite (FORBIDDEN)", async () => {
    const owner = as(org.tokens['owner@equipe.example'] ?? null);
    const list = await owner.team.listMembers();
    expect(list.myRole).toBe('owner');
    expect(list.members.map((m) => [m.email, m.role, m.isOwner]).sort()).toEqual([
      ['owner@equipe.example', 'owner', true],
      ['reader@equipe.example', 'reader', false],
    ]);
    const reader = as(org.tokens['reader@equipe.example'] ?? null);
    await expect(reader.team.invite({ role: 'reader', email: 'new@example.com' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
