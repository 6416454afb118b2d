import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '@notary/shared';
import { Provider, type ProviderEntity } from '../db/entities';
import { validationError } from '../errors';
import type { ProviderEgress } from './egress';
import {
  type ProviderRegistration,
  ProviderRegistrationSchema,
  type ProviderUpdate,
  ProviderUpdateSchema,
  type ProviderView,
} from './schemas';

/** The API projection of a provider row (`ProviderViewSchema`). */
export function toProviderView(p: ProviderEntity): ProviderView {
  return {
    slug: p.slug,
    name: p.name,
    kind: p.kind,
    baseUrl: p.baseUrl,
    publisherName: p.publisherName,
    publisherUrl: p.publisherUrl,
    license: p.license,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    sync: {
      status: p.syncStatus,
      lastSyncAt: p.lastSyncAt?.toISOString() ?? null,
      lastSuccessAt: p.lastSuccessAt?.toISOString() ?? null,
      indicatorCount: p.indicatorCount,
      lastError: p.lastError ?? null,
      progress: p.syncStatus === 'running' ? (p.syncProgress ?? null) : null,
    },
  };
}

/** What registration asks of the egress: the address check of a `baseUrl` (`ProviderEgress.checkUrl`). */
export type BaseUrlCheck = Pick<ProviderEgress, 'checkUrl'>;

/**
 * Refuses a `baseUrl` whose host is, or resolves to, an address the catalog may not connect to, so that registering a
 * provider cannot point the catalog at its own network (SSRF); the connect-time check stays the rule.
 * @throws AppError BAD_REQUEST naming `baseUrl`.
 */
async function assertReachableBaseUrl(egress: BaseUrlCheck, baseUrl: string): Promise<void> {
  const why = await egress.checkUrl(baseUrl);
  if (why) {
    throw new AppError('BAD_REQUEST', `baseUrl refused: ${why}`, { fields: ['baseUrl'] });
  }
}

/**
 * Registers a provider (spec, Provider registration). `input` is validated here whatever the caller,
 * and its `baseUrl` checked against the egress policy.
 * @throws AppError BAD_REQUEST naming every missing or invalid field, or a `baseUrl` on a refused address
 * (private, loopback... unless in `CATALOG_PROVIDER_ALLOW_HOSTS`); CONFLICT when the slug is taken.
 */
export async function registerProvider(
  em: SqlEntityManager,
  input: unknown,
  egress: BaseUrlCheck,
): Promise<ProviderView> {
  const parsed = ProviderRegistrationSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  const data: ProviderRegistration = parsed.data;
  await assertReachableBaseUrl(egress, data.baseUrl);
  if (await em.findOne(Provider, { slug: data.slug })) {
    throw new AppError('CONFLICT', `A provider with slug ${data.slug} is already registered`, {
      fields: ['slug'],
    });
  }
  const provider = em.create(Provider, {
    ...data,
    syncStatus: 'never',
    indicatorCount: 0,
    catalogVersion: 0,
  });
  await em.flush();
  return toProviderView(provider);
}

/** Every registered provider, by slug. */
export async function listProviders(em: SqlEntityManager): Promise<ProviderView[]> {
  const rows = await em.find(Provider, {}, { orderBy: { slug: 'asc' } });
  return rows.map(toProviderView);
}

/** @throws AppError NOT_FOUND */
export async function findProvider(em: SqlEntityManager, slug: string): Promise<ProviderEntity> {
  const provider = await em.findOne(Provider, { slug });
  if (!provider) throw new AppError('NOT_FOUND', `No provider ${slug}`);
  return provider;
}

/**
 * Changes a provider's registration (not its slug). A change of `baseUrl`, `kind` or the publisher fields
 * takes effect for values at once; definitions and their embeddings follow on the next sync (the publisher
 * name is part of the search text). A new `baseUrl` is checked like at registration.
 * @throws AppError BAD_REQUEST (invalid fields, a refused `baseUrl`), NOT_FOUND
 */
export async function updateProvider(
  em: SqlEntityManager,
  slug: string,
  input: unknown,
  egress: BaseUrlCheck,
): Promise<ProviderView> {
  const parsed = ProviderUpdateSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  const patch: ProviderUpdate = parsed.data;
  if (patch.baseUrl !== undefined) await assertReachableBaseUrl(egress, patch.baseUrl);
  const provider = await findProvider(em, slug);
  em.assign(provider, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
  // Attribution shown by searches comes from this row: caches must reload it.
  provider.catalogVersion += 1;
  await em.flush();
  return toProviderView(provider);
}
