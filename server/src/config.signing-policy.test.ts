import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';

/** ITI's AD-RA policy file and list of approved policies (test/fixtures/icp-brasil/README.md). */
const FIXTURES = path.resolve(import.meta.dirname, '../../test/fixtures/icp-brasil');

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

  it('AD-RA needs ICP_BRASIL_ARTIFACTS_DIR, naming the three files and where to download them; unknown values are refused', () => {
    expect(() => loadConfig({ ...cert, ...tsa, SIGNING_POLICY: 'icp-brasil-ad-ra' })).toThrow(
      /SIGNING_POLICY=icp-brasil-ad-ra needs .*Tabela A.19.*set ICP_BRASIL_ARTIFACTS_DIR .*PA_PAdES_AD_RA_v1_4.der, LPA_PAdES.der, LPA_PAdES.p7s \(download them from http:\/\/politicas.icpbrasil.gov.br\/\)/,
    );
    expect(() => loadConfig({ ...cert, SIGNING_POLICY: 'icp-brasil' })).toThrow(/SIGNING_POLICY/);
  });

  describe('AD-RA artifacts (ICP_BRASIL_ARTIFACTS_DIR)', () => {
    let dir: string;
    const ra = (extra: Record<string, string> = {}) =>
      loadConfig({
        ...cert,
        ...tsa,
        SIGNING_POLICY: 'icp-brasil-ad-ra',
        ICP_BRASIL_ARTIFACTS_DIR: dir,
        ...extra,
      });

    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'notary-icp-artifacts-'));
      for (const f of ['PA_PAdES_AD_RA_v1_4.der', 'LPA_PAdES.der'])
        copyFileSync(path.join(FIXTURES, f), path.join(dir, f));
      // A stand-in for ITI's signature of the list: a real detached CMS SignedData by a throwaway key.
      const key = path.join(dir, 'key.pem');
      const crt = path.join(dir, 'cert.pem');
      execFileSync('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        key,
        '-out',
        crt,
        '-subj',
        '/CN=LPA stand-in',
        '-days',
        '2',
      ]);
      execFileSync('openssl', [
        'cms',
        '-sign',
        '-binary',
        '-outform',
        'DER',
        '-in',
        path.join(dir, 'LPA_PAdES.der'),
        '-signer',
        crt,
        '-inkey',
        key,
        '-out',
        path.join(dir, 'LPA_PAdES.p7s'),
      ]);
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads the three files when they hold, and needs B-LTA as AD-RC does', () => {
      const signing = ra().signing;
      expect(signing).toMatchObject({ policy: 'icp-brasil-ad-ra', level: 'B-LTA' });
      expect(
        Buffer.from(signing?.artifacts?.lpa ?? []).equals(readFileSync(path.join(dir, 'LPA_PAdES.der'))),
      ).toBe(true);
      expect(signing?.artifacts?.lpaSignature.length).toBeGreaterThan(0);
      expect(() => ra({ SIGNING_LEVEL: 'B-LT' })).toThrow(
        /icp-brasil-ad-ra needs a DSS, a VRI and a document timestamp \(DOC-ICP-15.03 Tabela A.22\): set SIGNING_LEVEL=B-LTA/,
      );
      expect(() =>
        loadConfig({ ...cert, SIGNING_POLICY: 'icp-brasil-ad-ra', ICP_BRASIL_ARTIFACTS_DIR: dir }),
      ).toThrow(/set TSA_URL/);
    });

    it('refuses a missing file, a policy file that is not AD-RA v1.4 and a signature that is not CMS', () => {
      expect(() => ra({ ICP_BRASIL_ARTIFACTS_DIR: path.join(dir, 'nope') })).toThrow(
        /ICP_BRASIL_ARTIFACTS_DIR=.*nope: cannot read PA_PAdES_AD_RA_v1_4.der \(ENOENT\).*http:\/\/politicas.icpbrasil.gov.br\//,
      );
      const bad = mkdtempSync(path.join(os.tmpdir(), 'notary-icp-artifacts-bad-'));
      try {
        for (const f of ['PA_PAdES_AD_RA_v1_4.der', 'LPA_PAdES.der', 'LPA_PAdES.p7s'])
          copyFileSync(path.join(dir, f), path.join(bad, f));
        const bad$ = () => ra({ ICP_BRASIL_ARTIFACTS_DIR: bad });
        expect(bad$().signing?.artifacts).toBeDefined();
        // The LPA itself in place of the policy file (the usual mix-up): its hash is not the policy's.
        copyFileSync(path.join(dir, 'LPA_PAdES.der'), path.join(bad, 'PA_PAdES_AD_RA_v1_4.der'));
        expect(bad$).toThrow(
          /PA_PAdES_AD_RA_v1_4.der has SHA-256 958eabf6.*, not the AD-RA v1.4 policy file's b77680a6/,
        );
        copyFileSync(path.join(dir, 'PA_PAdES_AD_RA_v1_4.der'), path.join(bad, 'PA_PAdES_AD_RA_v1_4.der'));
        writeFileSync(path.join(bad, 'LPA_PAdES.p7s'), readFileSync(path.join(dir, 'cert.pem')));
        expect(bad$).toThrow(/LPA_PAdES.p7s is not a CMS SignedData/);
        // A CMS of another type (a certificate's DER is a SEQUENCE, not a ContentInfo of SignedData).
        writeFileSync(
          path.join(bad, 'LPA_PAdES.p7s'),
          execFileSync('openssl', ['x509', '-in', path.join(dir, 'cert.pem'), '-outform', 'DER']),
        );
        expect(bad$).toThrow(/LPA_PAdES.p7s is not a CMS SignedData/);
      } finally {
        rmSync(bad, { recursive: true, force: true });
      }
    });
  });
});
