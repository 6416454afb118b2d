import { createLogger } from '@notary/platform/log';
import { AppError, errorMessage } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config';
import { createCapturer, UNISOLATED_REFUSAL } from './index';

/**
 * A capture runs a real browser on a page anyone names: without an account of its own it would run as the service's
 * user. A service that is not root refuses captures in production (503, saying what to set) and only warns in
 * development. The uid is injected: the tests themselves run as root.
 */
describe('captures without a separate account', () => {
  const config = loadConfig({ NODE_ENV: 'test', CHROMIUM_PATH: '/nonexistent/chromium' }).capture;
  const service = (production: boolean, lines: string[]) => ({
    publicUrl: 'https://notary.example',
    serviceName: 'Notary',
    log: createLogger({
      level: 'warn',
      format: 'json',
      destination: { write: (line: string) => lines.push(line) },
    }),
    production,
    uid: () => 1000,
  });

  it('are refused in production with 503 naming CAPTURE_USER and root', async () => {
    const capturer = await createCapturer(config, service(true, []));
    const error = await capturer.capture(new URL('https://example.org/'), {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: UNISOLATED_REFUSAL });
    expect(UNISOLATED_REFUSAL).toMatch(/root with CAPTURE_USER/);
  });

  it('only warn in development (the capture goes on)', async () => {
    const lines: string[] = [];
    const capturer = await createCapturer(config, service(false, lines));
    const error = await capturer.capture(new URL('https://example.org/'), {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(lines.join('\n')).toMatch(/captures run as the service user/);
    // It went on to a capture process (which fails here: no Chromium at the path given).
    expect(error).toBeInstanceOf(AppError);
    expect(errorMessage(error)).not.toBe(UNISOLATED_REFUSAL);
  });
});
