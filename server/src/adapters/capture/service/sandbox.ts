import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The sandbox of a capture process when the service does not run as root, so cannot start it as another
 * account: bubblewrap (`bwrap`, the user-namespace sandbox Flatpak uses; Debian package `bubblewrap`) starts it
 * in namespaces of its own, as uid 65534 inside them:
 * - a PID namespace with its own `/proc`: the service's process, its environment (`/proc/<pid>/environ`) and its
 *   memory are not there to read, and everything the capture started dies with it;
 * - a mount namespace where the system is read-only, `/tmp` empty, and the service's secrets hidden
 *   (`hiddenPaths`: `DATA_DIR` with its database, secret and WACZ key, the service user's home, the signing
 *   certificate and key), an empty directory or file in their place; only the capture's work directory is
 *   writable;
 * - IPC and UTS namespaces of its own; the network is the host's (the capture's proxy connects out and applies
 *   the address policy; Chromium's own sandbox, nested inside, stays on).
 * Files it writes belong to the service's uid outside (an unprivileged user namespace maps one uid only).
 */
export interface CaptureSandbox {
  /** The bubblewrap executable (`CAPTURE_BWRAP`, default `/usr/bin/bwrap`). */
  bwrapPath: string;
  /** Absolute paths the capture process must not see (directories become empty, files empty). */
  hiddenPaths: readonly string[];
}

/** The uid and gid a sandboxed capture process has inside its namespace (`nobody`). */
export const SANDBOX_ID = 65534;

/**
 * The command that runs `command args` in `sandbox` (see `CaptureSandbox`), `workDir` its only writable place and
 * working directory. Hidden paths that do not exist are left out (bubblewrap would fail on them); `/` is never
 * hidden. Returns the executable and its arguments for `spawn`.
 */
export async function sandboxedCommand(
  sandbox: CaptureSandbox,
  workDir: string,
  command: string,
  args: readonly string[],
): Promise<{ command: string; args: string[] }> {
  const id = String(SANDBOX_ID);
  const hide: string[] = [];
  for (const hidden of sandbox.hiddenPaths) {
    const resolved = path.resolve(hidden);
    if (resolved === path.parse(resolved).root) continue;
    const found = await stat(resolved).catch(() => undefined);
    if (found?.isDirectory()) hide.push('--tmpfs', resolved);
    else if (found) hide.push('--ro-bind', '/dev/null', resolved);
  }
  return {
    command: sandbox.bwrapPath,
    args: [
      ...['--unshare-user', '--uid', id, '--gid', id],
      ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'],
      // Killing bubblewrap (the service's deadline, its own exit) kills the namespace and all in it.
      '--die-with-parent',
      ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'],
      ...hide,
      // After the hiding: a work directory under a hidden one is still reachable, alone.
      ...['--bind', workDir, workDir, '--chdir', workDir],
      '--',
      command,
      ...args,
    ],
  };
}

/**
 * Whether `bwrapPath` can start a sandbox here: it exists and creating the namespaces works (unprivileged user
 * namespaces can be disabled by the kernel, a sysctl, or an AppArmor policy). Resolves to null when it can, else
 * to why not (bubblewrap's own message).
 */
export async function sandboxProblem(bwrapPath: string): Promise<string | null> {
  const id = String(SANDBOX_ID);
  const probe = ['--unshare-user', '--uid', id, '--gid', id, '--unshare-pid', '--ro-bind', '/', '/', 'true'];
  try {
    await promisify(execFile)(bwrapPath, probe, { timeout: 10_000 });
    return null;
  } catch (e) {
    const said = e instanceof Error && 'stderr' in e && typeof e.stderr === 'string' ? e.stderr.trim() : '';
    return said || `${bwrapPath} could not be run`;
  }
}
