/**
 * better-auth's options for the service: where its tables live, its secret (derived from the service's),
 * trusted origins, logging, session lifetime, rate limiting, the organization guard's hooks and the plugins
 * (`email-otp.ts`, `siwe.ts`, `organizations.ts`, `session-jwt.ts`, bearer sessions).
 */
import { createHmac } from 'node:crypto';
import { type Log, silentLog } from '@notary/platform/log';
import { APIError, type Auth, type BetterAuthOptions } from 'better-auth';
import { bearer } from 'better-auth/plugins';
import type { Kysely } from 'kysely';
import type { Mailer } from '../../../ports/mail';
import {
  type AuthLimits,
  admitCodeMail,
  authLimitsPlugin,
  CLIENT_IP_HEADER,
  signUpDatabaseHooks,
} from './auth-limits';
import { emailOtpPlugin } from './email-otp';
import type { MembershipEventHub } from './membership-events';
import { createOrganizationGuard } from './organization-guard';
import { organizationPlugin } from './organizations';
import { noPasswordsPlugin, PASSWORD_PATHS } from './passwords';
import { type FindMember, sessionJwtPlugin } from './session-jwt';
import { siwePlugin } from './siwe';

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
   * `req.ip`, so the app's `trust proxy` setting decides whether `X-Forwarded-For` counts. The service turns
   * it off and counts with `limits` instead.
   */
  rateLimit?: 'database' | 'memory' | false;
  /**
   * The service's sign-in and sign-up budgets per client IP (`auth-limits.ts`), in its own rate limit store;
   * unset: none.
   */
  limits?: AuthLimits;
  /** better-auth's log level (default `warn`). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /**
   * Where better-auth's own messages (with `library: 'better-auth'`, at `logLevel` and above) and, unless
   * `logError` is given, failures of membership event listeners go. Default: nowhere.
   */
  log?: Log;
  /** Where failures of membership event listeners are reported (default: `log`, at error). */
  logError?: (message: string, error: unknown) => void;
}

export { CLIENT_IP_HEADER };

function deriveSecret(secret: string): string {
  if (secret.length < 32) throw new Error('SECRET must be at least 32 characters long');
  // A subkey, so that better-auth's cookies and key encryption never share a key with file-URL signatures.
  return createHmac('sha256', secret).update('notary/identity/better-auth').digest('base64url');
}

/**
 * better-auth's options. Kept apart from `betterAuth()` because constructing the instance immediately checks
 * the schema in the background and remembers a "tables missing" verdict; `migrate()` runs on these options
 * first, so a fresh database is migrated before anything looks at it. `findMember` (used by the JWT payload
 * hook) reads through the instance once it exists.
 */
export function buildOptions(
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
    // No passwords: better-auth's password endpoints are not served (passwords.ts; handler.ts words the 404).
    disabledPaths: [...PASSWORD_PATHS],
    telemetry: { enabled: false },
    logger:
      logLevel === 'silent'
        ? { disabled: true }
        : {
            level: logLevel,
            log: (level, message, ...args: unknown[]) => {
              // 1.7.7 creates `rateLimit.lastRequest` as bigint, then reports its own int8 column as drift.
              if (level === 'warn' && message.startsWith('Field lastRequest in table rateLimit')) return;
              const err = args.find((a) => a instanceof Error);
              const rest = args.filter((a) => a !== err);
              const fields = {
                library: 'better-auth',
                ...(err ? { err } : {}),
                ...(rest.length > 0 ? { args: rest } : {}),
              };
              (options.log ?? silentLog)[level](fields, message);
            },
          },
    // better-auth prints every refused request (a taken slug, a spent budget) on the console at error level,
    // past the logger above: a 4xx is the client's answer, logged at debug; anything else is a failure.
    onAPIError: {
      onError: (e: unknown) => {
        const log = options.log ?? silentLog;
        if (e instanceof APIError && e.statusCode < 500) {
          log.debug({ library: 'better-auth', status: e.statusCode }, e.message);
        } else log.error({ library: 'better-auth', err: e }, 'request failed');
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
    // Locks the organization plugin's HTTP endpoints down (organization-guard.ts, ORGANIZATION_HTTP_ENDPOINTS).
    hooks: { before: guard.before, after: guard.after },
    ...(options.limits ? { databaseHooks: signUpDatabaseHooks(options.limits) } : {}),
    plugins: [
      ...(options.limits ? [authLimitsPlugin(options.limits)] : []),
      noPasswordsPlugin(),
      emailOtpPlugin(mailer, (email, request) => admitCodeMail(options.limits, email, request)),
      siwePlugin(siweDomain, options.siweChainIds),
      organizationPlugin(organizations.events),
      sessionJwtPlugin(publicUrl, options.sessionTtlSeconds, findMember),
      bearer(),
    ],
  } satisfies BetterAuthOptions;
}

/** The service's better-auth instance type (its `api` knows the plugins' endpoints). */
export type BetterAuthInstance = Auth<ReturnType<typeof buildOptions>>;
