/**
 * Test PKI with revocation services, for the long-term (PAdES B-LT / B-LTA) signing and verification tests.
 * Made with the `openssl` CLI (`openssl ca` keeps each CA's index.txt, which `openssl ocsp` and
 * `openssl ca -gencrl` read), served by ONE loopback HTTP server started first so that the URLs written into
 * the certificates are real:
 *
 *   Notary LTV Root CA (no AIA) ─ Notary LTV Intermediate CA ─┬ Notary LTV Signer (RSA-2048, 10 years)
 *                                                            ├ Notary LTV Short-Lived Signer (now-1h .. now+2h)
 *                                                            ├ Notary LTV TSA (critical EKU timeStamping)
 *                                                            └ Notary LTV OCSP Responder (EKU OCSPSigning, ocsp-nocheck)
 *   Rogue responder: self-signed, EKU OCSPSigning, the same subject as the real responder (the "lying" case).
 *
 * Every certificate the root or the intermediate issues carries
 * `authorityInfoAccess = OCSP;URI:<base>/ocsp/<ca>, caIssuers;URI:<base>/ca/<ca>.cer` and
 * `crlDistributionPoints = URI:<base>/crl/<ca>.crl`, `<ca>` being `root` or `intermediate`. The server answers:
 * - `POST /ocsp/<ca>` (`application/ocsp-request`): `openssl ocsp -index` of that CA; the root signs its own
 *   answers, the intermediate's are signed by the delegated responder (RFC 6960 4.2.2.2);
 * - `GET /crl/<ca>.crl`: the CA's DER CRL (`openssl ca -gencrl`), regenerated after each revocation;
 * - `GET /ca/<ca>.cer`: the CA certificate, DER;
 * - `POST /tsa`: RFC 3161 `openssl ts -reply` signed by the LTV TSA certificate.
 * openssl runs one request at a time per CA (and for the TSA): its index and serial files are not safe for
 * concurrent writers. The server does not keep the process alive, and `stop()` closes it and removes the
 * temp directory.
 */
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  loadCertificate,
  newKeyRequest,
  nssDbTrusting,
  opensslIn,
  pemToDer,
  selfSignedCertificate,
  type TestCertificate,
} from './pki';

export type RevocationCa = 'root' | 'intermediate';
/** Certificates that can be revoked: each names its issuing CA's index. */
export type RevocableCertificate = 'intermediate' | 'signer' | 'shortLived' | 'tsa';
/** CRL reason codes as `openssl ca -crl_reason` spells them (RFC 5280 5.3.1). */
export type CrlReason =
  | 'unspecified'
  | 'keyCompromise'
  | 'CACompromise'
  | 'affiliationChanged'
  | 'superseded'
  | 'cessationOfOperation'
  | 'certificateHold';
/**
 * - `ok`: the CA's responder answers from its index.
 * - `down`: HTTP 503.
 * - `refused`: the connection is destroyed without an answer.
 * - `lying`: answered from a copy of the index with every revocation removed (so a revoked certificate is
 *   "good"), signed by the rogue responder: only the responder-authority check can catch it.
 * - `no-eku`: the true answer signed by a certificate the CA did issue but without id-kp-OCSPSigning (the
 *   TSA certificate for the intermediate's answers, the intermediate's for the root's);
 * - `unknown`: signed by the true responder, status unknown for every certificate (an empty index).
 */
export type OcspMode = 'ok' | 'down' | 'refused' | 'lying' | 'no-eku' | 'unknown';
export type CrlMode = 'ok' | 'down';

export interface SignerPemFiles extends TestCertificate {
  /** Certificate, intermediate and root, PEM, in that order (`loadFileSigner({ keyPem, chainPem })`). */
  chainPem: string;
  chainPath: string;
}

