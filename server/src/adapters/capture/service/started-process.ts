import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ANSWER_FD, collectAnswer, READY_LINE } from '../process-pipes';

/** How much of a capture process's standard error the service keeps for its log, bytes. */
const STDERR_KEPT = 8 * 1024;
/** Time between asking a capture process to stop (SIGTERM: it closes its browser) and killing it, ms. */
const STOP_GRACE_MS = 3_000;

/** A capture process started in its work directory, not necessarily given its request yet. */
export interface StartedProcess {
  child: ChildProcess;
  /** Its own work directory (its `HOME`, `TMPDIR` and where it leaves the parts). */
  workDir: string;
  /**
   * Resolves once it said it is ready to take its request (Node, the loader and its modules loaded, its browser
   * started: `READY_LINE` on its stdout), or once it ended; `readyAt` is then that moment (`performance.now()`).
   */
  ready: Promise<void>;
  readonly readyAt: number | undefined;
  /** Resolves once it has exited and its pipes are closed (Node's `close`). */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last `STDERR_KEPT` bytes of its standard error. */
  stderr(): string;
  /** What it wrote on its answer pipe (`collectAnswer`: the first line, within `MAX_ANSWER_BYTES`). */
  answer: ReturnType<typeof collectAnswer>;
  /** Whether it is still running. */
  alive(): boolean;
}

/**
 * Starts `command` (the capture process, possibly inside its sandbox) in `workDir` with the minimal environment
 * a capture process gets (`PATH`, `HOME` and `TMPDIR` its work directory, a UTF-8 locale, UTC: no key, no
 * secret, no credential), as `account` when given, in a process group of its own so that the service can end
 * it and whatever it started together. Its answer is collected from the start, so a process that writes more
 * than the service reads is stopped whether or not it has its request yet.
 */
export function startProcess(
  command: { command: string; args: string[] },
  workDir: string,
  account: { uid: number; gid: number } | undefined,
): StartedProcess {
  const child = spawn(command.command, command.args, {
    cwd: workDir,
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: workDir,
      TMPDIR: workDir,
      LANG: 'C.UTF-8',
      TZ: 'UTC',
    },
    ...(account ? { uid: account.uid, gid: account.gid } : {}),
    // Its own process group: the service can end the capture process and what it started together.
    detached: true,
    // The request on stdin, readiness on stdout, the answer on a pipe of its own (`process-pipes.ts`): no IPC
    // channel, whose messages would be buffered whole, whatever their size.
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEPT);
  });
  const answerPipe = child.stdio[ANSWER_FD] as Readable | null | undefined;
  const answer = answerPipe ? collectAnswer(answerPipe, () => stopProcess(child)) : emptyAnswer();
  let readyAt: number | undefined;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const ready = new Promise<void>((resolve) => {
    const done = () => {
      readyAt ??= performance.now();
      child.stdout?.off('data', onData);
      // Whatever else it writes there is not read (and not kept).
      child.stdout?.resume();
      resolve();
    };
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString('latin1')).slice(-READY_LINE.length - 1);
      if (seen.includes(READY_LINE)) done();
    };
    child.stdout?.on('data', onData);
    void closed.then(done);
  });
  // A process that cannot start (no such executable) says so through `close` as well.
  child.once('error', () => undefined);
  return {
    child,
    workDir,
    ready,
    get readyAt() {
      return readyAt;
    },
    closed,
    stderr: () => stderr,
    answer,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

/**
 * Whether `started` keeps the service's event loop running: a process waiting for a capture does not (the
 * service may end without a word to it: its stdin then closes, and it exits), one at work does.
 */
export function holdOpen(started: StartedProcess, hold: boolean): void {
  const handles = [started.child, ...started.child.stdio];
  for (const handle of handles) {
    if (handle && 'ref' in handle && typeof handle.ref === 'function' && typeof handle.unref === 'function') {
      if (hold) handle.ref();
      else handle.unref();
    }
  }
}

/** Asks the capture process to stop (it closes its browser), then kills its group after a grace period. */
export function stopProcess(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  setTimeout(() => killGroup(child), STOP_GRACE_MS).unref();
}

/** Kills the capture process's group: it and whatever it left running (a browser helper that outlived it). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function emptyAnswer(): ReturnType<typeof collectAnswer> {
  return { text: () => undefined, overflow: false };
}
