import { z } from 'zod';
import { SYNC_STATUSES } from '../db/entities';
import { REQUIRED } from '../errors';
import { CONNECTOR_KINDS } from './connectors';

const missingIsRequired = (iss: { input?: unknown }) =>
  iss.input === undefined || iss.input === null ? REQUIRED : undefined;

const text = (max: number) => z.string({ error: missingIsRequired }).trim().min(1, REQUIRED).max(max);
const httpUrl = z
  .string({ error: missingIsRequired })
  .trim()
  .min(1, REQUIRED)
  .max(2048)
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }));

/**
 * Provider registration (spec, Provider registration): every field required; `slug` is the provider's
 * identifier (lower-case letters, digits and hyphens); `kind` picks the connector; the three publisher fields
 * compose the attribution block of every result.
 */
export const ProviderRegistrationSchema = z.object({
  slug: text(64).pipe(
    z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'lower-case letters, digits and inner hyphens only'),
  ),
  name: text(200),
  kind: text(64).pipe(
    z
      .string()
      .refine((k) => CONNECTOR_KINDS.includes(k), `unknown kind; known: ${CONNECTOR_KINDS.join(', ')}`),
  ),
  baseUrl: httpUrl,
  publisherName: text(300),
  publisherUrl: httpUrl,
  license: text(200),
});
export type ProviderRegistration = z.infer<typeof ProviderRegistrationSchema>;

/** Fields a provider update may change (all optional; the slug never changes). */
export const ProviderUpdateSchema = ProviderRegistrationSchema.omit({ slug: true }).partial();
export type ProviderUpdate = z.infer<typeof ProviderUpdateSchema>;

export const SyncStatusSchema = z.enum(SYNC_STATUSES).meta({
  description:
    '`never`: registered, not synced yet. `running`: a sync is in progress. `ok`: the last sync read the whole catalog and committed it. `partial`: the last sync committed what it read but the walk stopped early (a page that repeated, the page limit) or stale points could not be removed; nothing was deleted on its evidence. `failed`: the last sync failed (provider error or timeout, embeddings or index error); the previous index is unchanged and still searched.',
});

export const SyncProgressSchema = z.object({
  phase: z.enum(['crawl', 'diff', 'embed', 'upsert', 'commit', 'cleanup', 'done']),
  categoriesDone: z.number().int(),
  categoriesTotal: z.number().int(),
  indicatorsSeen: z.number().int(),
  toEmbed: z.number().int(),
  embedded: z.number().int(),
  upserted: z.number().int(),
  removed: z.number().int(),
});

/** A provider as the API shows it: its registration and its synchronization stamp. */
export const ProviderViewSchema = z.object({
  slug: z.string(),
  name: z.string(),
  kind: z.string(),
  baseUrl: z.string(),
  publisherName: z.string(),
  publisherUrl: z.string(),
  license: z.string(),
  createdAt: z.string().meta({ format: 'date-time' }),
  updatedAt: z.string().meta({ format: 'date-time' }),
  sync: z.object({
    status: SyncStatusSchema,
    lastSyncAt: z
      .string()
      .nullable()
      .meta({ description: 'End of the last finished sync attempt (ISO 8601)' }),
    lastSuccessAt: z.string().nullable().meta({ description: 'End of the last sync that committed' }),
    indicatorCount: z.number().int(),
    lastError: z.string().nullable(),
    progress: SyncProgressSchema.nullable(),
  }),
});
export type ProviderView = z.infer<typeof ProviderViewSchema>;
