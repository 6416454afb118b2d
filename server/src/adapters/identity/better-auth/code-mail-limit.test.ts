import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { silentLog } from '@notary/platform/log';
import { Kysely, PGliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileMailer } from '../../mail/file';
import { createQuotaCounter } from '../../rate-limit/quota';
import { type BetterAuthIdentity, createBetterAuthIdentity } from '.';
import { CLIENT_IP_HEADER } from './auth-limits';
import { PASSWORD_PATHS, passwordPath } from './passwords';

const CODE_MAILS = 3;
const PUBLIC_URL = 'http://notary.test';

/**
 * The code e-mail budget per recipient is spent by the mail hook itself: a route that reaches the hook counts,
 * even one no path rule knows of. Password endpoints are off by configuration, not only in `handler.ts`.
 */
describe('code e-mails per recipient, counted where the mail is sent', () => {
  let db: Kysely<unknown>;
  let mailDir: string;
  let identity: BetterAuthIdentity;
  let ipCounter = 1;
  /** A request as `handler.ts` hands it over: Express's `req.ip` in `CLIENT_IP_HEADER`, a new IP each time. */
  const httpRequest = (route: string) =>
    new Request(`${PUBLIC_URL}/api/auth${route}`, {
      method: 'POST',
      headers: { [CLIENT_IP_HEADER]: `203.0.113.${ipCounter++}`, 'content-type': 'application/json' },
    });
  const mailsTo = async (email: string): Promise<number> => {
    const files = (await readdir(mailDir)).filter((f) => f.endsWith('.eml'));
    const texts = await Promise.all(files.map((f) => readFile(path.join(mailDir, f), 'utf8')));
    return texts.filter((t) => t.includes(`To: ${email}`)).length;
  };

  beforeAll(async () => {
    db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite: new PGlite() }) });
    mailDir = await mkdtemp(path.join(tmpdir(), 'notary-code-mail-'));
    const counter = (windowSeconds: number) =>
      createQuotaCounter({ enabled: true }, undefined, { windowSeconds, prefix: 'test', log: silentLog });
    identity = createBetterAuthIdentity({
      db,
      publicUrl: PUBLIC_URL,
      secret: randomBytes(32).toString('base64url'),
      sessionTtlSeconds: 120,
      allowedOrigins: [],
      mailer: new FileMailer({
        dir: mailDir,
        from: 'Notary <no-reply@notary.test>',
        configured: true,
        log: silentLog,
      }),
      rateLimit: false,
      limits: {
        signIn: { perWindow: 1000, counter: counter(60) },
        signUp: { perWindow: 1000, counter: counter(3600) },
        codeMail: { perWindow: CODE_MAILS, counter: counter(3600) },
      },
      logLevel: 'silent',
    });
    await identity.migrate();
  });

  afterAll(async () => {
    await db?.destroy();
    if (mailDir) await rm(mailDir, { recursive: true, force: true });
  });

  it('a password reset code asked through the server API with a client IP spends the same budget as sign-in codes', async () => {
    const email = `reset.${randomBytes(4).toString('hex')}@example.com`;
    await identity.admin.ensureUser({ email, name: 'Ana' });
    const api = identity.auth.api;
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 3; i++) {
      // This route is not served over HTTP (disabledPaths): called here as an unguarded route that mails.
      const reset = await api.requestPasswordResetEmailOTP({
        body: { email },
        request: httpRequest('/email-otp/request-password-reset'),
        asResponse: true,
      });
      const signIn = await api.sendVerificationOTP({
        body: { email: email.toUpperCase(), type: 'sign-in' },
        request: httpRequest('/email-otp/send-verification-otp'),
        asResponse: true,
      });
      statuses.push(reset.status, signIn.status);
      last = signIn;
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last?.json()).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringMatching(
        /^Too many codes sent to this e-mail address \(3 an hour\): try again in \d+ s$/,
      ),
    });
    expect(await mailsTo(email)).toBe(CODE_MAILS);
    // Codes the service asks for itself (no client IP) are not counted.
    await api.sendVerificationOTP({ body: { email, type: 'sign-in' } });
    expect(await mailsTo(email)).toBe(CODE_MAILS + 1);
  });

  it('better-auth itself does not serve the password endpoints (disabledPaths), even past handler.ts', async () => {
    const email = `direct.${randomBytes(4).toString('hex')}@example.com`;
    await identity.admin.ensureUser({ email, name: 'Ana' });
    for (const route of PASSWORD_PATHS) {
      const request = new Request(`${PUBLIC_URL}/api/auth${route}`, {
        method: 'POST',
        headers: { [CLIENT_IP_HEADER]: '203.0.113.250', 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'correct horse battery staple', otp: '123456' }),
      });
      expect((await identity.auth.handler(request)).status, route).toBe(404);
    }
    expect(await mailsTo(email)).toBe(0);
  });

  it('passwordPath names password endpoints in any spelling, and nothing else', () => {
    expect(passwordPath('/api/auth/email-otp/request-password-reset', '/api/auth')).toBe(
      '/email-otp/request-password-reset',
    );
    expect(passwordPath('/api/auth//Forget-Password/Email-OTP/?x=1', '/api/auth')).toBe(
      '/forget-password/email-otp',
    );
    expect(passwordPath('/api/auth/reset-password/abc%2Fdef?callbackURL=/', '/api/auth')).toBe(
      '/reset-password/abc/def',
    );
    expect(passwordPath('/api/auth/sign-in/email', '/api/auth')).toBe('/sign-in/email');
    for (const other of [
      '/api/auth/sign-in/email-otp',
      '/api/auth/email-otp/send-verification-otp',
      '/api/auth/siwe/verify',
      '/api/documents/reset-password',
    ]) {
      expect(passwordPath(other, '/api/auth'), other).toBeNull();
    }
  });
});
