import { AppError } from '@notary/shared';
import express, { type RequestHandler } from 'express';
import {
  type ClerkWebhook,
  createClerkWebhook,
  type MappedIdentityEvent,
} from '../adapters/identity/clerk/webhook';
import { IdentityWebhookDelivery } from '../db/entities';
import type { AppDeps } from '../deps';
import { applyMembershipEvent, cancelInvitationsForEvents } from '../domain/tenancy/reconcile';
import { publicRoute } from './route';

/**
 * The identity provider's webhook: `POST /api/webhooks/identity`, no credentials (spec, Authentication: item 4, and
 * Events). For a hosted provider that signs its deliveries with svix (Clerk): the signature is checked on the
 * raw body with `IDENTITY_WEBHOOK_SECRET` (`whsec_...`) and the payload mapped to membership events
 * (`adapters/identity/clerk/webhook.ts`), deliveries are de-duplicated on `svix-id`, and the events are
 * applied to the service's role table (domain/tenancy/reconcile.ts).
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
 * Effects: a membership created or updated upserts the member (the organization's tenant is created from the
 * payload's name and slug when the service never saw it), after canceling the member's pending invitations
 * its role could no longer give; a membership deleted cancels all of the member's and removes the member; an
 * organization deleted removes its member rows (documents stay: deleting them is the organization-deletion
 * flow's job).
 */
export const IDENTITY_WEBHOOK_PATH = '/api/webhooks/identity';

/** Largest accepted delivery; Clerk's membership payloads are a few kB. */
const MAX_BODY = '256kb';

/**
 * The route's handlers, to register before the JSON body parser (the signature covers the raw bytes):
 * `app.post(IDENTITY_WEBHOOK_PATH, identityWebhookRoute(deps))`.
 * @throws Error at construction when `IDENTITY_WEBHOOK_SECRET` is set but is not a svix secret.
 */
export function identityWebhookRoute(deps: Pick<AppDeps, 'config' | 'db' | 'directory'>): RequestHandler[] {
  const secret = deps.config.identityWebhookSecret;
  const webhook: ClerkWebhook | undefined = secret ? createClerkWebhook(secret) : undefined;

  const handle = publicRoute(async ({ req, res }) => {
    if (!webhook) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Identity webhook not configured (IDENTITY_WEBHOOK_SECRET)');
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const { deliveryId, mapped } = webhook.receive(body, req.headers);
    const em = deps.db.fork();
    // A role lowered or a membership ended cancels the member's invitations the new role could not give, as
    // the team routes do; first, and outside the transaction (a provider call), so a failure (502) applies
    // nothing and the provider's retry does it all. A delivery seen before changes nothing.
    const seen = await em.count(IdentityWebhookDelivery, { id: deliveryId });
    if (seen === 0) await cancelInvitationsForEvents(deps.directory, mapped.events);
    const duplicate = await applyDelivery(em, deliveryId, mapped);
    if (duplicate) res.status(200).json({ ok: true, duplicate: true });
    else if (mapped.events.length === 0) res.status(200).json({ ok: true, ignored: true });
    else res.status(200).json({ ok: true });
  });

  return [express.raw({ type: () => true, limit: MAX_BODY }), handle];
}

/**
 * Applies a delivery's events once: true when `deliveryId` was seen before (nothing applied). The delivery is
 * recorded in the same transaction as its effects: a delivery that fails is not marked seen, so the provider's
 * retry applies it; a concurrent duplicate waits on the key, then finds it taken.
 */
async function applyDelivery(
  em: ReturnType<AppDeps['db']['fork']>,
  deliveryId: string,
  mapped: MappedIdentityEvent,
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const inserted = await tx.execute<{ id: string }[]>(
      'insert into "identity_webhook_delivery" ("id", "type", "received_at") values (?, ?, ?) ' +
        'on conflict ("id") do nothing returning "id"',
      [deliveryId, mapped.type.slice(0, 128), new Date()],
    );
    if (inserted.length === 0) return true;
    for (const event of mapped.events) {
      await applyMembershipEvent(tx, event, mapped.organization ? { organization: mapped.organization } : {});
    }
    return false;
  });
}
