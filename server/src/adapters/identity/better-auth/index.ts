/**
 * Identity provider: better-auth 1.7.7 running in-process, on the service's own database.
 *
 * Plugins: email one-time codes (`emailOTP`), Sign-In With Ethereum (`siwe`, EIP-4361), organizations with the
 * service's roles (`organization`), ES256 session JWTs with a JWKS (`jwt`, RFC 7515/7517/7519) and bearer
 * sessions for non-browser clients (`bearer`). Everything is mounted under `/api/auth`.
 *
 * ## Signing in over HTTP (browser, desktop app, curl)
 *
 * Two credentials are involved. The *session token* (opaque, kept by the client, valid 7 days, refreshed on
 * use after 1 day) proves a signed-in session to `/api/auth/*` only. The *session JWT* (ES256, valid
 * `sessionTtlSeconds` <= 300 s) is what every other route accepts as `Authorization: Bearer <JWT>`; the client
 * fetches a fresh one from `/api/auth/token` whenever the previous one is about to expire. Browsers may use
 * the session cookie instead of `Authorization: Bearer <session token>`. Bodies are JSON
 * (`Content-Type: application/json`).
 *
 * Origins: a request carrying `Origin` (every browser POST) must come from `ALLOWED_ORIGINS` or the public
 * URL, else 403 `INVALID_ORIGIN`. Requests without `Origin` (curl, the desktop app's main process, Node's
 * fetch) pass, as the spec's CORS rule says; `handler` drops their `Sec-Fetch-*` headers, which better-auth
 * 1.7.7 would otherwise take for a browser's and answer 403 `MISSING_OR_NULL_ORIGIN` on the code request.
 * A request sending the session cookie without `Origin` is still refused (cookie CSRF).
 *
 * Errors are JSON `{"message","code"}`: 400 `INVALID_OTP` (wrong or expired code), 403 `TOO_MANY_ATTEMPTS`
 * (code burnt after 3 wrong tries: request a new one), 401 on a bad SIWE message, signature or spent nonce,
 * 401 on `/token` without a live session. 429 with the service's budgets (`limits`, `auth-limits.ts`): per
 * client IP, sign-in steps a minute and accounts and organizations created an hour, and per recipient
 * address, code e-mails an hour (counted by the mail hook, whichever route asked for the code), body
 * `{"message","code":"RATE_LIMITED","retryAfterSeconds"}` and `Retry-After`; without them, better-auth's own
 * limiter (`rateLimit`): `Too many requests`, 3 code e-mails a minute, 3 sign-ins per 10 s, 100 requests per
 * 10 s elsewhere, header `X-Retry-After` in seconds. There are no passwords: better-auth's password endpoints
 * (`passwords.ts`: sign-in and sign-up by password, resets by link or code, change and check) answer 404
 * `NOT_FOUND` and mail nothing; a code of type `forget-password` is refused with 400 `BAD_REQUEST`.
 *
 * E-mail one-time code (6 digits, valid 5 minutes, 3 attempts, single use; a new request replaces the code):
 * ```
 * POST /api/auth/email-otp/send-verification-otp   {"email":"ana@example.com","type":"sign-in"}
 *   200 {"success":true}                            (the code is mailed; unknown addresses get an account)
 * POST /api/auth/sign-in/email-otp                 {"email":"ana@example.com","otp":"123456"}
 *   200 {"token":"<session token>","user":{"id":"...","email":"ana@example.com",...}}
 *       (also header `set-auth-token: <signed session token>` and a session cookie; either token works)
 * GET  /api/auth/token                             Authorization: Bearer <session token>
 *   200 {"token":"<session JWT>"}
 * ```
 *
 * Sign-In With Ethereum (EIP-4361 message signed with `personal_sign`, EIP-191):
 * ```
 * POST /api/auth/siwe/nonce                        (no body, or {})
 *   200 {"nonce":"<32 alphanumerics>"}             (single use, valid 15 minutes)
 * The wallet signs the EIP-4361 message
 *   <host of PUBLIC_URL> wants you to sign in with your Ethereum account:
 *   <0x checksummed address>
 *
 *   <optional statement>
 *
 *   URI: <PUBLIC_URL>
 *   Version: 1
 *   Chain ID: <chain id>
 *   Nonce: <nonce>
 *   Issued At: <RFC 3339 time>
 * POST /api/auth/siwe/verify                       {"message":"<the message>","signature":"0x<65 bytes hex>"}
 *   200 {"token":"<session token>","success":true,"user":{"id":"...","walletAddress":"0x...","chainId":1}}
 * GET  /api/auth/token                             Authorization: Bearer <session token>
 *   200 {"token":"<session JWT>"}
 * ```
 * Wallet users get the placeholder e-mail `<address>@siwe.placeholder.invalid` (never mailed; their JWT
 * carries `email: null`).
 *
 * Working inside an organization:
 * ```
 * GET  /api/auth/organization/list                 Authorization: Bearer <session token>
 *   200 [{"id":"...","name":"...","slug":"..."}]
 * POST /api/auth/organization/set-active           Authorization: Bearer <session token>
 *      {"organizationId":"<id>"}                   (null returns to the personal workspace)
 *   200 {"id":"<id>",...,"members":[...]}          (403 when the user is not a member)
 * GET  /api/auth/token                             Authorization: Bearer <session token>
 *   200 {"token":"<session JWT with orgId and role>"}
 * POST /api/auth/organization/create               Authorization: Bearer <session token>
 *      {"name":"Cartório","slug":"cartorio","metadata":{"description":"..."}}
 *   200 {"id":"...","slug":"cartorio",...,"members":[{"role":"owner",...}]}   (the caller is owner)
 *   400 name not 1..120 characters, slug not [a-z0-9-] (1..64, no edge hyphen), other metadata, logo, userId
 *   409 {"code":"CONFLICT"} slug taken
 * POST /api/auth/organization/leave                {"organizationId":"<id>"}
 *   200 the removed membership; 400 {"code":"BAD_REQUEST"} when the caller is the last owner
 * ```
 * Of the organization plugin's endpoints only `create`, `set-active`, `list`, `get-full-organization`
 * (answered without its invitations), `list-members` and `leave` are served (`ORGANIZATION_HTTP_ENDPOINTS`); every other `/api/auth/organization/*`
 * path answers 404 `{"message","code":"NOT_FOUND"}`: members, roles and invitations are managed through the
 * service's `/api/team/*` and `/api/org/*` routes, which apply the spec's role hierarchy (better-auth's own
 * endpoints do not). better-auth sends no invitation mail. Membership changes made through better-auth
 * (creation, leave, `auth.api.*`) reach `directory.onMembershipEvent` listeners.
 *
 * The session JWT (header `{"alg":"ES256","kid":"<key id>"}`), claims:
 * `{ sub: userId, email: string | null, orgId: string | null, role: "owner"|"admin"|"editor"|"reader"|null,
 *    iat, exp: iat + sessionTtlSeconds, iss: PUBLIC_URL, aud: PUBLIC_URL }`.
 * `orgId` is the session's active organization, only while the user is still a member (checked when the JWT is
 * signed); `role` is a hint, authorization uses the service's own role table. Public keys:
 * `GET /api/auth/jwks` (RFC 7517 JWK Set). Sign out: `POST /api/auth/sign-out` with the session token (issued
 * JWTs stay valid until `exp`).
 *
 * ## Storage
 * better-auth's tables live in their own PostgreSQL schema (default `auth`): `user`, `session`, `account`,
 * `verification`, `jwks`, `organization`, `member`, `invitation`, `walletAddress` and, with database rate
 * limiting, `rateLimit`. `migrate()` creates or extends them; MikroORM's schema tooling must ignore the
 * schema, or its diff would drop them. The private signing keys in `auth.jwks` are encrypted with a key derived
 * from the service secret: changing `SECRET` makes them unusable (delete the rows; new keys are minted, and
 * outstanding JWTs fail within `sessionTtlSeconds`).
 *
 * ## Mounting
 * `app.all('/api/auth/{*rest}', identity.handler)` in Express 5, before `express.json()` (better-auth reads the
 * raw body; an already parsed JSON body also works). Set Express's `trust proxy` to match the deployment:
 * the rate limiter keys on `req.ip`.
 *
 * ## Files (one concern each)
 * - `index.ts` (this file): `createBetterAuthIdentity`, which wires the parts below together.
 * - `options.ts`: better-auth's options; `email-otp.ts`, `siwe.ts`, `organizations.ts`, `session-jwt.ts`:
 *   its plugins as the service configures them; `date-columns.ts`: the Kysely plugin giving it `Date`s.
 * - `handler.ts`: the `/api/auth/*` handler; `organization-guard.ts`: which organization endpoints are served;
 *   `auth-limits.ts`: the sign-in and sign-up budgets per client IP.
 * - `verifier.ts`: the `TokenVerifier` of session JWTs; `admin.ts`: operator operations; `migrate.ts`: tables.
 * - `directory.ts` (+ `directory-organizations.ts`, `directory-members.ts`, `directory-invitations.ts`):
 *   the `OrganizationDirectory`; `membership-events.ts`: membership events out of better-auth;
 *   `store.ts`: its tables as the database adapter returns them, and the reads the parts share.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { silentLog } from '@notary/platform/log';
import { betterAuth } from 'better-auth';
import { getSchema } from 'better-auth/db';
import type { OrganizationDirectory } from '../../../ports/directory';
import type { TokenVerifier } from '../../../ports/identity';
import { type BetterAuthAdmin, createAdmin } from './admin';
import { DateColumnsPlugin } from './date-columns';
import { createBetterAuthDirectory } from './directory';
import { createAuthHandler } from './handler';
import { MembershipEventHub } from './membership-events';
import { migrateAuthTables } from './migrate';
import { type BetterAuthIdentityOptions, type BetterAuthInstance, buildOptions } from './options';
import type { FindMember } from './session-jwt';
import { findMemberRow } from './store';
import { createVerifier } from './verifier';

export { type BetterAuthAdmin, slugify } from './admin';
export { createBetterAuthDirectory } from './directory';
export { EMAIL_OTP_ATTEMPTS, EMAIL_OTP_LENGTH, EMAIL_OTP_TTL_SECONDS } from './email-otp';
export { MembershipEventHub, type MembershipListener } from './membership-events';
export type { AnyKysely, BetterAuthIdentityOptions, BetterAuthInstance } from './options';
export {
  ORGANIZATION_DESCRIPTION_MAX,
  ORGANIZATION_HTTP_ENDPOINTS,
  ORGANIZATION_NAME_MAX,
  SLUG_PATTERN,
} from './organization-guard';
export { INVITATION_TTL_SECONDS } from './organizations';
export { createVerifier } from './verifier';

export interface BetterAuthIdentity {
  /** The better-auth instance (server API in `auth.api`). */
  auth: BetterAuthInstance;
  /**
   * Node/Express handler for every `/api/auth/*` request, e.g. `app.all('/api/auth/{*rest}', handler)`.
   * Mount it before any body parser, or keep the parsed body intact: better-auth reads the raw request.
   */
  handler: (
    req: IncomingMessage & { ip?: string; originalUrl?: string },
    res: ServerResponse,
  ) => Promise<void>;
  verifier: TokenVerifier;
  /** Operator operations, plus the membership lookup the tenancy code reconciles its role table from. */
  admin: BetterAuthAdmin;
  /** Creates or extends better-auth's tables; idempotent, safe on every start, serialized across instances. */
  migrate(): Promise<void>;
  /** Public JWK Set URL (`<publicUrl>/api/auth/jwks`) for verifiers in other processes. */
  jwksUrl: string;
  /**
   * Organizations, members, invitations and wallet lookups as an operator (directory.ts). Its
   * `onMembershipEvent` also reports changes made through better-auth's own endpoints and through `admin`.
   */
  directory: OrganizationDirectory;
}

