import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { opensslIn, pemToDer } from './pki';

/**
 * Certificates anyone can make, for tests that try to make the service or `notary-verify extend` send requests
 * where it should not: a self-signed "Rogue CA" and a leaf it issued whose AIA (OCSP, caIssuers) and CRL
 * distribution point name the URLs given (a loopback listener, a cloud metadata address). EC P-256, valid two
 * days, made with the `openssl` CLI in a temporary directory.
 */
export interface RogueCertificates {
  /** The CA (self-signed, CA:TRUE): PEM and DER. */
  ca: { certPem: string; certDer: Uint8Array };
  /** The leaf: PEM, DER, its PKCS#8 key PEM, and leaf + CA PEM (`pemCmsSigner` input). */
  leaf: { certPem: string; certDer: Uint8Array; keyPem: string; chainPem: string };
}

/** Makes the rogue CA and a leaf naming `urls` (`ocsp` in AIA, `crl` as distribution point). */
export async function rogueCertificates(urls: { ocsp: string; crl: string }): Promise<RogueCertificates> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-rogue-'));
  const openssl = opensslIn(dir);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-subj',
    '/CN=Rogue CA',
    '-days',
    '2',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  await openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=Rogue Leaf');
  await writeFile(
    path.join(dir, 'leaf.ext'),
    `authorityInfoAccess = OCSP;URI:${urls.ocsp}, caIssuers;URI:${urls.ocsp}ca.cer\n` +
      `crlDistributionPoints = URI:${urls.crl}\nkeyUsage = critical,digitalSignature,nonRepudiation\n`,
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'leaf.ext',
    '-out',
    'leaf.pem',
  );
  await openssl('pkcs8', '-topk8', '-nocrypt', '-in', 'leaf.key', '-out', 'leaf.p8');
  const read = (name: string) => readFile(path.join(dir, name), 'utf8');
  const [caPem, leafPem, keyPem] = await Promise.all([read('ca.pem'), read('leaf.pem'), read('leaf.p8')]);
  return {
    ca: { certPem: caPem, certDer: pemToDer(caPem) },
    leaf: { certPem: leafPem, certDer: pemToDer(leafPem), keyPem, chainPem: `${leafPem}${caPem}` },
  };
}

/** A loopback HTTP listener that counts the requests it gets (and answers 404): `url` ends with `/`. */
export interface CountingListener {
  url: string;
  readonly requests: number;
  stop(): Promise<void>;
}

/** Starts a `CountingListener` on 127.0.0.1 and a free port. */
export async function countingListener(): Promise<CountingListener> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests += 1;
    req.resume();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    get requests() {
      return requests;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
