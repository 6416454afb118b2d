/**
 * The hosted identity provider's (Clerk's) webhook deliveries, as membership events: the svix signature check
 * on the raw body and the mapping of Clerk's event payloads to `MembershipEvent`s. Applying them to the role
 * table is the service's job (`http/identity-webhook.ts` and `domain/tenancy/reconcile.ts`).
 *
 * Clerk events mapped (others are acknowledged and ignored):
 * - `organizationMembership.created` / `.updated` → member upserted with the mapped role (`clerkRoleToRole`),
 *   with the organization's name and slug, so that its tenant can be created when the service never saw it.
 * - `organizationMembership.deleted` → member removed.
 * - `organization.deleted` → organization deleted.
 *
 * Sources: Clerk, "Webhooks" (event types and payloads); svix, "Verifying payloads" (headers `svix-id`,
 * `svix-timestamp`, `svix-signature`; HMAC-SHA256 over `<id>.<timestamp>.<body>`, 5 minutes of tolerance).
 */
import { AppError, isRole, type Role } from '@notary/shared';
import { Webhook, WebhookVerificationError } from 'svix';
import { z } from 'zod';
import type { MembershipEvent } from '../../../ports/directory';

/**
 * The service role of a Clerk membership: the membership's public metadata `role` when it is one of the
 * service's roles (the service writes it there; Clerk's public metadata is writable only by the backend);
 * else Clerk's role key without its `org:` prefix when it names a service role (`org:admin` → admin, custom
 * roles `org:owner`, `org:editor`, `org:reader`); else `reader` (`org:member` and any other role: least
 * privilege while still a member).
 */
export function clerkRoleToRole(clerkRole: string | undefined, publicMetadata: unknown): Role {
  if (publicMetadata !== null && typeof publicMetadata === 'object') {
    const role = (publicMetadata as Record<string, unknown>).role;
    if (isRole(role)) return role;
  }
  const key = clerkRole?.startsWith('org:') ? clerkRole.slice(4) : clerkRole;
  return isRole(key) ? key : 'reader';
}

const ClerkEnvelope = z.object({ type: z.string().min(1).max(128), data: z.unknown() });

const ClerkMembership = z.object({
  organization: z.object({
    id: z.string().min(1).max(128),
    name: z.string().nullish(),
    slug: z.string().nullish(),
  }),
  public_user_data: z.object({ user_id: z.string().min(1).max(128) }),
  role: z.string().nullish(),
  public_metadata: z.unknown().optional(),
});

const ClerkDeletedOrganization = z.object({ id: z.string().min(1).max(128) });

/** A Clerk delivery translated: its type, the membership events it carries, the organization it names. */
export interface MappedIdentityEvent {
  type: string;
  events: MembershipEvent[];
  /** Name and slug of the organization, to create its tenant when the service never saw it. */
  organization?: { id: string; name: string; slug: string };
}

/**
 * Translates a verified Clerk webhook payload (`{type, data, object:"event", ...}`).
 * @throws AppError BAD_REQUEST when a membership or organization event lacks the fields it needs.
 */
export function mapClerkEvent(payload: unknown): MappedIdentityEvent {
  const envelope = ClerkEnvelope.safeParse(payload);
  if (!envelope.success) throw new AppError('BAD_REQUEST', 'Not an identity provider event');
  const { type, data } = envelope.data;
  switch (type) {
    case 'organizationMembership.created':
    case 'organizationMembership.updated':
    case 'organizationMembership.deleted': {
      const parsed = ClerkMembership.safeParse(data);
      if (!parsed.success) throw new AppError('BAD_REQUEST', `Malformed ${type} event`);
      const m = parsed.data;
      const organizationId = m.organization.id;
      const userId = m.public_user_data.user_id;
      const name = m.organization.name?.trim() || organizationId;
      const organization = { id: organizationId, name, slug: m.organization.slug?.trim() || name };
      if (type === 'organizationMembership.deleted') {
        return { type, events: [{ type: 'member.removed', organizationId, userId }], organization };
      }
      const role = clerkRoleToRole(m.role ?? undefined, m.public_metadata);
      return { type, events: [{ type: 'member.upserted', organizationId, userId, role }], organization };
    }
    case 'organization.deleted': {
      const parsed = ClerkDeletedOrganization.safeParse(data);
      if (!parsed.success) throw new AppError('BAD_REQUEST', `Malformed ${type} event`);
      return { type, events: [{ type: 'organization.deleted', organizationId: parsed.data.id }] };
    }
    default:
      return { type, events: [] };
  }
}

/** The svix headers of a request, as `Webhook.verify` takes them. */
function svixHeaders(headers: NodeJS.Dict<string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['svix-id', 'svix-timestamp', 'svix-signature']) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/** A verified delivery: its svix id (at most 128 characters; the key for de-duplication) and its events. */
export interface ClerkDelivery {
  deliveryId: string;
  mapped: MappedIdentityEvent;
}

/** Receives the deliveries of one Clerk webhook endpoint. */
export interface ClerkWebhook {
  /**
   * Checks the svix signature of `body` (the raw request bytes) with the request's `headers`, then maps it.
   * @throws AppError UNAUTHENTICATED when the svix headers are missing, no signature matches, or the
   *   timestamp is more than 5 minutes off; BAD_REQUEST when the signed body is not JSON, `svix-id` is
   *   longer than 128 characters, or the event is malformed (`mapClerkEvent`).
   */
  receive(body: Buffer, headers: NodeJS.Dict<string | string[]>): ClerkDelivery;
}

/**
 * The receiver of a Clerk endpoint signing with `secret` (`whsec_<base64>`, config `IDENTITY_WEBHOOK_SECRET`).
 * @throws Error when `secret` is not a svix signing secret.
 */
export function createClerkWebhook(secret: string): ClerkWebhook {
  let verifier: Webhook;
  try {
    verifier = new Webhook(secret);
  } catch (e) {
    throw new Error('IDENTITY_WEBHOOK_SECRET is not a svix signing secret (whsec_<base64>)', { cause: e });
  }
  return {
    receive(body, requestHeaders) {
      const headers = svixHeaders(requestHeaders);
      let payload: unknown;
      try {
        payload = verifier.verify(body, headers);
      } catch (e) {
        if (e instanceof WebhookVerificationError) {
          throw new AppError('UNAUTHENTICATED', `Webhook not verified: ${e.message}`, { cause: e });
        }
        throw new AppError('BAD_REQUEST', 'Webhook body is not JSON', { cause: e });
      }
      const deliveryId = headers['svix-id'] ?? '';
      if (deliveryId.length > 128) throw new AppError('BAD_REQUEST', 'svix-id too long');
      return { deliveryId, mapped: mapClerkEvent(payload) };
    },
  };
}
