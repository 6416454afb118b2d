import { describe, expect, it } from 'vitest';
import { AtaRequestSchema, cpfDigits, formatCpf, isValidCpf } from './cpf';

describe('CPF (Receita Federal check digits)', () => {
  it('accepts valid numbers, formatted or bare', () => {
    for (const cpf of ['529.982.247-25', '52998224725', '111.444.777-35', '000.000.001-91']) {
      expect(isValidCpf(cpf), cpf).toBe(true);
    }
  });

  it('refuses a wrong check digit, one repeated digit, other shapes', () => {
    for (const cpf of [
      '529.982.247-24',
      '529.982.247-15',
      '11111111111',
      '5299822472',
      '529.982.24725',
      'abc',
    ]) {
      expect(isValidCpf(cpf), cpf).toBe(false);
    }
  });

  it('keeps the 11 digits and prints them formatted', () => {
    expect(cpfDigits(' 529.982.247-25 ')).toBe('52998224725');
    expect(formatCpf('52998224725')).toBe('529.982.247-25');
  });

  it('the request body parses the CPF to its digits and refuses a bad one naming the field', () => {
    expect(AtaRequestSchema.parse({ requester: { name: ' Maria ', cpf: '529.982.247-25' } })).toEqual({
      requester: { name: 'Maria', cpf: '52998224725' },
    });
    const bad = AtaRequestSchema.safeParse({ requester: { name: 'Maria', cpf: '529.982.247-24' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['requester', 'cpf']);
  });
});
