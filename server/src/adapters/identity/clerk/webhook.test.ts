import { AppError } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { clerkRoleToRole, mapClerkEvent } from './webhook';

const organization = { id: 'org_1', name: 'Cartório', slug: 'cartorio', object: 'organization' };

function membership(type: string, role: string, publicMetadata: unknown = {}) {
  return {
    object: 'event',
    type,
    data: {
      id: 'orgmem_1',
      object: 'organization_membership',
      role,
      public_metadata: publicMetadata,
      organization,
      public_user_data: { user_id: 'user_1', identifier: 'ana@example.com' },
    },
  };
}

describe('Clerk role mapping', () => {
  it.each([
    ['org:admin', {}, 'admin'],
    ['org:member', {}, 'reader'],
    ['org:member', { role: 'editor' }, 'editor'],
    ['org:admin', { role: 'reader' }, 'reader'],
    ['org:member', { role: 'superuser' }, 'reader'],
    ['org:editor', {}, 'editor'],
    ['org:owner', null, 'owner'],
    ['org:billing_manager', {}, 'reader'],
    [undefined, undefined, 'reader'],
  ] as const)('%s with metadata %j is %s', (clerkRole, metadata, role) => {
    expect(clerkRoleToRole(clerkRole, metadata)).toBe(role);
  });
});

describe('Clerk event mapping', () => {
  it('maps membership created, updated and deleted with the organization named in the payload', () => {
    expect(mapClerkEvent(membership('organizationMembership.created', 'org:admin'))).toEqual({
      type: 'organizationMembership.created',
      events: [{ type: 'member.upserted', organizationId: 'org_1', userId: 'user_1', role: 'admin' }],
      organization: { id: 'org_1', name: 'Cartório', slug: 'cartorio' },
    });
    expect(
      mapClerkEvent(membership('organizationMembership.updated', 'org:member', { role: 'editor' })).events,
    ).toEqual([{ type: 'member.upserted', organizationId: 'org_1', userId: 'user_1', role: 'editor' }]);
    expect(mapClerkEvent(membership('organizationMembership.deleted', 'org:member')).events).toEqual([
      { type: 'member.removed', organizationId: 'org_1', userId: 'user_1' },
    ]);
  });

  it('maps organization.deleted, ignores other types, falls back to the name when there is no slug', () => {
    expect(
      mapClerkEvent({
        type: 'organization.deleted',
        data: { id: 'org_1', deleted: true, object: 'organization' },
      }),
    ).toEqual({
      type: 'organization.deleted',
      events: [{ type: 'organization.deleted', organizationId: 'org_1' }],
    });
    expect(mapClerkEvent({ type: 'user.created', data: { id: 'user_9' } })).toEqual({
      type: 'user.created',
      events: [],
    });
    const base = membership('organizationMembership.created', 'org:admin');
    const noSlug = { ...base, data: { ...base.data, organization: { ...organization, slug: null } } };
    expect(mapClerkEvent(noSlug).organization).toEqual({ id: 'org_1', name: 'Cartório', slug: 'Cartório' });
  });

  it('refuses malformed events with BAD_REQUEST', () => {
    for (const payload of [
      null,
      'text',
      { data: {} },
      { type: 'organizationMembership.created', data: { organization: { id: 'org_1' } } },
      { type: 'organization.deleted', data: {} },
    ]) {
      expect(() => mapClerkEvent(payload)).toThrow(AppError);
    }
  });
});
