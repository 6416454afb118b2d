/**
 * The check of a Matrícula Notarial Eletrônica (MNE) a receipt names (Provimento CNJ 149/2023, Código Nacional
 * de Normas, which took over Provimento CNJ 100/2020 art. 12 §1): 24 digits `CCCCCC.AAAA.MM.DD.NNNNNNNN-DD`,
 * the serventia's CNS (6), the act's date, an 8-digit sequence and two check digits of ISO/IEC 7064 MOD 97-10
 * (98 − ((the 22 digits × 100) mod 97)). The same rule as `parseMne` of `@notary/shared`, kept here because
 * `@notary/verify` has no dependencies (it is published alone); test/e2e/mne-agreement.test.ts runs both on
 * the same vectors.
 */

import { type Message, msg, render } from './messages/index.ts';

/**
 * What `checkMne` found: valid, or the problem in words (English), and as a message (absent in reports written
 * before messages).
 */
export type MneCheck =
  | { valid: true; date: string }
  | { valid: false; problem: string; problemMessage?: Message };

/** An invalid MNE's check, `why` in English and as a message. */
function invalid(why: Message): MneCheck {
  return { valid: false, problem: render(why, 'en'), problemMessage: why };
}

const DOTTED = /^\d{6}\.\d{4}\.\d{2}\.\d{2}\.\d{8}-\d{2}$/;

/** Days in `month` (1 to 12) of `year`, Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Checks an MNE in its canonical dotted form (what receipts carry): its shape, that its date exists on the
 * calendar, and its MOD 97-10 check digits (the whole 24-digit number mod 97 is 1, computed digit by digit).
 * Answers the act's date (`YYYY-MM-DD`) when valid.
 */
export function checkMne(mne: string): MneCheck {
  if (!DOTTED.test(mne)) {
    return invalid(msg('mne.form'));
  }
  const digits = mne.replace(/[.-]/g, '');
  const [year, month, day] = [digits.slice(6, 10), digits.slice(10, 12), digits.slice(12, 14)];
  const date = `${year}-${month}-${day}`;
  const m = Number(month);
  if (m < 1 || m > 12 || Number(day) < 1 || Number(day) > daysInMonth(Number(year), m)) {
    return invalid(msg('mne.noSuchDate', { date }));
  }
  let rest = 0;
  for (const c of digits) rest = (rest * 10 + Number(c)) % 97;
  if (rest !== 1) {
    let base = 0;
    for (const c of `${digits.slice(0, 22)}00`) base = (base * 10 + Number(c)) % 97;
    const expected = String(98 - base).padStart(2, '0');
    return invalid(msg('mne.checkDigits', { found: digits.slice(22), expected }));
  }
  return { valid: true, date };
}
