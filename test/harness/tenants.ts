import { randomUUID } from 'node:crypto';
import { Tenant } from '@notary/server/db/entities';
import type { TestService } from './service';

export type Role = 'owner' | 'admin' | 'editor' | 'reader';

export interface TestOrg {
  /** The organization's id at the identity provider. */
  id: string;
  slug: string;
  /** The service's tenant id of the organization. */
  tenantId: string;
  /** Session JWT with the organization active, by e-mail. */
  tokens: Record<string, string>;
  /** User id by e-mail. */
  ids: Record<string, string>;
}

let counter = 0;

/**
 * Creates the users, the organization (the first member is its owner) and the memberships as an operator
 * would (`user:create`, `org:create`, `member:add`), and a session JWT with the organization active for each.
 */
export async function makeOrg(t: TestService, name: string, members: [string, Role][]): Promise<TestOrg> {
  const ids: Record<string, string> = {};
  for (const [email] of members) ids[email] = await t.operator({ command: 'user:create', email });
  const [owner] = members;
  if (owner?.[1] !== 'owner') throw new Error('the first member must be the owner');
  const out = await t.operator({ command: 'org:create', name: `${name} ${++counter}`, owner: owner[0] });
  const [id = '', slug = ''] = out.split(' ');
  for (const [email, role] of members.slice(1))
    await t.operator({ command: 'member:add', org: slug, email, role });
  const tokens: Record<string, string> = {};
  for (const [email] of members) tokens[email] = await t.token(email, slug);
  const tenant = await t.service.deps.db
    .fork()
    .findOneOrFail(Tenant, { kind: 'organization', externalId: id });
  return { id, slug, tenantId: tenant.id, tokens, ids };
}

/** A fresh e-mail address, unique in the process. */
export const freshEmail = (who: string): string => `${who}.${randomUUID().slice(0, 8)}@example.com`;
