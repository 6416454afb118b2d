import path from 'node:path';
import { z } from 'zod';
import { bool, optionalString } from './env';

/** Outgoing mail (README, Configuration). */
export const MailEnv = z.object({
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('Notary <no-reply@notary.local>'),
  MAIL_DEV: bool,
});
export type MailEnv = z.infer<typeof MailEnv>;

/**
 * Outgoing mail: SMTP when `SMTP_URL` is set, else files in the development mailbox under `DATA_DIR`;
 * `devCountsAsConfigured` (`MAIL_DEV`) lets that mailbox count as a configured mailer.
 */
export interface MailConfig {
  smtpUrl: string | undefined;
  from: string;
  devMailbox: string;
  devCountsAsConfigured: boolean;
}

/** The mail settings of `e`; the development mailbox is `<dataDir>/mail`. */
export function mailConfig(e: MailEnv, dataDir: string): MailConfig {
  return {
    smtpUrl: e.SMTP_URL,
    from: e.MAIL_FROM,
    devMailbox: path.join(dataDir, 'mail'),
    devCountsAsConfigured: e.MAIL_DEV ?? false,
  };
}
