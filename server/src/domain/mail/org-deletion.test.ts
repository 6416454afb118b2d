import { describe, expect, it } from 'vitest';
import { deletionCodeMail, deletionNoticeMail } from './org-deletion';

/**
 * The organization deletion mails: subjects show on locked screens and in notifications, so they carry
 * neither the organization's name nor the code; the body names the organization (the recipient's own).
 */
describe('organization deletion mails', () => {
  const name = 'Cartório do 2º Ofício\nUrgente: ligue 0800';
  for (const lang of ['pt', 'en'] as const) {
    it(`keeps the organization's name and the code out of the subject (${lang})`, () => {
      const code = deletionCodeMail({
        lang,
        to: 'admin@example.com',
        organizationName: name,
        code: '123456',
        expiresAt: new Date('2026-11-26T12:10:00Z'),
        validMinutes: 10,
      });
      const notice = deletionNoticeMail({
        lang,
        to: 'member@example.com',
        organizationName: name,
        deletedAt: new Date('2026-11-26T12:00:00Z'),
      });
      for (const mail of [code, notice]) {
        expect(mail.subject).not.toMatch(/Cartório|Ofício|Urgente|0800|123456/);
        expect(mail.text).toContain('Cartório do 2º Ofício Urgente: ligue 0800');
      }
      expect(code.text).toContain('123456');
      // Times in Brasília time and UTC, labelled.
      expect(notice.text).toContain(
        lang === 'pt'
          ? '26/11/2026 09:00:00 (horário de Brasília, UTC\u221203:00) · 2026-11-26 12:00:00 UTC'
          : '2026-11-26 09:00:00 Brasília time (UTC\u221203:00) · 2026-11-26 12:00:00 UTC',
      );
      expect(code.html).toContain('2026-11-26 12:10:00 UTC');
      expect(code.subject).toBe(
        lang === 'pt'
          ? 'Código para excluir sua organização no Notary'
          : 'Code to delete your organization on Notary',
      );
      expect(notice.subject).toBe(
        lang === 'pt'
          ? 'Uma organização da qual você era membro foi excluída'
          : 'An organization you were a member of was deleted',
      );
    });
  }
});
