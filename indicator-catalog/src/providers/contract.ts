import { z } from 'zod';

/**
 * The provider contract (spec, Endpoints: with the Pagination envelope), as zod schemas that validate every
 * provider answer. The spec names only some fields ("slug, name, count" of categories; the rest "not
 * shown"); the ones below are this catalog's reading for the `geo-indica-rest` kind, lenient where a
 * provider may differ (ids as numbers or strings, optional text fields, extra fields ignored).
 */

/** A 7-digit IBGE municipality code. */
export const Geocode = z.string().regex(/^\d{7}$/, 'must be a 7-digit IBGE municipality code');

const Id = z.union([z.string().min(1), z.number().int()]).transform(String);
const OptionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);

/** `{data: [...], pagination: {page, totalPages}}` of every paginated answer (spec, Pagination envelope). */
export const pageEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    pagination: z.object({
      page: z.coerce.number().int().min(0),
      totalPages: z.coerce.number().int().min(0),
    }),
  });

/** A catalog category (`GET /indicator-types`): slug, name, count of definitions. */
export const CategorySchema = z.object({
  slug: z.string().min(1),
  name: z.string().min(1),
  count: z.coerce.number().int().min(0).optional(),
});
export type Category = z.infer<typeof CategorySchema>;

/** An indicator definition (`GET /indicator-types/:slug/indicators`). */
export const IndicatorDefinitionSchema = z.object({
  id: Id,
  name: z.string().min(1),
  /** Category slug; defaults to the category being walked. */
  category: OptionalText,
  unit: OptionalText,
  description: OptionalText,
});
export type IndicatorDefinition = z.infer<typeof IndicatorDefinitionSchema>;

const NumericValue = z.union([z.number(), z.string(), z.null()]).transform((v, ctx) => {
  if (v === null) return null;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n)) {
    ctx.addIssue({ code: 'custom', message: 'value must be a finite number or null' });
    return z.NEVER;
  }
  return n;
});

/** One value of one indicator for one territory and year (`/indicators/by-geocode/:geocode`, `/indicator-values`). */
export const IndicatorValueSchema = z.object({
  indicatorId: Id.optional(),
  geocode: z.union([Geocode, z.number().int()]).transform(String),
  city: OptionalText,
  uf: OptionalText,
  year: z.coerce.number().int(),
  value: NumericValue,
  unit: OptionalText,
});
export type IndicatorValue = z.infer<typeof IndicatorValueSchema>;

/** A municipality match (`GET /ibge/cities?name`), best first. */
export const CitySchema = z.object({
  geocode: z.union([Geocode, z.number().int()]).transform(String),
  name: z.string().min(1),
  uf: OptionalText,
});
export type City = z.infer<typeof CitySchema>;
