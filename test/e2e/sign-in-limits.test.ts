import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { RATE_LIMITS } from '@notary/shared';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailbox, mailedCode } from '../harness/dev-mailbox';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';
import { type SignInStep, signInWithEthereum } from '../harness/wallet';

/** A client IP of its own per test (the service trusts X-Forwarded-For from loopback, as behind a proxy). */
const randomIp = () => `10.${randomBytes(3).join('.')}`;

const SIGN_INS = 10;
const SIGN_UPS = 3;
const CODE_MAILS = 4;
const ENV = {
  RATE_LIMITS: 'on',
  CODE_MAIL_LIMIT_PER_HOUR: String(CODE_MAILS),
  SIGNIN_LIMIT_PER_MINUTE: String(SIGN_INS),
  SIGNUP_LIMIT_PER_HOUR: String(SIGN_UPS),
};

/** The refusal of a spent sign-in budget, as the service words every 429 (`{message, code, retryAfterSeconds}`). */
function expectSignInRefusal(step: SignInStep | undefined): void {
  expect(step?.status).toBe(429);
  const wait = Number(step?.retryAfter);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(60);
  expect(step?.body).toEqual({
    message: `Too many sign-in attempts from your network address (${SIGN_INS} a minute): try again in ${wait} s`,
    code: 'RATE_LIMITED',
    retryAfterSeconds: wait,
  });
}

/** Past 120 requests a minute from one IP, the global limit answers first (it counts refused steps too). */
function expectGlobalRefusal(step: SignInStep | undefined): void {
  expect(step?.status).toBe(429);
  expect(step?.body).toMatchObject({
    message: expect.stringMatching(/^Too many requests \(global limit\): try again in \d+ s$/),
    code: 'RATE_LIMITED',
  });
}

/** Steps refused by the sign-in budget before the global limit takes over, out of one IP's minute. */
const SIGN_IN_REFUSALS = RATE_LIMITS.global - SIGN_INS;

