/** An outgoing e-mail. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Mail port: SMTP (`SMTP_URL`) in production, `.eml` files under `DATA_DIR/mail/` otherwise. */
export interface Mailer {
  /** True when mail really leaves the machine (or `MAIL_DEV=1` says the dev mailbox counts). */
  readonly configured: boolean;
  send(message: MailMessage): Promise<void>;
}
