import { TenantMember } from '@notary/server/db/entities';
import { INVITATION_MAIL_LIMITS } from '@notary/shared';
import { Wallet } from 'ethers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, request } from '../harness/http';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';
import { type SmtpSink, startSmtpSink } from '../harness/smtp';

/**
 * The team routes (spec, Team: see also docs/team.md, Team) against the real service, on PGlite and on
 * PostgreSQL, with mail
 * through a real SMTP server on loopback: every role on every route (escalations included), the e-mail
 * invitation from mail to membership, the wallet invitation after a real SIWE sign-in, and provider failures.
 */

type Role = 'owner' | 'admin' | 'editor' | 'reader';
const ROLES: Role[] = ['owner', 'admin', 'editor', 'reader'];
const ASSIGNABLE: Role[] = ['admin', 'editor', 'reader'];
/** The spec's hierarchy, written out here independently of `shared/src/roles.ts`. */
const RANK: Record<Role, number> = { owner: 3, admin: 2, editor: 1, reader: 0 };
const MANAGES_TEAM: Record<Role, boolean> = { owner: true, admin: true, editor: false, reader: false };

interface Org {
  id: string;
  slug: string;
  /** user id by e-mail */
  ids: Record<string, string>;
}

/** Creates the users, the organization (first entry is its owner) and the memberships, as an operator. */
async function makeOrg(t: TestService, name: string, members: [string, Role][]): Promise<Org> {
  const ids: Record<string, string> = {};
  for (const [email] of members) ids[email] = await t.operator({ command: 'user:create', email });
  const [owner] = members;
  if (owner?.[1] !== 'owner') throw new Error('the first member must be the owner');
  const [id = '', slug = ''] = (await t.operator({ command: 'org:create', name, owner: owner[0] })).split(
    ' ',
  );
  for (const [email, role] of members.slice(1)) await setRole(t, slug, email, role);
  return { id, slug, ids };
}

/** Adds or updates a membership at the provider and in the role table (operator `member:add`). */
async function setRole(t: TestService, slug: string, email: string, role: Role): Promise<void> {
  await t.operator({ command: 'member:add', org: slug, email, role });
}

/** The role in the service's role table, or null without a row. */
async function tableRole(t: TestService, orgId: string, userId: string): Promise<Role | null> {
  const row = await t.service.deps.db
    .fork()
    .findOne(TenantMember, { userId, tenant: { kind: 'organization', externalId: orgId } });
  return row?.role ?? null;
}

interface MemberBody {
  members: { userId: string; email: string; name: string; imageUrl: string; role: Role; isOwner: boolean }[];
  myRole: Role;
}

/** EIP-4361 message, as `server/src/adapters/identity/better-auth/identity.test.ts` writes it. */
function siweMessage(input: { domain: string; address: string; uri: string; nonce: string }): string {
  return [
    `${input.domain} wants you to sign in with your Ethereum account:`,
    input.address,
    '',
    'Sign in to Notary.',
    '',
    `URI: ${input.uri}`,
    'Version: 1',
    'Chain ID: 1',
    `Nonce: ${input.nonce}`,
    `Issued At: ${new Date().toISOString()}`,
  ].join('\n');
}

/** Exchanges a session token for a session JWT, with `organizationId` made active first when given. */
async function jwtFor(t: TestService, session: string, organizationId?: string): Promise<string> {
  if (organizationId !== undefined) {
    const active = await request(t, 'POST', '/api/auth/organization/set-active', {
      token: session,
      body: { organizationId },
    });
    expect(active.status, JSON.stringify(active.body)).toBe(200);
  }
  const res = await request<{ token: string }>(t, 'GET', '/api/auth/token', { token: session });
  expect(res.status).toBe(200);
  return res.body.token;
}

