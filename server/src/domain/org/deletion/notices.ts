import type { EntityManager } from '@mikro-orm/core';
import type { Log } from '@notary/platform/log';
import { AppError, type MailLanguage } from '@notary/shared';
import { OrgDeletion } from '../../../db/entities';
import { isPlaceholderEmail } from '../../../ports/mail';
import { deletionNoticeMail } from '../../mail/org-deletion';
import { clockOf, type DeletionTarget, type OrgDeletionRunPorts } from './ports';

/** The members' addresses worth mailing: placeholder addresses (wallet accounts) out, duplicates out. */
export function noticeRecipients(emails: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const raw of emails) {
    const email = raw.trim().toLowerCase();
    if (email && !isPlaceholderEmail(email)) seen.add(email);
  }
  return [...seen];
}

/**
 * Whether a mailer error is the SMTP server refusing this message for good (reply code 5xx, RFC 5321
 * section 4.2.1, e.g. 550 mailbox unavailable), as opposed to a transient failure worth retrying (4xx,
 * connection refused, timeout). nodemailer exposes the reply code as `responseCode`.
 */
function isPermanentMailRefusal(e: unknown): boolean {
  const responseCode = (e as { responseCode?: unknown } | null)?.responseCode;
  return typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600;
}

/**
 * The members' notice, one member at a time; each address is removed from the row once its mail is accepted,
 * so a retry after a mail failure does not notify anyone twice. An address the mail server refuses for good
 * is logged through `log` (a warning) and skipped.
 * @param deletion the row's `lang` (the requester's) and `startedAt` (the date the notice gives).
 * @throws AppError BAD_GATEWAY on a transient mail failure (the row keeps the addresses still to notify).
 */
export async function sendNotices(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  target: DeletionTarget,
  deletion: { lang: MailLanguage; startedAt?: Date | null },
  recipients: readonly string[],
  log: Log,
): Promise<void> {
  const pending = [...recipients];
  while (pending.length > 0) {
    const to = pending[0] as string;
    try {
      await ports.mailer.send(
        deletionNoticeMail({
          lang: deletion.lang,
          to,
          organizationName: target.organizationName,
          deletedAt: deletion.startedAt ?? clockOf(ports),
        }),
      );
    } catch (e) {
      if (!isPermanentMailRefusal(e)) {
        throw new AppError(
          'BAD_GATEWAY',
          "The organization's documents and files are deleted, but e-mailing the members failed: the service retries by itself; or confirm again with the same code to finish now",
          { cause: e },
        );
      }
      // An address the mail server refuses for good would block the deletion forever: log and go on.
      log.warn(`notice to ${to} refused permanently, skipped: ${String(e)}`);
    }
    pending.shift();
    await em.nativeUpdate(OrgDeletion, { id: target.deletionId }, { noticeRecipients: pending });
  }
}
