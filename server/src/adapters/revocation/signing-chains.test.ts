/**
 * Trying to make the service fetch where it should not while it signs at B-LTA: a TSA answer carrying extra
 * certificates in the token's unsigned certificate set (as anyone on the way to an `http` TSA_URL can add),
 * whose AIA and CRL URLs name a loopback listener; and the revocation source asked about such certificates
 * directly, without an allow entry for them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type GatherValidationData, signPdfAtLevel } from '@notary/pdf/pades';
import { parseAllowList } from '@notary/platform/net/address-policy';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustedTokenChain } from '../../../../test/harness/icp-brasil';
import { pemCmsSigner, placeholderPdf } from '../../../../test/harness/pades-pdfs';
import { type RevocationPki, startRevocationPki } from '../../../../test/harness/revocation-pki';
import {
  type CountingListener,
  countingListener,
  type RogueCertificates,
  rogueCertificates,
} from '../../../../test/harness/rogue-certificates';
import { HttpTimestampAuthority } from '../tsa/http';
import { CachedRevocationSource } from './cached';

const SIGNED_DATA = '1.2.840.113549.1.7.2';

/** `resp` (a DER TimeStampResp) with `extra` added to its token's certificate set; the signature untouched. */
function withExtraCertificates(resp: Uint8Array, extra: readonly Uint8Array[]): Uint8Array {
  const parsed = pkijs.TimeStampResp.fromBER(new Uint8Array(resp));
  const token = parsed.timeStampToken;
  if (!token) throw new Error('no token');
  const signed = new pkijs.SignedData({ schema: token.content });
  signed.certificates = [
    ...(signed.certificates ?? []),
    ...extra.map((der) => pkijs.Certificate.fromBER(new Uint8Array(der))),
  ];
  parsed.timeStampToken = new pkijs.ContentInfo({ contentType: SIGNED_DATA, content: signed.toSchema(true) });
  return new Uint8Array(parsed.toSchema().toBER(false));
}

describe('revocation gathering for signing', () => {
  let rpki: RevocationPki;
  let listener: CountingListener;
  let rogue: RogueCertificates;
  let proxy: Server;
  let proxyUrl: string;

  beforeAll(async () => {
    rpki = await startRevocationPki();
    listener = await countingListener();
    rogue = await rogueCertificates({ ocsp: listener.url, crl: `${listener.url}crl` });
    // The real TSA behind a man in the middle who adds the rogue certificates to every token.
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const answer = await fetch(rpki.tsaUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/timestamp-query' },
          body: Buffer.concat(chunks),
        });
        const forged = withExtraCertificates(new Uint8Array(await answer.arrayBuffer()), [
          rogue.ca.certDer,
          rogue.leaf.certDer,
        ]);
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(forged);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/tsa`;
  });

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await listener?.stop();
    await rpki?.stop();
  });

  it('a token with extra unsigned certificates: only the verified TSA chain is gathered, the listener sees nothing', async () => {
    const tsa = new HttpTimestampAuthority({ url: proxyUrl, trustedCertificates: [rpki.root.certDer] });
    // The forged certificates really are in the token, outside the chain the TSA adapter verified.
    const stamped = await tsa.timestamp(new Uint8Array(32));
    const carried = trustedTokenChain(stamped.token).map((d) => Buffer.from(d).toString('hex'));
    expect(carried).toContain(Buffer.from(rogue.leaf.certDer).toString('hex'));
    expect(stamped.chain.map((d) => Buffer.from(d).toString('hex'))).not.toContain(
      Buffer.from(rogue.leaf.certDer).toString('hex'),
    );

    // The listener allowed on purpose: only the choice of chains keeps the service from asking it.
    const source = new CachedRevocationSource({
      timeoutMs: 5_000,
      maxBytes: 1024 * 1024,
      allowHosts: parseAllowList(`${rpki.allowHosts}, ${new URL(listener.url).host}`),
    });
    const asked: string[][] = [];
    const gather: GatherValidationData = (chain) => {
      asked.push(chain.map((d) => Buffer.from(d).toString('hex')));
      return source.gather(chain);
    };
    const result = await signPdfAtLevel(
      await placeholderPdf(),
      pemCmsSigner(rpki.signer.keyPem, rpki.signer.chainPem),
      { level: 'B-LTA', tsa, gather },
    );
    expect(result).toMatchObject({ level: 'B-LTA', shortfall: [] });
    expect(asked.flat()).not.toContain(Buffer.from(rogue.leaf.certDer).toString('hex'));
    expect(asked.flat()).not.toContain(Buffer.from(rogue.ca.certDer).toString('hex'));
    expect(listener.requests).toBe(0);
  });

  it('certificates naming a loopback listener, not allowed: refused by the address policy, no request', async () => {
    const source = new CachedRevocationSource({ timeoutMs: 5_000, maxBytes: 1024 * 1024 });
    const { missing } = await source.gather([rogue.leaf.certDer, rogue.ca.certDer]);
    expect(missing).toHaveLength(1);
    expect(missing[0]?.reason).toMatch(
      /^OCSP http:\/\/127\.0\.0\.1:\d+\/: .*refused by the address policy \(a loopback address\); CRL /,
    );
    expect(listener.requests).toBe(0);
  });
});
