import { describe, expect, it } from 'vitest';
import {
  isPersonalSerialPrefixForm,
  organizationPrefixReservation,
  organizationSerialPrefix,
  serialPrefixKey,
} from './serial-prefix';

describe('serial prefix rules', () => {
  it('the key reads O as 0 and I, L as 1: confusable prefixes share it', () => {
    expect(serialPrefixKey('BOB')).toBe(serialPrefixKey('B0B'));
    expect(serialPrefixKey('LIMA')).toBe(serialPrefixKey('L1MA'));
    expect(serialPrefixKey('lima')).toBe('11MA');
    expect(serialPrefixKey('ACME')).not.toBe(serialPrefixKey('ACNE'));
  });

  it("an organization's prefix: its slug's first 8 letters and digits, upper-cased", () => {
    expect(organizationSerialPrefix('cartorio-central')).toBe('CARTORIO');
    expect(organizationSerialPrefix('a-c-m-e')).toBe('ACME');
    expect(organizationSerialPrefix('a')).toBe('AOR');
  });

  it.each([
    ['UABCDE', /personal workspace/],
    ['U0D4T3', /personal workspace/],
    ['UOD4T3', /personal workspace/],
    ['UPDATE', /personal workspace/],
    ['NOTARY', /service's own/],
    ['NOTARYBR', /service's own/],
    ['N0TARY', /service's own/],
    ['ADMIN', /reserved/],
    ['ADM1N', /reserved/],
    ['SISTEMA', /reserved/],
  ])('%s is reserved for organizations', (prefix, why) => {
    expect(organizationPrefixReservation(prefix)).toMatch(why);
  });

  it.each(['CARTORIO', 'ACME', 'UBER', 'UMBRELLA', 'UNICAMP', 'ADMINIST', 'NOTARIO', 'T7K2M9Q4XT'])(
    '%s may be taken',
    (prefix) => {
      expect(organizationPrefixReservation(prefix)).toBeUndefined();
    },
  );

  it('the personal form is U and 5 to 11 Crockford characters (compared by key)', () => {
    expect(isPersonalSerialPrefixForm('U7K2M9')).toBe(true);
    expect(isPersonalSerialPrefixForm('U7K2M9Q4XTB')).toBe(true);
    expect(isPersonalSerialPrefixForm('U7K2M')).toBe(false);
    expect(isPersonalSerialPrefixForm('UMBRELLA')).toBe(true);
    expect(isPersonalSerialPrefixForm('UNIQUE')).toBe(false);
  });
});
