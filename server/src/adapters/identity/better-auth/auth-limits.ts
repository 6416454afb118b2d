/**
 * Sign-in and sign-up budgets per client IP, counted in the service's own rate limit store (`QuotaCounter`: in
 * process, or Redis shared by every instance) instead of better-auth's limiter. A new account is what costs
 * (its own workspace, storage quota and per-user budgets), so accounts and organizations created are counted
 * apart from sign-ins, in a longer window:
 * - sign-in steps (`SIGNIN_LIMIT_PER_MINUTE`): every HTTP request to an endpoint that starts or finishes a
 *   sign-in: `POST /siwe/nonce`, `POST /siwe/verify`, `POST /email-otp/send-verification-otp` (a code e-mail),
 *   `POST /sign-in/email-otp`, the other code endpoints (`/email-otp/*`, `/forget-password/*`) and any other
 *   `/sign-in/*` or `/sign-up/*` better-auth would serve;
 * - code e-mails per recipient (`CODE_MAIL_LIMIT_PER_HOUR`, any client IP): counted by the mail hook itself
 *   (`admitCodeMail`), so whichever route mails a code spends the address's one budget;
 * - accounts and organizations created (`SIGNUP_LIMIT_PER_HOUR`): counted when better-auth is about to create
 *   the user (whichever endpoint does it: a new wallet's SIWE verify, a new address's code sign-in), and on
 *   `POST /organization/create`.
 * Over either: 429 `{"message","code":"RATE_LIMITED","retryAfterSeconds"}` with `Retry-After` (the service's
 * error body), and nothing is created. Requests that did not come over HTTP (`auth.api.*` from the operator
 * CLI, the team routes) are not counted. The client IP is Express's `req.ip` (`TRUST_PROXY` decides whether
 * `X-Forwarded-For` counts), handed over by `handler.ts` in `CLIENT_IP_HEADER`; IPv6 addresses count by /56.
 */
import { createHash } from 'node:crypto';
import { APIError, type BetterAuthPlugin } from 'better-auth';
import { createAuthMiddleware } from 'better-auth/api';
import type { QuotaCounter } from '../../../ports/rate-limit';
import { rateLimitSubject } from '../../rate-limit/limiter';

/** Request header carrying Express's `req.ip` to better-auth (set by `handler`, never trusted from outside). */
export const CLIENT_IP_HEADER = 'x-notary-client-ip';

/** One budget: `perWindow` events per client IP in the counter's window. */
export interface AuthBudget {
  perWindow: number;
  /** Counts in a fixed window (60 s for sign-ins, 3600 s for sign-ups); disabled with `RATE_LIMITS=off`. */
  counter: QuotaCounter;
}

/** The service's budgets for `/api/auth/*`. */
export interface AuthLimits {
  /** Sign-in steps per client IP (`SIGNIN_LIMIT_PER_MINUTE` in a 60 s window). */
  signIn: AuthBudget;
  /** Accounts and organizations created per client IP (`SIGNUP_LIMIT_PER_HOUR` in a 3600 s window). */
  signUp: AuthBudget;
  /**
   * Code e-mails per recipient address, whatever the client IP (`CODE_MAIL_LIMIT_PER_HOUR` in a 3600 s
   * window): the per-IP budget alone lets many addresses flood one mailbox.
   */
  codeMail?: AuthBudget;
}

const SIGN_IN_PREFIXES = [
  '/siwe/',
  '/sign-in/',
  '/sign-up/',
  '/email-otp/',
  '/forget-password/',
  '/callback/',
];
const SIGN_IN_PATHS: ReadonlySet<string> = new Set([
  '/send-verification-email',
  '/verify-email',
  '/request-password-reset',
  '/reset-password',
]);

/** Whether better-auth's routed endpoint `path` (e.g. `/siwe/verify`) starts or finishes a sign-in. */
export function isSignInStep(path: string): boolean {
  return SIGN_IN_PATHS.has(path) || SIGN_IN_PREFIXES.some((p) => path.startsWith(p));
}

/** The client IP `handler` put on an HTTP request; null for `auth.api.*` calls made by the service. */
function clientIp(headers: Headers | undefined): string | null {
  return headers?.get(CLIENT_IP_HEADER) || null;
}

/**
 * Counts one event of `key` (a client IP's `rateLimitSubject`, a recipient's `recipientKey`) against `budget`.
 * @throws APIError 429 with the service's error body and `Retry-After` when the budget is spent.
 */