export interface RevocationPki {
  dir: string;
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /**
   * `127.0.0.1:<port>`: the service's `REVOCATION_ALLOW_HOSTS` for these responders, which its address policy
   * refuses otherwise (loopback is not a public address).
   */
  allowHosts: string;
  root: TestCertificate;
  intermediate: TestCertificate;
  signer: SignerPemFiles;
  /** Valid from one hour before creation to two hours after: judge "after expiry" with a later time. */
  shortLived: SignerPemFiles;
  tsa: TestCertificate;
  /** Delegated responder of the intermediate (EKU OCSPSigning, id-pkix-ocsp-nocheck). */
  ocspResponder: TestCertificate;
  /** Self-signed, EKU OCSPSigning, subject equal to `ocspResponder`'s: signs the `lying` answers. */
  rogueResponder: TestCertificate;
  /** Intermediate + root PEM: `-CAfile` for `openssl ocsp -verify`, `openssl ts -verify`. */
  caChainPem: string;
  caChainPath: string;
  /** `loadFileSigner` input for the normal signer. */
  signerFiles: { keyPem: string; chainPem: string };
  /** NSS database directory trusting the root; pdfsig wants `-nssdir sql:<nssDir>`. */
  nssDir: string;
  /** RFC 3161 endpoint signed by `tsa`. */
  tsaUrl: string;
  ocspUrl(ca: RevocationCa): string;
  crlUrl(ca: RevocationCa): string;
  /** CA certificate path (`-issuer`/`-CAfile` for openssl) by CA name. */
  caPath(ca: RevocationCa): string;
  /** Requests received so far, by kind (any mode). */
  readonly requests: { ocsp: number; crl: number; caIssuers: number; tsa: number };
  readonly ocspMode: OcspMode;
  readonly crlMode: CrlMode;
  setOcsp(mode: OcspMode): void;
  setCrl(mode: CrlMode): void;
  /**
   * Revokes a certificate in its CA's index (`openssl ca -revoke -crl_reason`), with revocation time `at`
   * (default now; written over the index's date field, second precision) and `reason` (default
   * `keyCompromise`), then regenerates that CA's CRL. OCSP answers reflect it from the next request.
   */
  revoke(which: RevocableCertificate, opts?: { at?: Date; reason?: CrlReason }): Promise<void>;
  /** Current DER CRL of a CA (as served). */
  crl(ca: RevocationCa): Promise<Uint8Array>;
  stop(): Promise<void>;
}

const ISSUER_OF: Record<RevocableCertificate, RevocationCa> = {
  intermediate: 'root',
  signer: 'intermediate',
  shortLived: 'intermediate',
  tsa: 'intermediate',
};

function config(dir: string, base: string): string {
  const aia = (ca: RevocationCa) =>
    `authorityInfoAccess = OCSP;URI:${base}/ocsp/${ca},caIssuers;URI:${base}/ca/${ca}.cer
crlDistributionPoints = URI:${base}/crl/${ca}.crl`;
  const caSection = (ca: RevocationCa) => `[${ca}_ca]
dir = ${path.join(dir, ca)}
database = $dir/index.txt
new_certs_dir = $dir/new
serial = $dir/serial
crlnumber = $dir/crlnumber
certificate = ${path.join(dir, `${ca}.pem`)}
private_key = ${path.join(dir, `${ca}.key`)}
default_md = sha256
default_days = 3650
default_crl_days = 7
policy = policy_any
unique_subject = no
email_in_dn = no
copy_extensions = none
crl_extensions = crl_ext
`;
  return `[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
default_ca = intermediate_ca
${caSection('root')}
${caSection('intermediate')}
[policy_any]
organizationName = optional
commonName = supplied
[crl_ext]
authorityKeyIdentifier = keyid:always
[v_root]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v_intermediate]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
${aia('root')}
[v_signer]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
${aia('intermediate')}
[v_tsa]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
${aia('intermediate')}
[v_ocsp]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,OCSPSigning
noCheck = ignored
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[v_rogue]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,OCSPSigning
subjectKeyIdentifier = hash
[tsa]
default_tsa = tsa_config1
[tsa_config1]
serial = ${path.join(dir, 'tsa-serial')}
crypto_device = builtin
signer_cert = ${path.join(dir, 'tsa.pem')}
certs = ${path.join(dir, 'ca-chain.pem')}
signer_key = ${path.join(dir, 'tsa.key')}
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
clock_precision_digits = 0
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`;
}

