import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { AppError, type Role } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityWebhookDelivery, TenantMember } from '../db/entities';
import { baseOrmOptions } from '../db/orm-config';
import type { ReconcileDirectory } from '../domain/tenancy/reconcile';
import type { DirectoryMember, DirectoryOrganization, MembershipEvent } from '../ports/directory';
import {
  type JobLog,
  startReconcileJob,
  subscribeMembershipEvents,
  WEBHOOK_DELIVERY_RETENTION_MS,
} from './reconcile';

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

function recordingLog(): JobLog & { errors: string[]; infos: string[] } {
  const errors: string[] = [];
  const infos: string[] = [];
  return { errors, infos, info: (m) => infos.push(m), error: (m) => errors.push(m) };
}

describe('reconcile job and membership subscription', () => {
  let orm: PgliteORM;
  beforeAll(async () => {
    // The migrations create pg_trgm's indexes: load the extension as the service's PGlite does.
    orm = await PgliteORM.init({
      ...baseOrmOptions,
      dbName: 'memory://',
      driverOptions: { extensions: { pg_trgm } },
    });
    await orm.migrator.up();
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
    expect(log.errors).toEqual(['[reconcile] failed; retrying at the next interval']);

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
    expect(log.infos).toHaveLength(1);
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
    expect(log.errors).toEqual([`[membership] could not apply member.removed of ${org.id}`]);
  });
});
