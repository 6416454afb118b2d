import { z } from 'zod';

/**
 * The notarial act a tabelião recorded for a document: its type, its Matrícula Notarial Eletrônica (MNE), its
 * selo (the state's electronic seal), its book and page. The act is its own record beside the document: the
 * document's hash, serial and anchors never change when an act is recorded, changed or removed.
 *
 * The MNE (Código Nacional de Normas do Foro Extrajudicial, Provimento CNJ 149/2023, which took over
 * Provimento CNJ 100/2020 art. 12 §1) is issued by e-Notariado for every electronic notarial act: 24 digits
 * `CCCCCC.AAAA.MM.DD.NNNNNNNN-DD`, the serventia's CNS code (6), the act's date (year, month, day), an 8-digit
 * sequence and two check digits of ISO/IEC 7064 MOD 97-10: DD = 98 − ((the 22 digits × 100) mod 97), so the
 * whole 24-digit number mod 97 is 1. Example: `104067.2025.10.13.00006024-37`.
 */

/** The canonical (dotted) form of an MNE. */
export const MNE_PATTERN = /^\d{6}\.\d{4}\.\d{2}\.\d{2}\.\d{8}-\d{2}$/;
/** The bare form: the 24 digits alone. */
const MNE_BARE = /^\d{24}$/;
/** The longest text `parseMne` looks at (the dotted form is 29 characters; room for surrounding spaces). */
export const MNE_INPUT_MAX_LENGTH = 64;

/** Why a text is not an MNE: its shape, its date, or its check digits. */
export type MneProblemKind = 'format' | 'date' | 'check-digits';

export type MneParseResult = { ok: true; mne: string } | { ok: false; kind: MneProblemKind; problem: string };

/** `n` digits of the 24, from `start`. */
function part(digits: string, start: number, length: number): string {
  return digits.slice(start, start + length);
}

/** `CCCCCC.AAAA.MM.DD.NNNNNNNN-DD` of the 24 digits. */
function dotted(digits: string): string {
  return `${part(digits, 0, 6)}.${part(digits, 6, 4)}.${part(digits, 10, 2)}.${part(digits, 12, 2)}.${part(digits, 14, 8)}-${part(digits, 22, 2)}`;
}

/** Days in `month` (1 to 12) of `year`, Gregorian calendar (leap: divisible by 4, not by 100 unless by 400). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * The two check digits of ISO/IEC 7064 MOD 97-10 over a string of decimal digits: 98 − ((digits × 100) mod
 * 97), two digits with a leading zero. Computed digit by digit (Horner), so it needs no big integers.
 */
export function mneCheckDigits(base: string): string {
  let rest = 0;
  for (const c of `${base}00`) rest = (rest * 10 + (c.charCodeAt(0) - 48)) % 97;
  return String(98 - rest).padStart(2, '0');
}

/**
 * Reads an MNE written dotted (`104067.2025.10.13.00006024-37`) or as its 24 bare digits, spaces around it
 * trimmed, and answers its canonical dotted form, or why it is not one:
 * - `format`: not 24 digits in either form;
 * - `date`: the month is not 01 to 12 or the day does not exist in that month (2025-02-30; 2024-02-29 exists);
 * - `check-digits`: the last two digits are not the MOD 97-10 check digits of the first 22 (the message says
 *   which were expected).
 * Source: Provimento CNJ 149/2023 (Código Nacional de Normas), ISO/IEC 7064 MOD 97-10.
 */
export function parseMne(text: string): MneParseResult {
  const trimmed = text.length <= MNE_INPUT_MAX_LENGTH ? text.trim() : '';
  const digits = MNE_PATTERN.test(trimmed)
    ? trimmed.replace(/[.-]/g, '')
    : MNE_BARE.test(trimmed)
      ? trimmed
      : null;
  if (digits === null) {
    return {
      ok: false,
      kind: 'format',
      problem:
        'an MNE is 24 digits, CCCCCC.AAAA.MM.DD.NNNNNNNN-DD (e.g. 104067.2025.10.13.00006024-37) or the 24 digits alone',
    };
  }
  const year = Number(part(digits, 6, 4));
  const month = Number(part(digits, 10, 2));
  const day = Number(part(digits, 12, 2));
  const date = `${part(digits, 6, 4)}-${part(digits, 10, 2)}-${part(digits, 12, 2)}`;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return { ok: false, kind: 'date', problem: `the MNE's date ${date} does not exist` };
  }
  const expected = mneCheckDigits(part(digits, 0, 22));
  const given = part(digits, 22, 2);
  if (given !== expected) {
    return {
      ok: false,
      kind: 'check-digits',
      problem: `the MNE's check digits are ${given}, expected ${expected} (ISO 7064 MOD 97-10)`,
    };
  }
  return { ok: true, mne: dotted(digits) };
}

