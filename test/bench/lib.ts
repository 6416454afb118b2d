/**
 * Helpers for `npm run bench` (see `run.ts`): child processes that are always reaped, free loopback ports,
 * a random file streamed to disk, `/proc` readings (RSS, CPU time) of another process, a streamed multipart
 * upload over `http.request` or by curl, an autocannon load run, and a package script's command taken apart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import autocannon from 'autocannon';

export const MiB = 1024 * 1024;

/** A running child process whose output is kept (last lines) for diagnostics. */
export interface Child {
  name: string;
  pid: number;
  process: ChildProcess;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
  /** Resolves with the first output line matching `pattern`; rejects on exit or after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** The last lines the process printed (stdout and stderr interleaved). */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const KEEP_LINES = 200;

/** Spawns `command` with piped output; the caller must `stop()` it (see `Cleanup`). */
export function startChild(
  name: string,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Child {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${command}`);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  let exitCode: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal ?? 'unknown';
      resolve(exitCode);
    });
  });
  const onData = (stream: NodeJS.ReadableStream) => {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        lines.push(line);
        if (lines.length > KEEP_LINES) lines.shift();
        for (const listener of listeners) listener(line);
        nl = pending.indexOf('\n');
      }
    });
  };
  if (child.stdout) onData(child.stdout);
  if (child.stderr) onData(child.stderr);

  const tail = () => lines.slice(-40).join('\n');
  let stopping: Promise<void> | undefined;
  return {
    name,
    pid: child.pid,
    process: child,
    exited,
    tail,
    waitForLine(pattern, timeoutMs) {
      for (const line of lines) {
        const m = pattern.exec(line);
        if (m) return Promise.resolve(m);
      }
      return new Promise<RegExpExecArray>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          listeners.delete(listener);
        };
        const listener = (line: string) => {
          const m = pattern.exec(line);
          if (m) {
            done();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`${name}: no line matching ${pattern} within ${timeoutMs} ms; output:\n${tail()}`),
          );
        }, timeoutMs);
        listeners.add(listener);
        void exited.then((code) => {
          done();
          reject(new Error(`${name} exited (${code}) before printing ${pattern}; output:\n${tail()}`));
        });
      });
    },
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        if (exitCode !== undefined) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/** Runs a command to completion and returns its output; rejects on spawn failure or after `timeoutMs`. */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string; wallMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env });
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')}: no exit within ${timeoutMs} ms; stderr:\n${stderr}`));
    }, timeoutMs);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, wallMs: performance.now() - started });
    });
  });
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it; a tiny race with other processes remains). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not get a free port'));
      });
    });
  });
}

/** Writes `bytes` random bytes to `file`, 1 MiB at a time (never more than a few MiB in memory). */
export async function writeRandomFile(file: string, bytes: number): Promise<void> {
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let left = bytes; left > 0; left -= MiB) yield randomBytes(Math.min(MiB, left));
  }
  await pipeline(Readable.from(chunks()), createWriteStream(file));
}

/** Reads `file` once and discards it, so the page cache holds it for what follows. */
export async function readThrough(file: string): Promise<void> {
  for await (const _chunk of createReadStream(file, { highWaterMark: MiB })) {
    // discard
  }
}

/** `VmRSS` of `pid` in bytes, from `/proc/<pid>/status`. */
export function readRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!m?.[1]) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** User + system CPU time of `pid` in seconds, from `/proc/<pid>/stat` (`clockTicks` per second). */
export function readCpuSeconds(pid: number, clockTicks: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: split after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields from 3 on: utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/** Samples `VmRSS` of `pid` every `intervalMs` until stopped (idempotent); keeps the peak. */
export function sampleRss(pid: number, intervalMs: number): { stop(): { peak: number; samples: number } } {
  let peak = readRss(pid);
  let samples = 1;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, readRss(pid));
      samples++;
    } catch {
      // The process is gone; the upload will fail and say so.
    }
  }, intervalMs);
  let result: { peak: number; samples: number } | undefined;
  return {
    stop() {
      if (result) return result;
      clearInterval(timer);
      try {
        peak = Math.max(peak, readRss(pid));
        samples++;
      } catch {
        // as above
      }
      result = { peak, samples };
      return result;
    },
  };
}

export interface UploadOutcome {
  status: number;
  body: string;
  /** From the first byte written to the socket to the last byte of the response. */
  wallMs: number;
  /** From the first byte written to the last byte of the request body handed to the socket. */
  sentMs: number;
}

/**
 * `POST <baseUrl>/api/documents/upload` as multipart/form-data (`consent=true`, then `file`), the file streamed
 * from disk with the framing written by hand and an exact Content-Length. A fresh connection per upload;
 * rejects when no complete answer came within `timeoutMs`.
 */
