import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isLoopbackHost } from '@notary/shared';
import { z } from 'zod';
import { ClientError } from '../common/errors';

/** The server the app talks to until the user picks another (the service's own default, README). */
export const DEFAULT_SERVER_URL = 'http://localhost:3000';

const SettingsSchema = z.object({
  serverUrl: z.string().max(2048).default(DEFAULT_SERVER_URL),
  language: z.enum(['pt', 'en']).nullable().default(null),
  lastEmail: z.string().max(254).nullable().default(null),
  /**
   * The PKCS#11 module (driver) of the tabelião's A3 token, an absolute path (`token-signing.ts`; the common
   * Brazilian drivers are named in docs/desktop.md); null until chosen.
   */
  tokenModulePath: z.string().max(4096).nullable().default(null),
});
export type StoredSettings = z.infer<typeof SettingsSchema>;

/**
 * True when `hostname`, as `URL` spells it (IPv6 in brackets, other IPv4 spellings such as `127.1` already
 * rewritten to dotted decimal), names this machine: `isLoopbackHost` of `@notary/shared` (`localhost`,
 * 127.0.0.0/8, `[::1]`). A bare `::1` is never a `URL` hostname, so it is refused here.
 */
export function isLoopbackUrlHost(hostname: string): boolean {
  return (hostname.startsWith('[') || !hostname.includes(':')) && isLoopbackHost(hostname);
}

/**
 * Normalizes a server URL typed by the user: https, or http only on loopback (plain http beyond this machine
 * would send the session token in clear); no credentials, query or fragment; the path is kept (a service
 * behind a reverse proxy under `/notary`), without a trailing slash.
 * @throws ClientError `insecure-url` for http beyond loopback, `invalid-input` for anything else refused; the
 *   message is a sentence for the user saying why.
 */
export function normalizeServerUrl(input: string): string {
  const refuse = (message: string) => new ClientError({ kind: 'invalid-input', message });
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw refuse('This is not a URL: type the server address, e.g. https://notary.example.com.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse('The server address must start with https:// (or http:// for this computer only).');
  }
  if (url.protocol === 'http:' && !isLoopbackUrlHost(url.hostname)) {
    throw new ClientError({
      kind: 'insecure-url',
      message:
        `Refused http://${url.host}: plain http would send the notary's session token in clear over the ` +
        'network; use https://, or http:// only for this computer (localhost, 127.0.0.0/8, ::1).',
    });
  }
  if (url.username || url.password)
    throw refuse('The server address must not contain a user name or password.');
  if (url.search || url.hash)
    throw refuse('The server address must not contain a query (?) or fragment (#).');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * Non-secret preferences in `<userData>/settings.json`: server URL, UI language, last e-mail (to prefill the
 * sign-in form). A damaged or hand-edited file falls back to the defaults field by field (a stored server URL
 * that `normalizeServerUrl` now refuses, such as plain http to another machine, falls back to the default).
 */
export class SettingsStore {
  private value: StoredSettings | null = null;

  constructor(private readonly file: string) {}

  async get(): Promise<StoredSettings> {
    if (this.value) return this.value;
    let raw: unknown = {};
    try {
      raw = JSON.parse(await readFile(this.file, 'utf8'));
    } catch {
      raw = {};
    }
    const parsed = SettingsSchema.safeParse(raw);
    let value = parsed.success ? parsed.data : SettingsSchema.parse({});
    try {
      value = { ...value, serverUrl: normalizeServerUrl(value.serverUrl) };
    } catch {
      value = { ...value, serverUrl: DEFAULT_SERVER_URL };
    }
    this.value = value;
    return value;
  }

  async update(patch: Partial<StoredSettings>): Promise<StoredSettings> {
    const next = { ...(await this.get()), ...patch };
    this.value = next;
    await mkdir(path.dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, this.file);
    return next;
  }
}
