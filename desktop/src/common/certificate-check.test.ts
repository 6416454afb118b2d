import { spawn } from 'node:child_process';
import type { VerifyReport } from '@notary/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../../test/harness/tsa';
import { signedCertificate } from '../main/signed-certificate.testing';
import {
  AnchorFileError,
  anchorCertificates,
  checkAgainstCertificate,
  endpointProblem,
  judgeAt,
  MAX_ANCHOR_CERTIFICATES,
  MAX_ANCHOR_FILE_BYTES,
  MAX_ANCHOR_FILES,
  NETWORK_CHECKS,
  OFFLINE_CHECKS,
  parseEndpoints,
  SCREEN_CHECKS,
  trustAnchors,
  withChecks,
} from './certificate-check';
import { testCheck } from './check-result.testing';

/**
 * The verify screen's checking code as the web client runs it in the page: endpoints the user enters, the
 * trust anchors of checks 5 and 6 (PEM files, their bounds and errors), the judging date, and the six checks
 * on a certificate signed by the test PKI with a loopback TSA (no request made for checks 5 and 6).
 */

describe('chain endpoints the user enters on the verify screen', () => {
  it('takes https anywhere and http on loopback only', () => {
    expect(endpointProblem('https://sepolia.base.org')).toBeNull();
    expect(endpointProblem('http://127.0.0.1:8545')).toBeNull();
    expect(endpointProblem('http://localhost:3999')).toBeNull();
    expect(endpointProblem('http://rpc.example')).toBe('insecure');
    expect(endpointProblem('http://10.0.0.5:8545')).toBe('insecure');
    expect(endpointProblem('ws://127.0.0.1:8546')).toBe('scheme');
    expect(endpointProblem('https://user:key@rpc.example')).toBe('credentials');
    expect(endpointProblem('https://rpc.example/?apikey=1')).toBe('credentials');
    expect(endpointProblem('rpc.example')).toBe('not-url');
  });

  it('reads one per line or comma-separated, trims, drops trailing slashes, blanks and duplicates', () => {
    expect(
      parseEndpoints(' https://a.example/ \n\nhttps://b.example,https://a.example\n http://127.0.0.1:8545 '),
    ).toEqual({ urls: ['https://a.example', 'https://b.example', 'http://127.0.0.1:8545'], refused: null });
    expect(parseEndpoints('')).toEqual({ urls: [], refused: null });
    expect(parseEndpoints('https://a.example\nhttp://rpc.example')).toEqual({
      urls: ['https://a.example'],
      refused: { value: 'http://rpc.example', problem: 'insecure' },
    });
  });
});

