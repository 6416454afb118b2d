/**
 * The service has no passwords: people sign in with an e-mailed one-time code or a wallet (SIWE). better-auth
 * mounts password endpoints all the same (its core and the email-otp plugin), and the reset ones mail a code
 * to any existing address; none of them is served:
 * - `PASSWORD_PATHS` go to better-auth's `disabledPaths` (its own 404, whoever calls `auth.handler`), and
 *   `handler.ts` answers them first with the service's error body: 404
 *   `{"message":"<path> is not available: this service has no passwords ...","code":"NOT_FOUND"}`;
 * - `POST /email-otp/send-verification-otp` with `"type":"forget-password"` (a password reset code): 400
 *   `{"message":"This service has no passwords ...","code":"BAD_REQUEST"}`, before any code is made or mailed.
 */
import { APIError, type BetterAuthPlugin } from 'better-auth';
import { createAuthMiddleware } from 'better-auth/api';
import { authEndpointOf } from './endpoint-path';

/**
 * better-auth 1.7.7's password endpoints reachable over HTTP (paths under `/api/auth`): sign-in and sign-up by
 * password, the link and code resets, changing and checking a password. `/sign-in/email-otp` is not one.
 */
export const PASSWORD_PATHS: readonly string[] = [
  '/sign-in/email',
  '/sign-up/email',
  '/request-password-reset',
  '/reset-password',
  '/change-password',
  '/verify-password',
  '/forget-password',
  '/forget-password/email-otp',
  '/email-otp/request-password-reset',
  '/email-otp/reset-password',
];

/** Prefixes of password endpoints with a path parameter (`/reset-password/:token`, the reset link's target). */
const PASSWORD_PREFIXES = ['/reset-password/', '/forget-password/'];

const CODE_MAIL_PATH = '/email-otp/send-verification-otp';

/**
 * The password endpoint `url` (a request URL or path, query allowed) names under `basePath`, lower case and
 * without repeated or trailing slashes (e.g. `/email-otp/reset-password`), or null for any other endpoint.
 */
export function passwordPath(url: string, basePath: string): string | null {
  const endpoint = authEndpointOf(url, basePath);
  if (endpoint === null) return null;
  if (PASSWORD_PATHS.includes(endpoint) || PASSWORD_PREFIXES.some((p) => endpoint.startsWith(p))) {
    return endpoint;
  }
  return null;
}

/** Body of the refusal of a password endpoint (404). */
export function passwordPathBody(endpoint: string): { message: string; code: 'NOT_FOUND' } {
  return {
    message:
      `${endpoint} is not available: this service has no passwords. Sign in with a code ` +
      '(POST /api/auth/email-otp/send-verification-otp, then /api/auth/sign-in/email-otp) or a wallet',
    code: 'NOT_FOUND',
  };
}

/** The plugin refusing password reset codes asked of the code endpoint (`type: "forget-password"`). */
export function noPasswordsPlugin() {
  return {
    id: 'notary-no-passwords',
    hooks: {
      before: [
        {
          matcher: (ctx) =>
            ctx.path === CODE_MAIL_PATH &&
            (ctx.body as { type?: unknown } | undefined)?.type === 'forget-password',
          handler: createAuthMiddleware(async () => {
            throw new APIError('BAD_REQUEST', {
              message: 'This service has no passwords: ask for a sign-in code ("type":"sign-in")',
              code: 'BAD_REQUEST',
            });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
