import type { Log } from '@notary/platform/log';
import type { Config } from '../../config';
import type { Mailer } from '../../ports/mail';
import { FileMailer } from './file';
import { SmtpMailer } from './smtp';

export { FileMailer, type FileMailerOptions } from './file';
export { SmtpMailer, type SmtpMailerOptions } from './smtp';

/**
 * The mailer the configuration asks for: SMTP when `SMTP_URL` is set, otherwise `.eml` files under
 * `DATA_DIR/mail` (reported as configured only with `MAIL_DEV=1`).
 */
export function createMailer(config: Config['mail'], log?: Log): Mailer {
  if (config.smtpUrl) return new SmtpMailer({ url: config.smtpUrl, from: config.from, log });
  return new FileMailer({
    dir: config.devMailbox,
    from: config.from,
    configured: config.devCountsAsConfigured,
    log,
  });
}
