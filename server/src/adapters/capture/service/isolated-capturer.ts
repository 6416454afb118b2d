import { constants } from 'node:fs';
import { chown, type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Log } from '@notary/platform/log';
import { type StageTimes, timed } from '@notary/platform/stage-times';
import { AppError, LIMITS } from '@notary/shared';
import { runsFromSource } from '@notary/shared/module-entry';
import type { CaptureConfig } from '../child/chromium';
import { CAPTURE_PROCESS_ENTRY } from '../child/process-entry';
import {
  CAPTURE_FILES,
  type CaptureAnswer,
  type CaptureRequest,
  type CaptureSetup,
  captureAnswerSchema,
} from '../process-protocol';
import type { CapturePartFile, CaptureParts, CapturePartsSource } from './archive';
import { type CaptureSandbox, sandboxedCommand } from './sandbox';
import { holdOpen, killGroup, type StartedProcess, startProcess, stopProcess } from './started-process';

/**
 * Captures that may wait for a browser beyond those running, all tenants together; one more is refused with 429
 * (the capture queue, `createCaptureQueue`, runs at most `CAPTURE_CONCURRENCY` captures through this capturer).
 */
export const CAPTURE_QUEUE_MAX = 4;
/** Time a capture process gets beyond `CAPTURE_TIMEOUT_MS` to start Node and to exit, ms. */
const PROCESS_GRACE_MS = 15_000;
/** The largest screenshot the service reads back, bytes (a 1280 x 16384 PNG is a few MB at most). */
const MAX_SCREENSHOT_BYTES = 64 * 1024 * 1024;
/** The largest CDXJ index the service reads back, bytes (a line of a few hundred bytes per archived response). */
const MAX_INDEX_BYTES = 32 * 1024 * 1024;
/** The largest `tls.json` the service reads back, bytes (chains are bounded at 4 MiB of DER: `TLS_LIMITS`). */
const MAX_TLS_BYTES = 16 * 1024 * 1024;

/** The account capture processes run as: resolved from `CAPTURE_USER` when the service runs as root. */
export interface CaptureAccount {
  name: string;
  uid: number;
  gid: number;
}

/** What the capturer needs beside the browser's settings. */
export interface IsolatedCapturerOptions {
  userAgentProduct: string;
  software: string;
  /** The service's name and version, stated in each capture's record and provenance summary. */
  service?: { name: string; version: string };
  /** The account capture processes drop to; undefined: they keep the service's own (not root). */
  account: CaptureAccount | undefined;
  /** The user-namespace sandbox they start in when there is no account to drop to (`CaptureSandbox`). */
  sandbox?: CaptureSandbox;
  log: Log;
  /** The capture process's entry module (tests: a stand-in); default `child/capture-process.ts`. */
  entry?: string;
  /** Time the capture process gets beyond `CAPTURE_TIMEOUT_MS` to start and exit, ms (default 15 000). */
  graceMs?: number;
  /** Start the process for the next capture ahead, once a capture has run (`IsolatedCapturer`); default off. */
  spare?: boolean;
  /**
   * How long a process started ahead waits for a capture before it is ended with its browser, ms (default: as
   * long as the capturer lives). The next capture after that starts its own process.
   */
  spareIdleMs?: number;
}

const ENTRY = fileURLToPath(CAPTURE_PROCESS_ENTRY);

/**
 * A capturer whose processes the service keeps: `ready` resolves once the process started ahead for the next
 * capture (if any) can take it (a bench waits for it so that starting it is not measured against anything
 * else), `close` ends that process (at the service's shutdown).
 */
