import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '@notary/shared';
import { ed25519KeyId, ed25519VerifierKey } from '@notary/trust/signed-note';
import type { LogSigner } from '../../ports/log-signer';

/** The log key's file under `DATA_DIR` (Ed25519, PKCS#8 PEM, mode 0600). */
export const LOG_KEY_FILE = 'transparency-log-key.pem';
/** The log's origin (its key's name), fixed on first start beside the key. */
export const LOG_NAME_FILE = 'transparency-log-name';

/** Reads `file`, or writes `make()` there first (mode 0600; a file another start wrote meanwhile wins). */
export async function readOrCreate(file: string, make: () => string): Promise<string> {
  const existing = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (existing !== undefined) return existing;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, make(), { mode: 0o600, flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
  return readFile(file, 'utf8');
}

/**
 * The log's signer from `dataDir`: the Ed25519 key of `transparency-log-key.pem`, made on first use, and the
 * origin of `transparency-log-name`, fixed on first use to `origin` (then changing `PUBLIC_URL` does not rename
 * the log: a log's identity is its origin and key, for as long as it lives). A key file readable by others is set
 * to 0600, like the WACZ signing key.
 * @throws Error naming the file when it holds something else than an Ed25519 private key.
 */
export async function fileLogSigner(dataDir: string, origin: string): Promise<LogSigner> {
  const { key, publicKey } = await ed25519KeyFile(path.join(dataDir, LOG_KEY_FILE));
  const name = (await readOrCreate(path.join(dataDir, LOG_NAME_FILE), () => `${origin}\n`)).trim();
  return {
    origin: name,
    verifierKey: ed25519VerifierKey(name, publicKey),
    keyId: ed25519KeyId(name, publicKey),
    sign: (text) => new Uint8Array(sign(null, Buffer.from(text, 'utf8'), key)),
  };
}

/**
 * The Ed25519 key of `keyFile` (PKCS#8 PEM), made on first use; a file readable by others is set to 0600, like the
 * WACZ signing key. `publicKey` is the raw 32-byte public key (RFC 8032). The log's key and the witness's key.
 * @throws Error naming the file when it holds something else than an Ed25519 private key.
 */
export async function ed25519KeyFile(keyFile: string): Promise<{ key: KeyObject; publicKey: Uint8Array }> {
  const pem = await readOrCreate(keyFile, () =>
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  const { mode } = await stat(keyFile);
  if ((mode & 0o077) !== 0) await chmod(keyFile, 0o600);
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    throw new Error(`${keyFile}: not a private key (${errorMessage(e)}); remove it to have a new one made`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${keyFile}: not an Ed25519 key`);
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  return { key, publicKey: new Uint8Array(Buffer.from(jwk.x ?? '', 'base64url')) };
}

/** The origin a log at `publicUrl` takes: the scheme-less URL prefix of `<publicUrl>/log` (C2SP tlog-tiles). */
export function logOriginFor(publicUrl: string): string {
  return `${publicUrl.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '')}/log`;
}
