import { z } from 'zod';

/**
 * The CPF (Cadastro de Pessoas Físicas), the Receita Federal's 11-digit number of a natural person: nine base
 * digits and two check digits, each the mod-11 remainder of the digits before it weighted from 10 (first) or
 * 11 (second) down to 2, as Receita Federal's algorithm states (a remainder below 2 gives 0, else 11 minus it).
 * Numbers of one repeated digit pass that arithmetic but are never issued, so they are refused too.
 */

/** The 11 digits of `value` when it is written as `000.000.000-00` or as 11 bare digits; undefined otherwise. */
export function cpfDigits(value: string): string | undefined {
  const trimmed = value.trim();
  if (!/^(\d{11}|\d{3}\.\d{3}\.\d{3}-\d{2})$/.test(trimmed)) return undefined;
  return trimmed.replace(/\D/g, '');
}

/** The check digit over `digits` (weights from `digits.length + 1` down to 2, mod 11). */
function checkDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) sum += Number(digits[i]) * (digits.length + 1 - i);
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** Whether `value` is a CPF whose two check digits are right (formatted or bare; not one repeated digit). */
export function isValidCpf(value: string): boolean {
  const digits = cpfDigits(value);
  if (!digits || /^(\d)\1{10}$/.test(digits)) return false;
  return (
    checkDigit(digits.slice(0, 9)) === Number(digits[9]) &&
    checkDigit(digits.slice(0, 10)) === Number(digits[10])
  );
}

/** `00000000000` as `000.000.000-00` (the form printed on the ata). */
export function formatCpf(digits: string): string {
  return `${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6, 9)}-${digits.slice(9, 11)}`;
}

/** A CPF in a request: formatted or bare, its check digits verified; parsed to its 11 bare digits. */
export const CpfSchema = z
  .string()
  .max(20)
  .refine(isValidCpf, 'is not a valid CPF: its check digits do not match (send 000.000.000-00 or 11 digits)')
  .transform((v) => cpfDigits(v) ?? v)
  .meta({
    description: 'CPF of the requester, 11 digits, formatted or not; check digits verified',
    example: '529.982.247-25',
  });

/** Longest requester name and qualification kept, characters. */
export const ATA_REQUESTER_LIMITS = { name: 200, qualification: 500, email: 254 } as const;

/**
 * Body of `POST /api/documents/:id/ata`: who asks the tabelião for the ata notarial of a web capture. Name and
 * qualification (nationality, civil status, profession, address: what the ata's qualification states) as
 * the requester gives them; the CPF checked by its check digits.
 */
export const AtaRequesterSchema = z.object({
  name: z.string().trim().min(1, 'is required').max(ATA_REQUESTER_LIMITS.name),
  cpf: CpfSchema,
  qualification: z.string().trim().max(ATA_REQUESTER_LIMITS.qualification).optional(),
  email: z.email().max(ATA_REQUESTER_LIMITS.email).optional(),
});
export type AtaRequester = z.infer<typeof AtaRequesterSchema>;
/** The requester as a client sends it (the CPF formatted or not). */
export type AtaRequesterInput = z.input<typeof AtaRequesterSchema>;
export const AtaRequestSchema = z.object({ requester: AtaRequesterSchema });
export type AtaRequest = z.infer<typeof AtaRequestSchema>;
