import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '@notary/shared';
import { Provider, type ProviderEntity } from '../db/entities';
import { validationError } from '../errors';
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

/**
 * Registers a provider (spec 001, Provider registration). `input` is validated here whatever the caller.
 * @throws AppError BAD_REQUEST naming every missing or invalid field; CONFLICT when the slug is taken.
 */
export async function registerProvider(em: SqlEntityManager, input: unknown): Promise<ProviderView> {
  const parsed = ProviderRegistrationSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  const data: ProviderRegistration = parsed.data;
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
 * name is part of the search text).
 * @throws AppError BAD_REQUEST (invalid fields), NOT_FOUND
 */
export async function updateProvider(
  em: SqlEntityManager,
  slug: string,
  input: unknown,
): Promise<ProviderView> {
  const parsed = ProviderUpdateSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  const patch: ProviderUpdate = parsed.data;
  const provider = await findProvider(em, slug);
  em.assign(provider, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
  // Attribution shown by searches comes from this row: caches must reload it.
  provider.catalogVersion += 1;
  await em.flush();
  return toProviderView(provider);
}
