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
 * 401 on `/token` without a live session, 429 `Too many requests` (per client IP: 3 code e-mails a minute,
 * 3 sign-ins per 10 s, 100 requests per 10 s elsewhere; header `X-Retry-After` in seconds).
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
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, isRole, type Role } from '@notary/shared';
import { APIError, type Auth, type BetterAuthOptions, betterAuth } from 'better-auth';
import { generateRandomString } from 'better-auth/crypto';
import { getSchema } from 'better-auth/db';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { bearer, emailOTP, jwt, organization, siwe } from 'better-auth/plugins';
import { createAccessControl } from 'better-auth/plugins/access';
import { adminAc, defaultStatements, memberAc, ownerAc } from 'better-auth/plugins/organization/access';
import { getAddress, verifyMessage } from 'ethers';
import {
  createLocalJWKSet,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type {
  Kysely,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { sql } from 'kysely';
import { isPlaceholderEmail } from '../mail/placeholder';
import type { Mailer } from '../mail/port';
import {
  bestRole,
  blockedOrganizationBody,
  blockedOrganizationPath,
  createBetterAuthDirectory,
  createOrganizationGuard,
  createOrganizationHooks,
  INVITATION_TTL_SECONDS,
  MembershipEventHub,
  SLUG_PATTERN,
} from './better-auth-directory';
import type { OrganizationDirectory } from './directory';
import type { IdentityAdmin, IdentityOrganization, IdentityUser, SessionClaims, TokenVerifier } from './port';

/**
 * Any Kysely instance: MikroORM's `em.getKysely()` (PostgreSQL or PGlite) or a plain `new Kysely(...)`.
 * better-auth declares its option as `Kysely<any>` and addresses tables by name, so the database type
 * parameter means nothing here; this alias is the one place the loose type is allowed.
 */
// biome-ignore lint/suspicious/noExplicitAny: better-auth's `database.db` option is typed Kysely<any>.
export type AnyKysely = Kysely<any>;

export interface BetterAuthIdentityOptions {
  /**
   * Kysely instance on the service database, e.g. MikroORM 7's `orm.em.getKysely()` taken from the global
   * EntityManager at startup (outside any transaction: the instance is kept for the process lifetime).
   * Works on PostgreSQL and on PGlite (`PGliteDialect`).
   */
  db: AnyKysely;
  /** PostgreSQL schema holding better-auth's tables (default `auth`); created by `migrate()`. */
  schema?: string;
  /** Base URL of the service (config `publicUrl`), without trailing slash: JWT `iss` and `aud`, SIWE domain. */
  publicUrl: string;
  /** Service secret (config `secret`), at least 32 characters; better-auth gets a key derived from it. */
  secret: string;
  /** Session JWT lifetime in seconds (config `sessionTtlSeconds`, 30..300). */
  sessionTtlSeconds: number;
  /** Browser origins allowed to call `/api/auth/*` (config `allowedOrigins`); the public URL is always allowed. */
  allowedOrigins: readonly string[];
  /** Sends the one-time codes. */
  mailer: Mailer;
  /** Chain ids accepted for Sign-In With Ethereum; default: any positive chain id. */
  siweChainIds?: readonly number[];
  /** SIWE `domain` (RFC 3986 authority) the message must name; default: the host of `publicUrl`. */
  siweDomain?: string;
  /**
   * better-auth's request rate limiter (sign-in 3 per 10 s, code e-mails 3 per 60 s per client IP):
   * `'database'` (default, shared by every instance), `'memory'`, or `false`. The client IP is Express's
   * `req.ip`, so the app's `trust proxy` setting decides whether `X-Forwarded-For` counts.
   */
  rateLimit?: 'database' | 'memory' | false;
  /** better-auth's log level (default `warn`). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Where failures of membership event listeners are reported (default `console.error`). */
  logError?: (message: string, error: unknown) => void;
}

/** Length of the e-mailed one-time code (digits). */
export const EMAIL_OTP_LENGTH = 6;
/** Validity of an e-mailed one-time code, seconds. */
export const EMAIL_OTP_TTL_SECONDS = 300;
/** Wrong codes accepted before a code is burnt. */
export const EMAIL_OTP_ATTEMPTS = 3;
/** Tolerated clock skew when verifying `exp`/`iat`, seconds. */
const CLOCK_TOLERANCE_SECONDS = 5;
/** The JWKS is reloaded at least this often, so removed keys stop verifying. */
const JWKS_MAX_AGE_MS = 5 * 60_000;
/** An unknown `kid` (a key created since the last load) triggers a reload at most this often. */
const JWKS_RELOAD_COOLDOWN_MS = 1_000;
/** better-auth's default is 100 members per organization; teams here may be larger. */
const MEMBERSHIP_LIMIT = 10_000;
/** Request header carrying Express's `req.ip` to better-auth's rate limiter (set by `handler`, never trusted from outside). */
const CLIENT_IP_HEADER = 'x-notary-client-ip';
/** Advisory lock key (bigint) serializing better-auth migrations across instances; arbitrary constant. */
const MIGRATION_LOCK_KEY = '7310224119';

function deriveSecret(secret: string): string {
  if (secret.length < 32) throw new Error('SECRET must be at least 32 characters long');
  // A subkey, so that better-auth's cookies and key encryption never share a key with file-URL signatures.
  return createHmac('sha256', secret).update('notary/identity/better-auth').digest('base64url');
}

/** Lower-case URL slug from a display name: ASCII letters and digits separated by single hyphens. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
}

/** The SIWE fields this adapter re-checks (EIP-4361 section "Message Format"). */
function readSiweMessage(message: string): {
  domain: string | undefined;
  address: string | undefined;
  version: string | undefined;
  chainId: number | undefined;
  nonce: string | undefined;
} {
  const lines = message.split('\n').map((l) => l.replace(/\r$/, ''));
  const header =
    /^(?:[a-zA-Z][a-zA-Z0-9+.-]*:\/\/)?(\S+) wants you to sign in with your Ethereum account:$/.exec(
      lines[0] ?? '',
    );
  const field = (name: string): string | undefined => {
    const prefix = `${name}: `;
    return lines.find((l) => l.startsWith(prefix))?.slice(prefix.length);
  };
  const chainId = field('Chain ID');
  return {
    domain: header?.[1],
    address: lines[1]?.trim(),
    version: field('Version'),
    chainId: chainId !== undefined && /^\d+$/.test(chainId) ? Number(chainId) : undefined,
    nonce: field('Nonce'),
  };
}

const orgAc = createAccessControl(defaultStatements);

/**
 * Turns the timestamp columns of better-auth's tables back into `Date`s. MikroORM's PostgreSQL and PGlite
 * connections keep `timestamptz` values as strings, while better-auth compares them with `Date`s
 * (`expiresAt < new Date()`), which is always false for a string: codes and sessions would never expire and
 * the JWT plugin throws on `expiresAt.getTime()`. Only the named columns are touched, and only string values.
 */
class DateColumnsPlugin implements KyselyPlugin {
  columns: ReadonlySet<string> = new Set();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const rows = args.result.rows;
    if (rows.length === 0 || this.columns.size === 0) return args.result;
    return { ...args.result, rows: rows.map((row) => this.convert(row)) };
  }

  private convert(row: UnknownRow): UnknownRow {
    let out: Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(row)) {
      if (typeof value !== 'string') continue;
      // Joined rows arrive as `_joined_<model>_<field>`.
      const column = key.startsWith('_joined_') ? key.slice(key.lastIndexOf('_') + 1) : key;
      if (!this.columns.has(column)) continue;
      const date = new Date(value);
      if (Number.isNaN(date.getTime())) continue;
      out ??= { ...row };
      out[key] = date;
    }
    return out ?? row;
  }
}

