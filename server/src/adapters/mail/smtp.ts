import nodemailer, { type Transporter } from 'nodemailer';
import { isPlaceholderEmail, type Mailer, type MailMessage } from '../../ports/mail';

export interface SmtpMailerOptions {
  /** `SMTP_URL`, e.g. `smtps://user:pass@smtp.example.com:465` or `smtp://relay:25` (nodemailer URL syntax). */
  url: string;
  /** RFC 5322 `From` (config `mail.from`). */
  from: string;
  /** Receives one line per skipped placeholder recipient (the composition root's mail logger; default: nowhere); sent mail is not logged. */
  log?: (line: string) => void;
}

/** Production mailer: SMTP through nodemailer. Placeholder recipients (`isPlaceholderEmail`) are skipped. */
export class SmtpMailer implements Mailer {
  readonly configured = true;
  private readonly from: string;
  private readonly log: (line: string) => void;
  private readonly transport: Transporter;

  constructor(options: SmtpMailerOptions) {
    this.from = options.from;
    this.log = options.log ?? (() => {});
    this.transport = nodemailer.createTransport(options.url);
  }

  /** @throws Error from nodemailer when the server refuses the connection, the login or the message. */
  async send(message: MailMessage): Promise<void> {
    if (isPlaceholderEmail(message.to)) {
      this.log(
        `mail: skipped placeholder recipient ${message.to} (subject: ${JSON.stringify(message.subject)})`,
      );
      return;
    }
    await this.transport.sendMail({
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html === undefined ? {} : { html: message.html }),
    });
  }

  /** Closes pooled connections (call on shutdown). */
  close(): void {
    this.transport.close();
  }
}
