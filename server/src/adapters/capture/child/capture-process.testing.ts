import { createWriteStream } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { testCaptureRecord } from '../../../../../test/harness/capture-record';
import { ANSWER_FD, MAX_REQUEST_BYTES, readJsonLine, signalReady, writeAnswer } from '../process-pipes';
import { CAPTURE_FILES, captureRequestSchema, captureSetupSchema } from '../process-protocol';

/**
 * A stand-in for the capture process in tests of `IsolatedCapturer`: it behaves as a capture process that a
 * page took over might, chosen by the requested URL's path:
 * - `/environment`: a well-formed answer (its WARC the bytes `warc`) whose record's title is the process's
 *   environment names, uid, pid, start (epoch ms) and work directory;
 * - `/symlink`: answers done, but its WARC is a link to a file of the service (`?target=&size=`);
 * - `/garbage`: answers something that is not an answer;
 * - `/flood`: answers without end (more than the service reads);
 * - `/hang`: never answers (writes its pid into the file `?pidFile=` first);
 * - `/probe`: a well-formed answer whose record's title says what reading `/proc/<?pid=>/environ` and the file
 *   `?file=` gave (their text, or the error code), and its uid.
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

const startedAt = Date.now();

void readJsonLine(process.stdin, MAX_REQUEST_BYTES).then(async (setupMessage: unknown) => {
  const { workDir } = captureSetupSchema.parse(setupMessage);
  const request = captureRequestSchema.parse(await readJsonLine(process.stdin, MAX_REQUEST_BYTES));
  const url = new URL(request.url);
  const file = (name: string) => path.join(workDir, name);
  await writeFile(file(CAPTURE_FILES.screenshot), 'png');
  await writeFile(file(CAPTURE_FILES.index), '');
  await writeFile(file(CAPTURE_FILES.tls), '{}');
  if (url.pathname === '/hang') {
    await writeFile(url.searchParams.get('pidFile') ?? path.join(workDir, 'pid'), String(process.pid));
    setInterval(() => undefined, 1_000);
    return;
  }
  if (url.pathname === '/garbage') {
    await writeAnswer({ type: 'done', record: { format: 'something else' } });
    process.exit(0);
  }
  if (url.pathname === '/flood') {
    // An endless answer: the service stops reading at MAX_ANSWER_BYTES and stops the process.
    const out = createWriteStream('', { fd: ANSWER_FD });
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    const more = (): void => {
      while (out.write(chunk));
      out.once('drain', more);
    };
    out.once('error', () => process.exit(0));
    more();
    return;
  }
  let size = 4;
  if (url.pathname === '/symlink') {
    await symlink(url.searchParams.get('target') ?? '/etc/hostname', file(CAPTURE_FILES.warc));
    size = Number(url.searchParams.get('size'));
  } else {
    await writeFile(file(CAPTURE_FILES.warc), 'warc');
  }
  const title =
    url.pathname === '/probe'
      ? JSON.stringify({
          environ: await attempt(`/proc/${url.searchParams.get('pid')}/environ`),
          file: await attempt(url.searchParams.get('file') ?? ''),
          uid: process.getuid?.(),
        })
      : JSON.stringify({
          env: Object.keys(process.env).sort(),
          uid: process.getuid?.(),
          pid: process.pid,
          startedAt,
          workDir,
        });
  await writeAnswer({
    type: 'done',
    record: record(title),
    files: { warc: size, index: 0, screenshot: 3, tls: 2 },
    refusals: [],
  });
  process.exit(0);
});
signalReady();

/** The text of `file`, or the code of the error reading it gave (`ENOENT`, `EACCES`). */
function attempt(file: string): Promise<string> {
  return readFile(file, 'latin1').catch((e: unknown) =>
    e instanceof Error && 'code' in e ? String(e.code) : 'failed',
  );
}
