import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/** The server the app talks to until the user picks another (the service's own default, README). */
export const DEFAULT_SERVER_URL = 'http://localhost:3000';

const SettingsSchema = z.object({
  serverUrl: z.string().max(2048).default(DEFAULT_SERVER_URL),
  language: z.enum(['pt', 'en']).nullable().default(null),
  lastEmail: z.string().max(254).nullable().default(null),
});
export type StoredSettings = z.infer<typeof SettingsSchema>;

/**
 * Normalizes a server URL typed by the user: http(s) only, no credentials, query or fragment; the path is
 * kept (a service behind a reverse proxy under `/notary`), without a trailing slash.
 * @throws ClientError-free `Error` with a message for the user when the URL is not acceptable.
 */
export function normalizeServerUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new Error('Not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('Only http and https servers');
  if (url.username || url.password) throw new Error('The URL must not contain credentials');
  if (url.search || url.hash) throw new Error('The URL must not contain a query or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * Non-secret preferences in `<userData>/settings.json`: server URL, UI language, last e-mail (to prefill the
 * sign-in form). A damaged or hand-edited file falls back to the defaults field by field.
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
