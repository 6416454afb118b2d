import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Log, silentLog } from '@notary/platform/log';
import type { Transporter } from 'nodemailer';
import { isPlaceholderEmail, type Mailer, type MailMessage } from '../../ports/mail';

export interface FileMailerOptions {
  /** Directory receiving the `.eml` files (config `mail.devMailbox`, i.e. `DATA_DIR/mail`); created on demand. */
  dir: string;
  /** RFC 5322 `From` (config `mail.from`). */
  from: string;
  /** Reported as `Mailer.configured`: true only with `MAIL_DEV=1` (config `mail.devCountsAsConfigured`). */
  configured: boolean;
  /** Receives one line per message (the composition root's mail logger, at info level; default: nowhere). */
  log?: Log;
}

/**
 * Development mailer: each message becomes one RFC 5322 file `<time>-<random>.eml` in `dir`, where `<time>` is
 * the send time in ISO 8601 basic format (`20250102T030405.678Z`: sortable, and valid in file names on every
 * OS), `<random>` 12 hex digits. nodemailer's stream transport builds the MIME message, the same one SMTP would
 * carry (CRLF line ends), so any mail client or `mailparser` opens the file. Files are written under a temporary
 * name and renamed, so a reader never sees half a message.
 * Placeholder recipients (`isPlaceholderEmail`) are skipped and logged.
 */
export class FileMailer implements Mailer {
  readonly configured: boolean;
  private readonly dir: string;
  private readonly from: string;
  private readonly log: Log;
  /** Made at the first mail: nodemailer is loaded then, not held by a service that sends none. */
  private transport: Promise<Transporter> | undefined;

  constructor(options: FileMailerOptions) {
    this.dir = options.dir;
    this.from = options.from;
    this.configured = options.configured;
    this.log = options.log ?? silentLog;
  }

  /**
   * Writes the message as one `.eml` file and logs one line (recipient, subject, file).
   * @throws Error when the directory cannot be created or written.
   */
  async send(message: MailMessage): Promise<void> {
    await this.write(message);
  }

  /**
   * `send` that also resolves with the absolute path of the written file, or null when the recipient was a
   * placeholder address (nothing written).
   * @throws Error when the directory cannot be created or written.
   */
  async write(message: MailMessage): Promise<string | null> {
    if (isPlaceholderEmail(message.to)) {
      this.log.info(
        `mail: skipped placeholder recipient ${message.to} (subject: ${JSON.stringify(message.subject)})`,
      );
      return null;
    }
    this.transport ??= import('nodemailer').then((m) =>
      m.default.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }),
    );
    const info = await (await this.transport).sendMail({
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html === undefined ? {} : { html: message.html }),
    });
    const raw = info.message;
    if (!Buffer.isBuffer(raw)) throw new Error('nodemailer stream transport did not return a buffer');
    await mkdir(this.dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[-:]/g, '');
    const file = path.resolve(this.dir, `${stamp}-${randomBytes(6).toString('hex')}.eml`);
    // Write then rename: whoever watches the directory never reads a half-written message.
    const partial = `${file}.partial`;
    await writeFile(partial, raw, { mode: 0o600 });
    await rename(partial, file);
    this.log.info(`mail: to=${message.to} subject=${JSON.stringify(message.subject)} file=${file}`);
    return file;
  }
}
