/**
 * The MNE (Provimento CNJ 149/2023; ISO/IEC 7064 MOD 97-10) and the act's schemas: a real MNE passes, every
 * single-digit error and every transposition of two different adjacent digits is caught, impossible dates are
 * refused with a date message. Check digits are computed here with BigInt, independently of the implementation.
 */
import { describe, expect, it } from 'vitest';
import {
  BRAZILIAN_UFS,
  mneCheckDigits,
  mneDate,
  NotarialActInputSchema,
  parseMne,
  SeloSchema,
} from './notarial-act';

const REAL = '104067.2025.10.13.00006024-37';
const REAL_DIGITS = REAL.replace(/\D/g, '');

/** 98 − ((base × 100) mod 97), two digits, with BigInt. */
function checkDigitsBig(base22: string): string {
  return String(98n - ((BigInt(base22) * 100n) % 97n)).padStart(2, '0');
}

/** The dotted form of 24 digits. */
function dot(d: string): string {
  return `${d.slice(0, 6)}.${d.slice(6, 10)}.${d.slice(10, 12)}.${d.slice(12, 14)}.${d.slice(14, 22)}-${d.slice(22)}`;
}

describe('parseMne', () => {
  it('accepts the real example, dotted or bare, spaces trimmed, and answers the dotted form', () => {
    expect(BigInt(REAL_DIGITS) % 97n).toBe(1n);
    expect(parseMne(REAL)).toEqual({ ok: true, mne: REAL });
    expect(parseMne(REAL_DIGITS)).toEqual({ ok: true, mne: REAL });
    expect(parseMne(`  ${REAL}\t`)).toEqual({ ok: true, mne: REAL });
    expect(mneDate(REAL)).toBe('2025-10-13');
  });

  it('agrees with BigInt on the check digits', () => {
    expect(mneCheckDigits(REAL_DIGITS.slice(0, 22))).toBe('37');
    for (const base of ['0000000000000000000000', '9999999999999999999999', '1234562024022900000001']) {
      expect(mneCheckDigits(base)).toBe(checkDigitsBig(base));
    }
  });

  it('refuses every single-digit change (24 positions × 9 other digits)', () => {
    let tried = 0;
    for (let i = 0; i < 24; i++) {
      for (let d = 0; d <= 9; d++) {
        if (String(d) === REAL_DIGITS[i]) continue;
        const changed = `${REAL_DIGITS.slice(0, i)}${d}${REAL_DIGITS.slice(i + 1)}`;
        expect(parseMne(changed).ok, changed).toBe(false);
        expect(parseMne(dot(changed)).ok, dot(changed)).toBe(false);
        tried++;
      }
    }
    expect(tried).toBe(216);
  });

  it('refuses every transposition of two different adjacent digits', () => {
    let tried = 0;
    for (let i = 0; i < 23; i++) {
      const a = REAL_DIGITS[i] as string;
      const b = REAL_DIGITS[i + 1] as string;
      if (a === b) continue;
      const swapped = `${REAL_DIGITS.slice(0, i)}${b}${a}${REAL_DIGITS.slice(i + 2)}`;
      expect(parseMne(swapped).ok, swapped).toBe(false);
      tried++;
    }
    expect(tried).toBeGreaterThan(10);
  });

  it('says which check digits were expected', () => {
    expect(parseMne('104067.2025.10.13.00006024-38')).toEqual({
      ok: false,
      kind: 'check-digits',
      problem: "the MNE's check digits are 38, expected 37 (ISO 7064 MOD 97-10)",
    });
  });

  it('refuses impossible dates with a date message, checking them on the real calendar', () => {
    for (const [date, ok] of [
      ['2025.02.30', false],
      ['2025.02.29', false],
      ['2100.02.29', false],
      ['2025.04.31', false],
      ['2025.13.01', false],
      ['2025.00.10', false],
      ['2025.01.00', false],
      ['2024.02.29', true],
      ['2000.02.29', true],
      ['2025.12.31', true],
    ] as const) {
      const base = `104067${date.replace(/\./g, '')}00000001`;
      const mne = dot(`${base}${checkDigitsBig(base)}`);
      const result = parseMne(mne);
      expect(result.ok, mne).toBe(ok);
      if (!result.ok) {
        expect(result.kind).toBe('date');
        expect(result.problem).toBe(`the MNE's date ${date.replace(/\./g, '-')} does not exist`);
      }
    }
  });

  it('refuses other shapes with a format message', () => {
    for (const text of [
      '',
      '104067.2025.10.13.00006024',
      '104067-2025-10-13-00006024-37',
      '10406720251013000060243',
      '1040672025101300006024377',
      '104067.2025.10.13.0000602437',
      '104067.2025.10.13.00006024-3a',
      '１04067.2025.10.13.00006024-37',
      `${' '.repeat(60)}${REAL}`,
    ]) {
      const result = parseMne(text);
      expect(result.ok, text).toBe(false);
      if (!result.ok) expect(result.kind, text).toBe('format');
    }
  });
});

describe('act schemas', () => {
  it('knows the 27 UFs', () => {
    expect(new Set(BRAZILIAN_UFS).size).toBe(27);
    expect(SeloSchema.safeParse({ state: 'XX', code: 'A1' }).success).toBe(false);
    expect(SeloSchema.safeParse({ state: 'sp', code: 'A1' }).success).toBe(false);
  });

  it('bounds the selo code, trimming it', () => {
    expect(SeloSchema.parse({ state: 'SP', code: ' 1234AB-5/6.7 ' })).toEqual({
      state: 'SP',
      code: '1234AB-5/6.7',
    });
    for (const code of ['', '   ', 'a'.repeat(65), 'ABC;DROP', 'AB\nC', 'ÁB']) {
      expect(SeloSchema.safeParse({ state: 'SP', code }).success, code).toBe(false);
    }
    expect(SeloSchema.safeParse({ state: 'MG', code: 'a'.repeat(64) }).success).toBe(true);
  });

  it('bounds book and page and refuses control characters', () => {
    const base = { type: 'ata_notarial' as const };
    expect(NotarialActInputSchema.parse({ ...base, book: ' Livro 12 ', page: 'fls. 34v' })).toMatchObject({
      book: 'Livro 12',
      page: 'fls. 34v',
    });
    expect(NotarialActInputSchema.safeParse({ ...base, book: 'x'.repeat(33) }).success).toBe(false);
    expect(NotarialActInputSchema.safeParse({ ...base, page: 'a\u0000b' }).success).toBe(false);
    expect(NotarialActInputSchema.safeParse({ ...base, page: 'a\u0085b' }).success).toBe(false);
    expect(NotarialActInputSchema.safeParse({ type: 'certidao' }).success).toBe(false);
  });
});
