import { AppError, isAppError } from '@notary/shared';
import { type Actor, type OrganizationActor, requireOrganization } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';

/**
 * The caller acting in an organization as admin or owner (spec, Authentication: item 6, "Organization profile and
 * deletion: admin or owner"; the role table's `manageSettings` column says exactly that).
 * @param action what the caller tries to do, for the 403 sentence (`requirePermission`), e.g. `update the
 *   organization profile`.
 * @throws AppError BAD_REQUEST `No active organization` in a personal workspace; FORBIDDEN below admin.
 */
export function requireOrganizationManager(actor: Actor, action: string): OrganizationActor {
  const org = requireOrganization(actor);
  requirePermission(org, 'manageSettings', action);
  return org;
}

/**
 * Runs a call to the identity provider. The directory port already throws AppError BAD_GATEWAY on provider
 * failures; anything else it lets escape (a bug, a network error of an adapter) is reported as BAD_GATEWAY
 * too, with `message`, because the spec answers 502 for "identity provider error" and never 500 there.
 * AppErrors pass through unchanged except BAD_GATEWAY, whose message is replaced by `message` so that the
 * caller says what state the service is in (e.g. "files deleted, retry").
 */
export async function atProvider<T>(call: () => Promise<T>, message: string): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (isAppError(e) && e.code !== 'BAD_GATEWAY') throw e;
    throw new AppError('BAD_GATEWAY', message, { cause: e });
  }
}