/**
 * Builds the in-process identity provider.
 * @throws Error when `secret` is shorter than 32 characters or `publicUrl` is not an absolute URL.
 * Call `migrate()` before serving requests.
 */
export function createBetterAuthIdentity(options: BetterAuthIdentityOptions): BetterAuthIdentity {
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  let instance: BetterAuthInstance | undefined;
  const getAuth = (): BetterAuthInstance => {
    instance ??= betterAuth(authOptions);
    return instance;
  };
  const findMember: FindMember = async (organizationId, userId) =>
    findMemberRow((await getAuth().$context).adapter, organizationId, userId);
  const events = new MembershipEventHub(
    options.logError ?? ((message, error) => (options.log ?? silentLog).error({ err: error }, message)),
  );
  const sessionUserId = async (headers: Headers): Promise<string | null> => {
    // A full `auth.api` call, so that the bearer plugin turns `Authorization: Bearer` into the session.
    const session = await getAuth()
      .api.getSession({ headers, query: { disableRefresh: true } })
      .catch(() => null);
    return session?.user.id ?? null;
  };
  const dates = new DateColumnsPlugin();
  const authOptions = buildOptions(options, options.db.withPlugin(dates), findMember, {
    events,
    sessionUserId,
  });
  dates.columns = new Set(
    Object.values(getSchema(authOptions)).flatMap((table) =>
      Object.entries(table.fields).flatMap(([column, field]) => (field.type === 'date' ? [column] : [])),
    ),
  );

  const verifier = createVerifier({
    loadJwks: () => getAuth().api.getJwks(),
    issuer: publicUrl,
    audience: publicUrl,
    maxTokenAgeSeconds: options.sessionTtlSeconds,
  });

  return {
    get auth() {
      return getAuth();
    },
    handler: createAuthHandler(getAuth),
    verifier,
    admin: createAdmin(getAuth, findMember, events),
    migrate: () => migrateAuthTables(authOptions, options.db),
    jwksUrl: `${publicUrl}/api/auth/jwks`,
    directory: createBetterAuthDirectory({ adapter: async () => (await getAuth().$context).adapter, events }),
  };
}
