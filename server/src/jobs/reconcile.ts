import type { EntityManager } from '@mikro-orm/core';
import type { Log } from '@notary/platform/log';
import { IdentityWebhookDelivery } from '../db/entities';
import {
  applyMembershipEvent,
  type ReconcileDirectory,
  type ReconcileSummary,
  reconcileAll,
} from '../domain/tenancy/reconcile';
import type { MembershipEvent, OrganizationDirectory } from '../ports/directory';
import { type PeriodicJob, startPeriodicJob } from './periodic';

/**
 * Processed webhook deliveries are remembered this long (svix retries a failed delivery for about a day and a
 * half; a replay older than 5 minutes fails its timestamp check anyway).
 */
export const WEBHOOK_DELIVERY_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** The periodic reconcile (see `startReconcileJob`): `runOnce` resolves with its summary, undefined on failure. */
export type ReconcileJob = PeriodicJob<ReconcileSummary>;

/**
 * Every `intervalSeconds` (0: never), reconciles the role table with the provider's memberships
 * (`reconcileAll`, on a fresh `em.fork()`) and forgets webhook deliveries older than the retention. Runs never
 * overlap; errors are logged and the next tick tries again. The timer is unref'd: it never keeps the process
 * alive. Together with `resolveTenant` asking the provider when a row is missing, a member removed at the
 * provider without any event reaching the service loses access within `intervalSeconds` (at most 300, the
 * longest session token lifetime).
 */
export function startReconcileJob(options: {
  fork: () => EntityManager;
  directory: ReconcileDirectory;
  intervalSeconds: number;
  /** Summaries at info (only when something changed), failures at error; a child naming its module. */
  log: Log;
}): ReconcileJob {
  return startPeriodicJob(options.intervalSeconds * 1000, async (): Promise<ReconcileSummary | undefined> => {
    try {
      const em = options.fork();
      const summary = await reconcileAll(em, options.directory);
      await em.nativeDelete(IdentityWebhookDelivery, {
        receivedAt: { $lt: new Date(Date.now() - WEBHOOK_DELIVERY_RETENTION_MS) },
      });
      if (summary.added + summary.updated + summary.removed > 0) {
        options.log.info({ ...summary }, 'memberships reconciled');
      }
      return summary;
    } catch (e) {
      options.log.error({ err: e }, 'reconcile failed; retrying at the next interval');
      return undefined;
    }
  });
}

/**
 * Subscribes the role table to the provider's membership events: each event is applied on a fresh
 * `em.fork()`, in the order received (one at a time, so an upsert followed by a removal ends removed).
 * Failures are logged, never thrown at the provider; the periodic reconcile repairs what a failed event left.
 * The listener resolves once its event is applied. `drain()` waits for the events received so far.
 */
export function subscribeMembershipEvents(options: {
  directory: Pick<OrganizationDirectory, 'onMembershipEvent'>;
  fork: () => EntityManager;
  log: Log;
}): { drain(): Promise<void> } {
  let queue: Promise<void> = Promise.resolve();
  const apply = async (event: MembershipEvent): Promise<void> => {
    try {
      await applyMembershipEvent(options.fork(), event);
    } catch (e) {
      options.log.error(
        { err: e, event: event.type, organization: event.organizationId },
        'membership event not applied',
      );
    }
  };
  options.directory.onMembershipEvent((event) => {
    queue = queue.then(() => apply(event));
    return queue;
  });
  return { drain: () => queue };
}
