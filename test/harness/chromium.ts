/**
 * Chromium for tests that drive a page (the verify page, the web client): the distribution's build, headless,
 * quiet.
 */
import { type Browser, chromium } from 'playwright-core';

/** The distribution's Chromium (`apt-get install chromium`). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches headless Chromium without sandbox (tests run as root in containers), GPU, background networking,
 * component updates, sync or first-run pages, so the only requests are the page's; `extraArgs` are added.
 * Playwright gives every launch a fresh temporary profile (user data dir).
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  });
}
