import { silentLog } from '@notary/platform/log';
import { parseAllowList } from '@notary/platform/net/address-policy';
import { IsolatedCapturer } from './isolated-capturer';

/**
 * The service side of a capture, run by `isolated-capturer.test.ts` as an unprivileged user (a service that is
 * not root), printing one JSON line. Arguments:
 * - `sandbox|none <stand-in> <dataDir>`: captures the stand-in's `/probe` of this process's environment and of
 *   `<dataDir>/secret`, in the bubblewrap sandbox or without it; prints what the capture process read;
 * - `chromium <url>`: captures `url` (on loopback) with Debian's Chromium and the real capture process, in the
 *   sandbox; prints the page's title and the size of the WARC it recorded.
 */
const [mode, target = '', dataDir = ''] = process.argv.slice(2);
const sandbox = { bwrapPath: '/usr/bin/bwrap', hiddenPaths: [dataDir || '/nonexistent'] };
const capturer = new IsolatedCapturer(
  {
    chromiumPath: '/usr/bin/chromium',
    timeoutMs: 30_000,
    concurrency: 1,
    allowHosts: parseAllowList('127.0.0.1'),
    caCertsPem: undefined,
  },
  {
    userAgentProduct: 'test',
    software: 'test',
    account: undefined,
    ...(mode === 'none' ? {} : { sandbox }),
    log: silentLog,
    ...(mode === 'chromium' ? {} : { entry: target, graceMs: 0 }),
  },
);
const url =
  mode === 'chromium'
    ? new URL(target)
    : new URL(`http://stand-in/probe?pid=${process.pid}&file=${encodeURIComponent(`${dataDir}/secret`)}`);
const capture = await capturer.capture(url);
process.stdout.write(
  mode === 'chromium'
    ? JSON.stringify({ title: capture.record.title, warcBytes: capture.warc.bytes })
    : capture.record.title,
);
await capture.dispose();