export interface CaptureProcessSource extends CapturePartsSource {
  ready(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The web capturer (`WebCapturer`): each capture runs in a process of its own, used for it alone and gone after
 * it, so that what renders a page a user names never shares memory, environment or privileges with the
 * service. The capture process gets a minimal environment (no key, no secret, no database or S3 credential:
 * `PATH`, `HOME` and `TMPDIR` pointing at its own work directory, a locale, UTC: `startProcess`), runs as
 * `account` when the service is root (Chromium's sandbox then stays on, which it refuses as root), else in
 * `sandbox` (bubblewrap: namespaces of its own where the service's process and secrets are not visible), and
 * answers with a record and the manifest of the parts it left in its work directory (`CAPTURE_FILES`); the
 * service validates the answer, opens the parts without following links and only if they are plain files of
 * that account of the announced sizes, and hands them over (`CaptureParts`, packed by `assembleWacz`), the
 * directory removed on `dispose`.
 * Every process gets its settings (`CaptureSetup`) as soon as it starts and starts its browser at once. With
 * `spare`, once a capture has run, the process for the next one is started ahead and waits, its modules loaded
 * and its own fresh browser up (no page opened), for its request (one at most): Node's start, the loading of
 * the browser driver and Chromium's start are then no part of a capture's time. It is the same process, as the
 * same account in the same kind of sandbox with its own fresh work directory and browser, given one capture
 * only; its deadline counts from its request.
 * How many run at once is the capture queue's business (the domain's, shared fairly across tenants); the process
 * is stopped at the deadline or when the client goes away.
 */
export class IsolatedCapturer implements CaptureProcessSource {
  /** The process started ahead for the next capture (`spare`), until a capture takes it. */
  private spare: Promise<StartedProcess | undefined> | undefined;
  private closed = false;

  constructor(
    private readonly config: CaptureConfig,
    private readonly options: IsolatedCapturerOptions,
  ) {}

  capture(url: URL, options: { signal?: AbortSignal; times?: StageTimes } = {}): Promise<CaptureParts> {
    return this.run(url, options.signal, options.times).finally(() => this.startSpare());
  }

  async ready(): Promise<void> {
    const spare = await this.spare;
    await spare?.ready;
  }

  async close(): Promise<void> {
    this.closed = true;
    const spare = this.spare;
    this.spare = undefined;
    const started = await spare;
    if (started) await discard(started);
  }

  private async run(
    url: URL,
    signal: AbortSignal | undefined,
    times: StageTimes | undefined,
  ): Promise<CaptureParts> {
    signal?.throwIfAborted();
    const { account } = this.options;
    const begun = performance.now();
    const started = await this.take();
    const dispose = () => removeWorkDir(started.workDir);
    try {
      const request: CaptureRequest = {
        url: url.href,
        options: {
          software: this.options.software,
          ...(this.options.service ? { service: this.options.service } : {}),
          ...(times ? { timing: true } : {}),
        },
      };
      const answer = await timed(times, 'capture process', () => this.inProcess(started, request, signal));
      // Node's start, the loader and the modules, as far as this capture waited for them (nothing when the
      // process was started ahead and ready): `readyAt` is known once the process has ended.
      times?.add('process start', Math.max(0, (started.readyAt ?? begun) - begun));
      // The process's own figures, shown to a bench only: never read unless the bench asked for them.
      if (times && answer.type === 'done') {
        for (const [stage, ms] of Object.entries(answer.stages ?? {})) times.add(stage, ms);
      }
      if (answer.type === 'failed') {
        throw new AppError(
          answer.code,
          answer.message,
          answer.retryAfterSeconds ? { retryAfterSeconds: answer.retryAfterSeconds } : {},
        );
      }
      return await partsIn(started.workDir, account?.uid ?? process.getuid?.(), answer, dispose);
    } catch (e) {
      if (started.alive()) killGroup(started.child);
      await dispose();
      throw e;
    }
  }

  /** The process for a capture: the one started ahead when it is still there, else one started now. */
  private async take(): Promise<StartedProcess> {
    const spare = this.spare;
    this.spare = undefined;
    const started = await spare;
    if (started?.alive()) {
      holdOpen(started, true);
      return started;
    }
    if (started) await discard(started);
    return this.start();
  }

  /**
   * Starts the process for the next capture ahead (`spare`), unless one is there or the capturer is closed. One
   * that ends before a capture takes it (its stdin closed, a crash) is dropped with its work directory.
   */
  private startSpare(): void {
    if (!this.options.spare || this.closed || this.spare) return;
    const spare = this.start().catch((e: unknown) => {
      this.options.log.warn({ err: e }, 'capture process could not be started ahead');
      return undefined;
    });
    this.spare = spare;
    void spare.then((started) => {
      if (started) holdOpen(started, false);
      if (started && this.options.spareIdleMs !== undefined) this.endSpareWhenIdle(spare, started);
      return started?.closed.then(async () => {
        if (this.spare !== spare) return;
        this.spare = undefined;
        await discard(started);
      });
    });
  }

  /**
   * Ends the process started ahead (its browser holds hundreds of MB) once it has waited `spareIdleMs` without a
   * capture taking it: a series of captures pays the browser's start once, an idle service gives the memory back.
   */
  private endSpareWhenIdle(spare: Promise<StartedProcess | undefined>, started: StartedProcess): void {
    setTimeout(() => {
      if (this.spare !== spare) return;
      this.spare = undefined;
      void discard(started);
    }, this.options.spareIdleMs).unref();
  }

  /** Starts a capture process in a fresh work directory, as the capture account or in the sandbox. */
  private async start(): Promise<StartedProcess> {
    const { account, sandbox, log } = this.options;
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'notary-capture-'));
    try {
      if (account) await chown(workDir, account.uid, account.gid);
      const entry = this.options.entry ?? ENTRY;
      const node = [...loaderArgs(entry), entry];
      const command = sandbox
        ? await sandboxedCommand(sandbox, workDir, process.execPath, node)
        : { command: process.execPath, args: node };
      const started = startProcess(command, workDir, account);
      started.child.once('error', (e) => log.error({ err: e }, 'capture process could not start'));
      // Its setup at once, so that it starts its browser before its request comes (`captureSetupSchema`).
      const setup: CaptureSetup = {
        workDir,
        userAgentProduct: this.options.userAgentProduct,
        config: {
          chromiumPath: this.config.chromiumPath,
          timeoutMs: this.config.timeoutMs,
          allowHosts: this.config.allowHosts.map((e) => e.text),
          ...(this.config.caCertsPem ? { caCertsPem: this.config.caCertsPem } : {}),
          ...(this.config.egressIp ? { egressIp: this.config.egressIp } : {}),
        },
      };
      started.child.stdin?.on('error', () => undefined);
      started.child.stdin?.write(`${JSON.stringify(setup)}\n`);
      return started;
    } catch (e) {
      await removeWorkDir(workDir);
      throw e;
    }
  }

  /** Sends `request` to the started process and waits for its answer and its exit, within the deadline. */
  private async inProcess(
    started: StartedProcess,
    request: CaptureRequest,
    signal: AbortSignal | undefined,
  ): Promise<CaptureAnswer> {
    const { log } = this.options;
    const { child } = started;
    let timedOut = false;
    const stop = () => stopProcess(child);
    const deadline = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      this.config.timeoutMs + (this.options.graceMs ?? PROCESS_GRACE_MS),
    );
    signal?.addEventListener('abort', stop, { once: true });
    // stdin stays open while the service waits: its end tells the process the service is gone.
    child.stdin?.on('error', stop);
    child.stdin?.write(`${JSON.stringify(request)}\n`);
    const { code, signal: exitSignal } = await started.closed;
    clearTimeout(deadline);
    child.stdin?.destroy();
    signal?.removeEventListener('abort', stop);
    // Whatever it left running (a browser helper that outlived it) ends with it.
    killGroup(child);
    signal?.throwIfAborted();
    // The answer is read once the process has exited: one line, within MAX_ANSWER_BYTES, of the answer's schema.
    const answer = parseAnswer(started.answer);
    if (answer) {
      if (answer.refusals.length > 0) {
        log.warn({ url: request.url, refusals: answer.refusals }, 'capture refused destinations');
      }
      if (answer.type === 'failed' && answer.code === 'INTERNAL') {
        log.error({ stderr: started.stderr(), url: request.url }, 'capture failed');
      }
      return answer;
    }
    if (timedOut) {
      throw new AppError(
        'GATEWAY_TIMEOUT',
        `The capture did not finish within ${this.config.timeoutMs} ms (CAPTURE_TIMEOUT_MS)`,
      );
    }
    log.error(
      { code, signal: exitSignal, stderr: started.stderr(), invalidAnswer: true },
      'capture process ended without a valid answer',
    );
    throw new AppError('INTERNAL', 'The capture failed');
  }
}

