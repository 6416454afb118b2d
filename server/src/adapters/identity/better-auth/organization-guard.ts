/**
 * The HTTP lock-down of better-auth's organization plugin: which of its endpoints are served at all
 * (`ORGANIZATION_HTTP_ENDPOINTS`; the rest answer 404), the validation of `POST /organization/create`, the
 * last owner's `leave` refused, and `get-full-organization` answered without invitations. Members, roles and
 * invitations are managed through the service's `/api/team/*` and `/api/org/*` routes instead, which apply
 * the spec's role hierarchy (better-auth's own endpoints do not).
 */
import { organizationPrefixReservation, organizationSerialPrefix, serialPrefixKey } from '@notary/shared';
import { APIError } from 'better-auth';
import { createAuthMiddleware } from 'better-auth/api';
import { authEndpointOf } from './endpoint-path';
import type { MembershipEventHub } from './membership-events';
import {
  bestRole,
  countOwners,
  type DirectoryAdapter,
  findAll,
  findMemberRow,
  type OrganizationRow,
} from './store';

/** Longest organization name accepted (spec, Organization: profile name, 1 to 120 characters). */
export const ORGANIZATION_NAME_MAX = 120;
/** Longest organization description accepted (spec, Organization: profile description, up to 500 characters). */
export const ORGANIZATION_DESCRIPTION_MAX = 500;
/** Lower-case URL slug: letters, digits and inner hyphens, 1 to 64 characters. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/**
 * better-auth organization endpoints reachable over HTTP (`/api/auth<path>`). Every other path under
 * `/organization/` answers 404 `{message, code: "NOT_FOUND"}` when requested over HTTP (the service's
 * `/api/team/*` and `/api/org/*` routes replace them, with the spec's role hierarchy); server-side
 * `auth.api.*` calls are not affected.
 */
export const ORGANIZATION_HTTP_ENDPOINTS: ReadonlySet<string> = new Set([
  '/organization/create', // any signed-in user; the creator becomes owner (validated, see the guard)
  '/organization/set-active', // members only (checked by better-auth)
  '/organization/list', // the caller's own organizations
  '/organization/get-full-organization', // members only, read only, without its invitations
  '/organization/list-members', // members only, read only
  '/organization/leave', // not the last owner
]);

/**
 * The organization endpoint an HTTP request path names when the guard must refuse it, else null. The path is
 * compared loosely (percent-decoded, lower-cased, repeated and trailing slashes dropped), so that spellings
 * better-auth's router would not route get the same 404 body as the endpoints it would. `basePath` is
 * better-auth's mount point (`/api/auth`).
 */
export function blockedOrganizationPath(url: string, basePath: string): string | null {
  const endpoint = authEndpointOf(url, basePath);
  if (endpoint === null) return null;
  if (endpoint !== '/organization' && !endpoint.startsWith('/organization/')) return null;
  return ORGANIZATION_HTTP_ENDPOINTS.has(endpoint) ? null : endpoint;
}

/** Body of the guard's refusal of an organization endpoint (404). */
export function blockedOrganizationBody(endpoint: string): { message: string; code: 'NOT_FOUND' } {
  return {
    message: `${endpoint} is not available: manage teams through /api/team and organizations through /api/org`,
    code: 'NOT_FOUND',
  };
}

/**
 * Why `slug` may not name a new organization because of the serial prefix it gives (`organizationSerialPrefix`,
 * docs/api.md, Serial numbers), or undefined: `BAD_REQUEST` when the prefix is reserved
 * (`organizationPrefixReservation`: the personal-workspace form, the service's own name, official words),
 * `CONFLICT` when another organization's slug gives a prefix that reads the same (`serialPrefixKey`: equal up
 * to O/0 and I/L/1). Reads every organization's slug (paged): organization creation is rare.
 */
export async function serialPrefixRefusal(
  adapter: Pick<DirectoryAdapter, 'findMany'>,
  slug: string,
): Promise<{ status: 'BAD_REQUEST' | 'CONFLICT'; message: string } | undefined> {
  const prefix = organizationSerialPrefix(slug);
  const reserved = organizationPrefixReservation(prefix);
  if (reserved) {
    return {
      status: 'BAD_REQUEST',
      message: `Slug "${slug}" cannot be used: ${reserved}. Choose another slug`,
    };
  }
  const key = serialPrefixKey(prefix);
  const organizations = await findAll<OrganizationRow>(adapter as DirectoryAdapter, 'organization', []);
  const holder = organizations.find(
    (o) => o.slug !== slug && serialPrefixKey(organizationSerialPrefix(o.slug)) === key,
  );
  if (holder) {
    return {
      status: 'CONFLICT',
      message:
        `Slug "${slug}" gives the serial prefix ${prefix}, which reads as another organization's: ` +
        'serial numbers must name one organization. Choose another slug',
    };
  }
  return undefined;
}