async function spend(budget: AuthBudget, key: string, what: (limit: number) => string): Promise<void> {
  const refusal = await consume(budget, key, what);
  if (refusal) throw refusal;
}

/** Counts one event of `key` against `budget`: null when it fits, else the 429 to answer (nothing thrown). */
async function consume(
  budget: AuthBudget,
  key: string,
  what: (limit: number) => string,
): Promise<APIError | null> {
  if (!budget.counter.enabled) return null;
  const decision = await budget.counter.consume([{ key, limit: budget.perWindow }]);
  if (decision.allowed) return null;
  const wait = decision.retryAfterSeconds;
  return new APIError(
    'TOO_MANY_REQUESTS',
    {
      message: `${what(budget.perWindow)}: try again in ${wait} s`,
      code: 'RATE_LIMITED',
      retryAfterSeconds: wait,
    },
    { 'Retry-After': String(wait) },
  );
}

const signInRefusal = (limit: number) =>
  `Too many sign-in attempts from your network address (${limit} a minute)`;
const codeMailRefusal = (limit: number) => `Too many codes sent to this e-mail address (${limit} an hour)`;
const signUpRefusal = (limit: number) =>
  `Too many new accounts and organizations from your network address (${limit} an hour)`;

/**
 * The plugin counting sign-in steps and organizations created (runs after the organization guard's checks, so
 * a refused creation spends nothing); pair it with `signUpDatabaseHooks` for accounts.
 */
export function authLimitsPlugin(limits: AuthLimits) {
  return {
    id: 'notary-auth-limits',
    hooks: {
      before: [
        {
          matcher: (ctx) => isSignInStep(ctx.path ?? '') || ctx.path === '/organization/create',
          handler: createAuthMiddleware(async (ctx) => {
            const ip = clientIp(ctx.request?.headers);
            if (!ctx.request || ip === null) return;
            const subject = rateLimitSubject(null, ip);
            if (ctx.path === '/organization/create') await spend(limits.signUp, subject, signUpRefusal);
            else await spend(limits.signIn, subject, signInRefusal);
          }),
        },
      ],
      after: [
        {
          // A code mail refused by `admitCodeMail` during this request: the endpoint's answer becomes the 429.
          matcher: (ctx) => ctx.request !== undefined && codeMailRefusals.has(ctx.request),
          handler: createAuthMiddleware(async (ctx) => {
            const refusal = ctx.request ? codeMailRefusals.get(ctx.request) : undefined;
            if (refusal) throw refusal;
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

/** The per-recipient refusals of the requests in flight, turned into their answer by the after hook. */
const codeMailRefusals = new WeakMap<Request, APIError>();

/**
 * Whether the code e-mail to `email` may go: called by the mail hook itself (`email-otp.ts`
 * `sendVerificationOTP`), so every route that mails a code spends the recipient's budget (`limits.codeMail`,
 * `CODE_MAIL_LIMIT_PER_HOUR`), whatever its path and client IP. False when the budget is spent: the mail is
 * not sent and the request answers 429 "Too many codes sent to this e-mail address" (better-auth awaits the
 * hook but swallows its errors, hence the after hook). Mails asked by the service itself (`auth.api.*`, no
 * client IP) always go.
 */
export async function admitCodeMail(
  limits: AuthLimits | undefined,
  email: string,
  request: Request | undefined,
): Promise<boolean> {
  if (!limits?.codeMail || !request || clientIp(request.headers) === null) return true;
  const refusal = await consume(limits.codeMail, recipientKey(email), codeMailRefusal);
  if (refusal) codeMailRefusals.set(request, refusal);
  return refusal === null;
}

/**
 * better-auth `databaseHooks` counting every account created over HTTP against the sign-up budget, before the
 * row is written: whichever endpoint creates it, a refused creation leaves no user behind (the endpoint's
 * single-use nonce or code is spent all the same).
 */
export function signUpDatabaseHooks(limits: AuthLimits) {
  return {
    user: {
      create: {
        before: async (_user: unknown, ctx: { request?: Request | undefined } | null): Promise<void> => {
          const ip = clientIp(ctx?.request?.headers);
          if (ip === null) return;
          await spend(limits.signUp, rateLimitSubject(null, ip), signUpRefusal);
        },
      },
    },
  };
}

/**
 * The rate limit key of an e-mail recipient: a hash of the address as better-auth compares it (trimmed, lower
 * case), so the store never holds the address itself.
 */
function recipientKey(email: string): string {
  return `mail:${createHash('sha256').update(email.trim().toLowerCase()).digest('hex')}`;
}
