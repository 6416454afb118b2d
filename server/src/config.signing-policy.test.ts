import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

/** `SIGNING_POLICY`: ETSI or an ICP-Brasil policy (DOC-ICP-15.03 v9.1), and what each one needs at start. */
describe('SIGNING_POLICY', () => {
  const cert = { SIGNING_CERT: '/tmp/cert.p12' };
  const tsa = { TSA_URL: 'http://127.0.0.1:9/tsa' };

  it('defaults to etsi; AD-RB signs at any level, with or without a TSA', () => {
    expect(loadConfig({ ...cert }).signing?.policy).toBe('etsi');
    expect(loadConfig({ ...cert, SIGNING_POLICY: 'icp-brasil-ad-rb' }).signing).toMatchObject({
      policy: 'icp-brasil-ad-rb',
      level: 'B-B',
    });
    expect(loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-rb' }).signing?.level).toBe('B-LTA');
  });

  it('AD-RT needs a TSA and B-T or higher; AD-RC needs B-LTA; each refusal names what to set', () => {
    expect(() => loadConfig({ ...cert, SIGNING_POLICY: 'icp-brasil-ad-rt' })).toThrow(
      /SIGNING_POLICY=icp-brasil-ad-rt needs a signature timestamp \(DOC-ICP-15.03 Tabela A.15\): set TSA_URL/,
    );
    expect(() =>
      loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-rt', SIGNING_LEVEL: 'B-B' }),
    ).toThrow(/SIGNING_POLICY=icp-brasil-ad-rt needs .*: set SIGNING_LEVEL=B-T \(it is B-B\)/);
    expect(
      loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-rt', SIGNING_LEVEL: 'B-T' }).signing,
    ).toMatchObject({
      policy: 'icp-brasil-ad-rt',
      level: 'B-T',
    });
    expect(() => loadConfig({ ...cert, SIGNING_POLICY: 'icp-brasil-ad-rc' })).toThrow(/set TSA_URL/);
    expect(() =>
      loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-rc', SIGNING_LEVEL: 'B-LT' }),
    ).toThrow(
      /icp-brasil-ad-rc needs a DSS, a VRI and a document timestamp \(DOC-ICP-15.03 Tabela A.22\): set SIGNING_LEVEL=B-LTA/,
    );
    expect(loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-rc' }).signing).toMatchObject({
      policy: 'icp-brasil-ad-rc',
      level: 'B-LTA',
    });
  });

  it('AD-RA is refused at start (its DSS artifacts are not written), and unknown values are refused', () => {
    expect(() => loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-ra' })).toThrow(
      /SIGNING_POLICY=icp-brasil-ad-ra: .*PBAD_PolicyArtifacts/,
    );
    expect(() => loadConfig({ ...cert, SIGNING_POLICY: 'icp-brasil' })).toThrow(/SIGNING_POLICY/);
  });
});
