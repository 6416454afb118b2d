import { z } from 'zod';
import { invalidConfig, type NodeEnv, optionalString } from './env';

/** The spec's rate limits, the sign-in budgets and their shared store (README, Configuration). */
export const LimitsEnv = z.object({
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  SIGNIN_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10),
  SIGNUP_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(10),
  CODE_MAIL_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(5),
  REDIS_URL: optionalString.pipe(z.url().optional()),
});
export type LimitsEnv = z.infer<typeof LimitsEnv>;

/** Rate limits and sign-in budgets. */
export interface LimitsSettings {
  /**
   * The spec's rate limits (`RATE_LIMITS`, `REDIS_URL`): off only on an operator's explicit `RATE_LIMITS=off`
   * (refused in production); counted in Redis when `redisUrl` is set (one budget for all instances).
   */
  rateLimits: { enabled: boolean; redisUrl: string | undefined };
  /**
   * Sign-in and sign-up budgets per client IP (`SIGNIN_LIMIT_PER_MINUTE`, `SIGNUP_LIMIT_PER_HOUR`), counted in
   * the rate limit store (Redis with `REDIS_URL`); off with `RATE_LIMITS=off`. `signInPerMinute`: requests to
   * the endpoints that start or finish a sign-in (SIWE nonce and verify, code e-mail and code sign-in);
   * `signUpPerHour`: accounts and organizations created; `codeMailPerHour`: code e-mails to one address
   * (`CODE_MAIL_LIMIT_PER_HOUR`), whatever the client IP.
   */
  authLimits: { signInPerMinute: number; signUpPerHour: number; codeMailPerHour: number };
}

/**
 * The limit settings of `e`.
 * @throws Error "Invalid configuration" for `RATE_LIMITS=off` with `NODE_ENV=production`.
 */
export function limitsSettings(e: LimitsEnv, env: NodeEnv): LimitsSettings {
  if (env === 'production' && e.RATE_LIMITS === 'off') {
    throw invalidConfig('RATE_LIMITS=off is refused with NODE_ENV=production');
  }
  return {
    rateLimits: { enabled: e.RATE_LIMITS === 'on', redisUrl: e.REDIS_URL },
    authLimits: {
      signInPerMinute: e.SIGNIN_LIMIT_PER_MINUTE,
      signUpPerHour: e.SIGNUP_LIMIT_PER_HOUR,
      codeMailPerHour: e.CODE_MAIL_LIMIT_PER_HOUR,
    },
  };
}