/** The act's date the MNE names, `YYYY-MM-DD` (the MNE must be canonical: `parseMne`'s answer). */
export function mneDate(mne: string): string {
  return `${mne.slice(7, 11)}-${mne.slice(12, 14)}-${mne.slice(15, 17)}`;
}

/**
 * Input schema of an MNE: a bounded string, read by `parseMne` (which the domain calls, so that a wrong MNE is
 * answered with what is wrong in it and the field at fault).
 */
export const MneInput = z.string().max(MNE_INPUT_MAX_LENGTH).meta({
  description: 'MNE, `CCCCCC.AAAA.MM.DD.NNNNNNNN-DD` or the 24 digits alone',
  example: '104067.2025.10.13.00006024-37',
});

/** The kinds of notarial act a document can be linked to (Lei 8.935/1994 art. 7 names the tabelião's acts). */
export const NOTARIAL_ACT_TYPES = [
  'ata_notarial',
  'autenticacao',
  'procuracao',
  'escritura',
  'testamento',
  'outro',
] as const;
export const NotarialActTypeSchema = z.enum(NOTARIAL_ACT_TYPES);
export type NotarialActType = z.infer<typeof NotarialActTypeSchema>;

/** The 27 federative units of Brazil (26 states and the Distrito Federal), IBGE abbreviations. */
export const BRAZILIAN_UFS = [
  'AC',
  'AL',
  'AM',
  'AP',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MG',
  'MS',
  'MT',
  'PA',
  'PB',
  'PE',
  'PI',
  'PR',
  'RJ',
  'RN',
  'RO',
  'RR',
  'RS',
  'SC',
  'SE',
  'SP',
  'TO',
] as const;
export const UfSchema = z.enum(BRAZILIAN_UFS);
export type Uf = z.infer<typeof UfSchema>;

/** Longest selo code kept (the states' electronic seal codes are far shorter). */
export const SELO_CODE_MAX_LENGTH = 64;
/** Characters of a selo code: letters, digits, `.`, `-`, `/` and spaces (the states print them with these). */
export const SELO_CODE_PATTERN = /^[A-Za-z0-9./ -]{1,64}$/;
/** Longest book or page reference kept. */
export const ACT_BOOK_PAGE_MAX_LENGTH = 32;

/**
 * The selo of an act: the state (UF) whose electronic seal it is and the seal's code as printed, trimmed. In the
 * states with electronic seals an act without its selo is null (Provimento CNJ 149/2023 art. 319).
 */
export const SeloSchema = z
  .object({
    state: UfSchema,
    code: z
      .string()
      .max(SELO_CODE_MAX_LENGTH * 2)
      .transform((s) => s.trim())
      .pipe(
        z
          .string()
          .regex(
            SELO_CODE_PATTERN,
            `must be 1 to ${SELO_CODE_MAX_LENGTH} letters, digits, '.', '-', '/' or spaces`,
          ),
      ),
  })
  .meta({ id: 'Selo' });
export type Selo = z.infer<typeof SeloSchema>;

/** A book or page reference (`Livro 12`, `fls. 34v`): trimmed, at most 32 characters, no control character. */
const BookOrPage = z
  .string()
  .max(ACT_BOOK_PAGE_MAX_LENGTH * 2)
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .max(ACT_BOOK_PAGE_MAX_LENGTH, `must be at most ${ACT_BOOK_PAGE_MAX_LENGTH} characters`)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here.
      .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'must not contain control characters'),
  );

/**
 * Body of `PUT /api/documents/{id}/act`: the whole act (what is absent is recorded as null). `mne` is checked by
 * the domain (`parseMne`), which answers 400 naming what is wrong; an empty book or page is none.
 */
export const NotarialActInputSchema = z.object({
  type: NotarialActTypeSchema,
  mne: MneInput.nullable().optional(),
  selo: SeloSchema.nullable().optional(),
  book: BookOrPage.nullable().optional(),
  page: BookOrPage.nullable().optional(),
});
export type NotarialActInput = z.input<typeof NotarialActInputSchema>;

const IsoDate = z.iso.datetime({ offset: true });

/**
 * A document's notarial act as its tenant's members read it. `recordedBy` is the user id of who recorded it
 * first; `recordedAt` when, `updatedAt` its last change. Not public: the public lookup by MNE answers the
 * document's public projection only.
 */
export const NotarialActSchema = z
  .object({
    documentId: z.string(),
    type: NotarialActTypeSchema,
    mne: z.string().regex(MNE_PATTERN).nullable(),
    selo: z.object({ state: UfSchema, code: z.string() }).nullable(),
    book: z.string().nullable(),
    page: z.string().nullable(),
    recordedBy: z.string(),
    recordedAt: IsoDate,
    updatedAt: IsoDate,
  })
  .meta({ id: 'NotarialAct' });
export type NotarialActDto = z.infer<typeof NotarialActSchema>;
