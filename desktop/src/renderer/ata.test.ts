import { describe, expect, it } from 'vitest';
import { ataRequest, cpfProblem } from './ata';

describe('the ata requester form (checked as typed)', () => {
  it('accepts a CPF with right check digits, formatted or bare', () => {
    expect(cpfProblem('529.982.247-25')).toBeNull();
    expect(cpfProblem('52998224725')).toBeNull();
  });

  it.each([
    ['', 'empty'],
    ['529.982.247', 'format'],
    ['529982247-25', 'format'],
    ['529.982.247-24', 'check-digits'],
    ['111.111.111-11', 'check-digits'],
  ])('refuses %j (%s)', (typed, problem) => {
    expect(cpfProblem(typed)).toBe(problem);
  });

  it('builds the request, leaving out empty optional fields', () => {
    expect(ataRequest({ name: ' Maria ', cpf: '529.982.247-25', qualification: ' ', email: '' })).toEqual({
      ok: true,
      request: { name: 'Maria', cpf: '529.982.247-25' },
    });
    expect(
      ataRequest({ name: 'Maria', cpf: '52998224725', qualification: 'engenheira', email: 'm@example.com' }),
    ).toEqual({
      ok: true,
      request: { name: 'Maria', cpf: '52998224725', qualification: 'engenheira', email: 'm@example.com' },
    });
  });

  it('says what is missing or wrong, and sends nothing', () => {
    expect(ataRequest({ name: '', cpf: '529.982.247-24', qualification: '', email: '' })).toEqual({
      ok: false,
      name: 'empty',
      cpf: 'check-digits',
    });
  });
});
