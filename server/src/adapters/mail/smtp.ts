import { type Log, silentLog } from '@notary/platform/log';
import { redactError, type SecretSet, secretsOfUrl } from '@notary/platform/redact';
import type { Transporter } from 'nodemailer';
import { isPlaceholderEmail, type Mailer, type MailMessage } from '../../ports/mail';

export interface SmtpMailerOptions {
  /** `SMTP_URL`, e.g. `smtps://user:pass@smtp.example.com:465` or `smtp://relay:25` (nodemailer URL syntax). */
  url: string;
  /** RFC 5322 `From` (config `mail.from`). */
  from: string;
  /** Receives one line per skipped placeholder recipient (the composition root's mail logger, at info level; default: nowhere); sent mail is not logged. */
  log?: Log;
}

/** Production mailer: SMTP through nodemailer. Placeholder recipients (`isPlaceholderEmail`) are skipped. */
export class SmtpMailer implements Mailer {
  readonly configured = true;
  private readonly from: string;
  private readonly log: Log;
  private readonly url: string;
  /** What a failure's message must not show: every piece of `SMTP_URL` (`secretsOfUrl`: the login above all). */
  private readonly secrets: SecretSet;
  /** Made at the first mail: nodemailer is loaded then, not held by a service that sends none. */
  private transport: Promise<Transporter> | undefined;

  constructor(options: SmtpMailerOptions) {
    this.from = options.from;
    this.url = options.url;
    this.secrets = secretsOfUrl(options.url);
    this.log = options.log ?? silentLog;
  }

  private transporter(): Promise<Transporter> {
    this.transport ??= import('nodemailer').then((m) => m.default.createTransport(this.url));
    return this.transport;
  }

  /**
   * @throws Error when the server refuses the connection, the login or the message: nodemailer's error redacted of
   * `SMTP_URL`'s pieces (`redactError`: name, message, stack, `code`, cause), with its SMTP reply code
   * (`responseCode`) kept.
   */
  async send(message: MailMessage): Promise<void> {
    if (isPlaceholderEmail(message.to)) {
      this.log.info(
        `mail: skipped placeholder recipient ${message.to} (subject: ${JSON.stringify(message.subject)})`,
      );
      return;
    }
    try {
      await (await this.transporter()).sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html === undefined ? {} : { html: message.html }),
      });
    } catch (e) {
      // The reply code tells a permanent refusal (5xx) from a transient one: callers decide on retries with it.
      const responseCode = (e as { responseCode?: unknown } | null)?.responseCode;
      throw Object.assign(
        redactError(e, this.secrets),
        typeof responseCode === 'number' ? { responseCode } : {},
      );
    }
  }

  /** Closes pooled connections (call on shutdown). */
  close(): void {
    void this.transport?.then((t) => t.close());
  }
}