function refuse(status: 'BAD_REQUEST' | 'NOT_FOUND' | 'CONFLICT', message: string): never {
  throw new APIError(status, { message, code: status });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * better-auth `hooks` guarding the organization plugin's HTTP endpoints. They act only on requests that came
 * over HTTP (`ctx.request` set); `auth.api.*` calls made by the service pass untouched.
 *
 * - Any `/organization/*` endpoint outside `ORGANIZATION_HTTP_ENDPOINTS`: 404
 *   `{"message":"... is not available ...","code":"NOT_FOUND"}` (before the endpoint's own checks).
 * - `POST /organization/create` `{name, slug, metadata?: {description?}, logo?: null,
 *   keepCurrentActiveOrganization?}`: 400 `BAD_REQUEST` for a name outside 1..120 characters, a slug that is
 *   not lower-case letters, digits and inner hyphens (1..64), other metadata than a description of at most
 *   500 characters, a logo, or a `userId`; 409 `CONFLICT` when the slug is taken. Then the serial prefix the
 *   slug gives (`serialPrefixRefusal`): 400 when it is reserved, 409 when another organization's reads the
 *   same. The creator becomes owner.
 * - `POST /organization/leave` `{organizationId}`: 400 `BAD_REQUEST` "The last owner cannot leave ..." when
 *   the caller is the organization's only owner; on success the after hook reports `member.removed`.
 * - `GET /organization/get-full-organization`: answered with `invitations: []` (any member may read it; the
 *   invitations are for admins and owners, through `GET /api/team/invitations`).
 *
 * `sessionUserId` resolves the request's session (cookie or `Authorization: Bearer <session token>`) to its
 * user id: before hooks run ahead of the bearer plugin's, so the session must be read through `auth.api`.
 */
export function createOrganizationGuard(input: {
  events: MembershipEventHub;
  sessionUserId: (headers: Headers) => Promise<string | null>;
}) {
  const before = createAuthMiddleware(async (ctx) => {
    const path = ctx.path ?? '';
    if (!ctx.request || !path.startsWith('/organization/')) return;
    if (!ORGANIZATION_HTTP_ENDPOINTS.has(path)) refuse('NOT_FOUND', blockedOrganizationBody(path).message);
    const body: unknown = ctx.body;
    if (path === '/organization/create') {
      if (!isRecord(body)) return; // better-auth's own validation answers
      // Signed-in callers only (the endpoint answers 401 otherwise): nothing to learn about slugs before that.
      if (!(await input.sessionUserId(ctx.request.headers))) return;
      const { name, slug, metadata, logo, userId } = body;
      if (userId !== undefined)
        refuse('BAD_REQUEST', 'userId cannot be set: the caller creates the organization');
      if (logo !== undefined && logo !== null) refuse('BAD_REQUEST', 'Organization logos are not supported');
      if (typeof name !== 'string' || name.trim() === '' || name.trim().length > ORGANIZATION_NAME_MAX) {
        refuse('BAD_REQUEST', `Organization name must have 1 to ${ORGANIZATION_NAME_MAX} characters`);
      }
      if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug)) {
        refuse('BAD_REQUEST', 'Invalid slug: 1 to 64 lower-case letters, digits and inner hyphens');
      }
      if (metadata !== undefined) {
        const keys = isRecord(metadata) ? Object.keys(metadata) : null;
        const description = isRecord(metadata) ? metadata.description : undefined;
        if (
          keys === null ||
          keys.some((k) => k !== 'description') ||
          (description !== undefined &&
            (typeof description !== 'string' || description.length > ORGANIZATION_DESCRIPTION_MAX))
        ) {
          refuse(
            'BAD_REQUEST',
            `metadata may only hold a description of at most ${ORGANIZATION_DESCRIPTION_MAX} characters`,
          );
        }
      }
      const taken = await ctx.context.adapter.findOne({
        model: 'organization',
        where: [{ field: 'slug', value: slug }],
      });
      if (taken) refuse('CONFLICT', `Organization slug "${slug}" is taken`);
      const prefixRefusal = await serialPrefixRefusal(ctx.context.adapter, slug);
      if (prefixRefusal) refuse(prefixRefusal.status, prefixRefusal.message);
      return;
    }
    if (path === '/organization/leave') {
      const organizationId = isRecord(body) ? body.organizationId : undefined;
      if (typeof organizationId !== 'string') return; // better-auth's own validation answers
      const userId = await input.sessionUserId(ctx.request.headers);
      if (!userId) return; // the endpoint answers 401
      const member = await findMemberRow(ctx.context.adapter, organizationId, userId);
      if (
        member &&
        bestRole(member.role) === 'owner' &&
        (await countOwners(ctx.context.adapter, organizationId)) <= 1
      ) {
        refuse(
          'BAD_REQUEST',
          'The last owner cannot leave the organization: make another member owner first, or delete the organization',
        );
      }
    }
  });

  const after = createAuthMiddleware(async (ctx) => {
    const returned: unknown = ctx.context.returned;
    if (returned instanceof APIError || !isRecord(returned)) return;
    if (ctx.path === '/organization/get-full-organization' && ctx.request) {
      // Any member may read it, but invitations (e-mails of people not yet members) are for admins and
      // owners only, through GET /api/team/invitations.
      return ctx.json({ ...returned, invitations: [] });
    }
    if (ctx.path !== '/organization/leave') return;
    const { organizationId, userId } = returned;
    if (typeof organizationId !== 'string' || typeof userId !== 'string') return;
    await input.events.emit({ type: 'member.removed', organizationId, userId });
  });

  return { before, after };
}
