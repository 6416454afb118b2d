/**
 * Loopback RFC 3161 Time-Stamp Authority for tests: an HTTP server on 127.0.0.1 that answers every
 * `application/timestamp-query` with `openssl ts -reply` signed by the test PKI's TSA certificate, or with a
 * deliberately wrong answer (`mode`) to exercise the client's checks.
 *
 * The ASN.1 surgery uses only the `openssl` CLI (`asn1parse` offsets, `cms -sign -cades`, `ts -token_in`):
 * pkijs is installed for the server workspace only, and an independent tool makes a fairer fixture anyway.
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { opensslIn, type TestPki } from './pki';

/**
 * - `ok`: a correct token.
 * - `wrong-nonce` / `wrong-imprint`: the query is changed (one bit of the nonce / of the hashedMessage) before
 *   openssl answers it, so the otherwise valid token answers another request.
 * - `no-eku`: the `ok` token's TSTInfo re-signed by the rogue TSA certificate (no extendedKeyUsage; correct
 *   ESS signingCertificateV2 via `openssl cms -cades`), so only the EKU check can fail.
 * - `fail-500`: HTTP 500. `garbage`: HTTP 200 with random bytes. `rejection`: a TimeStampResp with status
 *   rejection (2) and failInfo badAlg, made by asking openssl for a SHA-1 imprint it is not configured for.
 */
export type TestTsaMode =
  | 'ok'
  | 'wrong-nonce'
  | 'wrong-imprint'
  | 'no-eku'
  | 'fail-500'
  | 'garbage'
  | 'rejection';

export interface TestTsa {
  /** `http://127.0.0.1:<port>/tsa`. */
  url: string;
  /** Requests received so far (any mode). */
  readonly requests: number;
  readonly mode: TestTsaMode;
  setMode(mode: TestTsaMode): void;
  stop(): Promise<void>;
}

/**
 * The service's environment for certificates signed with the test PKI's RSA key (PKCS#12) and RFC 3161 tokens
 * from `tsa`, whose chain the service trusts: SIGNING_CERT, SIGNING_CERT_PASSWORD, TSA_URL, TSA_CA_CERTS.
 */
export function signingEnv(pki: TestPki, tsa: TestTsa): Record<string, string> {
  return {
    SIGNING_CERT: pki.rsa.p12Path,
    SIGNING_CERT_PASSWORD: pki.p12Password,
    TSA_URL: tsa.url,
    TSA_CA_CERTS: pki.caChainPath,
  };
}

/**
 * Starts the loopback TSA. Requests are answered one at a time (openssl's serial file is not safe for
 * concurrent writers). The server does not keep the process alive (`unref`) and `stop()` closes it.
 */
