import { z } from 'zod';

/**
 * A serventia (the office of a cartório) as a tenant declares it, and the retention it must honour before any
 * of its documents may be destroyed. The CNS (Código Nacional de Serventia) is the 6-digit code CNJ assigns
 * to each serventia and publishes in Justiça Aberta; the minimum retention comes from the table of Provimento
 * CNJ 50/2015 (years, or permanent). Keeping data to meet a legal duty is LGPD art. 16 I.
 */

/** A CNS: exactly 6 ASCII digits (leading zeros kept), as Justiça Aberta lists it. */
export const CNS_PATTERN = /^[0-9]{6}$/;

/** Whether `value` is a well-formed CNS (6 digits; the service does not check that CNJ assigned it). */
export function isCns(value: unknown): value is string {
  return typeof value === 'string' && CNS_PATTERN.test(value);
}

/** Bounds of a retention in whole years (inclusive). */
export const RETENTION_YEARS = { min: 1, max: 100 } as const;

/** A CNS in a request: surrounding spaces are dropped, then exactly 6 digits. */
export const CnsSchema = z
  .string()
  .trim()
  .regex(CNS_PATTERN, 'must be the 6 digits of the CNS (Código Nacional de Serventia, CNJ Justiça Aberta)')
  .meta({ description: 'Código Nacional de Serventia: 6 digits', example: '123456' });

/** A retention in whole years, 1 to 100. */
export const RetentionYearsSchema = z.number().int().min(RETENTION_YEARS.min).max(RETENTION_YEARS.max);

/**
 * Body of `PUT /api/org/serventia`: `{cns, retentionYears}` (an integer 1 to 100) or
 * `{cns, retention: "permanent"}`; exactly one of the two retention fields.
 */
export const ServentiaInputSchema = z
  .object({
    cns: CnsSchema,
    retentionYears: RetentionYearsSchema.optional().meta({
      description: 'Minimum retention in years (1 to 100), counted from each document’s notarization',
    }),
    retention: z
      .literal('permanent')
      .optional()
      .meta({ description: '"permanent": nothing may be destroyed, whatever its age' }),
  })
  .refine((v) => (v.retentionYears === undefined) !== (v.retention === undefined), {
    message: 'give exactly one of retentionYears (1 to 100) or retention: "permanent"',
    path: ['retentionYears'],
  });
export type ServentiaInput = z.infer<typeof ServentiaInputSchema>;

/** A serventia's retention: a number of whole years, or permanent. */
export const RetentionSchema = z.union([
  z.object({ years: z.number().int().min(RETENTION_YEARS.min).max(RETENTION_YEARS.max) }),
  z.literal('permanent'),
]);
export type Retention = z.infer<typeof RetentionSchema>;

/**
 * The serventia of the active organization (`GET`/`PUT /api/org/serventia`): its CNS, its retention, when it
 * was last declared (ISO 8601) and by whom (the member's user id; absent when the operator set it).
 */
export const ServentiaSchema = z
  .object({
    cns: z.string(),
    retention: RetentionSchema,
    declaredAt: z.iso.datetime({ offset: true }),
    declaredBy: z.string().optional(),
  })
  .meta({ id: 'Serventia' });
export type ServentiaDto = z.infer<typeof ServentiaSchema>;

/** The retention of a valid input body. */
export function retentionOf(input: ServentiaInput): Retention {
  return input.retention === 'permanent'
    ? 'permanent'
    : { years: input.retentionYears ?? RETENTION_YEARS.min };
}

/**
 * Whether `next` keeps at least everything `current` keeps: permanent covers everything, and more years cover
 * fewer. A retention that does not is a shortening, which only the operator may make.
 */
export function retentionCovers(next: Retention, current: Retention): boolean {
  if (next === 'permanent') return true;
  if (current === 'permanent') return false;
  return next.years >= current.years;
}

/** Why a document may not be destroyed: a notarial act is recorded on it, or the serventia's retention runs. */
export const HOLD_RULES = ['notarial_act', 'retention_period'] as const;
export type HoldRule = (typeof HOLD_RULES)[number];

/** The legal basis a refusal names: keeping data to meet a legal or regulatory duty. */
export const RETENTION_LEGAL_BASIS = 'LGPD art. 16 I' as const;
