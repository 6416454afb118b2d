import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { testCaptureRecord } from '../../../../../test/harness/capture-record';
import { CAPTURE_FILES, captureRequestSchema } from '../process-protocol';

/**
 * A stand-in for the capture process in tests of `IsolatedCapturer`: it behaves as a capture process that a
 * page took over might, chosen by the requested URL's path:
 * - `/environment`: a well-formed answer whose record's title is the process's environment names and uid;
 * - `/symlink`: answers done, but its archive is a link to a file of the service (`?target=&size=`);
 * - `/garbage`: answers something that is not an answer;
 * - `/hang`: never answers (writes its pid into the file `?pidFile=` first).
 */
const record = (title: string) =>
  testCaptureRecord({
    requestedUrl: 'http://stand-in/',
    finalUrl: 'http://stand-in/',
    serverIp: null,
    responseHeaders: [],
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    browser: { name: 'stand-in', version: '0' },
    userAgent: 'stand-in',
    viewport: { width: 1, height: 1 },
    screenshot: { width: 1, height: 1, truncated: false },
    title,
  });

process.once('message', (message: unknown) => {
  void (async () => {
    const request = captureRequestSchema.parse(message);
    const url = new URL(request.url);
    const wacz = path.join(request.workDir, CAPTURE_FILES.wacz);
    const png = path.join(request.workDir, CAPTURE_FILES.screenshot);
    await writeFile(png, 'png');
    if (url.pathname === '/hang') {
      await writeFile(
        url.searchParams.get('pidFile') ?? path.join(request.workDir, 'pid'),
        String(process.pid),
      );
      setInterval(() => undefined, 1_000);
      return;
    }
    if (url.pathname === '/garbage') {
      process.send?.({ type: 'done', record: { format: 'something else' } });
      return;
    }
    let size = 4;
    if (url.pathname === '/symlink') {
      await symlink(url.searchParams.get('target') ?? '/etc/hostname', wacz);
      size = Number(url.searchParams.get('size'));
    } else {
      await writeFile(wacz, 'wacz');
    }
    const title = JSON.stringify({ env: Object.keys(process.env).sort(), uid: process.getuid?.() });
    process.send?.(
      { type: 'done', record: record(title), waczBytes: size, screenshotBytes: 3, refusals: [] },
      () => process.exit(0),
    );
  })();
});
