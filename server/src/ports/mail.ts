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

/**
 * Placeholder addresses: accounts without a real mailbox (Sign-In With Ethereum wallet users) get an address
 * under the `.invalid` top-level domain, e.g. `0xAbC…@siwe.placeholder.invalid` (better-auth's
 * `createPlaceholderEmail`). RFC 6761 section 6.4 reserves `.invalid`: such a name never resolves, so mail to
 * it can only bounce or leak to a misconfigured relay. Every mailer skips these recipients.
 */
export function isPlaceholderEmail(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const domain = address
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
  return domain === 'invalid' || domain.endsWith('.invalid');
}