/**
 * better-auth's options. Kept apart from `betterAuth()` because constructing the instance immediately checks
 * the schema in the background and remembers a "tables missing" verdict; `migrate()` runs on these options
 * first, so a fresh database is migrated before anything looks at it. `findMember` (used by the JWT payload
 * hook) reads through the instance once it exists.
 */
function buildOptions(
  options: BetterAuthIdentityOptions,
  db: AnyKysely,
  findMember: FindMember,
  organizations: { events: MembershipEventHub; sessionUserId: (headers: Headers) => Promise<string | null> },
) {
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  const origin = new URL(publicUrl).origin;
  const siweDomain = (options.siweDomain ?? new URL(publicUrl).host).toLowerCase();
  const schemaName = options.schema ?? 'auth';
  const mailer = options.mailer;
  const logLevel = options.logLevel ?? 'warn';
  const guard = createOrganizationGuard(organizations);

  return {
    appName: 'Notary',
    baseURL: publicUrl,
    basePath: '/api/auth',
    secret: deriveSecret(options.secret),
    database: { db, type: 'postgres', schemaName },
    trustedOrigins: [origin, ...options.allowedOrigins],
    telemetry: { enabled: false },
    logger:
      logLevel === 'silent'
        ? { disabled: true }
        : {
            level: logLevel,
            log: (level, message, ...args: unknown[]) => {
              // 1.7.7 creates `rateLimit.lastRequest` as bigint, then reports its own int8 column as drift.
              if (level === 'warn' && message.startsWith('Field lastRequest in table rateLimit')) return;
              console[level](`[better-auth] ${message}`, ...args);
            },
          },
    // The session token (the client's refresh credential) lives 7 days and is extended once a day of use.
    session: { expiresIn: 7 * 24 * 3600, updateAge: 24 * 3600 },
    rateLimit:
      options.rateLimit === false
        ? { enabled: false }
        : { enabled: true, storage: options.rateLimit ?? 'database' },
    advanced: {
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      // Explicit: with NODE_ENV=test better-auth would silently skip every Origin check.
      disableOriginCheck: false,
      disableCSRFCheck: false,
    },
    // Locks the organization plugin's HTTP endpoints down (better-auth-directory.ts, ORGANIZATION_HTTP_ENDPOINTS).
    hooks: { before: guard.before, after: guard.after },
    plugins: [
      emailOTP({
        otpLength: EMAIL_OTP_LENGTH,
        expiresIn: EMAIL_OTP_TTL_SECONDS,
        allowedAttempts: EMAIL_OTP_ATTEMPTS,
        // Only a hash is stored: a database dump reveals no usable code.
        storeOTP: 'hashed',
        async sendVerificationOTP({ email, otp, type }) {
          // Wallet users' addresses are placeholders: there is no mailbox to reach.
          if (isPlaceholderEmail(email)) return;
          const purpose = type === 'sign-in' ? 'sign in to' : 'confirm your e-mail address at';
          const minutes = Math.round(EMAIL_OTP_TTL_SECONDS / 60);
          await mailer.send({
            to: email,
            // Not in the subject: subjects end up in mail logs.
            subject: 'Your Notary sign-in code',
            text:
              `Use the code ${otp} to ${purpose} Notary.\n\n` +
              `It is valid for ${minutes} minutes and can be used once. ` +
              'If you did not ask for it, ignore this message.\n',
          });
        },
      }),
      siwe({
        domain: siweDomain,
        anonymous: true,
        // EIP-4361: at least 8 alphanumeric characters; better-auth stores it and consumes it once.
        getNonce: async () => generateRandomString(32, 'a-z', 'A-Z', '0-9'),
        async verifyMessage({ message, signature, address, chainId, cacao }) {
          // better-auth already consumed the nonce (single use) and matched domain, expiry and chain id > 0;
          // re-check them against the signed text, then prove the signature (EIP-191 personal_sign) recovers
          // the claimed address. Contract wallets (EIP-1271) would need a chain RPC: not supported.
          const fields = readSiweMessage(message);
          if (fields.domain?.toLowerCase() !== siweDomain) return false;
          if (fields.version !== '1' || fields.chainId !== chainId) return false;
          if (!fields.nonce || fields.nonce !== cacao?.p.nonce) return false;
          if (options.siweChainIds && !options.siweChainIds.includes(chainId)) return false;
          try {
            if (getAddress(fields.address ?? '') !== getAddress(address)) return false;
            return getAddress(verifyMessage(message, signature)) === getAddress(address);
          } catch {
            return false; // malformed address or signature
          }
        },
      }),
      organization({
        ac: orgAc,
        // The service's roles (shared/src/roles.ts); editors and readers manage nothing in better-auth.
        roles: {
          owner: orgAc.newRole(ownerAc.statements),
          admin: orgAc.newRole(adminAc.statements),
          editor: orgAc.newRole(memberAc.statements),
          reader: orgAc.newRole(memberAc.statements),
        },
        creatorRole: 'owner',
        membershipLimit: MEMBERSHIP_LIMIT,
        invitationExpiresIn: INVITATION_TTL_SECONDS,
        // The service mails invitations itself, with its own templates (and never to placeholder addresses).
        sendInvitationEmail: async () => {},
        organizationHooks: createOrganizationHooks(organizations.events),
      }),
      jwt({
        jwks: { keyPairConfig: { alg: 'ES256' } },
        jwt: {
          issuer: publicUrl,
          audience: publicUrl,
          // A string is a duration; a number would be taken as an absolute `exp` timestamp.
          expirationTime: `${options.sessionTtlSeconds}s`,
          definePayload: ({ user, session }) => claimsFor(findMember, user, session.activeOrganizationId),
        },
      }),
      bearer(),
    ],
  } satisfies BetterAuthOptions;
}

