import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, sha256sum } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';

/** The one-time code of the newest .eml in the development mailbox addressed to `email`. */
async function codeFromMailbox(dataDir: string, email: string): Promise<string> {
  const dir = path.join(dataDir, 'mail');
  for (let i = 0; i < 50; i++) {
    const files = (await readdir(dir).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.eml'))
      .sort()
      .reverse();
    for (const f of files) {
      const mail = await simpleParser(await readFile(path.join(dir, f)));
      const to = Array.isArray(mail.to) ? mail.to[0] : mail.to;
      if (to?.text.includes(email)) {
        const code = /\b(\d{6})\b/.exec(mail.text ?? '')?.[1];
        if (code) return code;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no code mailed to ${email}`);
}

/** Signs in over HTTP exactly as the desktop app does: e-mail code, session token, then a session JWT. */
async function signInByEmail(t: TestService, email: string): Promise<{ session: string; jwt: string }> {
  const post = (route: string, body: unknown, session?: string) =>
    fetch(`${t.url}${route}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      body: JSON.stringify(body),
    });
  expect((await post('/api/auth/email-otp/send-verification-otp', { email, type: 'sign-in' })).status).toBe(
    200,
  );
  const otp = await codeFromMailbox(t.dataDir, email);
  const signIn = await post('/api/auth/sign-in/email-otp', { email, otp });
  expect(signIn.status).toBe(200);
  const session = ((await signIn.json()) as { token: string }).token;
  const jwt = await jwtFor(t, session);
  return { session, jwt };
}

async function jwtFor(t: TestService, session: string): Promise<string> {
  const res = await fetch(`${t.url}/api/auth/token`, { headers: { authorization: `Bearer ${session}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

describe.each(DATABASE_KINDS)('the main job on %s', (kind) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a notary signs in by e-mail code, uploads with consent, and anyone verifies by hash and serial', async () => {
    const { jwt } = await signInByEmail(t, 'notaria@cartorio.example');
    const me = await api<{ result: { data: { tenantKind: string; role: string } } }>(
      t.url,
      '/trpc/session.me',
      {
        token: jwt,
      },
    );
    expect(me.body.result.data).toMatchObject({ tenantKind: 'personal', role: 'owner' });

    const file = path.join(FIXTURES_DIR, 'pdfs/signed_verified.pdf');
    // Asked before the upload, the hash is unknown, an answer the service keeps for a few seconds: the upload
    // must drop it, or the file just notarized would be reported unknown.
    const before = await api(t.url, `/api/public/verify?hash=${await sha256sum(file)}`);
    expect(before.body).toEqual({ found: false });
    expect(before.headers.get('cache-control')).toBe('no-cache');
    const up = await uploadFile(t.url, jwt, file);
    expect(up.status).toBe(201);
    expect(up.body.sha256Hash).toBe(await sha256sum(file));
    const pub = await api<{ found: boolean; document: { serialNumber: string } }>(
      t.url,
      `/api/public/verify?hash=${up.body.sha256Hash}`,
    );
    expect(pub.body).toMatchObject({ found: true, document: { serialNumber: up.body.serialNumber } });
    expect(pub.headers.get('cache-control')).toBe('public, max-age=60');
    const bySerial = await api(t.url, `/api/public/documents/${up.body.serialNumber}`);
    expect(bySerial.status).toBe(200);
  });

  it('organization tenant: the token carries orgId and role; readers cannot upload, editors can; tenants are apart', async () => {
    await t.operator({ command: 'user:create', email: 'owner@org.example' });
    const created = await t.operator({
      command: 'org:create',
      name: 'Cartório Central',
      owner: 'owner@org.example',
    });
    const [orgId, slug] = created.split(' ');
    expect(slug).toBe('cartorio-central');
    for (const [email, role] of [
      ['reader@org.example', 'reader'],
      ['editor@org.example', 'editor'],
    ] as const) {
      await t.operator({ command: 'user:create', email });
      await t.operator({ command: 'member:add', org: slug ?? '', email, role });
    }
    const file = path.join(FIXTURES_DIR, 'files/contrato.txt');

    const reader = await t.token('reader@org.example', slug);
    const claims = JSON.parse(Buffer.from(reader.split('.')[1] ?? '', 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({ orgId, role: 'reader' });
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(300);
    const denied = await uploadFile(t.url, reader, file);
    expect(denied.status).toBe(403);

    const editor = await t.token('editor@org.example', slug);
    const ok = await uploadFile(t.url, editor, file);
    expect(ok.status).toBe(201);
    expect(ok.body.serialNumber).toMatch(/^CARTORIO-[0-9A-HJKMNP-TV-Z]{10}$/);

    // The reader sees the organization's document; the editor's personal workspace does not.
    const orgList = await api<{ documents: { id: string }[] }>(t.url, '/api/documents', { token: reader });
    expect(orgList.body.documents.map((d) => d.id)).toEqual([ok.body.id]);
    const personal = await t.token('editor@org.example');
    expect((await api(t.url, `/api/documents/${ok.body.id}`, { token: personal })).status).toBe(403);

    // Someone outside the organization cannot obtain a token for it.
    await t.operator({ command: 'user:create', email: 'outsider@example.com' });
    await expect(t.token('outsider@example.com', slug)).rejects.toThrow();
  });

  // Each CLI call starts Node and tsx (and on PGlite a cold database): slow on a loaded 2-core machine.
  it('the operator CLI works against the running server and prints only a token', {
    timeout: 180_000,
  }, async () => {
    const env = {
      ...process.env,
      DATA_DIR: t.dataDir,
      PORT: new URL(t.url).port,
      HOST: '127.0.0.1',
      ...(kind === 'postgresql' ? { DATABASE_URL: t.service.deps.config.databaseUrl ?? '' } : {}),
    };
    const cli = (args: string[]) =>
      promisify(execFile)(
        path.resolve('node_modules/.bin/node'),
        ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), ...args],
        { env, cwd: path.resolve('.') },
      );
    const created = await cli(['user:create', '--email', 'cli@example.com']);
    expect(created.stdout.trim()).toMatch(/^\S+$/);
    const { stdout } = await cli(['token', '--email', 'cli@example.com']);
    expect(stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const list = await api(t.url, '/api/documents', { token: stdout.trim() });
    expect(list.status).toBe(200);
    await expect(
      cli(['member:add', '--org', 'nope', '--email', 'cli@example.com', '--role', 'god']),
    ).rejects.toThrow(/Role must be/);
  });
});