export async function startTestTsa(pki: TestPki, mode: TestTsaMode = 'ok'): Promise<TestTsa> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-tsa-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  const config = path.join(dir, 'tsa.cnf');
  await writeFile(path.join(dir, 'serial'), '01\n');
  await writeFile(
    config,
    `[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = ${path.join(dir, 'serial')}
crypto_device = builtin
signer_cert = ${pki.tsa.certPath}
certs = ${pki.caChainPath}
signer_key = ${pki.tsa.keyPath}
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.5.6
digests = sha256, sha384, sha512
accuracy = secs:1, millisecs:500, microsecs:100
clock_precision_digits = 0
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`,
  );

  const openssl = opensslIn(dir);
  const reply = async (query: Uint8Array): Promise<Uint8Array> => {
    await writeFile(path.join(dir, 'q.tsq'), query);
    await openssl(
      'ts',
      '-reply',
      '-config',
      config,
      '-section',
      'tsa_config1',
      '-queryfile',
      'q.tsq',
      '-out',
      'r.tsr',
    );
    return new Uint8Array(await readFile(path.join(dir, 'r.tsr')));
  };

  /** Flips the low bit of the last content byte of the DER element `pick` selects among asn1parse's lines. */
  const flip = async (query: Uint8Array, pick: (elements: Asn1Element[]) => Asn1Element | undefined) => {
    await writeFile(path.join(dir, 'in.tsq'), query);
    const element = pick(parseAsn1(await openssl('asn1parse', '-inform', 'DER', '-in', 'in.tsq')));
    if (!element) throw new Error('test TSA: element to alter not found in the query');
    const out = new Uint8Array(query);
    const last = element.offset + element.headerLength + element.length - 1;
    out[last] = (out[last] ?? 0) ^ 0x01;
    return out;
  };

  const answer = async (
    query: Uint8Array,
    current: TestTsaMode,
  ): Promise<{ status: number; body: Uint8Array }> => {
    switch (current) {
      case 'ok':
        return { status: 200, body: await reply(query) };
      case 'wrong-imprint':
        // TimeStampReq.messageImprint.hashedMessage: the OCTET STRING at depth 2.
        return {
          status: 200,
          body: await reply(
            await flip(query, (e) => e.find((x) => x.depth === 2 && x.type === 'OCTET STRING')),
          ),
        };
      case 'wrong-nonce':
        // TimeStampReq.nonce: the second INTEGER at depth 1 (the first is the version).
        return {
          status: 200,
          body: await reply(
            await flip(query, (e) => e.filter((x) => x.depth === 1 && x.type === 'INTEGER')[1]),
          ),
        };
      case 'no-eku': {
        await writeFile(path.join(dir, 'ok.tsr'), await reply(query));
        await openssl('ts', '-reply', '-in', 'ok.tsr', '-token_out', '-out', 'ok.tok');
        // The TSTInfo as the real TSA signed it (signature checked, chain not: it is ours).
        await openssl(
          'cms',
          '-verify',
          '-noverify',
          '-inform',
          'DER',
          '-in',
          'ok.tok',
          '-binary',
          '-out',
          'tst.der',
        );
        await openssl(
          'cms',
          '-sign',
          '-binary',
          '-nodetach',
          '-outform',
          'DER',
          '-econtent_type',
          '1.2.840.113549.1.9.16.1.4',
          '-in',
          'tst.der',
          '-signer',
          pki.rogueTsa.certPath,
          '-inkey',
          pki.rogueTsa.keyPath,
          '-certfile',
          pki.caChainPath,
          '-md',
          'sha256',
          '-cades',
          '-nosmimecap',
          '-out',
          'rogue.tok',
        );
        // `-token_in` without `-token_out`: wrap the token in a TimeStampResp with status granted.
        await openssl('ts', '-reply', '-in', 'rogue.tok', '-token_in', '-out', 'rogue.tsr');
        return { status: 200, body: new Uint8Array(await readFile(path.join(dir, 'rogue.tsr'))) };
      }
      case 'rejection': {
        const sha1 = createHash('sha1').update(query).digest('hex');
        await openssl('ts', '-query', '-digest', sha1, '-sha1', '-cert', '-out', 'sha1.tsq');
        return { status: 200, body: await reply(new Uint8Array(await readFile(path.join(dir, 'sha1.tsq')))) };
      }
      case 'fail-500':
        return { status: 500, body: new TextEncoder().encode('test TSA: internal error\n') };
      case 'garbage':
        return { status: 200, body: new Uint8Array(randomBytes(256)) };
    }
  };

  let current = mode;
  let requests = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests += 1;
      const modeNow = current;
      const job = queue.then(() => answer(new Uint8Array(Buffer.concat(chunks)), modeNow));
      queue = job.catch(() => {});
      job.then(
        ({ status, body }) => {
          res.writeHead(status, {
            'content-type': status === 200 ? 'application/timestamp-reply' : 'text/plain',
          });
          res.end(body);
        },
        (e: Error) => {
          res.writeHead(599, { 'content-type': 'text/plain' });
          res.end(`test TSA failed: ${e.message}`);
        },
      );
    });
  };

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tsa`,
    get requests() {
      return requests;
    },
    get mode() {
      return current;
    },
    setMode(m) {
      current = m;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      cleanup();
      process.removeListener('exit', cleanup);
    },
  };
}

interface Asn1Element {
  offset: number;
  depth: number;
  headerLength: number;
  length: number;
  type: string;
}

/** `openssl asn1parse` lines such as `   22:d=2  hl=2 l=  32 prim: OCTET STRING      [HEX DUMP]:2CF2...`. */
function parseAsn1(text: string): Asn1Element[] {
  const out: Asn1Element[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+):d=(\d+)\s+hl=(\d+)\s+l=\s*(\d+)\s+(?:prim|cons):\s+(.*?)\s*(?::.*)?$/.exec(line);
    if (!m) continue;
    out.push({
      offset: Number(m[1]),
      depth: Number(m[2]),
      headerLength: Number(m[3]),
      length: Number(m[4]),
      type: (m[5] ?? '').replace(/\s*\[HEX DUMP\]$/, ''),
    });
  }
  return out;
}