/**
 * The custom JWT claims for `user` with `activeOrganizationId` active: the organization and the member's role
 * only while the user is a member (a stale active organization yields none); placeholder e-mails become null.
 */
async function claimsFor(
  findMember: FindMember,
  user: { id: string; email: string },
  activeOrganizationId: unknown,
): Promise<TokenClaims> {
  const email = isPlaceholderEmail(user.email) ? null : user.email;
  if (typeof activeOrganizationId !== 'string' || activeOrganizationId === '') {
    return { email, orgId: null, role: null };
  }
  const member = await findMember(activeOrganizationId, user.id);
  // Removed since the organization became active: the token must not name it any more.
  if (!member) return { email, orgId: null, role: null };
  return { email, orgId: activeOrganizationId, role: bestRole(member.role) };
}

/** The membership of `userId` in `organizationId` (its role as better-auth stores it), or null. */
type FindMember = (organizationId: string, userId: string) => Promise<{ id: string; role: string } | null>;

/** Custom claims of the session JWT besides `sub`, `iat`, `exp`, `iss`, `aud`. */
interface TokenClaims {
  [claim: string]: string | null;
  email: string | null;
  orgId: string | null;
  role: Role | null;
}

export type BetterAuthInstance = Auth<ReturnType<typeof buildOptions>>;

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
   * Organizations, members, invitations and wallet lookups as an operator (better-auth-directory.ts). Its
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
    (await getAuth().$context).adapter.findOne<{ id: string; role: string }>({
      model: 'member',
      where: [
        { field: 'organizationId', value: organizationId },
        { field: 'userId', value: userId },
      ],
    });
  const events = new MembershipEventHub(
    options.logError ?? ((message, error) => console.error(`[identity] ${message}`, error)),
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
  let nodeHandler: ReturnType<typeof toNodeHandler> | undefined;

  const handler = async (
    req: IncomingMessage & { ip?: string; originalUrl?: string },
    res: ServerResponse,
  ): Promise<void> => {
    // The organization plugin's endpoints outside the allowed few: refused before better-auth sees them (its
    // `hooks.before` refuses them again, by the routed endpoint's own path).
    const blocked = blockedOrganizationPath(req.originalUrl ?? req.url ?? '/', '/api/auth');
    if (blocked !== null) {
      const body = JSON.stringify(blockedOrganizationBody(blocked));
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const ip = req.ip ?? req.socket.remoteAddress;
    if (ip) req.headers[CLIENT_IP_HEADER] = ip;
    else delete req.headers[CLIENT_IP_HEADER];
    if (req.headers.origin === undefined && req.headers.referer === undefined) {
      // better-auth 1.7.7 treats any Sec-Fetch-* header as "a browser" and then demands an Origin, which
      // rejects Node's fetch (it sends `Sec-Fetch-Mode: cors` and no Origin) on the code-request route.
      // Browsers that send Sec-Fetch-* always send Origin on POST, so without one this is not a browser:
      // it passes like curl does (spec: requests without an Origin header always pass).
      for (const name of ['sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest', 'sec-fetch-user']) {
        delete req.headers[name];
      }
    }
    nodeHandler ??= toNodeHandler(getAuth());
    return nodeHandler(req, res);
  };

  const migrate = async (): Promise<void> => {
    // Through `authOptions` itself, never a copy: should the instance already exist and have recorded
    // "tables missing", only a migration run on the same `database` object clears that verdict (so no
    // transaction-bound copy either).
    const run = async () => (await getMigrations(authOptions)).runMigrations();
    const version = await sql<{ version: string }>`SELECT version() AS version`.execute(options.db);
    if (/PGlite/i.test(version.rows[0]?.version ?? '')) {
      // Embedded: one process per data directory and a single connection; a lock held on it would block
      // the migration's own queries.
      await run();
      return;
    }
    // PostgreSQL: instances starting together take turns; the session lock is held by one pooled connection
    // while the migration uses others.
    await options.db.connection().execute(async (conn) => {
      await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`.execute(conn);
      try {
        await run();
      } finally {
        await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`.execute(conn);
      }
    });
  };

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
    handler,
    verifier,
    admin: createAdmin(getAuth, findMember, events),
    migrate,
    jwksUrl: `${publicUrl}/api/auth/jwks`,
    directory: createBetterAuthDirectory({ adapter: async () => (await getAuth().$context).adapter, events }),
  };
}