describe('checkAgainstCertificate', () => {
  it('says a PDF without receipt (or a non-PDF) carries none, without asking any endpoint', async () => {
    const asked: string[] = [];
    const fetchSpy: typeof fetch = async (input) => {
      asked.push(String(input));
      throw new Error('no endpoint may be asked');
    };
    const result = await checkAgainstCertificate(
      new Uint8Array([1, 2, 3]),
      new TextEncoder().encode('not a pdf at all'),
      { evmRpcUrls: ['https://rpc.example'], stacksApiUrls: [] },
      { fetch: fetchSpy },
    );
    expect(result.kind).toBe('no-receipt');
    expect(asked).toEqual([]);
  });
});

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Runs `command` with `input` on its stdin; its stdout, or the rejection with its stderr. */
function run(command: string, args: string[], input: Uint8Array): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve({ stdout }) : reject(new Error(`${command} exited ${code}: ${stderr}`)),
    );
    child.stdin.end(input);
  });
}
const pemOf = (der: Uint8Array) =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(der).toString('base64')}\n-----END CERTIFICATE-----\n`;

describe('the trust anchors the user chooses', () => {
  let pki: TestPki;
  beforeAll(async () => {
    pki = await createTestPki();
  }, 60_000);
  afterAll(async () => {
    await pki?.dispose();
  });

  it('the screen runs all six checks: 1 to 4 may ask the network, 5 and 6 never', () => {
    expect(SCREEN_CHECKS).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...NETWORK_CHECKS, ...OFFLINE_CHECKS].sort()).toEqual([...SCREEN_CHECKS]);
  });

  it('reads every certificate of the picked PEM files, in order', () => {
    const certs = anchorCertificates([
      { name: 'chain.pem', bytes: utf8(pki.caChainPem) },
      { name: 'other.pem', bytes: utf8(`subject=CN=Other\n${pki.otherRoot.certPem}`) },
    ]);
    expect(certs.map((c) => Buffer.from(c).toString('hex'))).toEqual(
      [pki.intermediate.certDer, pki.root.certDer, pki.otherRoot.certDer].map((c) =>
        Buffer.from(c).toString('hex'),
      ),
    );
  });

  it('names the file that holds no certificate, is too large, or brings too many', () => {
    const problem = (files: { name: string; bytes: Uint8Array }[]) => {
      try {
        anchorCertificates(files);
        return null;
      } catch (e) {
        expect(e).toBeInstanceOf(AnchorFileError);
        return { name: (e as AnchorFileError).fileName, problem: (e as AnchorFileError).problem };
      }
    };
    const root = { name: 'root.pem', bytes: utf8(pki.root.certPem) };
    expect(problem([root, { name: 'notes.txt', bytes: utf8('hello') }])).toEqual({
      name: 'notes.txt',
      problem: 'no-certificate',
    });
    expect(problem([{ name: 'signer.key', bytes: utf8(pki.rsa.keyPem) }])).toMatchObject({
      problem: 'no-certificate',
    });
    // Base64 that is not a DER SEQUENCE ("hello"), and a block that is not base64.
    for (const body of ['aGVsbG8=', '%%%%']) {
      expect(
        problem([
          {
            name: 'fake.pem',
            bytes: utf8(`-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`),
          },
        ]),
      ).toEqual({ name: 'fake.pem', problem: 'no-certificate' });
    }
    expect(problem([{ name: 'empty.pem', bytes: new Uint8Array(0) }])).toMatchObject({
      problem: 'no-certificate',
    });
    expect(
      problem([{ name: 'big.pem', bytes: new Uint8Array(MAX_ANCHOR_FILE_BYTES + 1).fill(0x20) }]),
    ).toEqual({ name: 'big.pem', problem: 'too-large' });
    const many = pemOf(pki.root.certDer).repeat(MAX_ANCHOR_CERTIFICATES + 1);
    expect(utf8(many).length).toBeLessThan(MAX_ANCHOR_FILE_BYTES);
    expect(problem([{ name: 'bundle.pem', bytes: utf8(many) }])).toEqual({
      name: 'bundle.pem',
      problem: 'too-many',
    });
    expect(problem([root])).toBeNull();
  });

  it('resolves a choice: none is null, files are read through the bridge (at most 8), ICP-Brasil as shipped', async () => {
    expect(
      await trustAnchors({ kind: 'none' }, () => Promise.reject(new Error('no file is read'))),
    ).toBeNull();
    const read: string[] = [];
    const anchors = await trustAnchors(
      { kind: 'files', fileIds: Array.from({ length: MAX_ANCHOR_FILES + 2 }, (_, i) => `id-${i}`) },
      async (id) => {
        read.push(id);
        return { name: `${id}.pem`, bytes: utf8(pki.root.certPem) };
      },
    );
    expect(read).toHaveLength(MAX_ANCHOR_FILES);
    expect(anchors).toHaveLength(MAX_ANCHOR_FILES);
    // The ICP-Brasil roots shipped with @notary/verify, each a root certificate as openssl reads it.
    const roots = await trustAnchors({ kind: 'icp-brasil' }, () => Promise.reject(new Error('no file')));
    expect(roots?.length).toBeGreaterThan(0);
    for (const der of roots ?? []) {
      const { stdout } = await run(
        'openssl',
        ['x509', '-inform', 'DER', '-noout', '-subject', '-issuer'],
        der,
      );
      const [subject, issuer] = stdout.trim().split('\n');
      expect(subject).toMatch(/O ?= ?ICP-Brasil/);
      expect(subject?.replace(/^subject=/, '')).toBe(issuer?.replace(/^issuer=/, ''));
      expect(subject).toMatch(/Autoridade Certificadora Raiz Brasileira/);
    }
  });

  it('the judging date is a UTC date-time as toISOString writes it, or null for now', () => {
    expect(judgeAt(null)).toBeNull();
    expect(judgeAt('2026-11-26T10:00:00.000Z')?.getTime()).toBe(Date.UTC(2026, 10, 26, 10));
    for (const bad of ['yesterday', '2026-11-26', '2026-11-26T10:00:00+01:00', '2026-13-45T10:00:00.000Z']) {
      expect(() => judgeAt(bad), bad).toThrow(/Not a UTC date-time/);
    }
  });

  it('merges checks run elsewhere into a report, recomputing the outcome, ok and the first failure', () => {
    const check = testCheck;
    const report: VerifyReport = {
      outcome: 'passed',
      exitCode: 0,
      ok: true,
      failedAt: null,
      document: { serialNumber: 'A-1', sha256: '00', fileName: 'f' },
      service: { name: 'Notary', url: 'http://localhost' },
      checks: [
        check(1, 'passed'),
        check(5, 'not-run', 'not-requested'),
        check(6, 'not-run', 'not-requested'),
      ],
    };
    const merged = withChecks(report, [check(5, 'partial', 'not-checked'), check(6, 'failed')]);
    expect(merged.checks.map((c) => c.status)).toEqual(['passed', 'partial', 'failed']);
    expect(merged).toMatchObject({ outcome: 'failed', exitCode: 1, ok: false, failedAt: 6 });
    expect(withChecks(report, [check(5, 'passed')])).toMatchObject({
      outcome: 'passed',
      exitCode: 0,
      ok: true,
      failedAt: null,
    });
    // A check that could not run in full leaves the proof incomplete, not failed and not passed.
    expect(withChecks(report, [check(5, 'partial', 'not-checked')])).toMatchObject({
      outcome: 'incomplete',
      exitCode: 3,
      ok: true,
    });
    expect(withChecks(report, [check(6, 'not-run', 'not-applicable')])).toMatchObject({ outcome: 'passed' });
  });
});

describe('the six checks in the page on a signed certificate', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  const file = utf8('procuração\n');
  let certificate: Uint8Array;
  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    certificate = await signedCertificate(pki, tsa.url, file);
  }, 60_000);
  afterAll(async () => {
    await tsa?.stop();
    await pki?.dispose();
  });

  /** The report, asserting that nothing was requested (no chain endpoint given; 5 and 6 are offline). */
  async function report(options: { anchors?: Uint8Array[] | null; at?: Date | null }): Promise<VerifyReport> {
    const asked: string[] = [];
    const requests = tsa.requests;
    const result = await checkAgainstCertificate(
      file,
      certificate,
      { evmRpcUrls: [], stacksApiUrls: [] },
      {
        ...options,
        fetch: async (input) => {
          asked.push(String(input));
          throw new Error('no request expected');
        },
      },
    );
    expect(asked).toEqual([]);
    expect(tsa.requests).toBe(requests);
    if (result.kind !== 'report') throw new Error(JSON.stringify(result));
    return result.report;
  }

  it('without anchors: 5 and 6 partial, the chains not checked; with the root: passed', async () => {
    const none = await report({ anchors: null });
    expect(none.checks.map((c) => c.status)).toEqual([
      'passed',
      'passed',
      'not-run',
      'not-run',
      'partial',
      'partial',
    ]);
    const rooted = await report({ anchors: [pki.root.certDer] });
    expect(rooted.checks.map((c) => c.status)).toEqual([
      'passed',
      'passed',
      'not-run',
      'not-run',
      'passed',
      'passed',
    ]);
    expect(rooted.checks[5]?.pades?.level).toBe('B-T');
    // An empty anchor list is no anchor, not a list nothing can chain to.
    expect((await report({ anchors: [] })).checks[5]?.status).toBe('partial');
  });

  it('with the ICP-Brasil roots, the test PKI does not chain: 5 and 6 fail on their chains', async () => {
    const roots = await trustAnchors({ kind: 'icp-brasil' }, () => Promise.reject(new Error('no file')));
    const r = await report({ anchors: roots });
    for (const c of r.checks.slice(4)) {
      expect(c.status, c.name).toBe('failed');
      expect(
        c.evidence.filter((e) => e.ok === false).every((e) => /chain to/.test(e.label)),
        JSON.stringify(c.evidence),
      ).toBe(true);
    }
  });

  it('judged at a date before the signer existed, check 6 fails', async () => {
    const at = new Date('2001-01-01T00:00:00.000Z');
    const r = await report({ anchors: [pki.root.certDer], at });
    expect(r.checks[5]?.status).toBe('failed');
    expect(r.checks[5]?.pades?.at).toBe(at.toISOString());
  });
});