/** The answer a capture process wrote (one JSON line of `captureAnswerSchema`), or undefined when it is none. */
function parseAnswer(written: StartedProcess['answer']): CaptureAnswer | undefined {
  const text = written.text();
  if (written.overflow || text === undefined) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = captureAnswerSchema.safeParse(message);
  return parsed.success ? parsed.data : undefined;
}

/** Ends a process no capture will use, and removes its work directory. */
async function discard(started: StartedProcess): Promise<void> {
  // Asked first (it closes the browser it started ahead, whose profile is in the work directory), killed with
  // whatever it left after a grace period.
  stopProcess(started.child);
  // Its pipes close once it is gone; only then is its work directory no longer written to.
  if (started.alive()) await started.closed;
  killGroup(started.child);
  await removeWorkDir(started.workDir);
}

/**
 * Removes a capture process's work directory. The browser processes of its group were killed an instant before
 * and may still be writing their profile there until the kernel has ended them: `rm` retries a directory found
 * not empty (or busy) with Node's linear backoff, 50 ms more each time, up to about 2.7 s in all.
 */
function removeWorkDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}

/**
 * The Node options a capture process starts with: the TypeScript loader when the service runs from sources (as
 * `npm start` does), and a heap bound (the archive is written from the browser's recording in memory).
 */