/**
 * Verifier of session JWTs against an in-process JWK Set (RFC 7517) loaded through `loadJwks`.
 * The set is cached, reloaded every 5 minutes, and reloaded early (at most once a second) when a token names an
 * unknown `kid`, so keys rotated by another instance are picked up. Only ES256 (RFC 7518 3.4) is accepted;
 * `iss` and `aud` must match, `exp` must be in the future, `iat` at most `maxTokenAgeSeconds` old and
 * `exp - iat` at most `maxTokenAgeSeconds` (5 s clock tolerance).
 */
export function createVerifier(input: {
  loadJwks: () => Promise<JSONWebKeySet>;
  issuer: string;
  audience: string;
  maxTokenAgeSeconds: number;
}): TokenVerifier {
  let keySet: ReturnType<typeof createLocalJWKSet> | undefined;
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  const reload = (): Promise<void> => {
    loading ??= input
      .loadJwks()
      .then((jwks) => {
        keySet = createLocalJWKSet(jwks);
        loadedAt = Date.now();
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };

  const getKey = async (
    header: JWSHeaderParameters,
    token: Parameters<ReturnType<typeof createLocalJWKSet>>[1],
  ) => {
    if (!keySet || Date.now() - loadedAt > JWKS_MAX_AGE_MS) await reload();
    try {
      // biome-ignore lint/style/noNonNullAssertion: reload() either set keySet or threw.
      return await keySet!(header, token);
    } catch (e) {
      if (!(e instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - loadedAt < JWKS_RELOAD_COOLDOWN_MS)
        throw e;
      await reload();
      // biome-ignore lint/style/noNonNullAssertion: as above.
      return await keySet!(header, token);
    }
  };

  return {
    async verify(token: string): Promise<SessionClaims> {
      if (typeof token !== 'string' || token.split('.').length !== 3) {
        throw new AppError('UNAUTHENTICATED', 'Invalid session token: not a JWT');
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          algorithms: ['ES256'],
          issuer: input.issuer,
          audience: input.audience,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          maxTokenAge: input.maxTokenAgeSeconds,
          requiredClaims: ['sub', 'iat', 'exp'],
        }));
      } catch (e) {
        throw toAuthError(e);
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') {
        throw new AppError('UNAUTHENTICATED', 'Invalid session token: no subject');
      }
      // `maxTokenAge` bounds the age, this bounds the lifetime: a longer-lived token was not minted for us.
      if ((payload.exp ?? 0) - (payload.iat ?? 0) > input.maxTokenAgeSeconds + CLOCK_TOLERANCE_SECONDS) {
        throw new AppError('UNAUTHENTICATED', 'Invalid session token: lifetime exceeds the session TTL');
      }
      const orgId = typeof payload.orgId === 'string' && payload.orgId !== '' ? payload.orgId : null;
      return {
        userId: payload.sub,
        email: typeof payload.email === 'string' && payload.email !== '' ? payload.email : null,
        orgId,
        orgRole: orgId !== null && isRole(payload.role) ? payload.role : null,
      };
    },
  };
}

