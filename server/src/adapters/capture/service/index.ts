import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { promisify } from 'node:util';
import type { Log } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import { repositoryFile } from '@notary/shared/module-entry';
import type { CaptureSettings } from '../../../config';
import { type CaptureAccount, type CaptureProcessSource, IsolatedCapturer } from './isolated-capturer';
import { type CaptureSandbox, sandboxProblem } from './sandbox';

/**
 * The capturer of the configuration (`CHROMIUM_PATH`, `CAPTURE_*`; docs/api.md, Web capture), handing over
 * each capture's parts for `archivingCapturer` to pack and sign: every capture in a process of its own
 * (`IsolatedCapturer`), as `CAPTURE_USER` when the service runs as root, else in a bubblewrap sandbox
 * (`CaptureSandbox`); a service that is not root and cannot sandbox refuses captures in production
 * (`UNISOLATED_REFUSAL`, 503) and warns in development.
 * Chromium and the account are looked for at the first capture, so the service starts without them (the route
 * then answers 503 saying what is missing); from then on the next capture's process is started ahead
 * (`IsolatedCapturer`, `spare`), ended by `close`.
 * @throws Error when `CAPTURE_CA_CERTS` cannot be read or holds no certificate.
 */
export async function createCapturer(
  config: CaptureSettings,
  service: {
    publicUrl: string;
    serviceName: string;
    log: Log;
    /** `NODE_ENV=production`: captures without a separate account are refused, not warned about. */
    production: boolean;
    /** The service's uid (tests; default `process.getuid`). */
    uid?: () => number | undefined;
    /** What a sandboxed capture process must not see beside the service user's home (`DATA_DIR`, key files). */
    hiddenPaths?: readonly string[];
  },
): Promise<CaptureProcessSource> {
  let caCertsPem: string | undefined;
  if (config.caCertsPath) {
    caCertsPem = await readFile(config.caCertsPath, 'utf8');
    if (!caCertsPem.includes('BEGIN CERTIFICATE')) {
      throw new Error(`CAPTURE_CA_CERTS ${config.caCertsPath}: no certificate`);
    }
  }
  let capturer: Promise<CaptureProcessSource> | undefined;
  const load = async (): Promise<CaptureProcessSource> => {
    const uid = (service.uid ?? (() => process.getuid?.()))();
    const account = uid === 0 ? await captureAccount(config.user) : undefined;
    const sandbox = account ? undefined : await unprivilegedSandbox(config, service, uid);
    return new IsolatedCapturer(
      { ...config, caCertsPem },
      {
        // A product token (RFC 9110 section 10.1.5) naming the service, with its URL as the comment.
        userAgentProduct: `NotaryCapture/1.0 (+${service.publicUrl})`,
        software: `${service.serviceName} web capture (Chromium via playwright-core, warcio)`,
        service: { name: service.serviceName, version: SERVICE_VERSION },
        account,
        ...(sandbox ? { sandbox } : {}),
        log: service.log,
        // The next capture's process waits ready once a capture has run: a service that captures once
        // pays Node's start only once.
        spare: true,
        spareIdleMs: CAPTURE_SPARE_IDLE_MS,
      },
    );
  };
  return {
    capture: async (url, options) => {
      // A failed look-up is not cached: the next capture tries again (the account may be created meanwhile).
      capturer ??= load().catch((e: unknown) => {
        capturer = undefined;
        throw e;
      });
      return (await capturer).capture(url, options);
    },
    ready: async () => (await capturer?.catch(() => undefined))?.ready(),
    close: async () => (await capturer?.catch(() => undefined))?.close(),
  };
}

/**
 * The sandbox of a service that is not root (`CaptureSandbox`), hiding `DATA_DIR`, the service user's home and
 * the signing certificate and key; undefined in development when bubblewrap cannot run here (with a warning).
 * @throws AppError SERVICE_UNAVAILABLE in production when it cannot (`UNISOLATED_REFUSAL`, and why).
 */
async function unprivilegedSandbox(
  config: CaptureSettings,
  service: { production: boolean; log: Log; hiddenPaths?: readonly string[] },
  uid: number | undefined,
): Promise<CaptureSandbox | undefined> {
  const problem = await sandboxProblem(config.bwrapPath);
  if (problem === null) {
    return { bwrapPath: config.bwrapPath, hiddenPaths: [os.homedir(), ...(service.hiddenPaths ?? [])] };
  }
  // Chromium's network service runs outside its own sandbox: a compromised one as the service's user could read
  // the service's environment, DATA_DIR/secret, the WACZ signing key and the embedded database.
  if (service.production) throw new AppError('SERVICE_UNAVAILABLE', `${UNISOLATED_REFUSAL} (${problem})`);
  service.log.warn({ uid, problem }, UNISOLATED_WARNING);
  return undefined;
}

/** Why a production service that is not root refuses captures when it cannot sandbox them, and what to set. */
export const UNISOLATED_REFUSAL =
  'Web capture is unavailable: the service does not run as root and bubblewrap cannot sandbox captures here, so ' +
  "a capture would run as the service's own user and a captured page could reach what the service reads. " +
  'Install bubblewrap (CAPTURE_BWRAP) where unprivileged user namespaces are allowed, or start the service as ' +
  'root with CAPTURE_USER (an account of its own, e.g. useradd --system --no-create-home notary-capture)';

/** The development warning of the same case (captures still run). */
/**
 * How long the next capture's process, with its browser up (about 0.5 GB with Chromium), waits for a capture:
 * a notary capturing a series of pages pays the browser's start once; an idle service holds no browser.
 */
const CAPTURE_SPARE_IDLE_MS = 120_000;

const UNISOLATED_WARNING =
  'captures run as the service user: install bubblewrap (CAPTURE_BWRAP) or run the service as root with ' +
  'CAPTURE_USER, so that a captured page cannot reach what the service can read (in production captures are ' +
  'refused this way)';

/** The service's version (`server/package.json`), stated in each capture's record and provenance summary. */
const SERVICE_VERSION = (
  JSON.parse(readFileSync(repositoryFile('server/package.json'), 'utf8')) as { version: string }
).version;

/**
 * The account `name` (`getent passwd`, so NSS sources count), never root.
 * @throws AppError SERVICE_UNAVAILABLE when there is no such account or it is root.
 */
async function captureAccount(name: string): Promise<CaptureAccount> {
  const entry = await promisify(execFile)('getent', ['passwd', name]).then(
    (r) => r.stdout.trim(),
    () => '',
  );
  const [, , uid, gid] = entry.split(':');
  const account = { name, uid: Number(uid), gid: Number(gid) };
  if (!entry || !Number.isInteger(account.uid) || !Number.isInteger(account.gid)) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `Web capture is unavailable: the account CAPTURE_USER=${name} does not exist (create it, e.g. useradd --system --no-create-home ${name})`,
    );
  }
  if (account.uid === 0 || account.gid === 0) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      `Web capture is unavailable: CAPTURE_USER=${name} is privileged`,
    );
  }
  return account;
}