export async function uploadFile(
  baseUrl: string,
  token: string,
  file: string,
  fileName: string,
  timeoutMs = 120_000,
): Promise<UploadOutcome> {
  const size = (await stat(file)).size;
  const boundary = `----notary-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="consent"\r\n\r\ntrue\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = new URL('/api/documents/upload', baseUrl);

  return new Promise<UploadOutcome>((resolve, reject) => {
    let started = 0;
    let sentMs = Number.NaN;
    let settled = false;
    const timer = setTimeout(() => {
      const error = new Error(`upload of ${file} got no complete answer within ${timeoutMs} ms`);
      settle(error);
      req.destroy(error);
    }, timeoutMs);
    const settle = (error: Error | undefined, outcome?: UploadOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else if (outcome) resolve(outcome);
    };
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + size + tail.length),
      },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('error', (e) => settle(e));
      res.on('end', () =>
        settle(undefined, {
          status: res.statusCode ?? 0,
          body: Buffer.concat(parts).toString('utf8'),
          wallMs: performance.now() - started,
          sentMs,
        }),
      );
    });
    req.on('error', (e) => settle(e));
    async function* body(): AsyncGenerator<Buffer> {
      started = performance.now();
      yield head;
      yield* createReadStream(file, { highWaterMark: MiB });
      yield tail;
    }
    pipeline(Readable.from(body(), { objectMode: false }), req).then(
      () => {
        sentMs = performance.now() - started;
      },
      // An early answer (401, 413...) may cut the body short: the response, if any, tells the story.
      (e: Error) => setTimeout(() => settle(e), 1000),
    );
  });
}

/**
 * The same upload as `uploadFile` (multipart: `consent=true`, then `file` streamed from disk, an exact
 * Content-Length, a fresh connection) sent by `curl -F`, a client whose own cost is far below Node's
 * `http.request` loop. Without `Expect: 100-continue` (curl asks for it above 1 MiB), so neither receiver
 * pays a round trip the other does not. `wallMs` is curl's own `time_total` (connect to last response byte,
 * curl's start-up excluded). The token, when given, travels as `Authorization: Bearer`. `serverTiming`: the
 * answer's `Server-Timing` stages, ms (empty unless the service runs with `SERVER_TIMING=on`).
 */
export async function curlUpload(
  baseUrl: string,
  file: string,
  options: { token?: string; cwd: string; timeoutMs?: number },
): Promise<{ status: number; body: string; wallMs: number; serverTiming: Record<string, number> }> {
  const url = new URL('/api/documents/upload', baseUrl);
  const args = ['-sS', '-H', 'Expect:', '-w', '\n%{http_code} %{time_total} %header{server-timing}'];
  args.push('-F', 'consent=true');
  args.push('-F', `file=@${file};type=application/octet-stream`);
  if (options.token) args.push('-H', `Authorization: Bearer ${options.token}`);
  args.push(url.href);
  const r = await runCommand('curl', args, { cwd: options.cwd, timeoutMs: options.timeoutMs ?? 120_000 });
  const nl = r.stdout.lastIndexOf('\n');
  const [code, seconds, ...timing] = r.stdout
    .slice(nl + 1)
    .trim()
    .split(' ');
  if (r.code !== 0 || !code || !seconds) {
    throw new Error(`curl upload to ${url.href} failed (${r.code}): ${r.stderr}${r.stdout.slice(0, 500)}`);
  }
  return {
    status: Number(code),
    body: r.stdout.slice(0, nl),
    wallMs: Number(seconds) * 1000,
    serverTiming: parseServerTiming(timing.join(' ')),
  };
}

/** `Server-Timing: a;dur=1.5, b;dur=2` as `{ a: 1.5, b: 2 }` (ms); entries without `dur` are left out. */
export function parseServerTiming(header: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of header.split(',')) {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([\d.]+)\s*$/.exec(p)?.[1]).find((d) => d !== undefined);
    if (name && dur !== undefined) out[name] = Number(dur);
  }
  return out;
}

export interface LoadResult {
  /** Mean requests per second over the run (autocannon's Req/Sec average). */
  rps: number;
  /** Latency percentiles in ms (2xx responses only, as autocannon records them; 1 ms resolution). */
  p50: number;
  p99: number;
  requests: number;
  durationS: number;
  non2xx: number;
  /** Count per HTTP status code. */
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
}

/** Loads `url` with `connections` keep-alive connections for `seconds` seconds. */
export async function loadTest(url: string, connections: number, seconds: number): Promise<LoadResult> {
  const r = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
  const statusCodes: Record<string, number> = {};
  for (const [code, entry] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = entry.count ?? 0;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    durationS: r.duration,
    non2xx: r.non2xx,
    statusCodes,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

/** The middle value of `values` (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A package script of the form `[NAME=value ...] node <args> <entry>`, taken apart. */
export interface NodeScript {
  text: string;
  env: Record<string, string>;
  /** Node's arguments before the entry. */
  nodeArgs: string[];
  entry: string;
}

/**
 * The script `name` of the root package.json as a command run without npm: its `NAME=value` words as
 * environment, then `node`, its arguments and the entry, which must equal `entry`.
 * @throws Error when the script is not of that form.
 */
export function nodeScript(root: string, name: string, entry: string): NodeScript {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const text = pkg.scripts[name] ?? '';
  const words = text.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0]?.includes('=')) {
    const [key, ...value] = (words.shift() as string).split('=');
    env[key as string] = value.join('=');
  }
  if (words.shift() !== 'node' || words.at(-1) !== entry) {
    throw new Error(`the ${name} script is not "[NAME=value ...] node <args> ${entry}": ${text}`);
  }
  return { text, env, nodeArgs: words.slice(0, -1), entry };
}
