import type { MailLanguage, Role } from '@notary/shared';
import { escapeHtml } from '@notary/shared';
import { formatBrasiliaAndUtc } from '@notary/shared/time';
import type { MailMessage } from '../../ports/mail';

/**
 * The team invitation mail (spec, Team: "by email the invite is sent and the role applies on join"), in
 * Portuguese (default) and English. Plain text plus an equivalent HTML part; every interpolated value is
 * escaped in the HTML part and kept on one line.
 *
 * The organization's name is chosen by whoever created the organization and goes to an outside address: it
 * never appears in the subject (where a name such as "Your bank: confirm your account" would read as the
 * sender's own words) and appears in the body only inside quotation marks, shortened, after "organization".
 * The subject is the service's fixed sentence. Sending is rate limited (`INVITATION_MAIL_LIMITS`).
 */

/** Longest organization name quoted in the mail, in characters (the spec's org name maximum). */
const MAX_QUOTED_NAME = 120;

/** Everything the invitation mail says. */
export interface InvitationMailInput {
  lang: MailLanguage;
  /** Recipient: the invited address (never a placeholder address; the caller checks). */
  to: string;
  organizationName: string;
  /** Who invited: display name, else e-mail. */
  inviterName: string;
  role: Role;
  invitationId: string;
  /** Base URL of the service (`PUBLIC_URL`), without trailing slash. */
  publicUrl: string;
  expiresAt: Date;
}

/**
 * The join link of an invitation: `<PUBLIC_URL>/app/#/join/<invitationId>`, handled by the web client, which
 * signs the invitee in and calls `POST /api/team/invitations/<invitationId>/accept` (docs/team.md, Team).
 */
export function joinLink(publicUrl: string, invitationId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/app/#/join/${encodeURIComponent(invitationId)}`;
}

/** The API route that accepts an invitation (what the join link's page calls). */
export function acceptPath(invitationId: string): string {
  return `/api/team/invitations/${encodeURIComponent(invitationId)}/accept`;
}

/**
 * The mail language: `explicit` when given, else the best of Portuguese and English in `acceptLanguage`
 * (RFC 9110 section 12.5.4: highest `q` first, ties in header order, `q=0` means "not acceptable"), else
 * Portuguese.
 */
export function pickMailLanguage(
  acceptLanguage: string | null | undefined,
  explicit?: MailLanguage,
): MailLanguage {
  if (explicit) return explicit;
  if (!acceptLanguage) return 'pt';
  const ranges = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const qParam = params.map((p) => p.trim()).find((p) => /^q=/i.test(p));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      return { primary: tag.trim().toLowerCase().split('-')[0] ?? '', q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const range of ranges) {
    if (range.primary === 'pt' || range.primary === 'en') return range.primary;
  }
  return 'pt';
}

const ROLE_NAMES: Record<MailLanguage, Record<Role, string>> = {
  pt: { owner: 'proprietário', admin: 'administrador', editor: 'editor', reader: 'leitor' },
  en: { owner: 'owner', admin: 'admin', editor: 'editor', reader: 'reader' },
};

const oneLine = (s: string): string => s.replace(/[\r\n\t]+/g, ' ').trim();

/**
 * A user-chosen name as quoted text: one line, at most `MAX_QUOTED_NAME` characters (longer ones end in
 * "..."), its own double quotes turned into single ones so the quotation cannot be closed early.
 */
function quotedName(name: string): string {
  const line = oneLine(name).replace(/["\u201c\u201d]/g, "'");
  const short = line.length > MAX_QUOTED_NAME ? `${line.slice(0, MAX_QUOTED_NAME - 3)}...` : line;
  return `"${short}"`;
}

/**
 * Builds the invitation mail: subject, text and HTML, in `input.lang`. The text names the join link, the
 * address to sign in with, the role, the expiry (Brasília time and UTC), and the API call for clients without the
 * web app.
 */
export function invitationMail(input: InvitationMailInput): MailMessage {
  const link = joinLink(input.publicUrl, input.invitationId);
  const api = `${input.publicUrl.replace(/\/+$/, '')}${acceptPath(input.invitationId)}`;
  const org = quotedName(input.organizationName);
  const inviter = oneLine(input.inviterName);
  const role = ROLE_NAMES[input.lang][input.role];
  const expires = formatBrasiliaAndUtc(input.expiresAt, input.lang);
  const t =
    input.lang === 'pt'
      ? {
          subject: 'Convite para participar de uma organização no Notary',
          greeting: 'Olá,',
          invited: `${inviter} convidou você para participar da organização ${org} no Notary, com o papel de ${role}.`,
          open: `Para aceitar, abra o link abaixo e entre com este endereço de e-mail (${input.to}):`,
          viaApi:
            'Sem o aplicativo web: entre com este e-mail (código enviado por POST /api/auth/email-otp/send-verification-otp, ' +
            'depois POST /api/auth/sign-in/email-otp e GET /api/auth/token) e envie, com o cabeçalho ' +
            '"Authorization: Bearer <token JWT de sessão>":',
          once: `O convite vale até ${expires} e pode ser usado uma única vez.`,
          ignore: 'Se você não esperava este convite, ignore esta mensagem.',
          button: 'Aceitar o convite',
        }
      : {
          subject: 'Invitation to join an organization on Notary',
          greeting: 'Hello,',
          invited: `${inviter} invited you to join the organization ${org} on Notary, as ${role}.`,
          open: `To accept, open the link below and sign in with this e-mail address (${input.to}):`,
          viaApi:
            'Without the web app: sign in with this e-mail (code sent by POST /api/auth/email-otp/send-verification-otp, ' +
            'then POST /api/auth/sign-in/email-otp and GET /api/auth/token) and send, with the header ' +
            '"Authorization: Bearer <session JWT>":',
          once: `The invitation is valid until ${expires} and can be used once.`,
          ignore: 'If you did not expect this invitation, ignore this message.',
          button: 'Accept the invitation',
        };
  const text = [
    t.greeting,
    '',
    t.invited,
    '',
    t.open,
    link,
    '',
    t.viaApi,
    `POST ${api}`,
    '',
    t.once,
    t.ignore,
    '',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(t.greeting)}</p>`,
    `<p>${escapeHtml(t.invited)}</p>`,
    `<p>${escapeHtml(t.open)}<br><a href="${escapeHtml(link)}">${escapeHtml(t.button)}</a></p>`,
    `<p>${escapeHtml(t.viaApi)}<br><code>POST ${escapeHtml(api)}</code></p>`,
    `<p>${escapeHtml(t.once)} ${escapeHtml(t.ignore)}</p>`,
  ].join('\n');
  return { to: input.to, subject: t.subject, text, html };
}
