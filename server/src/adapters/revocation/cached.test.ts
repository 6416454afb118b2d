/**
 * The revocation source's cache against the revocation test PKI (openssl OCSP responder and CRLs on loopback).
 */
import { parseAllowList } from '@notary/platform/net/address-policy';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RevocationPki, startRevocationPki } from '../../../../test/harness/revocation-pki';
import { CachedRevocationSource } from './cached';

const HOUR = 3_600_000;

describe('CachedRevocationSource', () => {
  let pki: RevocationPki;
  let chain: Uint8Array[];

  beforeAll(async () => {
    pki = await startRevocationPki();
    chain = [pki.signer.certDer, pki.intermediate.certDer, pki.root.certDer];
  });
  afterAll(async () => {
    await pki?.stop();
  });
  afterEach(() => {
    pki.setOcsp('ok');
    pki.setCrl('ok');
  });

  const requests = () => ({ ...pki.requests });
  /** The loopback responders, allowed as an operator allows a private CA (`REVOCATION_ALLOW_HOSTS`). */
  const allowHosts = () => parseAllowList(pki.allowHosts);

  it('a second gather makes no request while the answers are fresh; past nextUpdate it asks again', async () => {
    let clock = new Date();
    const source = new CachedRevocationSource({
      allowHosts: allowHosts(),
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
      now: () => clock,
    });
    const r0 = requests();
    const first = await source.gather(chain);
    expect(first.missing).toEqual([]);
    expect(first.material.ocsps).toHaveLength(2);
    expect(pki.requests.ocsp - r0.ocsp).toBe(2);
    expect(source.size).toBe(2);

    const r1 = requests();
    const second = await source.gather(chain);
    expect(pki.requests).toEqual(r1);
    expect(second).toEqual(first);

    // The TSA's chain shares the intermediate: only the TSA certificate's own answer is asked for.
    const tsa = await source.gather([pki.tsa.certDer, pki.intermediate.certDer, pki.root.certDer]);
    expect(tsa.missing).toEqual([]);
    expect(pki.requests.ocsp - r1.ocsp).toBe(1);

    // `openssl ocsp -ndays 1`: a day later the answers are stale, the responder is asked again.
    clock = new Date(Date.now() + 25 * HOUR);
    const r2 = requests();
    await source.gather(chain);
    expect(pki.requests.ocsp - r2.ocsp).toBe(2);
  });

  it('keeps only answers the gathering accepted: a lying OCSP answer is asked again, the CRL is not', async () => {
    const source = new CachedRevocationSource({
      allowHosts: allowHosts(),
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
    });
    pki.setOcsp('lying');
    const r0 = requests();
    const first = await source.gather(chain);
    expect(first.missing).toEqual([]);
    expect(first.material.ocsps).toEqual([]);
    expect(first.material.crls).toHaveLength(2);
    expect(pki.requests.ocsp - r0.ocsp).toBe(2);
    expect(pki.requests.crl - r0.crl).toBe(2);

    const r1 = requests();
    const second = await source.gather(chain);
    expect(second.material).toEqual(first.material);
    expect(pki.requests.ocsp - r1.ocsp).toBe(2);
    expect(pki.requests.crl - r1.crl).toBe(0);
  });

  it('is bounded in entries and in answer size; a failed request is not cached', async () => {
    const one = new CachedRevocationSource({
      allowHosts: allowHosts(),
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
      maxEntries: 1,
    });
    await one.gather(chain);
    expect(one.size).toBe(1);

    const small = new CachedRevocationSource({ allowHosts: allowHosts(), timeoutMs: 10_000, maxBytes: 100 });
    const result = await small.gather(chain);
    expect(result.material.ocsps).toEqual([]);
    expect(result.missing[0]?.reason).toMatch(/larger than 100 bytes/);
    expect(small.size).toBe(0);

    const down = new CachedRevocationSource({
      allowHosts: allowHosts(),
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
    });
    pki.setOcsp('down');
    pki.setCrl('down');
    expect((await down.gather(chain)).missing).toHaveLength(2);
    expect(down.size).toBe(0);
    pki.setOcsp('ok');
    const r = requests();
    expect((await down.gather(chain)).missing).toEqual([]);
    expect(pki.requests.ocsp - r.ocsp).toBe(2);
  });
});