function toAuthError(e: unknown): AppError {
  if (e instanceof AppError) return e;
  if (e instanceof joseErrors.JWTExpired) {
    return new AppError('UNAUTHENTICATED', 'Session token expired', { cause: e });
  }
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    return new AppError('UNAUTHENTICATED', `Invalid session token: ${e.message}`, { cause: e });
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed || e instanceof joseErrors.JOSENotSupported) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: algorithm not accepted', { cause: e });
  }
  if (e instanceof joseErrors.JWKSNoMatchingKey) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: unknown signing key', { cause: e });
  }
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: bad signature', { cause: e });
  }
  if (e instanceof joseErrors.JOSEError) {
    return new AppError('UNAUTHENTICATED', 'Invalid session token: malformed', { cause: e });
  }
  // Not the token's fault (the key table could not be read).
  return new AppError('BAD_GATEWAY', 'Identity provider unavailable', { cause: e });
}

interface UserRow {
  id: string;
  email: string;
  name: string;
}

interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
}

/** `IdentityAdmin` plus the provider-side membership lookup (structurally the tenancy's `MembershipLookup`). */
export interface BetterAuthAdmin extends IdentityAdmin {
  /**
   * The user's membership of `organizationId` at better-auth, or null when not a member, when the organization
   * does not exist, or when the stored role is none of the service's roles (least privilege: no access).
   */
  getMembership(
    organizationId: string,
    userId: string,
  ): Promise<{ role: Role; organizationName: string; organizationSlug: string } | null>;
}

