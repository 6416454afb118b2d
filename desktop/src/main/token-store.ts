import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeStorage } from 'electron';
import { z } from 'zod';
import type { SessionTokenStore } from '../common/client';

const RecordSchema = z.strictObject({ v: z.literal(1), origin: z.string(), token: z.string().min(1) });

/**
 * Where the session token (the 7-day refresh credential) is kept: encrypted with Electron's `safeStorage`
 * (Keychain on macOS, DPAPI on Windows, the Secret Service / KWallet on Linux) in one file under `userData`,
 * mode 0600, bound to the server origin it was issued by. Never written in plain text: when the OS offers no
 * real encryption (`isEncryptionAvailable()` false, or Linux's `basic_text` backend, a fixed key), the token
 * lives in memory only and the user signs in again at the next start.
 */
export class EncryptedTokenStore {
  private memory: { origin: string; token: string } | null = null;

  /** @param file e.g. `<userData>/session.bin`. */
  constructor(private readonly file: string) {}

  /** True when tokens survive a restart (real OS encryption is available). */
  persistent(): boolean {
    if (!safeStorage.isEncryptionAvailable()) return false;
    if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text')
      return false;
    return true;
  }

  /** The token issued by `origin`, or null (none, another server's, unreadable: treated as none). */
  async load(origin: string): Promise<string | null> {
    if (this.memory) return this.memory.origin === origin ? this.memory.token : null;
    if (!this.persistent()) return null;
    let encrypted: Buffer;
    try {
      encrypted = await readFile(this.file);
    } catch {
      return null;
    }
    try {
      const record = RecordSchema.parse(JSON.parse(safeStorage.decryptString(encrypted)));
      this.memory = { origin: record.origin, token: record.token };
      return record.origin === origin ? record.token : null;
    } catch {
      // Encrypted by another OS user or key, or damaged: useless, so remove it.
      await rm(this.file, { force: true });
      return null;
    }
  }

  /** Stores (or with null, forgets) the token of `origin`; replaces any other server's token. */
  async save(origin: string, token: string | null): Promise<void> {
    if (token === null) {
      this.memory = null;
      await rm(this.file, { force: true });
      return;
    }
    this.memory = { origin, token };
    if (!this.persistent()) return;
    const encrypted = safeStorage.encryptString(JSON.stringify({ v: 1, origin, token }));
    await mkdir(path.dirname(this.file), { recursive: true });
    // Write then rename: a crash never leaves half a file.
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, encrypted, { mode: 0o600 });
    await rename(temp, this.file);
  }

  /** The `SessionTokenStore` the HTTP client uses for one server. */
  forOrigin(origin: string): SessionTokenStore {
    return { load: () => this.load(origin), save: (token) => this.save(origin, token) };
  }
}
