import { describe, expect, it } from 'vitest';
import { invitationMail, joinLink, pickMailLanguage } from './invitation';

describe('invitation mail', () => {
  it('picks the language: explicit, else Accept-Language by q, else Portuguese', () => {
    expect(pickMailLanguage(null)).toBe('pt');
    expect(pickMailLanguage('')).toBe('pt');
    expect(pickMailLanguage('en-US,en;q=0.9')).toBe('en');
    expect(pickMailLanguage('pt-BR,pt;q=0.9,en;q=0.8')).toBe('pt');
    expect(pickMailLanguage('fr-FR, en;q=0.5, pt;q=0.7')).toBe('pt');
    expect(pickMailLanguage('de, fr')).toBe('pt');
    expect(pickMailLanguage('en;q=0, pt;q=0.1')).toBe('pt');
    expect(pickMailLanguage('EN-gb;q=0.8, de')).toBe('en');
    expect(pickMailLanguage('en', 'pt')).toBe('pt');
    expect(pickMailLanguage(null, 'en')).toBe('en');
  });

  it('links to the web client and names the accept route, in both languages, with escaped HTML', () => {
    const input = {
      to: 'ana@example.com',
      organizationName: 'Cartório <Central>\r\nBcc: x@evil.example',
      inviterName: 'Bia & Co',
      role: 'editor' as const,
      invitationId: 'inv123',
      publicUrl: 'https://notary.example/',
      expiresAt: new Date('2030-01-02T03:04:00Z'),
    };
    expect(joinLink(input.publicUrl, input.invitationId)).toBe('https://notary.example/app/#/join/inv123');
    const pt = invitationMail({ ...input, lang: 'pt' });
    expect(pt.to).toBe('ana@example.com');
    expect(pt.subject).toBe('Convite para participar de uma organização no Notary');
    expect(pt.text).toContain('https://notary.example/app/#/join/inv123');
    expect(pt.text).toContain('POST https://notary.example/api/team/invitations/inv123/accept');
    expect(pt.text).toContain('papel de editor');
    // The expiry in Brasília time and UTC, labelled.
    expect(pt.text).toContain(
      '02/01/2030 00:04:00 (horário de Brasília, UTC\u221203:00) · 2030-01-02 03:04:00 UTC',
    );
    expect(pt.html).toContain('Cartório &#60;Central&#62;');
    expect(pt.html).toContain('Bia &#38; Co');
    expect(pt.html).not.toContain('<Central>');
    const en = invitationMail({ ...input, lang: 'en', role: 'reader' });
    expect(en.subject).toBe('Invitation to join an organization on Notary');
    expect(en.text).toContain('as reader');
    expect(en.text).toContain('2030-01-02 00:04:00 Brasília time (UTC\u221203:00) · 2030-01-02 03:04:00 UTC');
    expect(en.text).toContain('https://notary.example/app/#/join/inv123');
  });

  it('names the organization in the body only, quoted, on one line and shortened; never in the subject', () => {
    const base = {
      to: 'ana@example.com',
      inviterName: 'Bia',
      role: 'editor' as const,
      invitationId: 'inv123',
      publicUrl: 'https://notary.example',
      expiresAt: new Date('2030-01-02T03:04:00Z'),
    };
    const phishing = 'Banco Central" - confirme sua conta em https://evil.example "agora';
    for (const lang of ['pt', 'en'] as const) {
      const mail = invitationMail({ ...base, lang, organizationName: phishing });
      expect(mail.subject).not.toMatch(/Banco|evil/);
      // Its own quotes cannot close the quotation early.
      expect(mail.text).toContain(`"Banco Central' - confirme sua conta em https://evil.example 'agora"`);
      expect(mail.html).toContain('&#34;Banco Central&#39; - confirme');
      const long = invitationMail({ ...base, lang, organizationName: `${'x'.repeat(200)}\r\nBcc: y` });
      expect(long.subject).not.toContain('x');
      expect(long.text).toContain(`"${'x'.repeat(117)}..."`);
      expect(long.text).not.toContain('Bcc');
    }
  });
});
