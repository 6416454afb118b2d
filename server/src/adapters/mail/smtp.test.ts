import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { createLogger } from '@notary/platform/log';
import { describe, expect, it } from 'vitest';
import { SmtpMailer } from './smtp';

/**
 * `SMTP_URL` carries the login: a failed send (the server refuses connections, or its name does not resolve)
 * tells neither the user, the password nor an account subdomain, in the error nor in its log line.
 */
describe('SmtpMailer failures', () => {
  it.each([
    ['user-info', (port: number) => `smtp://operator:pw4u@127.0.0.1:${port}`, ['operator', 'pw4u']],
    ["an account's subdomain", () => 'smtp://operator:pw4u@acct7781.smtp.invalid:2525', ['acct7781', 'pw4u']],
  ])('%s', async (_name, urlOf, secrets) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const mailer = new SmtpMailer({ url: urlOf(port), from: 'notary@example.org' });
    try {
      const error = await mailer.send({ to: 'someone@example.org', subject: 's', text: 't' }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      const lines: string[] = [];
      const log = createLogger({
        level: 'info',
        format: 'json',
        destination: { write: (l: string) => lines.push(l) },
      });
      log.error({ err: error }, 'mail failed');
      const told = [error?.message, error?.stack, JSON.stringify(error), ...lines].join('\n');
      expect(told).toMatch(/ECONNREFUSED|ENOTFOUND|EAI_AGAIN/);
      for (const secret of secrets) expect(told).not.toContain(secret);
    } finally {
      mailer.close();
    }
  });
});
