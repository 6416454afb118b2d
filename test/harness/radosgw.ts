/**
 * A real S3 server for tests: Debian's Ceph RADOS Gateway on a throwaway single-node Ceph cluster (one monitor, one OSD
 * on the in-memory `memstore` backend, no manager), everything on 127.0.0.1 in a temp directory. Unlike in-process
 * fakes it checks SigV4 signatures and presigned URL expiry (s3rver, for one, accepts any signature).
 *
 * Packages: `radosgw ceph-mon ceph-osd` (which bring `ceph-common`); install with `.ci/install-radosgw.sh`.
 * Startup takes about 1-2 s (the monitor's Paxos interval is lowered from 1 s to 50 ms, which is what makes
 * pool creation fast).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { accessSync, closeSync, constants, openSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireDirectoryLock, type DirectoryLock, DirectoryLockedError } from '@notary/platform/db/dir-lock';
import { errorMessage } from '@notary/shared';

/** A running gateway: S3 endpoint and the credentials of its only user. */
export interface RadosgwServer {
  /** `http://127.0.0.1:<port>`; use path-style addressing. */
  endpoint: string;
  /** Region to sign with (radosgw accepts any; `us-east-1` keeps the SDK simple). */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Stops every daemon (SIGTERM, then SIGKILL after 5 s) and removes the temp directory. Idempotent. */
  stop(): Promise<void>;
  /**
   * An outage of the S3 endpoint alone: `stopGateway` kills the gateway (SIGKILL: connections cut, the port
   * refuses), the cluster keeps its objects; `startGateway` starts it again on the same port and resolves once
   * it answers.
   */
  stopGateway(): Promise<void>;
  startGateway(): Promise<void>;
}

/** Executables the harness runs; `ceph` and `monmaptool` come from ceph-common/ceph-base. */
const BINARIES = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph', 'monmaptool'] as const;

/** Names of the required Ceph executables not found on `PATH` (nor in /usr/bin, /usr/sbin). */
export function missingRadosgwBinaries(): string[] {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/bin', '/usr/sbin'];
  return BINARIES.filter((bin) => !dirs.some((dir) => isExecutable(path.join(dir, bin))));
}

/** True when every executable the harness needs is installed. */
export function radosgwAvailable(): boolean {
  return missingRadosgwBinaries().length === 0;
}

/**
 * Builds and starts a throwaway cluster and gateway, creates an S3 user with random keys, and resolves once
 * the endpoint answers. Ports are picked free by the OS (a start that loses a port race is retried).
 * Daemons are killed and the directory removed by `stop()`, on process exit, and by a watchdog shell if this
 * process dies without running exit handlers (SIGKILL, crash).
 * @throws Error naming the missing executables and the install script when Ceph is not installed;
 *   Error with the daemons' log tails when the cluster does not come up within `timeoutMs` (default 60 s).
 */
export async function startRadosgw(options: { timeoutMs?: number } = {}): Promise<RadosgwServer> {
  const missing = missingRadosgwBinaries();
  if (missing.length > 0) {
    throw new Error(
      `radosgw test server unavailable: missing ${missing.join(', ')}. ` +
        'Install the Debian packages with `.ci/install-radosgw.sh` (radosgw ceph-mon ceph-osd).',
    );
  }
  // Several test files start clusters at once (one vitest worker each): under load their daemons were seen
  // to cross wires while starting ("wrong fsid"). Start one cluster at a time across processes.
  const lock = await lockAcrossProcesses(path.join(os.tmpdir(), 'notary-radosgw-start'));
  try {
    let lastError: unknown;
    for (let attempt = 1; attempt <= 4; attempt++) {
      try {
        return await startOnce(options.timeoutMs ?? 60_000);
      } catch (e) {
        lastError = e;
        if (!(e instanceof StartError) || !e.retriable) break;
      }
    }
    throw lastError;
  } finally {
    await lock.release();
  }
}

