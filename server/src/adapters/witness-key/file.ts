import { sign } from 'node:crypto';
import path from 'node:path';
import { COSIGNATURE_V1_TYPE } from '@notary/trust/cosignature';
import { ed25519KeyId, ed25519VerifierKey } from '@notary/trust/signed-note';
import type { Cosigner } from '../../ports/cosigner';
import { ed25519KeyFile, readOrCreate } from '../log-key/file';

/** The witness key's default file under `DATA_DIR` (Ed25519, PKCS#8 PEM, mode 0600). */
export const WITNESS_KEY_FILE = 'witness-key.pem';

/**
 * The witness's cosigner: the Ed25519 key of `keyFile`, made on first use (mode 0600, like the log key), named
 * `name` (C2SP tlog-cosignature: the key ID commits to the name and the 0x04 type).
 * @throws Error naming the file when it holds something else than an Ed25519 private key.
 */
export async function fileCosigner(keyFile: string, name: string): Promise<Cosigner> {
  const { key, publicKey } = await ed25519KeyFile(keyFile);
  return {
    name,
    verifierKey: ed25519VerifierKey(name, publicKey, COSIGNATURE_V1_TYPE),
    keyId: ed25519KeyId(name, publicKey, COSIGNATURE_V1_TYPE),
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}

/** The witness's name file under `DATA_DIR`, fixed on first start when `WITNESS_NAME` is unset. */
export const WITNESS_NAME_FILE = 'witness-name';

/**
 * The witness's name without `WITNESS_NAME`: the one kept in `dataDir/witness-name`, written as `initial` on first
 * use (then a new `PUBLIC_URL` does not rename the witness the logs configured).
 */
export async function keptWitnessName(dataDir: string, initial: string): Promise<string> {
  return (await readOrCreate(path.join(dataDir, WITNESS_NAME_FILE), () => `${initial}\n`)).trim();
}
