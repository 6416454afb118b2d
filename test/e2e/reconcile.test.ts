import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Tenant, TenantMember } from '@notary/server/db/entities';
import type { OperatorCommand } from '@notary/server/domain/operator/commands';
import { runOperatorCommand } from '@notary/server/domain/operator/commands';
import { createHttpApp } from '@notary/server/http/app';
import { simpleParser } from 'mailparser';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { DATABASE_KINDS, type DatabaseKind, startTestService, type TestService } from '../harness/service';

/** The svix signing secret the service is configured with (Clerk shows it as `whsec_<base64>`). */
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const FILE = path.join(FIXTURES_DIR, 'files/contrato.txt');

/** The newest six-digit code mailed to `email` in the development mailbox. */
async function codeFromMailbox(dataDir: string, email: string, after: Set<string>): Promise<string> {
  const dir = path.join(dataDir, 'mail');
  for (let i = 0; i < 100; i++) {
    const files = (await readdir(dir).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.eml') && !after.has(f))
      .sort()
      .reverse();
    for (const f of files) {
      const mail = await simpleParser(await readFile(path.join(dir, f)));
      const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
      const code = /\b(\d{6})\b/.exec(mail.text ?? '')?.[1];
      if (to?.text.includes(email) && code) return code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no code mailed to ${email}`);
}

/** A signed-in client over HTTP, as the desktop app is: session token, then short-lived session JWTs. */
interface Client {
  session: string;
  /** A fresh session JWT for the session's active organization (none: personal workspace). */
  jwt(): Promise<string>;
  /** Selects the active organization (null: personal workspace); answers better-auth's status. */
  setActive(organizationId: string | null): Promise<number>;
}

async function signIn(t: TestService, email: string): Promise<Client> {
  const post = (route: string, body: unknown, session?: string) =>
    fetch(`${t.url}${route}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      body: JSON.stringify(body),
    });
  const seen = new Set(await readdir(path.join(t.dataDir, 'mail')).catch(() => [] as string[]));
  expect((await post('/api/auth/email-otp/send-verification-otp', { email, type: 'sign-in' })).status).toBe(
    200,
  );
  const otp = await codeFromMailbox(t.dataDir, email, seen);
  const res = await post('/api/auth/sign-in/email-otp', { email, otp });
  expect(res.status).toBe(200);
  const session = ((await res.json()) as { token: string }).token;
  return {
    session,
    async jwt() {
      const r = await fetch(`${t.url}/api/auth/token`, { headers: { authorization: `Bearer ${session}` } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { token: string }).token;
    },
    async setActive(organizationId) {
      const r = await post('/api/auth/organization/set-active', { organizationId }, session);
      await r.arrayBuffer();
      return r.status;
    },
  };
}

function claimsOf(jwt: string): { orgId?: string | null; exp: number; iat: number } {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as {
    orgId?: string | null;
    exp: number;
    iat: number;
  };
}

/** Polls `check` until it returns true (the periodic reconcile runs every second here). */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** A running service with the operator commands and the role table at hand. */
interface Harness {
  readonly t: TestService;
  /** Operator commands with the organization directory, as the CLI and the admin socket run them. */
  operator(command: OperatorCommand): Promise<string>;
  /** Creates the user if needed; returns its id. */
  userId(email: string): Promise<string>;
  /** Creates the owner if needed, then the organization (operator `org:create`). */
  createOrg(name: string, owner: string): Promise<{ id: string; slug: string }>;
  /** The service's role table for an organization, `{userId: role}`. */
  tableOf(organizationId: string): Promise<Record<string, string>>;
  /** better-auth's database adapter: changes made through it bypass the service and every event. */
  providerAdapter(): Promise<Awaited<TestService['service']['identity']['auth']['$context']>['adapter']>;
}

/** Starts a service for the enclosing `describe` (stopped after it) and returns helpers bound to it. */
function useService(kind: DatabaseKind, env: Record<string, string>): Harness {
  let service: TestService | undefined;
  beforeAll(async () => {
    service = await startTestService(kind, env);
  });
  afterAll(async () => {
    await service?.close();
  });
  const h: Harness = {
    get t() {
      if (!service) throw new Error('service not started');
      return service;
    },
    operator: (command) =>
      runOperatorCommand(
        {
          em: h.t.service.deps.db.fork(),
          identity: h.t.service.identity.admin,
          directory: h.t.service.deps.directory,
        },
        command,
      ),
    userId: (email) => h.operator({ command: 'user:create', email }),
    async createOrg(name, owner) {
      await h.userId(owner);
      const [id = '', slug = ''] = (await h.operator({ command: 'org:create', name, owner })).split(' ');
      return { id, slug };
    },
    async tableOf(organizationId) {
      const rows = await h.t.service.deps.db
        .fork()
        .find(TenantMember, { tenant: { kind: 'organization', externalId: organizationId } });
      return Object.fromEntries(rows.map((r) => [r.userId, r.role]));
    },
    providerAdapter: async () => (await h.t.service.identity.auth.$context).adapter,
  };
  return h;
}

describe.each(DATABASE_KINDS)('the periodic reconcile (every second) on %s', (kind) => {
  const h = useService(kind, { RECONCILE_INTERVAL_SECONDS: '1' });

  it('a member removed behind the provider API (no event) loses access once the reconcile ran', async () => {
    const { t, operator } = h;
    const org = await h.createOrg('Silent Removals', 'owner@silent.example');
    const member = await h.userId('member@silent.example');
    await operator({ command: 'member:add', org: org.slug, email: 'member@silent.example', role: 'editor' });
    const jwt = await operator({ command: 'token', email: 'member@silent.example', org: org.slug });
    expect((await uploadFile(t.url, jwt, FILE)).status).toBe(201);

    // Removed straight in better-auth's tables: no event reaches the service. The periodic reconcile removes
    // the row, and the token the member holds (valid for minutes more) is refused from then on.
    const adapter = await h.providerAdapter();
    await adapter.delete({
      model: 'member',
      where: [
        { field: 'organizationId', value: org.id },
        { field: 'userId', value: member },
      ],
    });
    await eventually(async () => !(member in (await h.tableOf(org.id))), 'the reconcile to drop the row');
    expect(claimsOf(jwt).exp * 1000).toBeGreaterThan(Date.now());
    expect((await api(t.url, '/api/documents', { token: jwt })).status).toBe(403);
    expect((await uploadFile(t.url, jwt, FILE)).status).toBe(403);
    await expect(
      operator({ command: 'token', email: 'member@silent.example', org: org.slug }),
    ).rejects.toThrow();
    // The organization's documents are untouched.
    const owner = await operator({ command: 'token', email: 'owner@silent.example', org: org.slug });
    const docs = await api<{ documents: unknown[] }>(t.url, '/api/documents', { token: owner });
    expect(docs.body.documents).toHaveLength(1);
  });

  it('a role changed at the provider shows up in the role table after reconcile, and authorization follows it', async () => {
    const { t, operator } = h;
    const org = await h.createOrg('Promotions', 'owner@promotions.example');
    const reader = await h.userId('reader@promotions.example');
    await operator({
      command: 'member:add',
      org: org.slug,
      email: 'reader@promotions.example',
      role: 'reader',
    });
    const jwt = await operator({ command: 'token', email: 'reader@promotions.example', org: org.slug });
    expect((await uploadFile(t.url, jwt, FILE)).status).toBe(403);

    // Promoted straight in better-auth's tables (no event): the reconcile brings the table in step.
    const adapter = await h.providerAdapter();
    await adapter.update({
      model: 'member',
      where: [
        { field: 'organizationId', value: org.id },
        { field: 'userId', value: reader },
      ],
      update: { role: 'editor' },
    });
    await eventually(
      async () => (await h.tableOf(org.id))[reader] === 'editor',
      'the reconcile to update the role',
    );
    // The same token (its role hint still says reader) now uploads: the table decides.
    expect(claimsOf(jwt)).toMatchObject({ orgId: org.id, role: 'reader' });
    expect((await uploadFile(t.url, jwt, FILE)).status).toBe(201);

    // A member added behind the provider API appears too.
    const silent = await h.userId('silent@promotions.example');
    await adapter.create({
      model: 'member',
      data: { organizationId: org.id, userId: silent, role: 'admin', createdAt: new Date() },
    });
    await eventually(
      async () => (await h.tableOf(org.id))[silent] === 'admin',
      'the reconcile to add the member',
    );

    // An organization created at the provider alone (the service has no tenant for it) gets its tenant.
    const founder = await h.userId('founder@promotions.example');
    const created = await t.service.identity.admin.createOrganization({
      name: 'Provider Only',
      ownerUserId: founder,
    });
    await eventually(
      async () => (await h.tableOf(created.id))[founder] === 'owner',
      'the reconcile to add the tenant',
    );
    const tenant = await t.service.deps.db.fork().findOneOrFail(Tenant, { externalId: created.id });
    expect(tenant).toMatchObject({ kind: 'organization', name: 'Provider Only', serialPrefix: 'PROVIDER' });
  });
});

describe.each(DATABASE_KINDS)('memberships, webhook and operator commands on %s', (kind) => {
  // No periodic reconcile here: the webhook's organization exists only in the deliveries, not at the
  // in-process provider, so a reconcile would (rightly) drop its rows.
  const h = useService(kind, { IDENTITY_WEBHOOK_SECRET: WEBHOOK_SECRET, RECONCILE_INTERVAL_SECONDS: '0' });
  // The helpers refer to `h`, never to `this`: they may be used detached.
  const { operator, userId, createOrg, tableOf } = h;
  let t: TestService;
  beforeAll(() => {
    t = h.t;
  });

  it('a member removed through the provider API loses access at once: token refused, no new one', async () => {
    const org = await createOrg('Removals', 'owner@removals.example');
    const m1 = await userId('m1@removals.example');
    await operator({ command: 'member:add', org: org.slug, email: 'm1@removals.example', role: 'editor' });

    // m1 works in the organization through the HTTP session flow.
    const client = await signIn(t, 'm1@removals.example');
    expect(await client.setActive(org.id)).toBe(200);
    const jwt1 = await client.jwt();
    expect(claimsOf(jwt1).orgId).toBe(org.id);
    expect((await uploadFile(t.url, jwt1, FILE)).status).toBe(201);
    expect((await api(t.url, '/api/documents', { token: jwt1 })).status).toBe(200);

    // Removed through the provider's directory (not the service's team routes): the event drops the row, and
    // the still-valid token is refused at once.
    await t.service.deps.directory.removeMember(org.id, m1);
    expect(await tableOf(org.id)).not.toHaveProperty(m1);
    expect(claimsOf(jwt1).exp * 1000).toBeGreaterThan(Date.now());
    expect((await api(t.url, '/api/documents', { token: jwt1 })).status).toBe(403);
    expect((await uploadFile(t.url, jwt1, FILE)).status).toBe(403);
    // No new organization token: the session's next JWT names no organization, re-selecting it is refused,
    // and the operator cannot mint one either.
    const next = await client.jwt();
    expect(claimsOf(next).orgId ?? null).toBeNull();
    const personal = await api<{ documents: unknown[] }>(t.url, '/api/documents', { token: next });
    expect(personal.status).toBe(200);
    expect(personal.body.documents).toEqual([]);
    expect(await client.setActive(org.id)).toBe(403);
    await expect(
      operator({ command: 'token', email: 'm1@removals.example', org: org.slug }),
    ).rejects.toThrow();
  });

  it('another tenant stays invisible across organization switches', async () => {
    const a = await createOrg('Switch A', 'owner-a@switch.example');
    const b = await createOrg('Switch B', 'owner-b@switch.example');
    await userId('both@switch.example');
    await operator({ command: 'member:add', org: a.slug, email: 'both@switch.example', role: 'editor' });
    await operator({ command: 'member:add', org: b.slug, email: 'both@switch.example', role: 'editor' });
    const client = await signIn(t, 'both@switch.example');

    const uploadIn = async (organizationId: string | null) => {
      expect(await client.setActive(organizationId)).toBe(200);
      const jwt = await client.jwt();
      expect(claimsOf(jwt).orgId ?? null).toBe(organizationId);
      const up = await uploadFile(t.url, jwt, FILE);
      expect(up.status).toBe(201);
      return String(up.body.id);
    };
    const docs = { a: await uploadIn(a.id), b: await uploadIn(b.id), personal: await uploadIn(null) };

    // Switch back and forth; every token sees its own tenant's document only.
    for (const [tenant, organizationId] of [
      ['a', a.id],
      ['personal', null],
      ['b', b.id],
      ['a', a.id],
    ] as const) {
      expect(await client.setActive(organizationId)).toBe(200);
      const jwt = await client.jwt();
      const list = await api<{ documents: { id: string }[] }>(t.url, '/api/documents', { token: jwt });
      expect(list.body.documents.map((d) => d.id)).toEqual([docs[tenant]]);
      for (const [other, id] of Object.entries(docs)) {
        const expected = other === tenant ? 200 : 403;
        expect((await api(t.url, `/api/documents/${id}`, { token: jwt })).status).toBe(expected);
        expect((await api(t.url, `/api/documents/${id}/download`, { token: jwt })).status).toBe(expected);
      }
    }
  });

  describe('identity webhook (svix-signed, Clerk payloads)', () => {
    const svix = new Webhook(WEBHOOK_SECRET);
    const clerkOrg = { id: 'org_2clerkWebhookTest', name: 'Clerk Cartório', slug: 'clerk-cartorio' };

    function membership(type: string, userId: string, role: string, publicMetadata: unknown = {}) {
      return {
        object: 'event',
        type,
        timestamp: Date.now(),
        data: {
          object: 'organization_membership',
          id: `orgmem_${userId}`,
          role,
          public_metadata: publicMetadata,
          private_metadata: {},
          organization: { object: 'organization', ...clerkOrg, public_metadata: {} },
          public_user_data: { user_id: userId, identifier: `${userId}@example.com`, first_name: 'X' },
        },
      };
    }

    /** Delivers `body` signed with svix's own helper (or the given headers). */
    async function deliver(
      body: string,
      options: { id?: string; at?: Date; headers?: Record<string, string> } = {},
    ): Promise<{ status: number; body: Record<string, unknown> }> {
      const id = options.id ?? `msg_${randomBytes(8).toString('hex')}`;
      const at = options.at ?? new Date();
      const headers = options.headers ?? {
        'svix-id': id,
        'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
        'svix-signature': svix.sign(id, at, body),
      };
      const res = await fetch(`${t.url}/api/webhooks/identity`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    }

    it('applies verified membership events; organization.deleted keeps the tenant', async () => {
      const created = await deliver(
        JSON.stringify(membership('organizationMembership.created', 'user_a', 'org:admin')),
      );
      expect(created).toEqual({ status: 200, body: { ok: true } });
      expect(await tableOf(clerkOrg.id)).toEqual({ user_a: 'admin' });
      const tenant = await t.service.deps.db.fork().findOneOrFail(Tenant, { externalId: clerkOrg.id });
      expect(tenant).toMatchObject({
        kind: 'organization',
        name: 'Clerk Cartório',
        serialPrefix: 'CLERKCAR',
      });

      // org:member is a reader, unless the membership's public metadata carries the service's role.
      await deliver(JSON.stringify(membership('organizationMembership.created', 'user_b', 'org:member')));
      await deliver(
        JSON.stringify(
          membership('organizationMembership.created', 'user_c', 'org:member', { role: 'editor' }),
        ),
      );
      expect(await tableOf(clerkOrg.id)).toEqual({ user_a: 'admin', user_b: 'reader', user_c: 'editor' });
      await deliver(JSON.stringify(membership('organizationMembership.updated', 'user_a', 'org:member')));
      await deliver(JSON.stringify(membership('organizationMembership.deleted', 'user_b', 'org:member')));
      expect(await tableOf(clerkOrg.id)).toEqual({ user_a: 'reader', user_c: 'editor' });

      // Events that do not concern memberships are acknowledged and ignored.
      const other = await deliver(
        JSON.stringify({ object: 'event', type: 'user.created', data: { id: 'user_z' } }),
      );
      expect(other).toEqual({ status: 200, body: { ok: true, ignored: true } });

      const deleted = await deliver(
        JSON.stringify({
          object: 'event',
          type: 'organization.deleted',
          data: { deleted: true, id: clerkOrg.id, object: 'organization' },
        }),
      );
      expect(deleted.status).toBe(200);
      expect(await tableOf(clerkOrg.id)).toEqual({});
      expect(await t.service.deps.db.fork().count(Tenant, { externalId: clerkOrg.id })).toBe(1);
    });

    it('refuses bad signatures, stale or future timestamps and missing headers (401), and malformed bodies (400)', async () => {
      const body = JSON.stringify(membership('organizationMembership.created', 'user_evil', 'org:admin'));
      const id = 'msg_bad_signature';
      const now = new Date();
      const forged = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(id, now, body);
      const bad = await deliver(body, {
        headers: {
          'svix-id': id,
          'svix-timestamp': String(Math.floor(now.getTime() / 1000)),
          'svix-signature': forged,
        },
      });
      expect(bad.status).toBe(401);
      expect(bad.body.code).toBe('UNAUTHENTICATED');
      // A valid signature over other bytes does not cover these ones.
      const tampered = await deliver(body.replace('org:admin', 'org:owner'), {
        headers: {
          'svix-id': id,
          'svix-timestamp': String(Math.floor(now.getTime() / 1000)),
          'svix-signature': svix.sign(id, now, body),
        },
      });
      expect(tampered.status).toBe(401);
      expect((await deliver(body, { at: new Date(Date.now() - 10 * 60_000) })).status).toBe(401);
      expect((await deliver(body, { at: new Date(Date.now() + 10 * 60_000) })).status).toBe(401);
      expect((await deliver(body, { headers: {} })).status).toBe(401);
      expect(await tableOf(clerkOrg.id)).not.toHaveProperty('user_evil');

      expect((await deliver('not json')).status).toBe(400);
      expect(
        (await deliver(JSON.stringify({ type: 'organizationMembership.created', data: {} }))).status,
      ).toBe(400);
    });

    it('verifies per the documented svix scheme (HMAC-SHA256 of "id.timestamp.body", base64, "v1,")', async () => {
      const body = JSON.stringify(membership('organizationMembership.created', 'user_doc', 'org:admin'));
      const id = 'msg_documented_scheme';
      const timestamp = String(Math.floor(Date.now() / 1000));
      const key = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64');
      const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
      const res = await deliver(body, {
        headers: { 'svix-id': id, 'svix-timestamp': timestamp, 'svix-signature': `v1,bogus v1,${signature}` },
      });
      expect(res.status).toBe(200);
      expect(await tableOf(clerkOrg.id)).toHaveProperty('user_doc', 'admin');
    });

    it('does not apply a delivery twice: a replay or retry of the same svix-id answers 200 duplicate', async () => {
      const first = JSON.stringify(membership('organizationMembership.created', 'user_r', 'org:admin'));
      expect((await deliver(first, { id: 'msg_replay_1' })).body).toEqual({ ok: true });
      const later = JSON.stringify(membership('organizationMembership.updated', 'user_r', 'org:member'));
      expect((await deliver(later, { id: 'msg_replay_2' })).body).toEqual({ ok: true });
      expect(await tableOf(clerkOrg.id)).toHaveProperty('user_r', 'reader');

      // The first delivery again, re-signed with a fresh timestamp as svix retries are: not re-applied (the
      // role would go back to admin), and the same exact request twice neither.
      const replay = await deliver(first, { id: 'msg_replay_1' });
      expect(replay).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      expect(await tableOf(clerkOrg.id)).toHaveProperty('user_r', 'reader');
      const at = new Date();
      const headers = {
        'svix-id': 'msg_replay_3',
        'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
        'svix-signature': svix.sign('msg_replay_3', at, first),
      };
      expect((await deliver(first, { headers })).body).toEqual({ ok: true });
      await deliver(later, { id: 'msg_replay_4' });
      expect((await deliver(first, { headers })).body).toEqual({ ok: true, duplicate: true });
      expect(await tableOf(clerkOrg.id)).toHaveProperty('user_r', 'reader');
    });

    it('a role lowered by the operator CLI or by a webhook delivery cancels the invitations it could no longer give', async () => {
      const org = await createOrg('Convites', 'owner@convites.example');
      const directory = t.service.deps.directory;
      const ids: Record<string, string> = {};
      for (const who of ['ana', 'bia']) {
        const email = `${who}@convites.example`;
        ids[who] = await userId(email);
        await operator({ command: 'member:add', org: org.slug, email, role: 'admin' });
      }
      const owner = await userId('owner@convites.example');
      const invite = (inviterUserId: string, role: 'admin' | 'editor' | 'reader', guest: string) =>
        directory.createInvitation({
          organizationId: org.id,
          email: `${guest}@guests.example`,
          role,
          inviterUserId,
        });
      const statusOf = async (id: string) => (await directory.getInvitation(id))?.status;
      const anaEditor = await invite(ids.ana as string, 'editor', 'g1');
      const biaAdmin = await invite(ids.bia as string, 'admin', 'g2');
      const biaReader = await invite(ids.bia as string, 'reader', 'g3');
      const ownerEditor = await invite(owner, 'editor', 'g4');

      // The operator CLI: ana becomes a reader, who can give nothing.
      await operator({ command: 'member:add', org: org.slug, email: 'ana@convites.example', role: 'reader' });
      expect(await statusOf(anaEditor.id)).toBe('canceled');
      expect(await statusOf(ownerEditor.id)).toBe('pending');

      // The identity webhook: bia becomes an editor at the provider (the delivery names this organization).
      const body = JSON.stringify({
        object: 'event',
        type: 'organizationMembership.updated',
        timestamp: Date.now(),
        data: {
          object: 'organization_membership',
          id: `orgmem_${ids.bia}`,
          role: 'org:member',
          public_metadata: { role: 'editor' },
          private_metadata: {},
          organization: {
            object: 'organization',
            id: org.id,
            name: 'Convites',
            slug: org.slug,
            public_metadata: {},
          },
          public_user_data: { user_id: ids.bia, identifier: 'bia@convites.example', first_name: 'Bia' },
        },
      });
      expect((await deliver(body)).status).toBe(200);
      expect(await tableOf(org.id)).toMatchObject({ [ids.bia as string]: 'editor' });
      expect(await statusOf(biaAdmin.id)).toBe('canceled');
      expect(await statusOf(biaReader.id)).toBe('canceled');
      expect(await statusOf(ownerEditor.id)).toBe('pending');
    });

    it('answers 503 when no secret is configured', async () => {
      const deps = {
        ...t.service.deps,
        config: { ...t.service.deps.config, identityWebhookSecret: undefined },
      };
      const server = http.createServer(createHttpApp(deps, { publicUrl: () => t.url }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const res = await fetch(`http://127.0.0.1:${port}/api/webhooks/identity`, {
          method: 'POST',
          body: '{}',
        });
        expect(res.status).toBe(503);
        expect(((await res.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  // Each CLI call starts Node and tsx (and, on PostgreSQL, its own core): slow on a loaded 2-core machine.
  it('operator CLI: org:list, org:members, org:transfer (through the admin socket on the embedded database)', {
    timeout: 180_000,
  }, async () => {
    const org = await createOrg('Transfer Ltda', 'first@transfer.example');
    await userId('second@transfer.example');
    await userId('outsider@transfer.example');
    await operator({
      command: 'member:add',
      org: org.slug,
      email: 'second@transfer.example',
      role: 'editor',
    });

    const env = {
      ...process.env,
      DATA_DIR: t.dataDir,
      PORT: new URL(t.url).port,
      HOST: '127.0.0.1',
      ...(kind === 'postgresql' ? { DATABASE_URL: t.service.deps.config.databaseUrl ?? '' } : {}),
    };
    const cli = async (args: string[]) =>
      (
        await promisify(execFile)(
          path.resolve('node_modules/.bin/node'),
          ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), ...args],
          { env, cwd: path.resolve('.') },
        )
      ).stdout;

    const list = (await cli(['org:list'])).trim().split('\n');
    expect(list).toContain(`${org.id}\t${org.slug}\tTransfer Ltda\t2`);
    for (const line of list) expect(line.split('\t')).toHaveLength(4);

    expect((await cli(['org:members', '--org', org.slug])).trim()).toBe(
      'first@transfer.example\towner\nsecond@transfer.example\teditor',
    );

    // Refusals (in process: the same runOperatorCommand the CLI and the admin socket run).
    await expect(
      operator({ command: 'org:transfer', org: org.slug, to: 'outsider@transfer.example' }),
    ).rejects.toThrow(/not a member/);
    await expect(
      operator({ command: 'org:transfer', org: org.slug, to: 'nobody@transfer.example' }),
    ).rejects.toThrow(/No user/);
    await expect(operator({ command: 'org:members', org: 'no-such-org' })).rejects.toThrow(/No organization/);
    expect(await h.tableOf(org.id)).toEqual({
      [await userId('first@transfer.example')]: 'owner',
      [await userId('second@transfer.example')]: 'editor',
    });
    expect((await cli(['org:transfer', '--org', org.slug, '--to', 'second@transfer.example'])).trim()).toBe(
      `second@transfer.example is owner of ${org.slug}; now admin: first@transfer.example`,
    );

    // Both the provider and the service's table changed.
    expect((await cli(['org:members', '--org', org.slug])).trim()).toBe(
      'second@transfer.example\towner\nfirst@transfer.example\tadmin',
    );
    const second = await userId('second@transfer.example');
    const first = await userId('first@transfer.example');
    expect(await tableOf(org.id)).toEqual({ [second]: 'owner', [first]: 'admin' });
    const me = await api<{ result: { data: { role: string } } }>(t.url, '/trpc/session.me', {
      token: await operator({ command: 'token', email: 'second@transfer.example', org: org.slug }),
    });
    expect(me.body.result.data.role).toBe('owner');
  });
});
