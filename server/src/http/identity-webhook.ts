import { AppError, isRole, type Role } from '@notary/shared';
import express, { type RequestHandler } from 'express';
import { Webhook, WebhookVerificationError } from 'svix';
import { z } from 'zod';
import type { MembershipEvent } from '../adapters/identity/directory';
import type { AppDeps } from '../deps';
import { applyMembershipEvent } from '../domain/tenancy/reconcile';
import { sendError } from './errors';

/**
 * The identity provider's webhook: `POST /api/webhooks/identity`, no credentials (spec, Authentication 4 and
 * Events). For a hosted provider that signs its deliveries with svix (Clerk): the signature is checked on the
 * raw body with `IDENTITY_WEBHOOK_SECRET` (`whsec_...`), deliveries are de-duplicated on `svix-id`, and
 * membership events are applied to the service's role table (domain/tenancy/reconcile.ts).
 *
 * Answers (REST error body `{message, code}`):
 * - 200 `{ok:true}`: applied; `{ok:true, duplicate:true}`: a delivery id seen before (replay or retry), not
 *   applied again; `{ok:true, ignored:true}`: an event type that does not concern memberships.
 * - 400 the signed body is not JSON or not a well-formed membership event.
 * - 401 missing svix headers, no matching signature, or a timestamp more than 5 minutes off (stale or future):
 *   the delivery is not authenticated. svix retries non-2xx deliveries; a bad signature stays bad.
 * - 503 no `IDENTITY_WEBHOOK_SECRET` configured (the in-process provider reports through its hooks instead).
 * - 413 body over 256 kB.
 *
 * Clerk events mapped (others are acknowledged and ignored):
 * - `organizationMembership.created` / `.updated` → member upserted with the mapped role (`clerkRoleToRole`);
 *   the organization's tenant is created from the payload's name and slug when the service never saw it.
 * - `organizationMembership.deleted` → member removed.
 * - `organization.deleted` → the organization's member rows removed (documents stay: deleting them is the
 *   organization-deletion flow's job).
 */
export const IDENTITY_WEBHOOK_PATH = '/api/webhooks/identity';

/** Largest accepted delivery; Clerk's membership payloads are a few kB. */
const MAX_BODY = '256kb';

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

/**
 * The route's handlers, to register before the JSON body parser (the signature covers the raw bytes):
 * `app.post(IDENTITY_WEBHOOK_PATH, identityWebhookRoute(deps))`.
 * @throws Error at construction when `IDENTITY_WEBHOOK_SECRET` is set but is not a svix secret.
 */
export function identityWebhookRoute(deps: Pick<AppDeps, 'config' | 'db'>): RequestHandler[] {
  const secret = deps.config.identityWebhookSecret;
  let verifier: Webhook | undefined;
  if (secret) {
    try {
      verifier = new Webhook(secret);
    } catch (e) {
      throw new Error('IDENTITY_WEBHOOK_SECRET is not a svix signing secret (whsec_<base64>)', { cause: e });
    }
  }

  const handle: RequestHandler = async (req, res) => {
    try {
      if (!verifier) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'Identity webhook not configured (IDENTITY_WEBHOOK_SECRET)',
        );
      }
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const headers = svixHeaders(req.headers);
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
      const mapped = mapClerkEvent(payload);

      const em = deps.db.fork();
      const duplicate = await em.transactional(async (tx) => {
        // Recorded in the same transaction as its effects: a delivery that fails is not marked seen, so the
        // provider's retry applies it; a concurrent duplicate waits on the key, then finds it taken.
        const inserted = await tx.execute<{ id: string }[]>(
          'insert into "identity_webhook_delivery" ("id", "type", "received_at") values (?, ?, ?) ' +
            'on conflict ("id") do nothing returning "id"',
          [deliveryId, mapped.type.slice(0, 128), new Date()],
        );
        if (inserted.length === 0) return true;
        for (const event of mapped.events) {
          await applyMembershipEvent(
            tx,
            event,
            mapped.organization ? { organization: mapped.organization } : {},
          );
        }
        return false;
      });
      if (duplicate) res.status(200).json({ ok: true, duplicate: true });
      else if (mapped.events.length === 0) res.status(200).json({ ok: true, ignored: true });
      else res.status(200).json({ ok: true });
    } catch (e) {
      sendError(res, e);
    }
  };

  return [express.raw({ type: () => true, limit: MAX_BODY }), handle];
}
