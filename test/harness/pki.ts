/**
 * Test PKI for the PAdES and RFC 3161 tests, made with the `openssl` CLI in a temp directory:
 *
 *   Notary Test Root CA ─ Notary Test Intermediate CA ─┬ Notary Test Signer (RSA-2048)
 *                                                      ├ Notary Test Signer (EC P-256)
 *                                                      ├ Notary Test TSA (extendedKeyUsage critical,timeStamping)
 *                                                      └ Notary Rogue TSA (no extendedKeyUsage)
 *   Untrusted Root CA (self-signed, unrelated: anchors nothing of the above)
 *
 * Plus PKCS#12 exports of both signers (OpenSSL 3 defaults; the RSA one also with `-legacy`), PEM keys
 * (PKCS#8; the EC one also as SEC1 `EC PRIVATE KEY`) and chains, and an NSS database trusting the root for
 * `pdfsig -nssdir sql:<dir>`. Generation takes a couple of seconds, so one PKI is shared per module instance.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificate {
  certPath: string;
  certPem: string;
  certDer: Uint8Array;
  keyPath: string;
  keyPem: string;
}

export interface TestSignerFiles extends TestCertificate {
  /** Signer, intermediate and root certificates, PEM, in that order. */
  chainPath: string;
  chainPem: string;
  /** PKCS#12 of key + chain as OpenSSL 3 writes it by default (PBES2 AES-256-CBC, HMAC-SHA256 MAC). */
  p12Path: string;
  p12: Uint8Array;
  /** The same with `openssl pkcs12 -legacy` (RC2/3DES): what pkijs cannot decrypt. */
  legacyP12Path: string;
  /** The key in its traditional PEM form (`BEGIN RSA PRIVATE KEY` / `BEGIN EC PRIVATE KEY`). */
  traditionalKeyPem: string;
}

export interface TestPki {
  dir: string;
  /** Password of every PKCS#12 file. */
  p12Password: string;
  root: TestCertificate;
  intermediate: TestCertificate;
  rsa: TestSignerFiles;
  ec: TestSignerFiles;
  /** TSA certificate with `extendedKeyUsage = critical,timeStamping`, issued by the intermediate. */
  tsa: TestCertificate;
  /** Like `tsa` but without extendedKeyUsage: `openssl ts -reply` refuses it, RFC 3161 clients must too. */
  rogueTsa: TestCertificate;
  /** A self-signed CA nothing here chains to. */
  otherRoot: TestCertificate;
  /** Intermediate + root PEM: the TSA's `certs`, and `-CAfile` for `openssl ts -verify`. */
  caChainPath: string;
  caChainPem: string;
  /** NSS database directory trusting the root (`CT,C,C`); pdfsig wants `-nssdir sql:<nssDir>`. */
  nssDir: string;
  /** Removes the temp directory once every user of the shared PKI has disposed it. */
  dispose(): Promise<void>;
}

const P12_PASSWORD = 'notary-test-p12';

const CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[root]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[intermediate]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[signer]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[tsa]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[rogue]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
`;

let shared: { pki: Promise<TestPki>; users: number } | undefined;

/**
 * The test PKI. Without `dir`: one shared PKI in a fresh temp directory (removed by the last `dispose()`, or
 * at process exit). With `dir`: a new PKI generated into that existing directory, which `dispose()` leaves.
 * @throws when `openssl` or `certutil` fail (their stderr is in the message).
 */
export async function createTestPki(dir?: string): Promise<TestPki> {
  if (dir) return { ...(await generate(dir)), dispose: async () => {} };
  if (!shared) {
    const state = {
      users: 0,
      pki: (async () => {
        const tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-pki-'));
        process.once('exit', () => rmSync(tmp, { recursive: true, force: true }));
        const files = await generate(tmp);
        return {
          ...files,
          dispose: async () => {
            state.users -= 1;
            if (state.users > 0) return;
            if (shared === state) shared = undefined;
            rmSync(tmp, { recursive: true, force: true });
          },
        };
      })(),
    };
    shared = state;
    state.pki.catch(() => {
      if (shared === state) shared = undefined;
    });
  }
  shared.users += 1;
  return shared.pki;
}

async function generate(dir: string): Promise<Omit<TestPki, 'dispose'>> {
  const cnf = path.join(dir, 'openssl.cnf');
  await writeFile(cnf, CONFIG);
  const openssl = opensslIn(dir);
  // Random positive 63-bit serials: certificates of one issuer must not share one.
  const serial = () => `0x${(randomBytes(8).readBigUInt64BE() >> 1n).toString(16)}`;
  const load = (name: string) => loadCertificate(dir, name);
  const selfSigned = (name: string, subject: string) =>
    selfSignedCertificate(openssl, cnf, name, subject, 'root', ['-set_serial', serial()]);
  const issue = async (name: string, keyArgs: string[], subject: string, extensions: string, ca: string) => {
    await newKeyRequest(openssl, cnf, name, subject, keyArgs);
    await openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-set_serial',
      serial(),
      '-days',
      '3650',
      '-sha256',
      '-extfile',
      cnf,
      '-extensions',
      extensions,
      '-out',
      `${name}.pem`,
    );
  };
  const rsa = RSA_2048;
  const p256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];

  await Promise.all([
    selfSigned('root', '/O=Notary Test/CN=Notary Test Root CA'),
    selfSigned('other-root', '/O=Elsewhere/CN=Untrusted Root CA'),
  ]);
  await issue('intermediate', rsa, '/O=Notary Test/CN=Notary Test Intermediate CA', 'intermediate', 'root');
  await Promise.all([
    issue('signer-rsa', rsa, '/O=Notary Test/CN=Notary Test Signer', 'signer', 'intermediate'),
    issue('signer-ec', p256, '/O=Notary Test/CN=Notary Test Signer', 'signer', 'intermediate'),
    issue('tsa', rsa, '/O=Notary Test/CN=Notary Test TSA', 'tsa', 'intermediate'),
    issue('rogue-tsa', rsa, '/O=Notary Test/CN=Notary Rogue TSA', 'rogue', 'intermediate'),
  ]);

  const root = await load('root');
  const intermediate = await load('intermediate');
  const caChainPem = intermediate.certPem + root.certPem;
  const caChainPath = path.join(dir, 'ca-chain.pem');
  await writeFile(caChainPath, caChainPem);

  const signerFiles = async (name: string, traditional: string[]): Promise<TestSignerFiles> => {
    const base = await load(name);
    const chainPem = base.certPem + caChainPem;
    const chainPath = path.join(dir, `${name}-chain.pem`);
    await writeFile(chainPath, chainPem);
    const p12Path = path.join(dir, `${name}.p12`);
    const legacyP12Path = path.join(dir, `${name}-legacy.p12`);
    const p12Args = [
      '-inkey',
      base.keyPath,
      '-in',
      base.certPath,
      '-certfile',
      caChainPath,
      '-passout',
      `pass:${P12_PASSWORD}`,
      '-name',
      'Notary Test Signer',
    ];
    await openssl('pkcs12', '-export', ...p12Args, '-out', p12Path);
    await openssl('pkcs12', '-export', '-legacy', ...p12Args, '-out', legacyP12Path);
    const traditionalPath = path.join(dir, `${name}-traditional.key`);
    await openssl(...traditional, '-in', base.keyPath, '-out', traditionalPath);
    return {
      ...base,
      chainPath,
      chainPem,
      p12Path,
      p12: new Uint8Array(await readFile(p12Path)),
      legacyP12Path,
      traditionalKeyPem: await readFile(traditionalPath, 'utf8'),
    };
  };
  // `-traditional` keeps OpenSSL 3 from writing PKCS#8 again.
  const [rsaFiles, ecFiles] = await Promise.all([
    signerFiles('signer-rsa', ['rsa', '-traditional']),
    signerFiles('signer-ec', ['ec']),
  ]);

  const nssDir = path.join(dir, 'nssdb');
  await nssDbTrusting(nssDir, root.certPath, 'notary-test-root');

  return {
    dir,
    p12Password: P12_PASSWORD,
    root,
    intermediate,
    rsa: rsaFiles,
    ec: ecFiles,
    tsa: await load('tsa'),
    rogueTsa: await load('rogue-tsa'),
    otherRoot: await load('other-root'),
    caChainPath,
    caChainPem,
    nssDir,
  };
}

/** DER of the first `BEGIN CERTIFICATE` block. */
export function pemToDer(pem: string): Uint8Array {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new Error('no CERTIFICATE block in PEM');
  return new Uint8Array(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64'));
}

/** An `openssl` command line run in one directory: its stdout. */
export type Openssl = (...args: string[]) => Promise<string>;

/**
 * Runs the `openssl` CLI in `dir` (relative file names are that directory's).
 * @throws Error naming the command and openssl's stderr.
 */
export function opensslIn(dir: string): Openssl {
  return async (...args) => {
    try {
      return (await run('openssl', args, { cwd: dir, encoding: 'utf8' })).stdout;
    } catch (e) {
      const err = e as Error & { stderr?: string };
      throw new Error(`openssl ${args.join(' ')}: ${err.stderr ?? err.message}`, { cause: e });
    }
  };
}

/** `-newkey` arguments of an RSA-2048 key. */
export const RSA_2048 = ['-newkey', 'rsa:2048'];

/** A new key `<name>.key` (unencrypted; `keyArgs` RSA-2048 unless told) and its request `<name>.csr`. */
export async function newKeyRequest(
  openssl: Openssl,
  cnf: string,
  name: string,
  subject: string,
  keyArgs: string[] = RSA_2048,
): Promise<void> {
  await openssl(
    'req',
    '-new',
    ...keyArgs,
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
    '-config',
    cnf,
  );
}

/** A self-signed RSA-2048 certificate `<name>.pem` (10 years, `extensions` of `cnf`) and its key `<name>.key`. */
export async function selfSignedCertificate(
  openssl: Openssl,
  cnf: string,
  name: string,
  subject: string,
  extensions: string,
  extra: string[] = [],
): Promise<void> {
  await openssl(
    'req',
    '-x509',
    '-new',
    ...RSA_2048,
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '3650',
    '-subj',
    subject,
    '-config',
    cnf,
    '-extensions',
    extensions,
    ...extra,
  );
}

/** `<name>.pem` and `<name>.key` of `dir`, read back. */
export async function loadCertificate(dir: string, name: string): Promise<TestCertificate> {
  const certPath = path.join(dir, `${name}.pem`);
  const keyPath = path.join(dir, `${name}.key`);
  const certPem = await readFile(certPath, 'utf8');
  return { certPath, certPem, certDer: pemToDer(certPem), keyPath, keyPem: await readFile(keyPath, 'utf8') };
}

/** A new NSS database in `nssDir` trusting `rootPath` as a CA (`CT,C,C`), for `pdfsig -nssdir sql:<nssDir>`. */
export async function nssDbTrusting(nssDir: string, rootPath: string, nickname: string): Promise<void> {
  await mkdir(nssDir);
  await run('certutil', ['-N', '--empty-password', '-d', `sql:${nssDir}`]);
  await run('certutil', ['-A', '-n', nickname, '-t', 'CT,C,C', '-i', rootPath, '-d', `sql:${nssDir}`]);
}
