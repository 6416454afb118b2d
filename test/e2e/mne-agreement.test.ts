/**
 * The service (`parseMne` of `@notary/shared`) and the verifier (`checkMne` of `@notary/verify`, which has no
 * dependencies and so keeps its own copy of the rule) judge MNEs alike: the same vectors, the same verdicts.
 */
import { parseMne } from '@notary/shared';
import { checkMne } from '@notary/verify/mne';
import { describe, expect, it } from 'vitest';

const REAL = '104067.2025.10.13.00006024-37';

/** The dotted MNE of a 22-digit base with its check digits computed with BigInt. */
function withCheckDigits(base: string): string {
  const dd = String(98n - ((BigInt(base) * 100n) % 97n)).padStart(2, '0');
  const d = `${base}${dd}`;
  return `${d.slice(0, 6)}.${d.slice(6, 10)}.${d.slice(10, 12)}.${d.slice(12, 14)}.${d.slice(14, 22)}-${d.slice(22)}`;
}

describe('MNE: service and verifier agree', () => {
  it('on valid, mistyped, transposed and impossible-date vectors', () => {
    const digits = REAL.replace(/\D/g, '');
    const vectors: string[] = [
      REAL,
      withCheckDigits('1040672024022900000001'),
      withCheckDigits('1040672025023000000001'),
      withCheckDigits('1040672100022900000001'),
      withCheckDigits('1040672025130100000001'),
      withCheckDigits('1040672025000100000001'),
      withCheckDigits('0000002000022900000000'),
    ];
    for (let i = 0; i < 24; i++) {
      for (let d = 0; d <= 9; d++) {
        const changed = `${digits.slice(0, i)}${d}${digits.slice(i + 1)}`;
        vectors.push(withCheckDigits(changed.slice(0, 22)).slice(0, -2) + changed.slice(22));
      }
      if (i < 23) {
        const swapped = `${digits.slice(0, i)}${digits[i + 1]}${digits[i]}${digits.slice(i + 2)}`;
        vectors.push(withCheckDigits(swapped.slice(0, 22)).slice(0, -2) + swapped.slice(22));
      }
    }
    let valid = 0;
    for (const mne of vectors) {
      const service = parseMne(mne);
      const verifier = checkMne(mne);
      expect(verifier.valid, mne).toBe(service.ok);
      if (service.ok) valid++;
    }
    expect(valid).toBeGreaterThan(3);
    expect(valid).toBeLessThan(vectors.length - 200);
  });
});
