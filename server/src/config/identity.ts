import { z } from 'zod';
import { optionalString } from './env';

/** A svix signing secret as Clerk shows it: optional `whsec_`, then padded base64 of at least 16 bytes. */
function isSvixSecret(value: string): boolean {
  const key = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  return (
    /^[A-Za-z0-9+/]+={0,2}$/.test(key) && key.length % 4 === 0 && Buffer.from(key, 'base64').length >= 16
  );
}

/** Sessions, the identity provider's webhook and the role table's reconciliation (README, Configuration). */
export const IdentityEnv = z.object({
  SESSION_TTL_SECONDS: z.coerce.number().int().min(30).max(300).default(300),
  IDENTITY_WEBHOOK_SECRET: optionalString.refine(
    (v) => v === undefined || isSvixSecret(v),
    'must be a svix signing secret: whsec_ followed by base64 of at least 16 bytes',
  ),
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(300).default(60),
});
export type IdentityEnv = z.infer<typeof IdentityEnv>;

/** Sessions and the identity provider. */
export interface IdentitySettings {
  sessionTtlSeconds: number;
  /**
   * Signing secret of the identity provider's webhook (svix, `whsec_...` as Clerk shows it). Unset: the route
   * `POST /api/webhooks/identity` answers 503.
   */
  identityWebhookSecret: string | undefined;
  /**
   * Seconds between two reconciliations of the role table with the provider's memberships, at most 300 (the
   * longest session lifetime, so a removal made behind the provider's API stops access within it); 0 disables.
   */
  reconcileIntervalSeconds: number;
}

/** The identity settings of `e`. */
export function identitySettings(e: IdentityEnv): IdentitySettings {
  return {
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    identityWebhookSecret: e.IDENTITY_WEBHOOK_SECRET,
    reconcileIntervalSeconds: e.RECONCILE_INTERVAL_SECONDS,
  };
}
