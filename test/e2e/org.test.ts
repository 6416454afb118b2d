import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Document, OrgDeletion, Tenant, TenantMember } from '@notary/server/db/entities';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { request, uploadFile } from '../harness/http';
import { startRadosgw } from '../harness/radosgw';
import { DATABASE_KINDS, startTestService, storedKeys, type TestService } from '../harness/service';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '../harness/smtp';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * The organization routes (spec, Organization: see also docs/team.md, Organization) against the real service: profile
 * validation and roles, the deletion code's rules (wrong, expired, reused, burnt, bound to its requester,
 * rate-limited, 503 without mail), and complete deletions with a provider failure midway, on file storage
 * (PGlite and PostgreSQL) and on a real S3 server (radosgw), with mail through a real SMTP server on loopback.
 */

/** The 6-digit code of a deletion code mail (it stands alone on an indented line of the text part). */
function codeOf(mail: ReceivedMail): string {
  const match = /^\s+(\d{6})\s*$/m.exec(mail.parsed.text ?? '');
  if (!match?.[1]) throw new Error(`no code in mail: ${mail.parsed.text}`);
  return match[1];
}

/** Waits until `to` has received more than `before` mails; returns the newest. */
async function nextMail(sink: SmtpSink, to: string, before: number): Promise<ReceivedMail> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const mails = sink.to(to);
    if (mails.length > before) return mails[mails.length - 1] as ReceivedMail;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no new mail to ${to}`);
}

/** `POST /api/org/delete/request` as `who`, then the code from the mail it triggered. */
async function requestCode(
  t: TestService,
  sink: SmtpSink,
  org: TestOrg,
  who: string,
  body: Record<string, unknown> = {},
): Promise<{ code: string; mail: ReceivedMail }> {
  const before = sink.to(who).length;
  const res = await request(t, 'POST', '/api/org/delete/request', { token: org.tokens[who], body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ ok: true });
  const mail = await nextMail(sink, who, before);
  return { code: codeOf(mail), mail };
}

const confirm = (t: TestService, token: string | undefined, code: string) =>
  request<{ message: string; code: string }>(t, 'POST', '/api/org/delete/confirm', {
    token,
    body: { code },
  });

/** A 6-digit code different from `code`. */
const wrong = (code: string, n = 1): string => String((Number(code) + n) % 1_000_000).padStart(6, '0');

/** Every object key under `prefix` in the service's storage. */
async function keysUnder(t: TestService, prefix: string): Promise<string[]> {
  return (await storedKeys(t)).filter((k) => k.startsWith(prefix));
}

const FILES = ['pdfs/tracemonkey.pdf', 'files/contrato.txt', 'files/evil.svg'].map((f) =>
  path.join(FIXTURES_DIR, f),
);

/**
 * The complete deletion, with the identity provider failing once midway when `failProviderOnce`:
 * an organization with every role and a wallet-style member (placeholder address), documents uploaded by two
 * members, a screenshot object outside the tenant prefix (reachable only through its row) and a stray object
 * under the prefix (reachable only by listing); another organization and a personal workspace that must keep
 * everything.
 */
async function fullDeletion(t: TestService, sink: SmtpSink, failProviderOnce: boolean): Promise<void> {
  const people = {
    owner: freshEmail('owner'),
    admin: freshEmail('admin'),
    editor: freshEmail('editor'),
    reader: freshEmail('reader'),
    wallet: `0x${randomUUID().replace(/-/g, '').slice(0, 32)}abcdef01@siwe.placeholder.invalid`,
  };
  const org = await makeOrg(t, 'Cartório Apagado', [
    [people.owner, 'owner'],
    [people.admin, 'admin'],
    [people.editor, 'editor'],
    [people.reader, 'reader'],
    [people.wallet, 'reader'],
  ]);
  const otherOwner = freshEmail('other');
  const other = await makeOrg(t, 'Cartório Vizinho', [[otherOwner, 'owner']]);
  const personal = await t.token(people.owner);

  const docIds: string[] = [];
  for (const [i, file] of FILES.entries()) {
    const uploader = i === 0 ? people.editor : people.owner;
    const res = await uploadFile(t.url, org.tokens[uploader] as string, file);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    docIds.push(res.body.id as string);
  }
  const storage = t.service.deps.storage;
  const em = t.service.deps.db.fork();
  // A screenshot outside the tenant prefix: only the document row leads to it.
  const screenshotKey = `screenshots/${randomUUID()}.png`;
  await storage.put(screenshotKey, Readable.from([Buffer.from('png bytes')]));
  await em.nativeUpdate(Document, { id: docIds[0] }, { screenshotKey });
  // An object under the prefix that no row names (e.g. left by a crash): only the listing finds it.
  const strayKey = `${org.tenantId}/stray-${randomUUID()}`;
  await storage.put(strayKey, Readable.from([Buffer.from('stray')]));

  const otherDoc = await uploadFile(t.url, other.tokens[otherOwner] as string, FILES[0] as string);
  expect(otherDoc.status).toBe(201);
  const personalDoc = await uploadFile(t.url, personal, FILES[1] as string);
  expect(personalDoc.status).toBe(201);
  const keysBefore = await storedKeys(t);
  expect(keysBefore).toContain(screenshotKey);
  expect((await keysUnder(t, `${org.tenantId}/`)).length).toBe(FILES.length + 1);

  const { code, mail } = await requestCode(t, sink, org, people.admin, { lang: 'en' });
  // Subjects show on locked screens: no organization name there, only in the body.
  expect(mail.parsed.subject).toBe('Code to delete your organization on Notary');
  expect(mail.parsed.text).toMatch(/Cartório Apagado \d+/);
  expect(mail.parsed.subject).not.toContain(code);

  const directory = t.service.deps.directory;
  if (failProviderOnce) {
    vi.spyOn(directory, 'deleteOrganization').mockRejectedValueOnce(new Error('provider down'));
    const failed = await confirm(t, org.tokens[people.admin], code);
    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('BAD_GATEWAY');
    expect(failed.body.message).toMatch(/files are deleted/);
    expect(failed.body.message).toMatch(/confirm again with the same code/);
    // Files and documents are gone already; the organization is still at the provider.
    expect(await keysUnder(t, `${org.tenantId}/`)).toEqual([]);
    expect(await storedKeys(t)).not.toContain(screenshotKey);
    expect(await em.fork().count(Document, { tenant: org.tenantId })).toBe(0);
    expect(await directory.getOrganization(org.id)).not.toBeNull();
    // Past its 10 minutes, the code that started the deletion still finishes it (it is consumed, not pending).
    await em
      .fork()
      .nativeUpdate(OrgDeletion, { tenant: org.tenantId }, { codeExpiresAt: new Date(Date.now() - 1000) });
  }

  const done = await confirm(t, org.tokens[people.admin], code);
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  expect(done.body).toEqual({ ok: true });

  // Storage: nothing of the organization; everything of the others.
  const keysAfter = await storedKeys(t);
  expect(keysAfter.filter((k) => k.startsWith(`${org.tenantId}/`))).toEqual([]);
  expect(keysAfter).not.toContain(screenshotKey);
  expect(keysAfter).not.toContain(strayKey);
  expect(keysAfter.sort()).toEqual(
    keysBefore.filter((k) => !k.startsWith(`${org.tenantId}/`) && k !== screenshotKey).sort(),
  );
  expect(keysAfter.length).toBeGreaterThanOrEqual(2);

  // Database: no document, tenant, role or deletion row of the organization; the others untouched.
  const fresh = em.fork();
  expect(await fresh.count(Document, { tenant: org.tenantId })).toBe(0);
  expect(await fresh.count(Document, { id: { $in: docIds } })).toBe(0);
  expect(await fresh.count(Tenant, { id: org.tenantId })).toBe(0);
  expect(await fresh.count(TenantMember, { tenant: org.tenantId })).toBe(0);
  expect(await fresh.count(OrgDeletion, { tenant: org.tenantId })).toBe(0);
  expect(await fresh.count(Document, { id: otherDoc.body.id as string })).toBe(1);
  expect(await fresh.count(Document, { id: personalDoc.body.id as string })).toBe(1);
  const otherList = await request<{ documents: unknown[] }>(t, 'GET', '/api/documents', {
    token: other.tokens[otherOwner],
  });
  expect(otherList.body.documents).toHaveLength(1);

  // Provider: the organization is gone.
  expect(await directory.getOrganization(org.id)).toBeNull();

  // Every member with a real address got exactly one notice, in the requester's language; never the
  // placeholder address.
  for (const who of [people.owner, people.admin, people.editor, people.reader]) {
    const notices = sink.to(who).filter((m) => m.parsed.subject?.includes('was deleted'));
    expect(notices, who).toHaveLength(1);
    expect(notices[0]?.parsed.subject).toBe('An organization you were a member of was deleted');
    expect(notices[0]?.parsed.text).toMatch(/Cartório Apagado \d+/);
  }
  expect(sink.to(people.wallet)).toEqual([]);

  // The code is spent with the organization: confirming again does not succeed (no such membership now).
  const reused = await confirm(t, org.tokens[people.admin], code);
  expect(reused.status).toBe(403);
  // Old tokens of the organization no longer reach anything.
  const list = await request(t, 'GET', '/api/documents', { token: org.tokens[people.editor] });
  expect(list.status).toBe(403);
}

describe.each(DATABASE_KINDS)('organization routes on %s', (kind) => {
  let t: TestService;
  let sink: SmtpSink;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestService(kind, { SMTP_URL: sink.url });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  it('PATCH /api/org/profile: validation, nothing to update, provider name and description, tenant name', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Cartório Perfil', [[owner, 'owner']]);
    const token = org.tokens[owner];
    const patch = (body: unknown) => request(t, 'PATCH', '/api/org/profile', { token, body });
    const prefixBefore = (await t.service.deps.db.fork().findOneOrFail(Tenant, { id: org.tenantId }))
      .serialPrefix;

    for (const body of [
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(121) },
      { description: 'd'.repeat(501) },
      { name: 42 },
      { description: null },
      {},
      { unknown: 'field' },
    ]) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
    expect((await patch({})).body.message).toMatch(/Nothing to update/);

    expect(await patch({ name: 'n'.repeat(120) })).toEqual({ status: 200, body: { ok: true } });
    expect(await patch({ description: 'd'.repeat(500) })).toEqual({ status: 200, body: { ok: true } });
    expect((await patch({ name: '  Cartório Renomeado  ', description: 'Segundo ofício' })).status).toBe(200);
    const atProvider = await t.service.deps.directory.getOrganization(org.id);
    expect(atProvider).toMatchObject({ name: 'Cartório Renomeado', description: 'Segundo ofício' });
    expect((await patch({ description: '' })).status).toBe(200);
    expect((await t.service.deps.directory.getOrganization(org.id))?.description).toBe('');

    const tenant = await t.service.deps.db.fork().findOneOrFail(Tenant, { id: org.tenantId });
    expect(tenant.name).toBe('Cartório Renomeado');
    // Serial numbers keep naming the tenant that issued them.
    expect(tenant.serialPrefix).toBe(prefixBefore);
  });

  it('PATCH /api/org/profile: admin and owner 200, editor and reader 403, personal workspace 400', async () => {
    const [o, a, e, r] = [
      freshEmail('owner'),
      freshEmail('admin'),
      freshEmail('editor'),
      freshEmail('reader'),
    ];
    const org = await makeOrg(t, 'Cartório Papéis', [
      [o, 'owner'],
      [a, 'admin'],
      [e, 'editor'],
      [r, 'reader'],
    ]);
    const expected: [string, number][] = [
      [o, 200],
      [a, 200],
      [e, 403],
      [r, 403],
    ];
    for (const [who, status] of expected) {
      const res = await request(t, 'PATCH', '/api/org/profile', {
        token: org.tokens[who],
        body: { name: `By ${who}` },
      });
      expect(res.status, who).toBe(status);
      if (status === 403) expect(res.body.code).toBe('FORBIDDEN');
    }
    const personal = await request(t, 'PATCH', '/api/org/profile', {
      token: await t.token(o),
      body: { name: 'Mine' },
    });
    expect(personal).toEqual({
      status: 400,
      body: { message: 'No active organization', code: 'BAD_REQUEST' },
    });
    const anonymous = await request(t, 'PATCH', '/api/org/profile', { body: { name: 'x' } });
    expect(anonymous.status).toBe(401);
  });

  it('PATCH /api/org/profile: a provider error is 502 and leaves the tenant name', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Cartório Falha', [[owner, 'owner']]);
    const before = (await t.service.deps.db.fork().findOneOrFail(Tenant, { id: org.tenantId })).name;
    vi.spyOn(t.service.deps.directory, 'updateOrganization').mockRejectedValueOnce(
      new Error('provider down'),
    );
    const res = await request(t, 'PATCH', '/api/org/profile', {
      token: org.tokens[owner],
      body: { name: 'Nunca' },
    });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('BAD_GATEWAY');
    expect((await t.service.deps.db.fork().findOneOrFail(Tenant, { id: org.tenantId })).name).toBe(before);
  });

  it('deletion routes: editor and reader 403, personal workspace 400, malformed code 400', async () => {
    const [o, e, r] = [freshEmail('owner'), freshEmail('editor'), freshEmail('reader')];
    const org = await makeOrg(t, 'Cartório Acesso', [
      [o, 'owner'],
      [e, 'editor'],
      [r, 'reader'],
    ]);
    for (const who of [e, r]) {
      const req = await request(t, 'POST', '/api/org/delete/request', { token: org.tokens[who] });
      expect(req.status, who).toBe(403);
      const conf = await confirm(t, org.tokens[who], '123456');
      expect(conf.status, who).toBe(403);
    }
    expect(sink.to(e)).toEqual([]);
    const personal = await t.token(o);
    for (const res of [
      await request(t, 'POST', '/api/org/delete/request', { token: personal }),
      await confirm(t, personal, '123456'),
    ]) {
      expect(res).toEqual({ status: 400, body: { message: 'No active organization', code: 'BAD_REQUEST' } });
    }
    for (const code of ['12345', '1234567', 'abcdef', '12 456', '']) {
      expect((await confirm(t, org.tokens[o], code)).status, code).toBe(400);
    }
    expect(
      (await request(t, 'POST', '/api/org/delete/confirm', { token: org.tokens[o], body: {} })).status,
    ).toBe(400);
  });

  it('confirm: none pending, wrong code, expired code, replaced code; mail in Portuguese by default', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Cartório Códigos', [[owner, 'owner']]);
    const token = org.tokens[owner];

    const none = await confirm(t, token, '123456');
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/No deletion code is pending/);

    const first = await requestCode(t, sink, org, owner);
    expect(first.mail.parsed.subject).toBe('Código para excluir sua organização no Notary');
    expect(first.mail.parsed.text).toMatch(/Cartório Códigos \d+/);
    expect(first.mail.parsed.text).toMatch(/10 minutos/);

    const bad = await confirm(t, token, wrong(first.code));
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('Wrong code: 4 attempts left');

    // Expired: the stored expiry moved into the past through the database.
    await t.service.deps.db
      .fork()
      .nativeUpdate(OrgDeletion, { tenant: org.tenantId }, { codeExpiresAt: new Date(Date.now() - 1000) });
    const expired = await confirm(t, token, first.code);
    expect(expired.status).toBe(400);
    expect(expired.body.message).toMatch(/expired/);

    // A new request replaces the pending code: the previous one no longer works, the new one would.
    const second = await requestCode(t, sink, org, owner);
    const third = await requestCode(t, sink, org, owner);
    if (second.code !== third.code) {
      const replaced = await confirm(t, token, second.code);
      expect(replaced.status).toBe(400);
      expect(replaced.body.message).toMatch(/Wrong code/);
    }
    // Only the hash is stored.
    const row = await t.service.deps.db.fork().findOneOrFail(OrgDeletion, { tenant: org.tenantId });
    expect(row.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(third.code);
    expect(row.startedAt).toBeNull();
    // Nothing was deleted by any of this.
    expect(await t.service.deps.directory.getOrganization(org.id)).not.toBeNull();
  });

  it('confirm: 5 wrong attempts burn the code, even for the right code afterwards; a new code works', async () => {
    const [owner, member] = [freshEmail('owner'), freshEmail('member')];
    const org = await makeOrg(t, 'Cartório Tentativas', [
      [owner, 'owner'],
      [member, 'reader'],
    ]);
    const token = org.tokens[owner];
    const { code } = await requestCode(t, sink, org, owner);
    const messages: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const res = await confirm(t, token, wrong(code, i));
      expect(res.status).toBe(400);
      messages.push(res.body.message);
    }
    expect(messages).toEqual([
      'Wrong code: 4 attempts left',
      'Wrong code: 3 attempts left',
      'Wrong code: 2 attempts left',
      'Wrong code: 1 attempt left',
      'Wrong code: no attempts left, this code is burnt; request a new one',
    ]);
    const burnt = await confirm(t, token, code);
    expect(burnt.status).toBe(400);
    expect(burnt.body.message).toMatch(/burnt/);
    expect(await t.service.deps.directory.getOrganization(org.id)).not.toBeNull();

    const fresh = await requestCode(t, sink, org, owner);
    const ok = await confirm(t, token, fresh.code);
    expect(ok).toEqual({ status: 200, body: { ok: true } });
    expect(await t.service.deps.directory.getOrganization(org.id)).toBeNull();
    expect(sink.to(member).filter((m) => m.parsed.subject?.includes('foi excluída'))).toHaveLength(1);
  });

  it('the code is bound to its requester: another admin cannot confirm it, but can request their own', async () => {
    const [owner, admin1, admin2] = [freshEmail('owner'), freshEmail('admin1'), freshEmail('admin2')];
    const org = await makeOrg(t, 'Cartório Vínculo', [
      [owner, 'owner'],
      [admin1, 'admin'],
      [admin2, 'admin'],
    ]);
    const first = await requestCode(t, sink, org, admin1);
    expect(sink.to(admin2)).toEqual([]);
    const foreign = await confirm(t, org.tokens[admin2], first.code);
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toMatch(/requested by another member/);
    // The refusal did not cost the requester an attempt.
    const row = await t.service.deps.db.fork().findOneOrFail(OrgDeletion, { tenant: org.tenantId });
    expect(row.failedAttempts).toBe(0);

    // admin2's own request replaces admin1's code.
    const second = await requestCode(t, sink, org, admin2);
    const stale = await confirm(t, org.tokens[admin1], first.code);
    expect(stale.status).toBe(400);
    expect(stale.body.message).toMatch(/No deletion code is pending for you/);
    const ok = await confirm(t, org.tokens[admin2], second.code);
    expect(ok).toEqual({ status: 200, body: { ok: true } });
    expect(await t.service.deps.directory.getOrganization(org.id)).toBeNull();
  });

  it('requests are limited to 5 per organization per hour (429), per organization', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Cartório Limite', [[owner, 'owner']]);
    let last = '';
    for (let i = 0; i < 5; i++) last = (await requestCode(t, sink, org, owner)).code;
    const before = sink.to(owner).length;
    const limited = await request(t, 'POST', '/api/org/delete/request', { token: org.tokens[owner] });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(limited.body.message).toMatch(/try again in \d+ minutes/);
    expect(sink.to(owner)).toHaveLength(before);
    // Another organization has its own budget.
    const other = freshEmail('other');
    const otherOrg = await makeOrg(t, 'Cartório Livre', [[other, 'owner']]);
    await requestCode(t, sink, otherOrg, other);
    // The limit refuses new codes; it does not burn the pending one.
    expect(await confirm(t, org.tokens[owner], last)).toEqual({ status: 200, body: { ok: true } });
  });

  it('a deletion stopped by a provider failure can be finished by another admin with a new code', async () => {
    const [owner, admin, reader] = [freshEmail('owner'), freshEmail('admin'), freshEmail('reader')];
    const org = await makeOrg(t, 'Cartório Retomado', [
      [owner, 'owner'],
      [admin, 'admin'],
      [reader, 'reader'],
    ]);
    const uploaded = await uploadFile(t.url, org.tokens[owner] as string, FILES[1] as string);
    expect(uploaded.status).toBe(201);
    const first = await requestCode(t, sink, org, admin);
    vi.spyOn(t.service.deps.directory, 'deleteOrganization').mockRejectedValueOnce(
      new Error('provider down'),
    );
    expect((await confirm(t, org.tokens[admin], first.code)).status).toBe(502);
    // Wrong guesses at a consumed code are refused without burning it.
    for (let i = 1; i <= 6; i++) {
      const res = await confirm(t, org.tokens[admin], wrong(first.code, i));
      expect(res).toEqual({ status: 400, body: { message: 'Wrong code', code: 'BAD_REQUEST' } });
    }
    // The owner takes over: their new code replaces the consumed one and resumes the same deletion.
    const second = await requestCode(t, sink, org, owner);
    const stale = await confirm(t, org.tokens[admin], first.code);
    expect(stale.status).toBe(400);
    expect(stale.body.message).toMatch(/No deletion code is pending for you/);
    expect(await confirm(t, org.tokens[owner], second.code)).toEqual({ status: 200, body: { ok: true } });
    expect(await t.service.deps.directory.getOrganization(org.id)).toBeNull();
    expect(await keysUnder(t, `${org.tenantId}/`)).toEqual([]);
    // One notice each: the resumed run did not notify anyone a second time.
    for (const who of [owner, admin, reader]) {
      expect(
        sink.to(who).filter((m) => m.parsed.subject?.includes('foi excluída')),
        who,
      ).toHaveLength(1);
    }
  });

  it('a mail failure midway through the notices is resumed without notifying anyone twice', async () => {
    const [owner, a, b, c] = [freshEmail('owner'), freshEmail('a'), freshEmail('b'), freshEmail('c')];
    const org = await makeOrg(t, 'Cartório Correio', [
      [owner, 'owner'],
      [a, 'reader'],
      [b, 'reader'],
      [c, 'reader'],
    ]);
    const { code } = await requestCode(t, sink, org, owner);
    const mailer = t.service.deps.mailer;
    const send = mailer.send.bind(mailer);
    let notices = 0;
    vi.spyOn(mailer, 'send').mockImplementation(async (message) => {
      if (message.subject.includes('foi excluída')) {
        notices++;
        // The first notice is refused for good (SMTP 550): skipped. The second fails transiently: stop.
        if (notices === 1) throw Object.assign(new Error('550 mailbox unavailable'), { responseCode: 550 });
        if (notices === 2) throw Object.assign(new Error('connection lost'), { code: 'ECONNECTION' });
      }
      return send(message);
    });
    const failed = await confirm(t, org.tokens[owner], code);
    expect(failed.status).toBe(502);
    expect(failed.body.message).toMatch(/e-mailing the members failed/);
    expect(await t.service.deps.directory.getOrganization(org.id)).not.toBeNull();
    expect(await confirm(t, org.tokens[owner], code)).toEqual({ status: 200, body: { ok: true } });
    expect(await t.service.deps.directory.getOrganization(org.id)).toBeNull();
    const received = [owner, a, b, c].map(
      (who) => sink.to(who).filter((m) => m.parsed.subject?.includes('foi excluída')).length,
    );
    // One member refused for good, everyone else exactly once (the retry resumed after the last success).
    expect(received.filter((n) => n === 0)).toHaveLength(1);
    expect(received.filter((n) => n === 1)).toHaveLength(3);
    expect(notices).toBe(5);
  });

  it('two confirmations at once (a double click) delete once and notify each member once', async () => {
    const [owner, reader] = [freshEmail('owner'), freshEmail('reader')];
    const org = await makeOrg(t, 'Cartório Duplo', [
      [owner, 'owner'],
      [reader, 'reader'],
    ]);
    for (const file of FILES)
      expect((await uploadFile(t.url, org.tokens[owner] as string, file)).status).toBe(201);
    const { code } = await requestCode(t, sink, org, owner);
    const replies = await Promise.all([
      confirm(t, org.tokens[owner], code),
      confirm(t, org.tokens[owner], code),
    ]);
    const statuses = replies.map((r) => r.status).sort();
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(replies),
    ).toHaveLength(1);
    // The other one either found the deletion running (409) or already finished (the organization is gone).
    expect([400, 403, 409]).toContain(statuses.find((s) => s !== 200));
    expect(await t.service.deps.directory.getOrganization(org.id)).toBeNull();
    expect(await keysUnder(t, `${org.tenantId}/`)).toEqual([]);
    for (const who of [owner, reader]) {
      expect(
        sink.to(who).filter((m) => m.parsed.subject?.includes('foi excluída')),
        who,
      ).toHaveLength(1);
    }
  });

  it('deletes every document, object and row of the organization, mails the members, survives a provider failure', async () => {
    await fullDeletion(t, sink, true);
  });
});

describe('organization deletion with mail not configured', () => {
  it('answers 503 without SMTP_URL and without MAIL_DEV; the development mailbox counts with MAIL_DEV=1', async () => {
    for (const [env, status] of [
      [{}, 503],
      [{ MAIL_DEV: '1' }, 200],
    ] as const) {
      const t = await startTestService('postgresql', env);
      try {
        const owner = 'owner@example.com';
        const org = await makeOrg(t, 'Cartório Sem Correio', [[owner, 'owner']]);
        const res = await request(t, 'POST', '/api/org/delete/request', { token: org.tokens[owner] });
        expect(res.status, JSON.stringify(env)).toBe(status);
        const mailbox = await readdir(path.join(t.dataDir, 'mail')).catch(() => [] as string[]);
        if (status === 503) {
          expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
          expect(mailbox.filter((f) => f.endsWith('.eml'))).toEqual([]);
        } else {
          expect(mailbox.filter((f) => f.endsWith('.eml'))).toHaveLength(1);
        }
      } finally {
        await t.close();
      }
    }
  });
});

describe('organization deletion on S3 (radosgw)', () => {
  let rgw: Awaited<ReturnType<typeof startRadosgw>>;
  let sink: SmtpSink;
  let t: TestService;

  beforeAll(async () => {
    rgw = await startRadosgw();
    sink = await startSmtpSink();
    t = await startTestService('pglite', {
      S3_ENDPOINT: rgw.endpoint,
      S3_BUCKET: 'notary-org-e2e',
      S3_REGION: rgw.region,
      S3_ACCESS_KEY_ID: rgw.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      SMTP_URL: sink.url,
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
    await rgw?.stop();
  });

  it('leaves no object of the organization in the bucket, none of its documents, and mails every member', async () => {
    expect(t.service.deps.storage.kind).toBe('s3');
    await fullDeletion(t, sink, true);
  });
});
