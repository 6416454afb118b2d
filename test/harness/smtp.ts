import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** RCPT TO addresses of the SMTP envelope. */
  to: string[];
  from: string;
  parsed: ParsedMail;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` for `SMTP_URL`. */
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the first message to `address` (received already or later), within `timeoutMs`. */
  waitFor(
    address: string,
    predicate?: (m: ReceivedMail) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedMail>;
  /** Every message to `address` so far. */
  to(address: string): ReceivedMail[];
  clear(): void;
  stop(): Promise<void>;
}

/**
 * A real SMTP server (nodemailer's `smtp-server`) on 127.0.0.1 and a free port that keeps every message,
 * parsed with `mailparser`: the mail sink of the tests. No TLS, any (or no) authentication accepted.
 */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const waiters: {
    address: string;
    predicate: (m: ReceivedMail) => boolean;
    resolve: (m: ReceivedMail) => void;
  }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(_auth, _session, callback) {
      callback(null, { user: 'test' });
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const mail: ReceivedMail = {
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            parsed,
          };
          messages.push(mail);
          for (const w of [...waiters]) {
            if (mail.to.includes(w.address) && w.predicate(mail)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(mail);
            }
          }
          callback();
        })
        .catch((e: Error) => callback(e));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  const to = (address: string) => messages.filter((m) => m.to.includes(address.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to,
    waitFor: (address, predicate = () => true, timeoutMs = 10_000) => {
      const lower = address.toLowerCase();
      const hit = to(lower).find(predicate);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const waiter = { address: lower, predicate, resolve };
        waiters.push(waiter);
        setTimeout(() => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) {
            waiters.splice(i, 1);
            reject(new Error(`no mail to ${address} within ${timeoutMs} ms`));
          }
        }, timeoutMs).unref();
      });
    },
    clear: () => {
      messages.length = 0;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