function createAdmin(
  getAuth: () => BetterAuthInstance,
  findMember: FindMember,
  events: MembershipEventHub,
): BetterAuthAdmin {
  const toUser = (u: UserRow): IdentityUser => ({ id: u.id, email: u.email, name: u.name });
  const toOrg = (o: OrganizationRow): IdentityOrganization => ({ id: o.id, name: o.name, slug: o.slug });

  const findUserById = async (id: string): Promise<UserRow | null> =>
    (await getAuth().$context).internalAdapter.findUserById(id);

  const findOrgBy = async (field: 'id' | 'slug', value: string): Promise<OrganizationRow | null> =>
    (await getAuth().$context).adapter.findOne<OrganizationRow>({
      model: 'organization',
      where: [{ field, value }],
    });

  const admin: BetterAuthAdmin = {
    async getMembership(organizationId, userId) {
      const member = await findMember(organizationId, userId);
      const role = bestRole(member?.role);
      if (!member || !role) return null;
      const org = await findOrgBy('id', organizationId);
      return org ? { role, organizationName: org.name, organizationSlug: org.slug } : null;
    },

    async ensureUser({ email, name }) {
      const normalized = email.trim().toLowerCase();
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized))
        throw new AppError('BAD_REQUEST', `Invalid e-mail: ${email}`);
      const existing = await admin.findUserByEmail(normalized);
      if (existing) return existing;
      const ctx = await getAuth().$context;
      try {
        // Created by the operator: the address counts as verified, so the first code sign-in just works.
        const user = await ctx.internalAdapter.createUser(
          { email: normalized, name: name ?? '', emailVerified: true },
          { method: 'admin' },
        );
        return toUser(user);
      } catch (e) {
        // Lost a race with another creator of the same address.
        const raced = await admin.findUserByEmail(normalized);
        if (raced) return raced;
        throw e;
      }
    },

    async findUserByEmail(email) {
      const found = await (await getAuth().$context).internalAdapter.findUserByEmail(
        email.trim().toLowerCase(),
      );
      return found ? toUser(found.user) : null;
    },

    async createOrganization({ name, slug, ownerUserId }) {
      const displayName = name.trim();
      if (!displayName) throw new AppError('BAD_REQUEST', 'Organization name is empty');
      const owner = await findUserById(ownerUserId);
      if (!owner) throw new AppError('NOT_FOUND', `No user ${ownerUserId}`);
      const explicit = slug !== undefined;
      const base = explicit ? slug.trim().toLowerCase() : slugify(displayName) || 'org';
      if (!SLUG_PATTERN.test(base)) {
        throw new AppError(
          'BAD_REQUEST',
          `Invalid slug "${slug}": lower-case letters, digits and inner hyphens`,
        );
      }
      for (let attempt = 1; attempt <= 50; attempt++) {
        const candidate = attempt === 1 ? base : `${base}-${attempt}`;
        if (await findOrgBy('slug', candidate)) {
          if (explicit) throw new AppError('CONFLICT', `Organization slug "${candidate}" is taken`);
          continue;
        }
        try {
          // No headers: a server-side call, so better-auth creates it for `userId` as `creatorRole` (owner).
          const created = await getAuth().api.createOrganization({
            body: { name: displayName, slug: candidate, userId: owner.id },
          });
          return toOrg(created);
        } catch (e) {
          // Taken between our check and the insert: try the next candidate (or report it when explicit).
          if (!(await findOrgBy('slug', candidate))) throw e;
          if (explicit) throw new AppError('CONFLICT', `Organization slug "${candidate}" is taken`);
        }
      }
      throw new AppError('CONFLICT', `No free slug derived from "${base}"`);
    },

    async findOrganizationBySlug(slug) {
      const org = await findOrgBy('slug', slug.trim().toLowerCase());
      return org ? toOrg(org) : null;
    },

    async setMember({ organizationId, userId, role }) {
      // better-auth stores any string as a role (even undefined on server calls): only the service's roles.
      if (!isRole(role)) throw new AppError('BAD_REQUEST', `Invalid role: ${String(role)}`);
      if (!(await findOrgBy('id', organizationId)))
        throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
      if (!(await findUserById(userId))) throw new AppError('NOT_FOUND', `No user ${userId}`);
      const member = await findMember(organizationId, userId);
      if (member) {
        if (member.role === role) return;
        await (await getAuth().$context).adapter.update({
          model: 'member',
          where: [{ field: 'id', value: member.id }],
          update: { role },
        });
        // A direct update runs no organization hook: report it like the plugin's own endpoints do.
        await events.emit({ type: 'member.upserted', organizationId, userId, role });
        return;
      }
      try {
        // Reported by the plugin's afterAddMember hook.
        await getAuth().api.addMember({ body: { organizationId, userId, role } });
      } catch (e) {
        if (e instanceof APIError)
          throw new AppError('CONFLICT', `Cannot add member: ${e.message}`, { cause: e });
        throw e;
      }
    },

    async issueSessionToken({ userId, organizationId }) {
      const user = await findUserById(userId);
      if (!user) throw new AppError('NOT_FOUND', `No user ${userId}`);
      if (organizationId !== undefined) {
        if (!(await findOrgBy('id', organizationId))) {
          throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
        }
        if (!(await findMember(organizationId, userId))) {
          throw new AppError('FORBIDDEN', `User ${userId} is not a member of organization ${organizationId}`);
        }
      }
      const claims = await claimsFor(findMember, user, organizationId);
      // The jwt plugin's own signer: same key, `iss`, `aud` and lifetime as `GET /api/auth/token`, and the
      // same payload layout (`iat`, custom claims, `sub`) as its getJwtToken.
      const { token } = await getAuth().api.signJWT({
        body: { payload: { iat: Math.floor(Date.now() / 1000), ...claims, sub: user.id } },
      });
      return token;
    },
  };
  return admin;
}
