import { readFile } from 'node:fs/promises';
import type { CaptureSettings } from '../../config';
import type { WebCapturer } from '../../ports/capture';

/**
 * The web capturer of the configuration (`CHROMIUM_PATH`, `CAPTURE_*`; docs/api.md, Web capture). Chromium is
 * looked for at each capture, so the service starts without it (the route then answers 503).
 * @throws Error when `CAPTURE_CA_CERTS` cannot be read or holds no certificate.
 */
export async function createCapturer(
  config: CaptureSettings,
  service: { publicUrl: string; serviceName: string },
): Promise<WebCapturer> {
  let caCertsPem: string | undefined;
  if (config.caCertsPath) {
    caCertsPem = await readFile(config.caCertsPath, 'utf8');
    if (!caCertsPem.includes('BEGIN CERTIFICATE')) {
      throw new Error(`CAPTURE_CA_CERTS ${config.caCertsPath}: no certificate`);
    }
  }
  // playwright-core and warcio are loaded at the first capture, not at start: about 70 MB of the idle
  // service's RSS and 1.5 s of its start for a route most deployments seldom use (issue 17).
  let capturer: Promise<WebCapturer> | undefined;
  const load = async (): Promise<WebCapturer> => {
    const { ChromiumCapturer } = await import('./chromium');
    return new ChromiumCapturer(
      { ...config, caCertsPem },
      {
        // A product token (RFC 9110 section 10.1.5) naming the service, with its URL as the comment.
        userAgentProduct: `NotaryCapture/1.0 (+${service.publicUrl})`,
        software: `${service.serviceName} web capture (Chromium via playwright-core, warcio)`,
      },
    );
  };
  return {
    capture: async (url, options) => {
      // A failed import is not cached: the next capture tries again.
      capturer ??= load().catch((e: unknown) => {
        capturer = undefined;
        throw e;
      });
      return (await capturer).capture(url, options);
    },
  };
}
