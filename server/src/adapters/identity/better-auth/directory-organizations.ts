/**
 * The organization part of the better-auth `OrganizationDirectory`: read, list, update (name, description in
 * the metadata) and delete organizations, on better-auth's database adapter (see `directory.ts`).
 */
import { AppError } from '@notary/shared';
import type { DirectoryOrganization, OrganizationDirectory } from '../../../ports/directory';
import type { DirectoryContext } from './directory-context';
import {
  byId,
  findAll,
  findOrganization,
  type OrganizationRow,
  provider,
  requireOrganization,
  toDate,
} from './store';

/** The organization's metadata as an object (better-auth stores a JSON string; anything unreadable is `{}`). */
function parseMetadata(value: OrganizationRow['metadata']): Record<string, unknown> {
  if (value && typeof value === 'object') return value;
  if (typeof value !== 'string' || value === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function toOrganization(row: OrganizationRow): DirectoryOrganization {
  const description = parseMetadata(row.metadata).description;
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: typeof description === 'string' ? description : '',
    createdAt: toDate(row.createdAt),
  };
}

/** `getOrganization`, `listOrganizations`, `updateOrganization`, `deleteOrganization`. */
export function organizationMethods(
  input: DirectoryContext,
): Pick<
  OrganizationDirectory,
  'getOrganization' | 'listOrganizations' | 'updateOrganization' | 'deleteOrganization'
> {
  const { events } = input;
  return {
    getOrganization: (organizationId) =>
      provider('read the organization', async () => {
        const row = await findOrganization(await input.adapter(), organizationId);
        return row ? toOrganization(row) : null;
      }),

    listOrganizations: () =>
      provider('list organizations', async () => {
        const rows = await findAll<OrganizationRow>(await input.adapter(), 'organization', []);
        return rows.map(toOrganization).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
      }),

    updateOrganization: (organizationId, patch) =>
      provider('update the organization', async () => {
        const adapter = await input.adapter();
        const org = await requireOrganization(adapter, organizationId);
        const update: Record<string, unknown> = {};
        if (patch.name !== undefined) {
          const name = patch.name.trim();
          if (name === '') throw new AppError('BAD_REQUEST', 'Organization name is empty');
          update.name = name;
        }
        if (patch.description !== undefined) {
          update.metadata = JSON.stringify({
            ...parseMetadata(org.metadata),
            description: patch.description,
          });
        }
        if (Object.keys(update).length === 0) return;
        await adapter.update({ model: 'organization', where: byId(organizationId), update });
      }),

    deleteOrganization: (organizationId) =>
      provider('delete the organization', async () => {
        const adapter = await input.adapter();
        const org = await findOrganization(adapter, organizationId);
        // Children first (foreign keys), so that a retry after a partial failure finishes the job.
        const members = await adapter.deleteMany({
          model: 'member',
          where: [{ field: 'organizationId', value: organizationId }],
        });
        await adapter.deleteMany({
          model: 'invitation',
          where: [{ field: 'organizationId', value: organizationId }],
        });
        // Sessions pointing at it fall back to the personal workspace.
        await adapter.updateMany({
          model: 'session',
          where: [{ field: 'activeOrganizationId', value: organizationId }],
          update: { activeOrganizationId: null },
        });
        if (org) await adapter.delete({ model: 'organization', where: byId(organizationId) });
        if (org || members > 0) await events.emit({ type: 'organization.deleted', organizationId });
      }),
  };
}
