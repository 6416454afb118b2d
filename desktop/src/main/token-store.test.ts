import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { safeStorage, safeStorageState } from './electron-stand-in.testing';
import { EncryptedTokenStore } from './token-store';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const TOKEN = 'sessiontoken.KJ4Zb2yTq9lP0aW3uV7xN1mC5eR8sD6f';
const ORIGIN = 'http://localhost:3000';

describe('session token storage (safeStorage)', () => {
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-tokens-'));
    file = path.join(dir, 'session.bin');
    safeStorageState.available = true;
    safeStorageState.backend = 'gnome_libsecret';
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the token encrypted, never in plain text, readable only by the owner', async () => {
    await new EncryptedTokenStore(file).save(ORIGIN, TOKEN);
    const bytes = await readFile(file);
    expect(bytes.includes(Buffer.from(TOKEN))).toBe(false);
    expect(bytes.includes(Buffer.from(TOKEN.slice(0, 12)))).toBe(false);
    expect(bytes.toString('base64').includes(Buffer.from(TOKEN).toString('base64').slice(0, 16))).toBe(false);
    expect(JSON.parse(safeStorage.decryptString(bytes))).toEqual({ v: 1, origin: ORIGIN, token: TOKEN });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // A new process (a new store) reads it back.
    expect(await new EncryptedTokenStore(file).load(ORIGIN)).toBe(TOKEN);
  });

  it('gives a token only to the server that issued it', async () => {
    await new EncryptedTokenStore(file).save(ORIGIN, TOKEN);
    expect(await new EncryptedTokenStore(file).load('https://other.example')).toBeNull();
  });

  it('forgets the token on sign-out (the file is removed)', async () => {
    const store = new EncryptedTokenStore(file);
    await store.save(ORIGIN, TOKEN);
    await store.save(ORIGIN, null);
    await expect(stat(file)).rejects.toThrow();
    expect(await new EncryptedTokenStore(file).load(ORIGIN)).toBeNull();
  });

  it.each([
    ['no OS encryption at all', () => (safeStorageState.available = false)],
    ["Linux's basic_text backend (a fixed key)", () => (safeStorageState.backend = 'basic_text')],
  ])('keeps the token in memory only with %s', async (_what, setUp) => {
    setUp();
    const store = new EncryptedTokenStore(file);
    await store.save(ORIGIN, TOKEN);
    expect(await store.load(ORIGIN)).toBe(TOKEN);
    await expect(stat(file)).rejects.toThrow();
    expect(await new EncryptedTokenStore(file).load(ORIGIN)).toBeNull();
  });

  it('treats a damaged or foreign file as no session, and removes it', async () => {
    await writeFile(file, Buffer.from(`v11${'x'.repeat(60)}`));
    expect(await new EncryptedTokenStore(file).load(ORIGIN)).toBeNull();
    await expect(stat(file)).rejects.toThrow();
  });
});
