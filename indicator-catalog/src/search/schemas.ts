import { z } from 'zod';
import { Geocode } from '../providers/contract';

/** `GET /api/search` query. `city` and `geocode` exclude each other. */
export const SearchInputSchema = z
  .object({
    q: z.string().trim().min(1, 'required').max(500).meta({ description: 'Query text (Portuguese first)' }),
    city: z.string().trim().min(1).max(200).optional().meta({
      description: 'Municipality name, resolved through the provider (fuzzy; `Nome - UF` disambiguates)',
    }),
    geocode: Geocode.optional().meta({ description: '7-digit IBGE municipality code' }),
    year: z.coerce
      .number()
      .int()
      .min(1000)
      .max(9999)
      .optional()
      .meta({ description: 'Only values of this year' }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(50)
      .default(10)
      .meta({ description: 'Results, 1..50 (default 10)' }),
  })
  .refine((v) => !(v.city && v.geocode), { message: 'give city or geocode, not both', path: ['city'] });
export type SearchInput = z.infer<typeof SearchInputSchema>;

const NonEmpty = z.string().min(1);

/**
 * Where a result's values came from; every field required (spec, What the service does: item 7, a response
 * without a citation does not circulate).
 */
export const AttributionSchema = z.object({
  publisherName: NonEmpty,
  publisherUrl: NonEmpty,
  license: NonEmpty,
  provider: z.object({ slug: NonEmpty, name: NonEmpty }),
  sourceUrl: NonEmpty.meta({ description: 'The exact provider URL the values came from (or that failed)' }),
  retrievedAt: NonEmpty.meta({ format: 'date-time', description: 'When the provider answered (or failed)' }),
});
export type Attribution = z.infer<typeof AttributionSchema>;

export const SearchValueSchema = z.object({
  geocode: z.string(),
  city: z.string().nullable(),
  year: z.number().int(),
  value: z.number().nullable(),
  unit: z.string().nullable(),
});
export type SearchValue = z.infer<typeof SearchValueSchema>;

export const SearchResultSchema = z.object({
  indicator: z.object({
    id: z.string(),
    name: z.string(),
    category: z.object({ slug: z.string(), name: z.string() }),
    unit: z.string().nullable(),
    description: z.string().nullable(),
    provider: z.object({ slug: z.string(), name: z.string() }),
  }),
  score: z.number().meta({ description: '0..1; 1 for an exact code or name match, else fused rank score' }),
  values: z.array(SearchValueSchema).meta({
    description:
      'Fetched live from the provider: the municipality values (most recent year first), or the first values of the series when no municipality is given; empty for definitions without values',
  }),
  attribution: AttributionSchema,
  error: z.string().optional().meta({
    description: 'Why the values could not be fetched (provider error, timeout, municipality unknown to it)',
  }),
});
export type SearchResult = z.infer<typeof SearchResultSchema>;

export const SearchResponseSchema = z.object({
  results: z.array(SearchResultSchema),
  municipality: z
    .object({ geocode: z.string(), name: z.string().nullable(), uf: z.string().nullable() })
    .optional()
    .meta({
      description: 'The municipality the values are for (resolved from `city`, or the `geocode` given)',
    }),
});
export type SearchResponse = z.infer<typeof SearchResponseSchema>;
