import { createLogger } from '@notary/platform/log';
import { AppError, errorMessage } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config';
import { createCapturer, UNISOLATED_REFUSAL } from './index';

/** A logger writing its warnings into `lines`. */
const linesLog = (lines: string[]) =>
  createLogger({ level: 'warn', format: 'json', destination: { write: (line: string) => lines.push(line) } });

/**
 * A capture runs a real browser on a page anyone names: without an account of its own it would run as the service's
 * user. A service that is not root sandboxes captures with bubblewrap; where it cannot, it refuses captures in
 * production (503, saying what to set) and only warns in development. The uid is injected: the tests themselves
 * run as root.
 */
describe('captures without a separate account nor a sandbox', () => {
  const config = loadConfig({
    NODE_ENV: 'test',
    CHROMIUM_PATH: '/nonexistent/chromium',
    CAPTURE_BWRAP: '/nonexistent/bwrap',
  }).capture;
  const service = (production: boolean, lines: string[]) => ({
    publicUrl: 'https://notary.example',
    serviceName: 'Notary',
    log: linesLog(lines),
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
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(errorMessage(error)).toContain(UNISOLATED_REFUSAL);
    expect(errorMessage(error)).toMatch(/\/nonexistent\/bwrap/);
    expect(UNISOLATED_REFUSAL).toMatch(/Install bubblewrap \(CAPTURE_BWRAP\).*root with CAPTURE_USER/);
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
    expect(errorMessage(error)).not.toContain(UNISOLATED_REFUSAL);
  });
});

describe('captures of a service that is not root, where bubblewrap runs', () => {
  it('run sandboxed, in production too (no refusal, no warning)', async () => {
    const config = loadConfig({ NODE_ENV: 'test', CHROMIUM_PATH: '/nonexistent/chromium' }).capture;
    expect(config.bwrapPath).toBe('/usr/bin/bwrap');
    const lines: string[] = [];
    const capturer = await createCapturer(config, {
      publicUrl: 'https://notary.example',
      serviceName: 'Notary',
      log: linesLog(lines),
      production: true,
      uid: () => 1000,
    });
    const error = await capturer.capture(new URL('https://example.org/'), {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    // It went on to a sandboxed capture process (which fails here: no Chromium at the path given).
    expect(error).toBeInstanceOf(AppError);
    expect(errorMessage(error)).not.toContain(UNISOLATED_REFUSAL);
    expect(lines).toEqual([]);
  });
});
