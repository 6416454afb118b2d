import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '@notary/shared';
import { referenceProviderRegistration } from '../reference-provider/src/registration';
import type { CatalogDeps } from './catalog';
import { Provider, type ProviderEntity } from './db/entities';
import { registerProvider, updateProvider } from './providers/service';

/**
 * First-start work of `npm run start:catalog`, so that a fresh machine has a searchable catalog: registers the
 * reference provider at `referenceUrl` (or points its registration at a new URL), then syncs it (at every start:
 * unchanged definitions are not re-embedded) and every provider that has never committed or was embedded by another
 * embedder. `readiness` becomes `ok` once the reference provider has a committed sync with the current embedder (at
 * once when it already had one); a failed sync of it is retried with backoff (30 s doubling to 5 min) while `readiness`
 * says `error`. Other providers never hold readiness back: a third party being down must not make the catalog
 * unhealthy; their failures show in their sync status.
 */
export async function bootstrap(
  deps: CatalogDeps,
  options: { referenceUrl?: string; signal: AbortSignal },
): Promise<void> {
  const em = deps.db.fork();
  let referenceSlug: string | undefined;
  if (options.referenceUrl) {
    const registration = referenceProviderRegistration(options.referenceUrl);
    referenceSlug = registration.slug;
    const existing = await em.findOne(Provider, { slug: registration.slug });
    if (!existing) await registerProvider(em, registration, deps.egress);
    else if (existing.baseUrl !== registration.baseUrl) {
      await updateProvider(em, registration.slug, { baseUrl: registration.baseUrl }, deps.egress);
      deps.catalog.invalidate();
    }
  }
  const providers = await deps.db.fork().find(Provider, {}, { orderBy: { slug: 'asc' } });
  const needsSync = (p: ProviderEntity) => !p.lastSuccessAt || p.embedderId !== deps.embedder.id;
  const slugs = providers.filter((p) => p.slug === referenceSlug || needsSync(p)).map((p) => p.slug);
  const blocking = new Set(
    providers.filter((p) => p.slug === referenceSlug && needsSync(p)).map((p) => p.slug),
  );
  if (blocking.size === 0) deps.readiness = { status: 'ok' };
  let delayMs = 30_000;
  let pending = slugs;
  while (pending.length > 0 && !options.signal.aborted) {
    const failed: string[] = [];
    for (const slug of pending) {
      if (options.signal.aborted) return;
      const outcome = await deps.sync.run(slug, 'startup').catch((e: unknown) => ({
        status: 'failed' as const,
        error: errorMessage(e),
      }));
      deps.log
        .child({ module: 'sync' })
        .info(`startup sync of ${slug}: ${outcome.status}${outcome.error ? ` (${outcome.error})` : ''}`);
      if (outcome.status === 'failed') failed.push(slug);
      else blocking.delete(slug);
    }
    if (blocking.size === 0) deps.readiness = { status: 'ok' };
    else
      deps.readiness = {
        status: 'error',
        detail: `first sync of ${[...blocking].join(', ')} failed; retrying`,
      };
    pending = failed.filter((slug) => blocking.has(slug));
    if (pending.length > 0) {
      await sleep(delayMs, undefined, { signal: options.signal }).catch(() => undefined);
      delayMs = Math.min(delayMs * 2, 300_000);
    }
  }
  if (deps.readiness.status === 'starting') deps.readiness = { status: 'ok' };
}
