/**
 * A `redis-server` of a test's own on 127.0.0.1 and a free port (not the machine's, which other suites
 * share), without persistence, that the test may stop and start again on the same port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './pg-cluster';

export interface TestRedis {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** Kills the server (SIGKILL: an outage, not a shutdown); resolves once it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty); resolves once it answers PING. */
  start(): Promise<void>;
}

/** Starts the server. @throws Error when it does not answer within 10 s. */
export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const kill = () => proc?.kill('SIGKILL');
  process.once('exit', kill);
  const start = async () => {
    proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await answersPing(port);
  };
  const stop = async () => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    p.kill('SIGKILL');
    await gone;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: async () => {
      await stop();
      process.removeListener('exit', kill);
    },
  };
}

/** Polls PING until `+PONG` (a server still starting refuses the connection). */
async function answersPing(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('error', () => resolve(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
    });
    if (pong) return;
    await sleep(50);
  }
  throw new Error(`redis-server on port ${port} did not answer`);
}