describe.each(DATABASE_KINDS)('team routes on %s', (kind) => {
  let t: TestService;
  let smtp: SmtpSink;
  /** The matrix organization: an actor per role, and a target per role. */
  let org: Org;
  const actor = (role: Role) => `${role}@matrix.example`;
  const target = (role: Role) => `target-${role}@matrix.example`;
  const tokenOf = (role: Role) => t.token(actor(role), org.slug);

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startTestService(kind, { SMTP_URL: smtp.url });
    org = await makeOrg(t, 'Matrix', [
      [actor('owner'), 'owner'],
      ...ROLES.slice(1).map((r): [string, Role] => [actor(r), r]),
      ...ROLES.map((r): [string, Role] => [target(r), r]),
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.stop();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('every team route answers 400 `No active organization` in a personal workspace', async () => {
    const personal = await t.token(actor('owner'));
    const calls: [string, string, unknown][] = [
      ['GET', '/api/team/members', undefined],
      ['GET', '/api/team/invitations', undefined],
      ['POST', '/api/team/invitations', { role: 'reader', email: 'someone@example.com' }],
      ['POST', '/api/team/invitations', { role: 'reader', wallet: Wallet.createRandom().address }],
      ['PATCH', `/api/team/members/${org.ids[target('reader')]}`, { role: 'editor' }],
      ['DELETE', `/api/team/members/${org.ids[target('reader')]}`, undefined],
      ['DELETE', '/api/team/invitations/whatever', undefined],
    ];
    for (const [method, route, body] of calls) {
      const res = await request(t, method, route, { token: personal, body });
      expect(res.status, `${method} ${route}`).toBe(400);
      expect(res.body).toEqual({ message: 'No active organization', code: 'BAD_REQUEST' });
    }
    // And without a session at all: 401.
    expect((await request(t, 'GET', '/api/team/members')).status).toBe(401);
  });

  it('the OpenAPI document lists every team route with its error statuses', async () => {
    const doc = await request<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>(t, 'GET', '/api/openapi.json');
    const expected: [string, string, string[]][] = [
      ['/api/team/members', 'get', ['400', '502']],
      ['/api/team/invitations', 'get', ['400', '403']],
      ['/api/team/invitations', 'post', ['201', '400', '403', '404', '502']],
      ['/api/team/invitations/{invitationId}/accept', 'post', ['403', '404', '410']],
      ['/api/team/members/{userId}', 'patch', ['400', '403', '404', '409', '502']],
      ['/api/team/members/{userId}', 'delete', ['400', '403', '404', '409', '502']],
      ['/api/team/invitations/{invitationId}', 'delete', ['400', '403', '404']],
    ];
    for (const [path, method, statuses] of expected) {
      const operation = doc.body.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      for (const status of statuses)
        expect(operation?.responses[status], `${method} ${path} ${status}`).toBeDefined();
    }
    // The success status the route answers, not trpc-to-openapi's blanket 200.
    expect(doc.body.paths['/api/team/invitations']?.post?.responses['200']).toBeUndefined();
  });

  it('GET /api/team/members: every role sees every member with the role table roles, and its own role', async () => {
    for (const role of ROLES) {
      const res = await request<MemberBody>(t, 'GET', '/api/team/members', { token: await tokenOf(role) });
      expect(res.status).toBe(200);
      expect(res.body.myRole).toBe(role);
      expect(res.body.members).toHaveLength(8);
      for (const r of ROLES) {
        for (const email of [actor(r), target(r)]) {
          const m = res.body.members.find((x) => x.email === email);
          expect(m).toEqual({
            userId: org.ids[email],
            email,
            name: expect.any(String),
            imageUrl: expect.any(String),
            role: r,
            isOwner: r === 'owner',
          });
        }
      }
      // Owners first.
      expect(res.body.members.map((m) => m.role).slice(0, 2)).toEqual(['owner', 'owner']);
    }
  });

  it('GET /api/team/invitations: admin and owner only', async () => {
    for (const role of ROLES) {
      const res = await request(t, 'GET', '/api/team/invitations', { token: await tokenOf(role) });
      expect(res.status, role).toBe(MANAGES_TEAM[role] ? 200 : 403);
      if (MANAGES_TEAM[role]) expect(Array.isArray(res.body.invitations)).toBe(true);
    }
  });

  it('POST /api/team/invitations by e-mail: every role times every role (editor inviting an admin: 403)', async () => {
    for (const role of ROLES) {
      const token = await tokenOf(role);
      for (const invited of ASSIGNABLE) {
        const email = `invite-${role}-${invited}@guests.example`;
        const res = await request(t, 'POST', '/api/team/invitations', {
          token,
          body: { role: invited, email },
        });
        const allowed = MANAGES_TEAM[role] && RANK[invited] <= RANK[role];
        expect(res.status, `${role} invites ${invited}`).toBe(allowed ? 201 : 403);
        if (allowed) {
          expect(res.body).toEqual({ ok: true });
          const mail = await smtp.waitFor(email);
          expect(mail.parsed.text).toContain('/app/#/join/');
        } else {
          expect(res.body.code).toBe('FORBIDDEN');
        }
      }
      // `owner` is never assignable through the API, whoever asks.
      const owner = await request(t, 'POST', '/api/team/invitations', {
        token,
        body: { role: 'owner', email: `owner-by-${role}@guests.example` },
      });
      expect(owner.status).toBe(400);
    }
    // Only the allowed ones exist, pending, with their role.
    const list = await request<{
      invitations: { id: string; email: string; role: Role; createdAt: string }[];
    }>(t, 'GET', '/api/team/invitations', { token: await tokenOf('admin') });
    const mine = list.body.invitations.filter((i) => i.email.startsWith('invite-'));
    expect(mine.map((i) => `${i.email}:${i.role}`).sort()).toEqual(
      ['owner', 'admin'].flatMap((r) => ASSIGNABLE.map((i) => `invite-${r}-${i}@guests.example:${i}`)).sort(),
    );
    for (const i of mine) expect(Number.isNaN(Date.parse(i.createdAt))).toBe(false);
  });

  it('POST /api/team/invitations validates its body: exactly one of email and wallet, well formed', async () => {
    const token = await tokenOf('owner');
    const wallet = Wallet.createRandom().address;
    for (const body of [
      { role: 'reader' },
      { role: 'reader', email: 'both@example.com', wallet },
      { role: 'reader', email: 'not-an-address' },
      { role: 'reader', wallet: '0x1234' },
      { role: 'reader', wallet: `${wallet}00` },
      { role: 'boss', email: 'x@example.com' },
      { role: 'reader', email: '0xabc@siwe.placeholder.invalid' },
    ]) {
      const res = await request(t, 'POST', '/api/team/invitations', { token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
    // An address that already belongs to a member.
    const member = await request(t, 'POST', '/api/team/invitations', {
      token,
      body: { role: 'reader', email: target('editor') },
    });
    expect(member.status).toBe(409);
  });

  it('PATCH /api/team/members/:userId: every role times every target role times every new role', async () => {
    for (const role of ROLES) {
      const token = await tokenOf(role);
      for (const targetRole of ROLES) {
        for (const newRole of ASSIGNABLE) {
          await setRole(t, org.slug, target(targetRole), targetRole);
          const userId = org.ids[target(targetRole)] ?? '';
          const res = await request(t, 'PATCH', `/api/team/members/${userId}`, {
            token,
            body: { role: newRole },
          });
          // Two owners exist (the owner actor and the owner target): demoting one is not the last owner.
          const allowed = MANAGES_TEAM[role] && RANK[targetRole] <= RANK[role] && RANK[newRole] <= RANK[role];
          const cell = `${role} sets ${targetRole} to ${newRole}`;
          expect(res.status, cell).toBe(allowed ? 200 : 403);
          if (allowed) expect(res.body).toEqual({ ok: true, role: newRole });
          expect(await tableRole(t, org.id, userId), cell).toBe(allowed ? newRole : targetRole);
        }
      }
    }
    await setRole(t, org.slug, target('owner'), 'owner');
    // The listing shows the table's role.
    await setRole(t, org.slug, target('editor'), 'editor');
    const owner = await tokenOf('owner');
    const changed = await request(t, 'PATCH', `/api/team/members/${org.ids[target('editor')]}`, {
      token: owner,
      body: { role: 'reader' },
    });
    expect(changed.status).toBe(200);
    const list = await request<MemberBody>(t, 'GET', '/api/team/members', { token: owner });
    expect(list.body.members.find((m) => m.email === target('editor'))?.role).toBe('reader');
    await setRole(t, org.slug, target('editor'), 'editor');
    // Unknown member, invalid role.
    expect(
      (await request(t, 'PATCH', '/api/team/members/nobody', { token: owner, body: { role: 'reader' } }))
        .status,
    ).toBe(404);
    for (const role of ['owner', 'boss']) {
      const res = await request(t, 'PATCH', `/api/team/members/${org.ids[target('reader')]}`, {
        token: owner,
        body: { role },
      });
      expect(res.status, role).toBe(400);
    }
  });

  it('DELETE /api/team/members/:userId: every role times every target role (admin removing the owner: 403)', async () => {
    for (const role of ROLES) {
      const token = await tokenOf(role);
      for (const targetRole of ROLES) {
        const email = target(targetRole);
        const userId = org.ids[email] ?? '';
        const res = await request(t, 'DELETE', `/api/team/members/${userId}`, { token });
        const allowed = MANAGES_TEAM[role] && RANK[targetRole] <= RANK[role];
        const cell = `${role} removes ${targetRole}`;
        expect(res.status, cell).toBe(allowed ? 200 : 403);
        if (allowed) {
          expect(res.body).toEqual({ ok: true });
          expect(await tableRole(t, org.id, userId), cell).toBeNull();
          const list = await request<MemberBody>(t, 'GET', '/api/team/members', { token });
          expect(list.body.members.some((m) => m.userId === userId)).toBe(false);
          // A second removal: not a member any more.
          expect((await request(t, 'DELETE', `/api/team/members/${userId}`, { token })).status).toBe(404);
          await setRole(t, org.slug, email, targetRole);
        } else {
          expect(await tableRole(t, org.id, userId), cell).toBe(targetRole);
        }
      }
    }
  });

  it('the last owner can be neither demoted nor removed; any other member may leave', async () => {
    const solo = await makeOrg(t, 'Solo', [
      ['solo-owner@solo.example', 'owner'],
      ['solo-admin@solo.example', 'admin'],
      ['solo-editor@solo.example', 'editor'],
      ['solo-reader@solo.example', 'reader'],
    ]);
    const ownerId = solo.ids['solo-owner@solo.example'] ?? '';
    const owner = await t.token('solo-owner@solo.example', solo.slug);
    const admin = await t.token('solo-admin@solo.example', solo.slug);
    // The admin can neither demote nor remove the owner (above their role).
    expect(
      (await request(t, 'PATCH', `/api/team/members/${ownerId}`, { token: admin, body: { role: 'admin' } }))
        .status,
    ).toBe(403);
    expect((await request(t, 'DELETE', `/api/team/members/${ownerId}`, { token: admin })).status).toBe(403);
    // The owner cannot step down or leave while being the only owner.
    const demote = await request(t, 'PATCH', `/api/team/members/${ownerId}`, {
      token: owner,
      body: { role: 'admin' },
    });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe('CONFLICT');
    expect((await request(t, 'DELETE', `/api/team/members/${ownerId}`, { token: owner })).status).toBe(409);
    expect(await tableRole(t, solo.id, ownerId)).toBe('owner');

    // Reader, editor and admin leave by removing themselves; afterwards their tokens no longer work there.
    for (const role of ['reader', 'editor', 'admin'] as const) {
      const email = `solo-${role}@solo.example`;
      const token = await t.token(email, solo.slug);
      const res = await request(t, 'DELETE', `/api/team/members/${solo.ids[email]}`, { token });
      expect(res.status, role).toBe(200);
      expect(await tableRole(t, solo.id, solo.ids[email] ?? '')).toBeNull();
      expect((await request(t, 'GET', '/api/team/members', { token })).status).toBe(403);
    }

    // With a second owner, an owner may step down or leave.
    await t.operator({ command: 'user:create', email: 'solo-owner2@solo.example' });
    await setRole(t, solo.slug, 'solo-owner2@solo.example', 'owner');
    const stepDown = await request(t, 'PATCH', `/api/team/members/${ownerId}`, {
      token: owner,
      body: { role: 'admin' },
    });
    expect(stepDown.status).toBe(200);
    expect(await tableRole(t, solo.id, ownerId)).toBe('admin');
    // Now an admin: the remaining owner is above them.
    const owner2 = await t.operator({ command: 'user:create', email: 'solo-owner2@solo.example' });
    expect((await request(t, 'DELETE', `/api/team/members/${owner2}`, { token: owner })).status).toBe(403);
    const stillOwner = await t.token('solo-owner2@solo.example', solo.slug);
    expect((await request(t, 'DELETE', `/api/team/members/${owner2}`, { token: stillOwner })).status).toBe(
      409,
    );
  });

  it('two owners at once: demoting each other or both leaving, one owner always remains', async () => {
    const duo = await makeOrg(t, 'Duo', [
      ['duo-a@duo.example', 'owner'],
      ['duo-b@duo.example', 'owner'],
    ]);
    const ids = [duo.ids['duo-a@duo.example'] ?? '', duo.ids['duo-b@duo.example'] ?? ''] as const;
    const tokens = [
      await t.token('duo-a@duo.example', duo.slug),
      await t.token('duo-b@duo.example', duo.slug),
    ] as const;
    const roles = async () => (await Promise.all(ids.map((id) => tableRole(t, duo.id, id)))).sort();

    // Each demotes the other: the first wins; the second caller is a reader by then (403).
    const demotions = await Promise.all([
      request(t, 'PATCH', `/api/team/members/${ids[1]}`, { token: tokens[0], body: { role: 'reader' } }),
      request(t, 'PATCH', `/api/team/members/${ids[0]}`, { token: tokens[1], body: { role: 'reader' } }),
    ]);
    expect(demotions.map((r) => r.status).sort()).toEqual([200, 403]);
    expect(await roles()).toEqual(['owner', 'reader']);

    // Both owners again, both leave: the second is the last owner by then (409).
    for (const email of ['duo-a@duo.example', 'duo-b@duo.example'])
      await setRole(t, duo.slug, email, 'owner');
    const leaving = await Promise.all([
      request(t, 'DELETE', `/api/team/members/${ids[0]}`, { token: tokens[0] }),
      request(t, 'DELETE', `/api/team/members/${ids[1]}`, { token: tokens[1] }),
    ]);
    expect(leaving.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await roles()).toEqual([null, 'owner']); // default sort: 'null' < 'owner'
  });

  it('DELETE /api/team/invitations/:invitationId: admin and owner; unknown or foreign invitations are 404', async () => {
    const owner = await tokenOf('owner');
    const pending = async () =>
      (
        await request<{ invitations: { id: string; email: string }[] }>(t, 'GET', '/api/team/invitations', {
          token: owner,
        })
      ).body.invitations;
    for (const role of ROLES) {
      const email = `cancel-by-${role}@guests.example`;
      expect(
        (await request(t, 'POST', '/api/team/invitations', { token: owner, body: { role: 'reader', email } }))
          .status,
      ).toBe(201);
      const id = (await pending()).find((i) => i.email === email)?.id ?? '';
      expect(id).not.toBe('');
      const res = await request(t, 'DELETE', `/api/team/invitations/${id}`, { token: await tokenOf(role) });
      expect(res.status, role).toBe(MANAGES_TEAM[role] ? 200 : 403);
      expect((await pending()).some((i) => i.id === id)).toBe(!MANAGES_TEAM[role]);
      if (MANAGES_TEAM[role]) {
        expect(res.body).toEqual({ ok: true });
        // Canceled: no longer pending, so gone from this route too.
        expect((await request(t, 'DELETE', `/api/team/invitations/${id}`, { token: owner })).status).toBe(
          404,
        );
      }
    }
    expect((await request(t, 'DELETE', '/api/team/invitations/no-such-id', { token: owner })).status).toBe(
      404,
    );

    // Another organization's invitation cannot be canceled from here.
    const other = await makeOrg(t, 'Other', [['other-owner@other.example', 'owner']]);
    const otherOwner = await t.token('other-owner@other.example', other.slug);
    await request(t, 'POST', '/api/team/invitations', {
      token: otherOwner,
      body: { role: 'reader', email: 'foreign@guests.example' },
    });
    const foreign = (
      await request<{ invitations: { id: string; email: string }[] }>(t, 'GET', '/api/team/invitations', {
        token: otherOwner,
      })
    ).body.invitations.find((i) => i.email === 'foreign@guests.example');
    expect(foreign).toBeDefined();
    expect(
      (await request(t, 'DELETE', `/api/team/invitations/${foreign?.id}`, { token: owner })).status,
    ).toBe(404);
  });

  it('e-mail invitation end to end: mail, sign-in by code, accept through the link route once, act as the role', async () => {
    const owner = await tokenOf('owner');
    const email = 'joana@convidada.example';
    const invited = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'editor', email },
      headers: { 'accept-language': 'en-US,en;q=0.9,pt;q=0.5' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ ok: true });
    const mail = await smtp.waitFor(email, (m) => (m.parsed.text ?? '').includes('/join/'));
    // The organization's name is quoted in the body, never in the subject.
    expect(mail.parsed.subject).toBe('Invitation to join an organization on Notary');
    const text = mail.parsed.text ?? '';
    expect(text).toContain('the organization "Matrix" on Notary');
    const link = /(\S+)\/app\/#\/join\/(\S+)/.exec(text);
    expect(link?.[1]).toBe(t.url);
    const invitationId = decodeURIComponent(link?.[2] ?? '');
    expect(text).toContain(`POST ${t.url}/api/team/invitations/${link?.[2]}/accept`);
    expect(text).toContain('as editor');
    const listed = await request<{ invitations: { id: string; email: string; role: string }[] }>(
      t,
      'GET',
      '/api/team/invitations',
      { token: owner },
    );
    expect(listed.body.invitations).toContainEqual(
      expect.objectContaining({ id: invitationId, email, role: 'editor' }),
    );

    // The invitee signs in over HTTP with a code mailed to the same sink.
    const sent = await request(t, 'POST', '/api/auth/email-otp/send-verification-otp', {
      body: { email, type: 'sign-in' },
    });
    expect(sent.status).toBe(200);
    const codeMail = await smtp.waitFor(email, (m) => m.parsed.subject === 'Your Notary sign-in code');
    const otp = /\b(\d{6})\b/.exec(codeMail.parsed.text ?? '')?.[1];
    const signIn = await request<{ token: string; user: { id: string } }>(
      t,
      'POST',
      '/api/auth/sign-in/email-otp',
      { body: { email, otp } },
    );
    expect(signIn.status).toBe(200);
    const session = signIn.body.token;
    const personal = await jwtFor(t, session);

    // Someone else cannot use the link.
    const intruder = await t.token('intruder@elsewhere.example');
    const stolen = await request(t, 'POST', `/api/team/invitations/${invitationId}/accept`, {
      token: intruder,
    });
    expect(stolen.status).toBe(403);

    // Accepted from the personal workspace: once.
    const accepted = await request(t, 'POST', `/api/team/invitations/${invitationId}/accept`, {
      token: personal,
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toEqual({ ok: true, organizationId: org.id, role: 'editor' });
    expect(await tableRole(t, org.id, signIn.body.user.id)).toBe('editor');
    const again = await request(t, 'POST', `/api/team/invitations/${invitationId}/accept`, {
      token: personal,
    });
    expect(again.status).toBe(410);
    expect(again.body.code).toBe('GONE');
    expect(
      (await request(t, 'POST', '/api/team/invitations/no-such-invitation/accept', { token: personal }))
        .status,
    ).toBe(404);

    // A token for the organization, as the client gets it: set-active, then /api/auth/token.
    const inOrg = await jwtFor(t, session, org.id);
    const members = await request<MemberBody>(t, 'GET', '/api/team/members', { token: inOrg });
    expect(members.status).toBe(200);
    expect(members.body.myRole).toBe('editor');
    expect(members.body.members).toContainEqual(
      expect.objectContaining({ userId: signIn.body.user.id, email, role: 'editor', isOwner: false }),
    );
    // The operator's token says the same.
    const viaOperator = await t.token(email, org.slug);
    expect(
      (await request<MemberBody>(t, 'GET', '/api/team/members', { token: viaOperator })).body.myRole,
    ).toBe('editor');
    const after = await request<{ invitations: { id: string }[] }>(t, 'GET', '/api/team/invitations', {
      token: owner,
    });
    expect(after.body.invitations.some((i) => i.id === invitationId)).toBe(false);
    // And an editor may not manage the team.
    expect((await request(t, 'GET', '/api/team/invitations', { token: inOrg })).status).toBe(403);
  });

  it('the invitation mail is Portuguese by default, English on request, and `lang` overrides Accept-Language', async () => {
    const owner = await tokenOf('owner');
    const cases: { email: string; headers: Record<string, string>; lang?: string; subject: string }[] = [
      {
        email: 'pt-default@guests.example',
        headers: {},
        subject: 'Convite para participar de uma organização no Notary',
      },
      {
        email: 'pt-header@guests.example',
        headers: { 'accept-language': 'pt-BR' },
        subject: 'Convite para participar de uma organização no Notary',
      },
      {
        email: 'en-header@guests.example',
        headers: { 'accept-language': 'en' },
        subject: 'Invitation to join an organization on Notary',
      },
      {
        email: 'en-explicit@guests.example',
        headers: { 'accept-language': 'pt-BR' },
        lang: 'en',
        subject: 'Invitation to join an organization on Notary',
      },
    ];
    for (const c of cases) {
      const res = await request(t, 'POST', '/api/team/invitations', {
        token: owner,
        headers: c.headers,
        body: { role: 'reader', email: c.email, ...(c.lang ? { lang: c.lang } : {}) },
      });
      expect(res.status).toBe(201);
      const mail = await smtp.waitFor(c.email);
      expect(mail.parsed.subject, c.email).toBe(c.subject);
      expect(mail.parsed.html || '').toContain('/app/#/join/');
    }
  });

  it('wallet invitation: a SIWE account joins directly; unknown wallet 404; twice 409; editors 403', async () => {
    const wallet = Wallet.createRandom();
    const nonce = await request<{ nonce: string }>(t, 'POST', '/api/auth/siwe/nonce', { body: {} });
    expect(nonce.status).toBe(200);
    const message = siweMessage({
      domain: new URL(t.url).host,
      address: wallet.address,
      uri: t.url,
      nonce: nonce.body.nonce,
    });
    const verified = await request<{ token: string; user: { id: string } }>(
      t,
      'POST',
      '/api/auth/siwe/verify',
      {
        body: {
          message,
          signature: await wallet.signMessage(message),
        },
      },
    );
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    const walletUserId = verified.body.user.id;

    const owner = await tokenOf('owner');
    const editor = await tokenOf('editor');
    const denied = await request(t, 'POST', '/api/team/invitations', {
      token: editor,
      body: { role: 'reader', wallet: wallet.address },
    });
    expect(denied.status).toBe(403);
    // Addresses match whatever their case.
    const res = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'reader', wallet: wallet.address.toLowerCase() },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({ ok: true, joined: true });
    expect(await tableRole(t, org.id, walletUserId)).toBe('reader');
    const twice = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'admin', wallet: wallet.address },
    });
    expect(twice.status).toBe(409);
    expect(await tableRole(t, org.id, walletUserId)).toBe('reader');

    // The wallet user acts in the organization as reader.
    const inOrg = await jwtFor(t, verified.body.token, org.id);
    const members = await request<MemberBody>(t, 'GET', '/api/team/members', { token: inOrg });
    expect(members.status).toBe(200);
    expect(members.body.myRole).toBe('reader');
    expect(members.body.members.some((m) => m.userId === walletUserId && m.role === 'reader')).toBe(true);

    const unknown = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'reader', wallet: Wallet.createRandom().address },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    // No mail ever went to the wallet account.
    expect(smtp.messages.some((m) => m.to.some((a) => a.endsWith('.invalid')))).toBe(false);
    // Clean up: the matrix tests count members.
    expect((await request(t, 'DELETE', `/api/team/members/${walletUserId}`, { token: owner })).status).toBe(
      200,
    );
  });

  it('a removed or demoted inviter: their invitations are canceled or refused at acceptance (403, then 410)', async () => {
    const who = (name: string) => `${name}@inviters.example`;
    const inviters = await makeOrg(t, 'Inviters', [
      [who('owner'), 'owner'],
      [who('owner2'), 'owner'],
      [who('admin1'), 'admin'],
      [who('admin2'), 'admin'],
      [who('admin3'), 'admin'],
      [who('admin4'), 'admin'],
      [who('admin5'), 'admin'],
    ]);
    const token = (name: string) => t.token(who(name), inviters.slug);
    const owner = await token('owner');
    type Listed = { invitations: { id: string; email: string; role: string }[] };
    const pending = async () =>
      (await request<Listed>(t, 'GET', '/api/team/invitations', { token: owner })).body.invitations;
    const invite = async (inviter: string, email: string, role: Role) => {
      const res = await request(t, 'POST', '/api/team/invitations', {
        token: await token(inviter),
        body: { role, email },
      });
      expect(res.status, `${inviter} invites ${email}`).toBe(201);
      const id = (await pending()).find((i) => i.email === email)?.id;
      expect(id, email).toBeDefined();
      return id as string;
    };
    const accept = async (email: string, id: string) =>
      request(t, 'POST', `/api/team/invitations/${id}/accept`, { token: await t.token(email) });
    const member = (name: string) => inviters.ids[who(name)] ?? '';

    // Demoted through the API, admin -> editor: an editor gives no role, so the invitation is canceled.
    const toEditor = await invite('admin1', 'by-admin1@guests.example', 'editor');
    const demote = await request(t, 'PATCH', `/api/team/members/${member('admin1')}`, {
      token: owner,
      body: { role: 'editor' },
    });
    expect(demote.status).toBe(200);
    expect((await pending()).some((i) => i.id === toEditor)).toBe(false);
    const late = await accept('by-admin1@guests.example', toEditor);
    expect(late.status).toBe(410);
    expect(late.body.message).toMatch(/canceled/);

    // Owner -> admin keeps what an admin may still give; -> reader then cancels the rest.
    const adminInvite = await invite('owner2', 'admin-by-owner2@guests.example', 'admin');
    const readerInvite = await invite('owner2', 'reader-by-owner2@guests.example', 'reader');
    const stepDown = async (role: Role) =>
      request(t, 'PATCH', `/api/team/members/${member('owner2')}`, { token: owner, body: { role } });
    expect((await stepDown('admin')).status).toBe(200);
    expect((await pending()).map((i) => i.id)).toEqual(expect.arrayContaining([adminInvite, readerInvite]));
    expect((await stepDown('reader')).status).toBe(200);
    const left = (await pending()).map((i) => i.id);
    expect(left).not.toContain(adminInvite);
    expect(left).not.toContain(readerInvite);
    expect((await accept('reader-by-owner2@guests.example', readerInvite)).status).toBe(410);

    // Removed, or leaving: every invitation they sent is canceled.
    const byRemoved = await invite('admin2', 'by-admin2@guests.example', 'reader');
    expect(
      (await request(t, 'DELETE', `/api/team/members/${member('admin2')}`, { token: owner })).status,
    ).toBe(200);
    expect((await pending()).some((i) => i.id === byRemoved)).toBe(false);
    expect((await accept('by-admin2@guests.example', byRemoved)).status).toBe(410);
    const byLeaver = await invite('admin3', 'by-admin3@guests.example', 'reader');
    const admin3 = await token('admin3');
    expect(
      (await request(t, 'DELETE', `/api/team/members/${member('admin3')}`, { token: admin3 })).status,
    ).toBe(200);
    expect((await accept('by-admin3@guests.example', byLeaver)).status).toBe(410);

    // Demoted by the operator CLI: its invitations the new role could not give are canceled, as above.
    const byOperator = await invite('admin5', 'by-admin5@guests.example', 'editor');
    await setRole(t, inviters.slug, who('admin5'), 'reader');
    expect((await t.service.deps.directory.getInvitation(byOperator))?.status).toBe('canceled');

    // Demoted behind the service (straight in the provider's tables, no event): the invitation is still
    // pending at the provider, but it is not listed, and acceptance re-checks the inviter: 403, and it is
    // canceled (410 afterwards).
    const behind = await invite('admin4', 'by-admin4@guests.example', 'editor');
    const adapter = (await t.service.identity.auth.$context).adapter;
    await adapter.update({
      model: 'member',
      where: [
        { field: 'organizationId', value: inviters.id },
        { field: 'userId', value: member('admin4') },
      ],
      update: { role: 'reader' },
    });
    await t.service.deps.db
      .fork()
      .nativeUpdate(
        TenantMember,
        { userId: member('admin4'), tenant: { kind: 'organization', externalId: inviters.id } },
        { role: 'reader' },
      );
    expect((await t.service.deps.directory.getInvitation(behind))?.status).toBe('pending');
    expect((await pending()).some((i) => i.id === behind)).toBe(false);
    // Someone else holding the link cannot cancel it: the e-mail check comes first.
    expect((await accept('intruder@elsewhere.example', behind)).status).toBe(403);
    expect((await t.service.deps.directory.getInvitation(behind))?.status).toBe('pending');
    const refused = await accept('by-admin4@guests.example', behind);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    expect(refused.body.message).toMatch(/can no longer give the role editor/);
    expect((await t.service.deps.directory.getInvitation(behind))?.status).toBe('canceled');
    expect((await accept('by-admin4@guests.example', behind)).status).toBe(410);
    const invitee = await t.operator({ command: 'user:create', email: 'by-admin4@guests.example' });
    expect(await tableRole(t, inviters.id, invitee)).toBeNull();

    // An inviter who still may give the role: accepted.
    const fine = await invite('owner', 'by-owner@guests.example', 'editor');
    const ok = await accept('by-owner@guests.example', fine);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toEqual({ ok: true, organizationId: inviters.id, role: 'editor' });
  });

  it('provider failures answer 502 and leave the role table unchanged', async () => {
    const directory = t.service.deps.directory;
    const owner = await tokenOf('owner');
    const userId = org.ids[target('reader')] ?? '';
    await setRole(t, org.slug, target('reader'), 'reader');

    vi.spyOn(directory, 'setMemberRole').mockRejectedValueOnce(new Error('provider down'));
    const patch = await request(t, 'PATCH', `/api/team/members/${userId}`, {
      token: owner,
      body: { role: 'admin' },
    });
    expect(patch.status).toBe(502);
    expect(patch.body.code).toBe('BAD_GATEWAY');
    expect(await tableRole(t, org.id, userId)).toBe('reader');

    vi.spyOn(directory, 'removeMember').mockRejectedValueOnce(new Error('provider down'));
    expect((await request(t, 'DELETE', `/api/team/members/${userId}`, { token: owner })).status).toBe(502);
    expect(await tableRole(t, org.id, userId)).toBe('reader');

    vi.spyOn(directory, 'listMembers').mockRejectedValueOnce(new Error('provider down'));
    expect((await request(t, 'GET', '/api/team/members', { token: owner })).status).toBe(502);

    vi.spyOn(directory, 'findUserByWallet').mockRejectedValueOnce(new Error('provider down'));
    const wallet = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'reader', wallet: Wallet.createRandom().address },
    });
    expect(wallet.status).toBe(502);

    vi.spyOn(directory, 'createInvitation').mockRejectedValueOnce(new Error('provider down'));
    const byMail = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'reader', email: 'never-invited@guests.example' },
    });
    expect(byMail.status).toBe(502);

    // A mail that cannot be sent: 502, and the invitation does not linger.
    vi.spyOn(t.service.deps.mailer, 'send').mockRejectedValueOnce(new Error('smtp down'));
    const unsent = await request(t, 'POST', '/api/team/invitations', {
      token: owner,
      body: { role: 'reader', email: 'unsent@guests.example' },
    });
    expect(unsent.status).toBe(502);
    const list = await request<{ invitations: { email: string }[] }>(t, 'GET', '/api/team/invitations', {
      token: owner,
    });
    expect(list.body.invitations.some((i) => i.email === 'unsent@guests.example')).toBe(false);
  });
});

