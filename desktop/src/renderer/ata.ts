import { ATA_REQUESTER_LIMITS, type AtaRequesterInput, cpfDigits, isValidCpf } from '@notary/shared';

/**
 * Logic of the "Ata notarial" card of a web capture, kept out of React so it can be tested: the requester form's
 * request, or what is wrong with it as typed (the CPF checked by its check digits before anything is sent).
 */

/** What the form holds, as typed. */
export interface AtaForm {
  name: string;
  cpf: string;
  qualification: string;
  email: string;
}

/** Why the CPF as typed cannot be sent: empty, not 11 digits (formatted or bare), or wrong check digits. */
export type CpfProblem = 'empty' | 'format' | 'check-digits';

export type AtaFormCheck =
  | { ok: true; request: AtaRequesterInput }
  | { ok: false; name: 'empty' | 'too-long' | null; cpf: CpfProblem | null };

/** The CPF's problem as typed, null when it is valid. */
export function cpfProblem(typed: string): CpfProblem | null {
  if (typed.trim() === '') return 'empty';
  if (!cpfDigits(typed)) return 'format';
  return isValidCpf(typed) ? null : 'check-digits';
}

/** The request of a filled form (trimmed; empty optional fields left out), or what is missing or wrong. */
export function ataRequest(form: AtaForm): AtaFormCheck {
  const name = form.name.trim();
  const nameProblem = name === '' ? 'empty' : name.length > ATA_REQUESTER_LIMITS.name ? 'too-long' : null;
  const cpf = cpfProblem(form.cpf);
  if (nameProblem || cpf) return { ok: false, name: nameProblem, cpf };
  const qualification = form.qualification.trim().slice(0, ATA_REQUESTER_LIMITS.qualification);
  const email = form.email.trim();
  return {
    ok: true,
    request: {
      name,
      cpf: form.cpf.trim(),
      ...(qualification ? { qualification } : {}),
      ...(email ? { email } : {}),
    },
  };
}