function expectSignUpRefusal(step: SignInStep | undefined): void {
  expect(step?.status).toBe(429);
  const wait = Number(step?.retryAfter);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(3600);
  expect(step?.body).toEqual({
    message: `Too many new accounts and organizations from your network address (${SIGN_UPS} an hour): try again in ${wait} s`,
    code: 'RATE_LIMITED',
    retryAfterSeconds: wait,
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** POST `body` to `/api/auth<route>` of `on` from `ip` (a fresh client IP unless given). */
async function postAuth(
  on: TestService,
  route: string,
  body: unknown,
  ip = randomIp(),
): Promise<{ route: string; status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${on.url}/api/auth${route}`, {
    method: 'POST',
    headers: { ...JSON_TYPE, 'x-forwarded-for': ip },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { route, status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The refusal of a password endpoint or of a password reset code: the service has no passwords. */
function expectNoPasswords(answer: { route: string; status: number; body: Record<string, unknown> }): void {
  const isType = answer.route === '/email-otp/send-verification-otp';
  expect(answer.status, `${answer.route}: ${JSON.stringify(answer.body)}`).toBe(isType ? 400 : 404);
  expect(answer.body).toMatchObject({
    code: isType ? 'BAD_REQUEST' : 'NOT_FOUND',
    message: expect.stringMatching(
      isType ? /^This service has no passwords/ : /this service has no passwords/,
    ),
  });
}

/**
 * `rounds` times, from a fresh IP per request and cycling over `instances`: every password endpoint and the
 * password reset code (each expected refused), then both codes the service mails (sign-in, e-mail
 * verification) to `email` in alternating case. Returns the refusals and the code answers in order.
 */
async function throughEveryCodeRoute(instances: readonly TestService[], email: string, rounds: number) {
  const password = 'correct horse battery staple';
  const passwordRoutes: Array<[string, unknown]> = [
    ['/email-otp/request-password-reset', { email }],
    ['/forget-password/email-otp', { email }],
    ['/email-otp/send-verification-otp', { email, type: 'forget-password' }],
    ['/email-otp/reset-password', { email, otp: '123456', password }],
    ['/request-password-reset', { email, redirectTo: '/' }],
    ['/reset-password', { token: 'token', newPassword: password }],
    ['/sign-in/email', { email, password }],
    ['/sign-up/email', { email, password, name: 'Ana' }],
    ['/change-password', { currentPassword: password, newPassword: password }],
    ['/verify-password', { password }],
  ];
  const codeRoutes: Array<[string, unknown]> = [
    ['/email-otp/send-verification-otp', { email, type: 'sign-in' }],
    ['/email-otp/send-verification-otp', { email: email.toUpperCase(), type: 'email-verification' }],
  ];
  const passwords: Array<Awaited<ReturnType<typeof postAuth>>> = [];
  const codes: Array<Awaited<ReturnType<typeof postAuth>>> = [];
  let n = 0;
  const on = () => instances[n++ % instances.length] as TestService;
  for (let round = 0; round < rounds; round++) {
    for (const [route, body] of passwordRoutes) passwords.push(await postAuth(on(), route, body));
    for (const [route, body] of codeRoutes) codes.push(await postAuth(on(), route, body));
  }
  return { passwords, codes };
}

/** How many of the `.eml` files in `dataDir`'s mailbox not in `known` are addressed to `email`. */
async function mailsTo(dataDir: string, email: string, known: string[]): Promise<number> {
  const texts = await Promise.all(
    (await mailbox(dataDir))
      .filter((f) => !known.includes(f))
      .map((f) => readFile(path.join(dataDir, 'mail', f), 'utf8')),
  );
  return texts.filter((text) => text.includes(`To: ${email}`)).length;
}

describe('sign-in and sign-up limits per client IP (SIGNIN_LIMIT_PER_MINUTE, SIGNUP_LIMIT_PER_HOUR)', () => {
  let t: TestService;
  const users = async () => (await t.service.identity.auth.$context).adapter.count({ model: 'user' });

  beforeAll(async () => {
    t = await startTestService('pglite', { ...ENV, MAIL_DEV: '1' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('two hundred wallet sign-ins from one address and one IP: 5 of them (10 steps), then 429 for every step; another IP is not affected', async () => {
    const wallet = Wallet.createRandom();
    const headers = { 'x-forwarded-for': randomIp() };
    const before = await users();
    const userIds = new Set<unknown>();
    const refused: SignInStep[] = [];
    for (let i = 0; i < 200; i++) {
      const { nonce, verify } = await signInWithEthereum(t.url, wallet, headers);
      for (const step of [nonce, verify]) {
        if (step?.status === 429) refused.push(step);
        else if (step) expect(step.status, JSON.stringify(step.body)).toBe(200);
      }
      if (verify?.status === 200) userIds.add((verify.body.user as { id: string }).id);
    }
    expect(refused).toHaveLength(200 - SIGN_INS / 2);
    for (const step of refused.slice(0, SIGN_IN_REFUSALS)) expectSignInRefusal(step);
    for (const step of refused.slice(SIGN_IN_REFUSALS)) expectGlobalRefusal(step);
    // One account for the address, however often it signed in.
    expect(userIds.size).toBe(1);
    expect(await users()).toBe(before + 1);
    // Another IP has budgets of its own.
    const other = await signInWithEthereum(t.url, wallet, { 'x-forwarded-for': randomIp() });
    expect(other.verify?.status).toBe(200);
    expect(other.verify?.body.user).toMatchObject({ id: [...userIds][0] });
  });

  it(`two hundred new wallets from one IP: ${SIGN_UPS} accounts, then 429 and no account more; sign-ins are counted apart`, async () => {
    const ip = randomIp();
    const before = await users();
    const outcomes: string[] = [];
    const wallets = Array.from({ length: 200 }, () => Wallet.createRandom());
    for (const wallet of wallets) {
      const { nonce, verify } = await signInWithEthereum(t.url, wallet, { 'x-forwarded-for': ip });
      if (nonce.status === 429) {
        if (outcomes.length < 5 + SIGN_IN_REFUSALS) expectSignInRefusal(nonce);
        else expectGlobalRefusal(nonce);
        outcomes.push('nonce refused');
      } else if (verify?.status === 429) {
        // The sign-in step was within budget; the account was what was refused.
        expectSignUpRefusal(verify);
        outcomes.push('account refused');
      } else {
        expect(verify?.status, JSON.stringify(verify?.body)).toBe(200);
        outcomes.push('signed up');
      }
    }
    // 3 accounts (6 steps), 2 refused accounts (4 steps): the sign-in budget of 10 is spent.
    expect(outcomes.slice(0, 5)).toEqual([
      'signed up',
      'signed up',
      'signed up',
      'account refused',
      'account refused',
    ]);
    expect(new Set(outcomes.slice(5))).toEqual(new Set(['nonce refused']));
    expect(await users()).toBe(before + SIGN_UPS);

    // Another IP: signing in with existing accounts spends sign-ins only, so a new account still fits.
    const other = { 'x-forwarded-for': randomIp() };
    for (const wallet of wallets.slice(0, 3)) {
      expect((await signInWithEthereum(t.url, wallet, other)).verify?.status).toBe(200);
    }
    expect((await signInWithEthereum(t.url, Wallet.createRandom(), other)).verify?.status).toBe(200);
    expect(await users()).toBe(before + SIGN_UPS + 1);
  });

  it('code e-mails: two hundred requests from one IP send 10 codes, then 429 and no mail; a new address past the sign-up budget gets no account', async () => {
    const ip = randomIp();
    const known = await mailbox(t.dataDir);
    const statuses: number[] = [];
    let refusal: SignInStep | undefined;
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${t.url}/api/auth/email-otp/send-verification-otp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ email: freshEmail(`flood${i}`), type: 'sign-in' }),
      });
      statuses.push(res.status);
      const body = (await res.json()) as Record<string, unknown>;
      if (res.status === 429) refusal ??= { status: 429, retryAfter: res.headers.get('retry-after'), body };
    }
    expect(statuses.slice(0, SIGN_INS)).toEqual(Array(SIGN_INS).fill(200));
    expect(new Set(statuses.slice(SIGN_INS))).toEqual(new Set([429]));
    expectSignInRefusal(refusal);
    // The mailer runs once the answer is out: wait for the 10 mails, then no 11th is among them.
    const deadline = Date.now() + 15_000;
    while ((await mailbox(t.dataDir)).length - known.length < SIGN_INS && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await mailbox(t.dataDir)).length - known.length).toBe(SIGN_INS);

    // E-mail accounts count against the same sign-up budget as wallets: 3 from this IP, then refused.
    const other = randomIp();
    const before = await users();
    const signUp = async (email: string): Promise<SignInStep> => {
      const seen = await mailbox(t.dataDir);
      const post = (route: string, body: unknown) =>
        fetch(`${t.url}/api/auth${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': other },
          body: JSON.stringify(body),
        });
      expect((await post('/email-otp/send-verification-otp', { email, type: 'sign-in' })).status).toBe(200);
      const otp = await mailedCode(t.dataDir, email, seen);
      const res = await post('/sign-in/email-otp', { email, otp });
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as Record<string, unknown>,
      };
    };
    for (let i = 0; i < SIGN_UPS; i++) expect((await signUp(freshEmail(`new${i}`))).status).toBe(200);
    expectSignUpRefusal(await signUp(freshEmail('one-too-many')));
    expect(await users()).toBe(before + SIGN_UPS);
  });

  it(`one mailbox from twenty IPs: ${CODE_MAILS} codes, then 429 for that address only, and no mail more`, async () => {
    const victim = freshEmail('victim');
    const before = await mailbox(t.dataDir);
    const send = (email: string) =>
      fetch(`${t.url}/api/auth/email-otp/send-verification-otp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': randomIp() },
        body: JSON.stringify({ email, type: 'sign-in' }),
      });
    const answers: Array<{ status: number; body: Record<string, unknown> }> = [];
    for (let i = 0; i < 20; i++) {
      // The same address in either case: one recipient.
      const res = await send(i % 2 ? victim.toUpperCase() : victim);
      answers.push({ status: res.status, body: (await res.json()) as Record<string, unknown> });
    }
    expect(answers.map((a) => a.status)).toEqual([
      ...Array(CODE_MAILS).fill(200),
      ...Array(20 - CODE_MAILS).fill(429),
    ]);
    expect(answers[CODE_MAILS]?.body).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringMatching(
        new RegExp(
          `^Too many codes sent to this e-mail address \\(${CODE_MAILS} an hour\\): try again in \\d+ s$`,
        ),
      ),
    });
    // Another address is served meanwhile; once its code is there, so are the victim's (sent before it).
    const bystander = freshEmail('bystander');
    expect((await send(bystander)).status).toBe(200);
    await mailedCode(t.dataDir, bystander, before);
    const texts = await Promise.all(
      (await mailbox(t.dataDir))
        .filter((f) => !before.includes(f))
        .map((f) => readFile(path.join(t.dataDir, 'mail', f), 'utf8')),
    );
    expect(texts.filter((text) => text.includes(`To: ${victim}`)).length).toBeLessThanOrEqual(CODE_MAILS);
  });

  it(`one account's mailbox through every route that mails a code, from rotating IPs: ${CODE_MAILS} codes in all; password routes answer 404 and mail nothing`, async () => {
    const victim = freshEmail('every-route');
    // An existing account: better-auth mails reset and verification codes to existing addresses only.
    await t.token(victim);
    const before = await mailbox(t.dataDir);
    const answers = await throughEveryCodeRoute([t], victim, 6);
    for (const refusal of answers.passwords) expectNoPasswords(refusal);
    expect(answers.codes.map((a) => a.status)).toEqual([
      ...Array(CODE_MAILS).fill(200),
      ...Array(answers.codes.length - CODE_MAILS).fill(429),
    ]);
    for (const refused of answers.codes.slice(CODE_MAILS)) {
      expect(refused.body).toMatchObject({
        code: 'RATE_LIMITED',
        message: expect.stringMatching(
          new RegExp(`^Too many codes sent to this e-mail address \\(${CODE_MAILS} an hour\\)`),
        ),
      });
    }
    // Once a later address's code is there, so are the victim's (mailed before it).
    const bystander = freshEmail('bystander');
    expect(
      (await postAuth(t, '/email-otp/send-verification-otp', { email: bystander, type: 'sign-in' })).status,
    ).toBe(200);
    await mailedCode(t.dataDir, bystander, before);
    expect(await mailsTo(t.dataDir, victim, before)).toBe(CODE_MAILS);
  });

  it('password endpoints are not served whatever the spelling of their path, and spend no sign-in budget', async () => {
    const ip = randomIp();
    const variants = [
      '/email-otp/request-password-reset/',
      '//forget-password//email-otp',
      '/Email-OTP/Reset-Password',
      '/reset-password/some-token?callbackURL=/',
      '/forget-password',
    ];
    for (const route of variants) {
      const res = await fetch(`${t.url}/api/auth${route}`, {
        method: route.startsWith('/reset-password/') ? 'GET' : 'POST',
        headers: { 'x-forwarded-for': ip, ...(route.startsWith('/reset-password/') ? {} : JSON_TYPE) },
        ...(route.startsWith('/reset-password/') ? {} : { body: JSON.stringify({ email: freshEmail('x') }) }),
      });
      expectNoPasswords({ route, status: res.status, body: (await res.json()) as Record<string, unknown> });
    }
    // The refusals counted nothing: this IP still has its whole sign-in budget.
    for (let i = 0; i < SIGN_INS; i++) {
      expect((await postAuth(t, '/siwe/nonce', {}, ip)).status).toBe(200);
    }
    expect((await postAuth(t, '/siwe/nonce', {}, ip)).status).toBe(429);
  });

  it('organizations created over HTTP spend the same budget (each is a workspace with its own quota); refused ones spend nothing', async () => {
    const headers = { 'x-forwarded-for': randomIp() };
    const signedUp = await signInWithEthereum(t.url, Wallet.createRandom(), headers);
    expect(signedUp.verify?.status).toBe(200);
    const session = String(signedUp.verify?.body.token);
    const create = async (slug: string): Promise<SignInStep> => {
      const res = await fetch(`${t.url}/api/auth/organization/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session}`, ...headers },
        body: JSON.stringify({ name: `Org ${slug}`, slug }),
      });
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as Record<string, unknown>,
      };
    };
    const suffix = randomBytes(4).toString('hex');
    // Invalid: refused by the organization guard before anything is counted.
    expect((await create(`Not A Slug ${suffix}`)).status).toBe(400);
    // The account took 1 of 3: two organizations fit, the third does not.
    expect((await create(`one-${suffix}`)).status).toBe(200);
    expect((await create(`two-${suffix}`)).status).toBe(200);
    expectSignUpRefusal(await create(`three-${suffix}`));
    const orgs = await (await t.service.identity.auth.$context).adapter.count({
      model: 'organization',
      where: [{ field: 'slug', operator: 'ends_with', value: suffix }],
    });
    expect(orgs).toBe(2);
  });

  it('accounts made by the operator (CLI, no client IP) are not counted', async () => {
    const before = await users();
    for (let i = 0; i < SIGN_UPS + 2; i++) await t.token(freshEmail(`operator${i}`));
    expect(await users()).toBe(before + SIGN_UPS + 2);
  });
});