function loaderArgs(entry: string): string[] {
  const args = ['--max-old-space-size=1536'];
  if (runsFromSource(entry)) {
    const tsx = createRequire(import.meta.url).resolve('tsx');
    args.push('--import', pathToFileURL(tsx).href);
  }
  return args;
}

/**
 * The parts the capture process announced in `answer`, opened in `workDir` (`openOwnFile`): the small ones
 * read (screenshot, index, `tls.json`), the WARC and the PDF kept open to be read as streams. `dispose`
 * closes them and removes the directory (`removeDir`). @throws AppError INTERNAL when a part is not as
 * announced (every file opened so far closed).
 */
async function partsIn(
  workDir: string,
  owner: number | undefined,
  answer: Extract<CaptureAnswer, { type: 'done' }>,
  removeDir: () => Promise<void>,
): Promise<CaptureParts> {
  const { files } = answer;
  const kept: FileHandle[] = [];
  const closeAll = () => Promise.all(kept.map((h) => h.close().catch(() => undefined)));
  const keep = async (name: string, bytes: number, max: number): Promise<CapturePartFile> => {
    const file = await openOwnFile(path.join(workDir, name), owner, bytes, max);
    kept.push(file);
    return { file, bytes };
  };
  const read = async (name: string, bytes: number, max: number): Promise<Buffer> => {
    const file = await openOwnFile(path.join(workDir, name), owner, bytes, max);
    return file.readFile().finally(() => file.close());
  };
  try {
    return {
      record: answer.record,
      screenshot: await read(CAPTURE_FILES.screenshot, files.screenshot, MAX_SCREENSHOT_BYTES),
      index: await read(CAPTURE_FILES.index, files.index, MAX_INDEX_BYTES),
      tls: await read(CAPTURE_FILES.tls, files.tls, MAX_TLS_BYTES),
      warc: await keep(CAPTURE_FILES.warc, files.warc, LIMITS.maxUploadBytes),
      pdf:
        files.pdf === undefined ? undefined : await keep(CAPTURE_FILES.pdf, files.pdf, LIMITS.maxUploadBytes),
      dispose: async () => {
        await closeAll();
        await removeDir();
      },
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/**
 * Opens a file the capture process wrote, for reading, only if it is what it should be: not a link (a process
 * that a page took over could point one at the service's own files), a plain file with one name, owned by the
 * capture account, of the announced size and under `max` bytes.
 * @throws AppError INTERNAL otherwise.
 */
async function openOwnFile(
  file: string,
  owner: number | undefined,
  bytes: number,
  max: number,
): Promise<FileHandle> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((e: unknown) => {
    throw new AppError('INTERNAL', 'The capture failed', { cause: e });
  });
  const stat = await handle.stat();
  const expected =
    stat.isFile() &&
    stat.nlink === 1 &&
    (owner === undefined || stat.uid === owner) &&
    stat.size === bytes &&
    stat.size <= max;
  if (!expected) {
    await handle.close();
    throw new AppError('INTERNAL', 'The capture failed', {
      cause: new Error(`capture output ${path.basename(file)} is not the file the capture process announced`),
    });
  }
  return handle;
}