describe('invitation mails are rate limited (RATE_LIMITS=on)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService('pglite', { RATE_LIMITS: 'on' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it(`${INVITATION_MAIL_LIMITS.perInviter} an hour per inviter, ${INVITATION_MAIL_LIMITS.perOrganization} per organization: then 429 with Retry-After`, async () => {
    const { perInviter, perOrganization, windowSeconds } = INVITATION_MAIL_LIMITS;
    expect([perInviter, perOrganization, windowSeconds]).toEqual([20, 50, 3600]);
    const who = (name: string) => `${name}@limits.example`;
    const org = await makeOrg(t, 'Limited', [
      [who('owner'), 'owner'],
      [who('a'), 'admin'],
      [who('b'), 'admin'],
      [who('c'), 'admin'],
    ]);
    let n = 0;
    const invite = async (inviter: string) =>
      api<{ code?: string; message?: string; retryAfterSeconds?: number }>(t.url, '/api/team/invitations', {
        method: 'POST',
        token: await t.token(who(inviter), org.slug),
        body: { role: 'reader', email: `guest-${++n}@limits.example` },
      });
    const expectLimited = (res: Awaited<ReturnType<typeof invite>>, what: RegExp): void => {
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('RATE_LIMITED');
      expect(res.body.message).toMatch(what);
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBe(res.body.retryAfterSeconds);
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(windowSeconds);
    };

    // One member: exactly 20, then 429 (and the refused one uses up nothing).
    for (let i = 0; i < perInviter; i++) expect((await invite('a')).status, `a #${i + 1}`).toBe(201);
    expectLimited(await invite('a'), /20 an hour per member/);
    expectLimited(await invite('a'), /20 an hour per member/);
    // The organization: 50 in all (20 + 20 + 10), then 429 for anyone in it.
    for (let i = 0; i < perInviter; i++) expect((await invite('b')).status, `b #${i + 1}`).toBe(201);
    for (let i = 0; i < perOrganization - 2 * perInviter; i++) {
      expect((await invite('c')).status, `c #${i + 1}`).toBe(201);
    }
    expectLimited(await invite('c'), /50 an hour per organization/);
    expectLimited(await invite('owner'), /50 an hour per organization/);
    // Exactly 50 invitations exist.
    expect(
      (await directoryInvitations(t, org.id)).filter((i) => i.email.endsWith('@limits.example')),
    ).toHaveLength(perOrganization);

    // Another organization has its own budget.
    const other = await makeOrg(t, 'Unlimited', [[who('other-owner'), 'owner']]);
    const res = await request(t, 'POST', '/api/team/invitations', {
      token: await t.token(who('other-owner'), other.slug),
      body: { role: 'reader', email: 'guest-other@limits.example' },
    });
    expect(res.status).toBe(201);
  });
});

/** Pending invitations of an organization as the identity provider has them. */
async function directoryInvitations(t: TestService, organizationId: string) {
  return t.service.deps.directory.listInvitations(organizationId);
}
