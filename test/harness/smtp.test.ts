import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './smtp';

describe('SMTP sink harness', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await sink?.stop();
  });

  it('receives and parses what nodemailer sends over SMTP', async () => {
    const transport = nodemailer.createTransport(sink.url);
    await transport.sendMail({ from: 'a@x.test', to: 'B@y.test', subject: 'Olá', text: 'código 123456' });
    const mail = await sink.waitFor('b@y.test');
    expect(mail.parsed.subject).toBe('Olá');
    expect(mail.parsed.text).toContain('123456');
  });
});
