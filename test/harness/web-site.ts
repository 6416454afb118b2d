/**
 * Test web sites for the web capture tests: plain HTTP and HTTPS servers on 127.0.0.1 and free ports, a throwaway CA
 * made with the `openssl` CLI whose server certificate names 127.0.0.1 and localhost, and tiny PNGs made in code. Every
 * server stops with `close()`, cutting open connections (an endless stream).
 */
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflateSync } from 'node:zlib';

const run = promisify(execFile);

export interface TestCa {
  /** PEM file of the CA certificate (what `CAPTURE_CA_CERTS` names). */
  caPath: string;
  /** Server certificate for 127.0.0.1 and localhost, issued by the CA, and its key (PEM). */
  certPem: string;
  keyPem: string;
  /** The server certificate followed by the CA's: what the HTTPS site presents. */
  chainPem: string;
  /** SHA-256 of the server certificate's DER, lower-case hex. */
  fingerprint: string;
  close(): Promise<void>;
}

/** A CA and one server certificate (EC P-256, valid for a day) in a temp directory. */
export async function createTestCa(): Promise<TestCa> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-capture-ca-'));
  const p = (name: string) => path.join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=Notary Capture Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', [
    'req',
    ...ec,
    '-keyout',
    p('site.key'),
    '-out',
    p('site.csr'),
    '-subj',
    '/CN=127.0.0.1/O=Notary Capture Test Site',
  ]);
  await writeFile(
    p('site.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('site.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    p('site.ext'),
    '-out',
    p('site.pem'),
  ]);
  const certPem = await readFile(p('site.pem'), 'utf8');
  const caPem = await readFile(p('ca.pem'), 'utf8');
  return {
    caPath: p('ca.pem'),
    certPem,
    keyPem: await readFile(p('site.key'), 'utf8'),
    chainPem: `${certPem}${caPem}`,
    fingerprint: createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex'),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface TestSite {
  /** `http://127.0.0.1:<port>` or `https://127.0.0.1:<port>`. */
  origin: string;
  port: number;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Starts `handler` on 127.0.0.1 and a free port, over TLS when `tls` is given. */
export async function startSite(
  handler: http.RequestListener,
  tls?: { certPem: string; keyPem: string },
): Promise<TestSite> {
  const requests: string[] = [];
  const listener: http.RequestListener = (req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  };
  const server = tls
    ? https.createServer({ cert: tls.certPem, key: tls.keyPem }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A PNG of `width` x `height` pixels of one RGB colour (PNG spec: IHDR, one IDAT, IEND). */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