/** Waits (up to 3 minutes) for the directory lock that `acquireDirectoryLock` gives, polling every 200 ms. */
async function lockAcrossProcesses(dir: string): Promise<DirectoryLock> {
  const until = Date.now() + 180_000;
  for (;;) {
    try {
      return await acquireDirectoryLock(dir);
    } catch (e) {
      if (!(e instanceof DirectoryLockedError) || Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

class StartError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
  ) {
    super(message);
  }
}

async function startOnce(timeoutMs: number): Promise<RadosgwServer> {
  const deadline = Date.now() + timeoutMs;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-rgw-'));
  const cluster = new Cluster(dir);
  try {
    const [monPort, rgwPort] = (await freePorts(2)) as [number, number];
    const fsid = randomUUID();
    for (const sub of ['mon', 'osd', 'run', 'log', 'rgw', 'crash']) await mkdir(path.join(dir, sub));
    const conf = path.join(dir, 'ceph.conf');
    writeFileSync(conf, cephConf(dir, fsid, monPort));

    await run('monmaptool', [
      '--create',
      '--addv',
      'a',
      `[v1:127.0.0.1:${monPort}]`,
      '--fsid',
      fsid,
      `${dir}/monmap`,
    ]);
    await run('ceph-mon', ['-c', conf, '--mkfs', '-i', 'a', '--monmap', `${dir}/monmap`]);
    cluster.spawn('mon.a', 'ceph-mon', ['-c', conf, '-i', 'a', '-f']);

    const osdUuid = randomUUID();
    const osdId = (
      await cluster.whileAlive(
        runWhenMonReady(['-c', conf, '--connect-timeout', '20', 'osd', 'new', osdUuid], deadline),
        deadline,
      )
    ).trim();
    if (!/^\d+$/.test(osdId)) throw new StartError(`unexpected "ceph osd new" output: ${osdId}`, false);
    await mkdir(path.join(dir, 'osd', `osd.${osdId}`));
    await run('ceph-osd', ['-c', conf, '-i', osdId, '--mkfs', '--osd-uuid', osdUuid]);
    cluster.spawn(`osd.${osdId}`, 'ceph-osd', ['-c', conf, '-i', osdId, '-f']);

    await mkdir(path.join(dir, 'rgw', 'client.rgw.a'));
    const gatewayArgs = [
      '-c',
      conf,
      '-n',
      'client.rgw.a',
      '-f',
      '--rgw-frontends',
      `beast endpoint=127.0.0.1:${rgwPort}`,
    ];
    cluster.spawn('client.rgw.a', 'radosgw', gatewayArgs);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    await cluster.whileAlive(waitForHttp(endpoint, deadline), deadline);

    const accessKeyId = `AK${randomBytes(9).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(30).toString('base64url');
    // client.admin, not client.rgw.a: the gateway already holds that name's admin socket.
    await run('radosgw-admin', [
      '-c',
      conf,
      '-n',
      'client.admin',
      'user',
      'create',
      '--uid=notary-test',
      '--display-name=notary test',
      `--access-key=${accessKeyId}`,
      `--secret-key=${secretAccessKey}`,
    ]);
    return {
      endpoint,
      region: 'us-east-1',
      accessKeyId,
      secretAccessKey,
      stop: () => cluster.stop(),
      stopGateway: () => cluster.kill('client.rgw.a'),
      startGateway: async () => {
        cluster.spawn('client.rgw.a', 'radosgw', gatewayArgs);
        await cluster.whileAlive(waitForHttp(endpoint, Date.now() + 60_000), Date.now() + 60_000);
      },
    };
  } catch (e) {
    const logs = await cluster.logTails();
    await cluster.stop();
    const message = errorMessage(e);
    // A daemon that died early most likely lost the race for its port.
    throw new StartError(`radosgw test cluster failed to start: ${message}\n${logs}`, cluster.someoneDied);
  }
}

/**
 * ceph.conf for a one-OSD cluster without authentication between daemons (S3 requests are still signed and
 * checked by the gateway). Every path points into `dir`, so nothing touches /etc/ceph or /var/lib/ceph.
 */
function cephConf(dir: string, fsid: string, monPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = v1:127.0.0.1:${monPort}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
paxos propose interval = 0.05
osd objectstore = memstore
memstore device bytes = 2147483648
osd crush chooseleaf type = 0
rgw init timeout = 60
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/log/$name.log
crash dir = ${dir}/crash
mon data = ${dir}/mon/$name
osd data = ${dir}/osd/$name
rgw data = ${dir}/rgw/$name
keyring = ${dir}/keyring
`;
}

/** The daemons of one cluster, their cleanup on exit, and the watchdog that outlives a killed test process. */
class Cluster {
  private readonly children: { name: string; proc: ChildProcess }[] = [];
  private reaper: ChildProcess | undefined;
  private stopped: Promise<void> | undefined;
  someoneDied = false;
  private readonly onExit = () => this.killSync();

  constructor(private readonly dir: string) {
    process.once('exit', this.onExit);
    // A detached shell that kills the daemons (only if their command line still names this directory, so a
    // reused pid is never hit) and removes the directory once this process is gone.
    const script =
      'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
      'for p in $(cat "$2/pids" 2>/dev/null); do grep -aqF "$2" /proc/$p/cmdline 2>/dev/null && kill -9 $p; done; ' +
      'rm -rf "$2"';
    this.reaper = spawn('sh', ['-c', script, 'reaper', String(process.pid), dir], {
      detached: true,
      stdio: 'ignore',
    });
    this.reaper.unref();
  }

  spawn(name: string, command: string, args: string[]): void {
    const out = openSync(path.join(this.dir, 'log', `${name}.out`), 'a');
    const proc = spawn(command, args, { stdio: ['ignore', out, out], env: cephEnv() });
    closeSync(out);
    proc.on('exit', () => {
      if (!this.stopped) this.someoneDied = true;
    });
    if (proc.pid !== undefined) writeFileSync(path.join(this.dir, 'pids'), `${proc.pid}\n`, { flag: 'a' });
    this.children.push({ name, proc });
  }

  /** SIGKILLs the daemon `name` and forgets it; resolves once it has exited. */
  async kill(name: string): Promise<void> {
    const at = this.children.findIndex((c) => c.name === name);
    const child = this.children[at];
    if (!child) return;
    this.children.splice(at, 1);
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.proc.once('exit', () => resolve()));
    child.proc.kill('SIGKILL');
    await exited;
  }

  /** Races `work` against the death of any daemon and the deadline. */
  async whileAlive<T>(work: Promise<T>, deadline: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const watch = new Promise<never>((_, reject) => {
      const check = () => {
        const dead = this.children.find((c) => c.proc.exitCode !== null || c.proc.signalCode !== null);
        if (dead)
          return reject(
            new StartError(`${dead.name} exited (${dead.proc.exitCode ?? dead.proc.signalCode})`, true),
          );
        if (Date.now() > deadline) return reject(new StartError('timed out', false));
        timer = setTimeout(check, 100);
      };
      check();
    });
    try {
      return await Promise.race([work, watch]);
    } finally {
      clearTimeout(timer);
    }
  }

  async logTails(): Promise<string> {
    const names = this.children.map((c) => c.name);
    const parts: string[] = [];
    for (const name of names) {
      for (const file of [`${name}.out`, `${name}.log`]) {
        const text = await readFile(path.join(this.dir, 'log', file), 'utf8').catch(() => '');
        if (text) parts.push(`--- ${file} (tail)\n${text.split('\n').slice(-15).join('\n')}`);
      }
    }
    return parts.join('\n');
  }

  stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  private async doStop(): Promise<void> {
    // Gateway first, monitor last, so no daemon spends its grace period looking for the others.
    for (const { proc } of [...this.children].reverse()) await terminate(proc);
    await rm(this.dir, { recursive: true, force: true });
    process.removeListener('exit', this.onExit);
    if (this.reaper?.pid !== undefined) {
      try {
        process.kill(this.reaper.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Exit handler: only synchronous work is possible there. */
  private killSync(): void {
    for (const { proc } of this.children) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** SIGTERM, then SIGKILL if the process has not exited after 5 s. */
async function terminate(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** The environment for Ceph tools, without variables that would point them at another cluster. */
function cephEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CEPH_ARGS;
  delete env.CEPH_CONF;
  return env;
}

/** Runs a command to completion (30 s at most). @returns its stdout. @throws Error with stderr on failure. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { env: cephEnv(), timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err)
          reject(new Error(`${command} ${args.slice(0, 6).join(' ')} failed: ${err.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/**
 * Runs a `ceph` command, retrying while the monitor is still starting: on a loaded machine the first
 * commands can meet "EPERM: problem getting command descriptions from mon" before it has formed its quorum.
 */
async function runWhenMonReady(args: string[], deadline: number): Promise<string> {
  for (;;) {
    try {
      return await run('ceph', args);
    } catch (e) {
      const notReady =
        /problem getting command descriptions|ECONNREFUSED|error connecting to the cluster/i.test(
          errorMessage(e),
        );
      if (!notReady || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/** Polls `url` until it answers 200 or the deadline passes. */
async function waitForHttp(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new StartError(`${url} did not answer`, false);
}

/** `count` distinct TCP ports free on 127.0.0.1 right now (held open together so they differ). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