describe('sign-in budgets shared by two instances on one Redis (REDIS_URL)', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    const env = { ...ENV, MAIL_DEV: '1', REDIS_URL: 'redis://127.0.0.1:6379' };
    [a, b] = await Promise.all([startTestService('pglite', env), startTestService('pglite', env)]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('steps on either instance spend one budget', async () => {
    const headers = { 'x-forwarded-for': randomIp() };
    const steps: number[] = [];
    for (let i = 0; i < SIGN_INS + 2; i++) {
      const on = i % 2 ? b : a;
      const res = await fetch(`${on.url}/api/auth/siwe/nonce`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
      steps.push(res.status);
    }
    expect(steps).toEqual([...Array(SIGN_INS).fill(200), 429, 429]);
  });

  it(`code e-mails to one address through either instance and every route spend one budget: ${CODE_MAILS} in all`, async () => {
    const victim = freshEmail('two-instances');
    // Each instance here has a database of its own: the account exists on both, as on one shared database.
    await a.token(victim);
    await b.token(victim);
    const before = [await mailbox(a.dataDir), await mailbox(b.dataDir)] as const;
    const answers = await throughEveryCodeRoute([a, b], victim, 4);
    for (const refusal of answers.passwords) expectNoPasswords(refusal);
    expect(answers.codes.map((x) => x.status)).toEqual([
      ...Array(CODE_MAILS).fill(200),
      ...Array(answers.codes.length - CODE_MAILS).fill(429),
    ]);
    // Once later addresses' codes are there on both instances, so are the victim's.
    for (const [i, on] of [a, b].entries()) {
      const bystander = freshEmail(`bystander${i}`);
      expect(
        (await postAuth(on, '/email-otp/send-verification-otp', { email: bystander, type: 'sign-in' }))
          .status,
      ).toBe(200);
      await mailedCode(on.dataDir, bystander, before[i] ?? []);
    }
    const mailed =
      (await mailsTo(a.dataDir, victim, before[0])) + (await mailsTo(b.dataDir, victim, before[1]));
    expect(mailed).toBe(CODE_MAILS);
  });
});
