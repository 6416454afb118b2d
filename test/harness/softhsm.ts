/**
 * A SoftHSM2 token for tests (Debian's `softhsm2`, OpenSC's `pkcs11-tool`): a token directory of its own
 * (`SOFTHSM2_CONF` pointing at a per-test configuration), initialized with a user PIN, holding the keys and
 * certificates a test writes into it. The module is `/usr/lib/softhsm/libsofthsm2.so`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface TestToken {
  dir: string;
  pin: string;
  /** Writes a PEM private key (converted to DER by openssl) with CKA_ID `id` (hex). */
  addKey(keyPem: string, id: string, label: string): Promise<void>;
  /** Writes a DER certificate with CKA_ID `id` (hex). */
  addCertificate(der: Uint8Array, id: string, label: string): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * A fresh token labelled `label` with user PIN `pin`; `SOFTHSM2_CONF` is set in this process (the module
 * reads it when loaded, and `pkcs11-tool` inherits it).
 * @throws when softhsm2-util or pkcs11-tool fail.
 */
export async function createTestToken(label = 'notary-test', pin = '1234'): Promise<TestToken> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'softhsm-'));
  await mkdir(path.join(dir, 'tokens'));
  const conf = path.join(dir, 'softhsm2.conf');
  await writeFile(
    conf,
    `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`,
  );
  process.env.SOFTHSM2_CONF = conf;
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  await run('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', '0000'], {
    env,
  });
  const tool = (...args: string[]) =>
    run(
      'pkcs11-tool',
      ['--module', SOFTHSM_MODULE, '--token-label', label, '--login', '--pin', pin, ...args],
      {
        env,
      },
    );
  let n = 0;
  return {
    dir,
    pin,
    async addKey(keyPem, id, name) {
      n += 1;
      const pemFile = path.join(dir, `key-${n}.pem`);
      const derFile = `${pemFile}.der`;
      await writeFile(pemFile, keyPem, { mode: 0o600 });
      await run('openssl', ['pkey', '-in', pemFile, '-outform', 'DER', '-out', derFile]);
      await tool('--write-object', derFile, '--type', 'privkey', '--id', id, '--label', name, '--usage-sign');
    },
    async addCertificate(der, id, name) {
      n += 1;
      const file = path.join(dir, `cert-${n}.der`);
      await writeFile(file, der);
      await tool('--write-object', file, '--type', 'cert', '--id', id, '--label', name);
    },
    async dispose() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}
