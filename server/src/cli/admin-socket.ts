import { chmod, rm } from 'node:fs/promises';
import net from 'node:net';
import { errorMessage } from '@notary/shared';
import type { OperatorCommand } from '../domain/operator/commands';

/** One request per connection: a JSON line with the command; the answer is one JSON line. */
type Answer = { ok: true; output: string } | { ok: false; message: string };

/**
 * The operator channel of a running server on the embedded database: a Unix socket in `DATA_DIR`
 * (mode 0600, so only the service's OS user can use it). PGlite allows one process per data directory, so
 * the CLI hands its command to the server instead of opening the database. Never reachable over HTTP.
 */
export async function startAdminSocket(
  socketPath: string,
  run: (command: OperatorCommand) => Promise<string>,
): Promise<{ close(): Promise<void> }> {
  await rm(socketPath, { force: true });
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline < 0) {
        if (buffer.length > 64 * 1024) socket.destroy();
        return;
      }
      const line = buffer.slice(0, newline);
      void (async () => {
        let answer: Answer;
        try {
          answer = { ok: true, output: await run(JSON.parse(line) as OperatorCommand) };
        } catch (e) {
          answer = { ok: false, message: errorMessage(e) };
        }
        socket.end(`${JSON.stringify(answer)}\n`);
      })();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

/**
 * Sends `command` to a running server. Resolves `undefined` when no server listens on `socketPath`.
 * @throws Error with the server's message when the command fails.
 */
export function sendAdminCommand(socketPath: string, command: OperatorCommand): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffer = '';
    let connected = false;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify(command)}\n`);
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
    });
    socket.on('end', () => {
      try {
        const answer = JSON.parse(buffer) as Answer;
        if (answer.ok) resolve(answer.output);
        else reject(new Error(answer.message));
      } catch {
        reject(new Error('The running server gave no answer'));
      }
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected && (e.code === 'ENOENT' || e.code === 'ECONNREFUSED')) resolve(undefined);
      else reject(e);
    });
  });
}
