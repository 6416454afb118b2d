import type { MailLanguage } from '@notary/shared';
import { escapeHtml } from '@notary/shared';
import { formatBrasiliaAndUtc } from '@notary/shared/time';
import type { MailMessage } from '../../ports/mail';

/**
 * The two mails of an organization deletion (spec, Events: "Emails are sent for the organization deletion
 * code and for the notice to members after deletion"), in Portuguese (default) and English. Plain text plus
 * an equivalent HTML part; interpolated values are escaped in the HTML part and kept on one line (an
 * organization name with a line break must not fake paragraphs).
 *
 * Subjects name no organization (nor the code): mail clients show subjects in notifications and on locked
 * screens, where anyone near the phone reads which notary office the recipient works with and that it is being
 * deleted; and the name is chosen by the organization's admins, so in a subject it would read as the service's
 * own words ("… Urgent: call this number"). The name stays in the body: the recipient is (or was) a member of
 * that organization, and the body is read only once the device is unlocked.
 */

const oneLine = (s: string): string => s.replace(/[\r\n\t]+/g, ' ').trim();

/**
 * A time as people read it in `lang`: Brasília time, with its offset, and UTC (the service does not know the
 * reader's time zone; its readers' acts are in Brasília time).
 */
function readableTime(lang: MailLanguage, date: Date): string {
  return formatBrasiliaAndUtc(date, lang);
}

function paragraphs(lines: string[]): string {
  return lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
}

/** Everything the deletion code mail says. */
export interface DeletionCodeMailInput {
  lang: MailLanguage;
  /** The requester's address (never a placeholder: the caller checks). */
  to: string;
  organizationName: string;
  /** The 6-digit code, in clear: this mail is the only place it ever exists outside memory. */
  code: string;
  /** When the code stops working. */
  expiresAt: Date;
  /** Minutes of validity, repeated in words for readers in another time zone. */
  validMinutes: number;
}

/**
 * The mail carrying the code of `POST /api/org/delete/request`, to the requester only. It says what the
 * code does (irreversible deletion of every document and file), how long it lasts, that only the requester
 * can use it, and what to do when the request was not theirs. The code and the organization's name stay out of
 * the subject (see the module comment).
 */
export function deletionCodeMail(input: DeletionCodeMailInput): MailMessage {
  const org = oneLine(input.organizationName);
  const expires = readableTime(input.lang, input.expiresAt);
  const t =
    input.lang === 'pt'
      ? {
          subject: 'Código para excluir sua organização no Notary',
          lines: [
            'Olá,',
            `Foi pedida a exclusão da organização "${org}" no Notary. Para confirmar, use este código:`,
          ],
          after: [
            `O código vale ${input.validMinutes} minutos (até ${expires}), só pode ser usado por você e uma única vez.`,
            'Confirmar apaga definitivamente todos os documentos e arquivos da organização e a própria organização; ' +
              'os registros já ancorados em blockchain permanecem.',
            'Se não foi você quem pediu, não faça nada e avise o proprietário da organização: sem o código, nada é apagado.',
          ],
        }
      : {
          subject: 'Code to delete your organization on Notary',
          lines: [
            'Hello,',
            `Deleting the organization "${org}" on Notary was requested. To confirm, use this code:`,
          ],
          after: [
            `The code is valid for ${input.validMinutes} minutes (until ${expires}), for you only, and once.`,
            'Confirming permanently deletes every document and file of the organization and the organization itself; records already anchored on a blockchain remain.',
            "If you did not ask for this, do nothing and tell the organization's owner: without the code nothing is deleted.",
          ],
        };
  const text = `${[...t.lines, `    ${input.code}`, ...t.after].join('\n\n')}\n`;
  const html = [
    paragraphs(t.lines),
    `<p style="font-size:1.6em;font-family:monospace;letter-spacing:0.2em"><strong>${escapeHtml(input.code)}</strong></p>`,
    paragraphs(t.after),
  ].join('\n');
  return { to: input.to, subject: t.subject, text, html };
}

/** Everything the members' notice says. */
export interface DeletionNoticeMailInput {
  lang: MailLanguage;
  /** A member's address (never a placeholder: the caller filters them out). */
  to: string;
  organizationName: string;
  /** When the deletion was confirmed. */
  deletedAt: Date;
}

/**
 * The notice every member of a deleted organization receives (spec, Events). It says that the documents and
 * files are gone, that the on-chain records remain, and that the member's own account and personal workspace
 * are untouched.
 */
export function deletionNoticeMail(input: DeletionNoticeMailInput): MailMessage {
  const org = oneLine(input.organizationName);
  const when = readableTime(input.lang, input.deletedAt);
  const t =
    input.lang === 'pt'
      ? {
          subject: 'Uma organização da qual você era membro foi excluída',
          lines: [
            'Olá,',
            `A organização "${org}", da qual você era membro no Notary, foi excluída por um administrador em ${when}.`,
            'Todos os documentos e arquivos da organização foram apagados. Os registros já ancorados em blockchain permanecem nela.',
            'Sua conta e seu espaço pessoal não foram afetados.',
          ],
        }
      : {
          subject: 'An organization you were a member of was deleted',
          lines: [
            'Hello,',
            `The organization "${org}", of which you were a member on Notary, was deleted by an administrator on ${when}.`,
            'Every document and file of the organization was deleted. Records already anchored on a blockchain remain there.',
            'Your account and your personal workspace are not affected.',
          ],
        };
  return { to: input.to, subject: t.subject, text: `${t.lines.join('\n\n')}\n`, html: paragraphs(t.lines) };
}