/** `YYYYMMDDHHMMSSZ` (GeneralizedTime), what `openssl ca -startdate/-enddate` accept. */
function generalized(d: Date): string {
  return `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

/** `YYMMDDHHMMSSZ` (UTCTime), the date format of an index.txt revocation field (years 1950..2049). */
function utcTime(d: Date): string {
  return `${d.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`;
}

/**
 * Generates the PKI into a fresh temp directory and starts its server. Each call is independent (the
 * revocation controls change state), and takes a few seconds (six RSA keys).
 * @throws when `openssl` or `certutil` fail (their stderr is in the message).
 */
export async function startRevocationPki(): Promise<RevocationPki> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-ltv-pki-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);

  let ocspMode: OcspMode = 'ok';
  let crlMode: CrlMode = 'ok';
  const requests = { ocsp: 0, crl: 0, caIssuers: 0, tsa: 0 };
  const queues = new Map<string, Promise<unknown>>();
  /** Runs `job` after the previous job of the same lane (a CA, or the TSA) has finished. */
  const serial = <T>(lane: string, job: () => Promise<T>): Promise<T> => {
    const next = (queues.get(lane) ?? Promise.resolve()).then(job);
    queues.set(
      lane,
      next.catch(() => {}),
    );
    return next;
  };
  let ready: (() => void) | undefined;
  const generated = new Promise<void>((resolve) => {
    ready = resolve;
  });

  const openssl = opensslIn(dir);
  const cnf = path.join(dir, 'openssl.cnf');
  const file = (name: string) => path.join(dir, name);
  let serialCounter = 0;
  const tmpName = (ext: string) => file(`tmp-${++serialCounter}.${ext}`);

  const ocspAnswer = async (ca: RevocationCa, request: Uint8Array, mode: OcspMode) => {
    const reqPath = tmpName('der');
    const respPath = tmpName('der');
    await writeFile(reqPath, request);
    let index = file(`${ca}/index.txt`);
    let signer = ca === 'root' ? 'root' : 'ocsp-responder';
    if (mode === 'no-eku') signer = ca === 'root' ? 'intermediate' : 'tsa';
    if (mode === 'unknown') {
      // A responder whose index is empty knows no certificate: a signed answer with status unknown.
      index = tmpName('txt');
      await writeFile(index, '');
    }
    if (mode === 'lying') {
      const clean = (await readFile(index, 'utf8'))
        .split('\n')
        .map((line) => {
          const f = line.split('\t');
          if (f[0] !== 'R') return line;
          return ['V', f[1], '', ...f.slice(3)].join('\t');
        })
        .join('\n');
      index = tmpName('txt');
      await writeFile(index, clean);
      signer = 'rogue-responder';
    }
    await openssl(
      'ocsp',
      '-index',
      index,
      '-CA',
      file(`${ca}.pem`),
      '-rsigner',
      file(`${signer}.pem`),
      '-rkey',
      file(`${signer}.key`),
      '-reqin',
      reqPath,
      '-respout',
      respPath,
      '-ndays',
      '1',
    );
    return new Uint8Array(await readFile(respPath));
  };

  const crlPaths = (ca: RevocationCa) => ({ pem: file(`${ca}/crl.pem`), der: file(`${ca}/crl.der`) });
  const generateCrl = (ca: RevocationCa) =>
    serial(ca, async () => {
      const p = crlPaths(ca);
      await openssl('ca', '-batch', '-config', cnf, '-name', `${ca}_ca`, '-gencrl', '-out', p.pem);
      await openssl('crl', '-in', p.pem, '-outform', 'DER', '-out', p.der);
    });

  const tsaReply = async (query: Uint8Array) => {
    const q = tmpName('tsq');
    const r = tmpName('tsr');
    await writeFile(q, query);
    await openssl('ts', '-reply', '-config', cnf, '-section', 'tsa_config1', '-queryfile', q, '-out', r);
    return new Uint8Array(await readFile(r));
  };

  const send = (res: ServerResponse, status: number, type: string, body: Uint8Array | string) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse, body: Uint8Array) => {
    await generated;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const ocsp = /^\/ocsp\/(root|intermediate)$/.exec(url.pathname);
    const crl = /^\/crl\/(root|intermediate)\.crl$/.exec(url.pathname);
    const cer = /^\/ca\/(root|intermediate)\.cer$/.exec(url.pathname);
    if (ocsp && req.method === 'POST') {
      requests.ocsp += 1;
      const mode = ocspMode;
      if (mode === 'refused') {
        req.socket.destroy();
        return;
      }
      if (mode === 'down') return send(res, 503, 'text/plain', 'test OCSP responder: down\n');
      const ca = ocsp[1] as RevocationCa;
      const answer = await serial(ca, () => ocspAnswer(ca, body, mode));
      return send(res, 200, 'application/ocsp-response', answer);
    }
    if (crl && req.method === 'GET') {
      requests.crl += 1;
      if (crlMode === 'down') return send(res, 503, 'text/plain', 'test CRL server: down\n');
      const ca = crl[1] as RevocationCa;
      const der = await serial(ca, () => readFile(crlPaths(ca).der));
      return send(res, 200, 'application/pkix-crl', new Uint8Array(der));
    }
    if (cer && req.method === 'GET') {
      requests.caIssuers += 1;
      return send(res, 200, 'application/pkix-cert', pemToDer(await readFile(file(`${cer[1]}.pem`), 'utf8')));
    }
    if (url.pathname === '/tsa' && req.method === 'POST') {
      requests.tsa += 1;
      const answer = await serial('tsa', () => tsaReply(body));
      return send(res, 200, 'application/timestamp-reply', answer);
    }
    send(res, 404, 'text/plain', 'not found\n');
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, new Uint8Array(Buffer.concat(chunks))).catch((e: Error) => {
        if (!res.headersSent) send(res, 599, 'text/plain', `test PKI server failed: ${e.message}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all(queues.values());
    cleanup();
    process.removeListener('exit', cleanup);
  };

  try {
    await writeFile(cnf, config(dir, baseUrl));
    for (const ca of ['root', 'intermediate'] as const) {
      await mkdir(file(`${ca}/new`), { recursive: true });
      await writeFile(file(`${ca}/index.txt`), '');
      await writeFile(file(`${ca}/serial`), '1000\n');
      await writeFile(file(`${ca}/crlnumber`), '01\n');
    }
    await writeFile(file('tsa-serial'), '01\n');

    const selfSigned = (name: string, subject: string, ext: string) =>
      selfSignedCertificate(openssl, cnf, name, subject, ext);
    /** `openssl ca` issues (and records in the CA's index.txt) with a random serial. */
    const issue = async (
      name: string,
      subject: string,
      ext: string,
      ca: RevocationCa,
      validity: string[] = ['-days', '3650'],
    ) => {
      await newKeyRequest(openssl, cnf, name, subject);
      await serial(ca, () =>
        openssl(
          'ca',
          '-batch',
          '-config',
          cnf,
          '-name',
          `${ca}_ca`,
          '-rand_serial',
          '-notext',
          '-extensions',
          ext,
          ...validity,
          '-in',
          `${name}.csr`,
          '-out',
          `${name}.pem`,
        ),
      );
    };

    await Promise.all([
      selfSigned('root', '/O=Notary Test/CN=Notary LTV Root CA', 'v_root'),
      selfSigned('rogue-responder', '/O=Notary Test/CN=Notary LTV OCSP Responder', 'v_rogue'),
    ]);
    await issue('intermediate', '/O=Notary Test/CN=Notary LTV Intermediate CA', 'v_intermediate', 'root');
    const now = Date.now();
    await Promise.all([
      issue('signer', '/O=Notary Test/CN=Notary LTV Signer', 'v_signer', 'intermediate'),
      issue('short-lived', '/O=Notary Test/CN=Notary LTV Short-Lived Signer', 'v_signer', 'intermediate', [
        '-startdate',
        generalized(new Date(now - 3_600_000)),
        '-enddate',
        generalized(new Date(now + 2 * 3_600_000)),
      ]),
      issue('tsa', '/O=Notary Test/CN=Notary LTV TSA', 'v_tsa', 'intermediate'),
      issue('ocsp-responder', '/O=Notary Test/CN=Notary LTV OCSP Responder', 'v_ocsp', 'intermediate'),
    ]);

    const load = (name: string) => loadCertificate(dir, name);
    const root = await load('root');
    const intermediate = await load('intermediate');
    const caChainPem = intermediate.certPem + root.certPem;
    const caChainPath = file('ca-chain.pem');
    await writeFile(caChainPath, caChainPem);
    const withChain = async (name: string): Promise<SignerPemFiles> => {
      const base = await load(name);
      const chainPem = base.certPem + caChainPem;
      const chainPath = file(`${name}-chain.pem`);
      await writeFile(chainPath, chainPem);
      return { ...base, chainPem, chainPath };
    };
    const signer = await withChain('signer');
    const shortLived = await withChain('short-lived');
    await Promise.all([generateCrl('root'), generateCrl('intermediate')]);

    const nssDir = file('nssdb');
    await nssDbTrusting(nssDir, root.certPath, 'notary-ltv-root');

    const certPathOf: Record<RevocableCertificate, string> = {
      intermediate: intermediate.certPath,
      signer: signer.certPath,
      shortLived: shortLived.certPath,
      tsa: file('tsa.pem'),
    };
    ready?.();
    return {
      dir,
      baseUrl,
      allowHosts: `127.0.0.1:${port}`,
      root,
      intermediate,
      signer,
      shortLived,
      tsa: await load('tsa'),
      ocspResponder: await load('ocsp-responder'),
      rogueResponder: await load('rogue-responder'),
      caChainPem,
      caChainPath,
      signerFiles: { keyPem: signer.keyPem, chainPem: signer.chainPem },
      nssDir,
      tsaUrl: `${baseUrl}/tsa`,
      ocspUrl: (ca) => `${baseUrl}/ocsp/${ca}`,
      crlUrl: (ca) => `${baseUrl}/crl/${ca}.crl`,
      caPath: (ca) => file(`${ca}.pem`),
      requests,
      get ocspMode() {
        return ocspMode;
      },
      get crlMode() {
        return crlMode;
      },
      setOcsp(mode) {
        ocspMode = mode;
      },
      setCrl(mode) {
        crlMode = mode;
      },
      async revoke(which, opts = {}) {
        const ca = ISSUER_OF[which];
        const reason = opts.reason ?? 'keyCompromise';
        await serial(ca, async () => {
          await openssl(
            'ca',
            '-batch',
            '-config',
            cnf,
            '-name',
            `${ca}_ca`,
            '-revoke',
            certPathOf[which],
            '-crl_reason',
            reason,
          );
          if (!opts.at) return;
          // index.txt: status, expiry, revocation "date[,reason]", serial, file, subject (tab-separated).
          const serialHex = (await openssl('x509', '-in', certPathOf[which], '-noout', '-serial'))
            .trim()
            .replace(/^serial=/, '')
            .toUpperCase();
          const indexPath = file(`${ca}/index.txt`);
          const lines = (await readFile(indexPath, 'utf8')).split('\n').map((line) => {
            const f = line.split('\t');
            if (f[0] !== 'R' || f[3]?.toUpperCase() !== serialHex) return line;
            const [, ...rest] = (f[2] ?? '').split(',');
            f[2] = [utcTime(opts.at as Date), ...rest].join(',');
            return f.join('\t');
          });
          await writeFile(indexPath, lines.join('\n'));
        });
        await generateCrl(ca);
      },
      crl: (ca) => serial(ca, async () => new Uint8Array(await readFile(crlPaths(ca).der))),
      stop,
    };
  } catch (e) {
    ready?.();
    await stop();
    throw e;
  }
}

/**
 * The settings of a service whose certificates a tabelião signs too (deferred signing): the service's own RSA
 * signer from `pki` at B-T, this PKI's TSA and its OCSP responders reachable on loopback.
 */
export function notarySigningEnv(
  pki: { rsa: { p12Path: string }; p12Password: string },
  rpki: RevocationPki,
): Record<string, string> {
  return {
    SIGNING_CERT: pki.rsa.p12Path,
    SIGNING_CERT_PASSWORD: pki.p12Password,
    SIGNING_LEVEL: 'B-T',
    TSA_URL: rpki.tsaUrl,
    TSA_CA_CERTS: rpki.caChainPath,
    REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
  };
}
