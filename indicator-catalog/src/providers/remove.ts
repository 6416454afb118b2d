import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '@notary/shared';
import { Provider } from '../db/entities';
import type { CatalogCache } from '../search/catalog-cache';
import type { SyncRunner } from '../sync/runner';
import type { VectorIndex } from '../vector-index/port';
import { findProvider } from './service';

/**
 * Removes a provider with its definitions (database rows first, so searches stop showing them at once) and
 * its vector index points.
 * @throws AppError NOT_FOUND; CONFLICT while a sync of it runs on this instance.
 */
export async function removeProvider(
  deps: { index: VectorIndex; sync: SyncRunner; catalog: CatalogCache },
  em: SqlEntityManager,
  slug: string,
): Promise<void> {
  await findProvider(em, slug);
  if (deps.sync.current(slug))
    throw new AppError('CONFLICT', `A sync of ${slug} is running; remove it afterwards`);
  // Rows go by the foreign keys' ON DELETE CASCADE.
  await em.nativeDelete(Provider, { slug });
  deps.catalog.invalidate();
  await deps.index.removeProvider(slug);
  await deps.index.persist();
}
