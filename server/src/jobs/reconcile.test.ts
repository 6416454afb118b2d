import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { recordingLog } from '@notary/platform/log.testing';
import { AppError, type Role } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityWebhookDelivery, TenantMember } from '../db/entities';
import { openMemoryOrm } from '../db/memory-orm.testing';
import type { ReconcileDirectory } from '../domain/tenancy/reconcile';
import type { DirectoryMember, DirectoryOrganization, MembershipEvent } from '../ports/directory';
import { startReconcileJob, subscribeMembershipEvents, WEBHOOK_DELIVERY_RETENTION_MS } from './reconcile';

const org: DirectoryOrganization = {
  id: 'org-j',
  name: 'Jobs',
  slug: 'jobs',
  description: '',
  createdAt: new Date(),
};
const member = (userId: string, role: Role): DirectoryMember => ({
  userId,
  role,
  email: `${userId}@example.com`,
  name: userId,
  imageUrl: '',
  joinedAt: new Date(),
});

describe('reconcile job and membership subscription', () => {
  let orm: PgliteORM;
  beforeAll(async () => {
    orm = await openMemoryOrm();
  });
  afterAll(async () => {
    await orm?.close();
  });
  const fork = () => orm.em.fork();
  const rows = async () =>
    Object.fromEntries(
      (await fork().find(TenantMember, { tenant: { externalId: org.id } })).map((r) => [r.userId, r.role]),
    );

  it('runs on its interval, never overlapping; logs failures and tries again; prunes old deliveries', async () => {
    let members = [member('u1', 'owner')];
    let fail = true;
    let calls = 0;
    let release: () => void = () => undefined;
    let gate = Promise.resolve();
    const directory: ReconcileDirectory = {
      listInvitations: async () => [],
      cancelInvitation: async () => undefined,
      listOrganizations: async () => {
        calls++;
        await gate;
        if (fail) throw new AppError('BAD_GATEWAY', 'provider down');
        return [org];
      },
      listMembers: async () => members,
    };
    const em = fork();
    em.create(IdentityWebhookDelivery, {
      id: 'msg_old',
      type: 'x',
      receivedAt: new Date(Date.now() - WEBHOOK_DELIVERY_RETENTION_MS - 60_000),
    });
    em.create(IdentityWebhookDelivery, { id: 'msg_new', type: 'x', receivedAt: new Date() });
    await em.flush();

    const log = recordingLog();
    const job = startReconcileJob({ fork, directory, intervalSeconds: 0, log });
    expect(await job.runOnce()).toBeUndefined();
    expect(log.messages('error')).toEqual(['reconcile failed; retrying at the next interval']);

    fail = false;
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = job.runOnce();
    const b = job.runOnce();
    release();
    expect(await a).toEqual({ organizations: 1, added: 1, updated: 0, removed: 0 });
    expect(await b).toEqual(await a);
    expect(calls).toBe(2); // the second call joined the first run
    expect(await rows()).toEqual({ u1: 'owner' });
    expect(log.messages('info')).toEqual(['memberships reconciled']);
    expect((await fork().find(IdentityWebhookDelivery, {})).map((d) => d.id)).toEqual(['msg_new']);
    await job.stop();

    // On a timer: a change at the provider is picked up within the interval; stop() ends it.
    members = [member('u1', 'owner'), member('u2', 'editor')];
    const timed = startReconcileJob({ fork, directory, intervalSeconds: 1, log });
    for (let i = 0; i < 600 && !(await rows()).u2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await rows()).toEqual({ u1: 'owner', u2: 'editor' });
    await timed.stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 1500));
    expect(calls).toBe(after);
  });

  it('applies membership events in order and logs failures without throwing at the provider', async () => {
    let emit: (event: MembershipEvent) => Promise<void> | void = () => undefined;
    const log = recordingLog();
    const events = subscribeMembershipEvents({
      directory: {
        onMembershipEvent: (listener) => {
          emit = listener;
        },
      },
      fork,
      log,
    });
    // Not awaited one by one: the queue keeps their order.
    void emit({ type: 'member.upserted', organizationId: org.id, userId: 'u3', role: 'reader' });
    void emit({ type: 'member.upserted', organizationId: org.id, userId: 'u3', role: 'admin' });
    void emit({ type: 'member.removed', organizationId: org.id, userId: 'u2' });
    await events.drain();
    expect(await rows()).toEqual({ u1: 'owner', u3: 'admin' });

    const broken = subscribeMembershipEvents({
      directory: {
        onMembershipEvent: (listener) => {
          emit = listener;
        },
      },
      fork: () => {
        throw new Error('database gone');
      },
      log,
    });
    await expect(
      emit({ type: 'member.removed', organizationId: org.id, userId: 'u1' }),
    ).resolves.toBeUndefined();
    await broken.drain();
    expect(log.messages('error')).toEqual(['membership event not applied']);
    expect(log.lines[0]?.fields).toMatchObject({ event: 'member.removed', organization: org.id });
  });
});
