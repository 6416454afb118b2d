/**
 * `verifyWacz` on archives made by hand (test/harness/hand-wacz.ts: node:crypto, node:zlib, fflate; nothing
 * of the service), so the verifier is held to the spec rather than to the service's writer: the forms other
 * tools write (an anonymous P-256 key with a DER signature), and each way an archive can be wrong.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type HandWaczOptions, handWacz } from '../../../test/harness/hand-wacz.ts';
import { runCli } from '../cli.ts';
import { verifyWacz, WaczFormatError, type WaczReport } from './index.ts';

/** The hand-made archive without a capture record: a WACZ as another tool writes it. */
const wacz = (options: Omit<HandWaczOptions, 'noRecord'> = {}): Uint8Array =>
  handWacz({ noRecord: true, ...options });

const statuses = (r: WaczReport) => Object.fromEntries(r.checks.map((c) => [c.id, c.status]));
const failedEvidence = (r: WaczReport, id: number) =>
  r.checks
    .find((c) => c.id === id)
    ?.evidence.filter((e) => e.ok === false)
    .map((e) => `${e.label}: ${e.value}`) ?? [];

describe('verifyWacz', () => {
  it('accepts an anonymous P-256 signature in DER, every record against the index', async () => {
    const report = await verifyWacz(wacz());
    expect(statuses(report)).toEqual({
      1: 'passed',
      2: 'passed',
      3: 'passed',
      4: 'not-run',
      5: 'not-run',
      6: 'passed',
      7: 'not-run',
    });
    expect(report.outcome).toBe('passed');
    expect(report.exitCode).toBe(0);
    expect(report.checks.find((c) => c.id === 6)?.summary).toMatch(/^1 indexed records .*; 2 other records/);
  });

  it('refuses a signedData with a property outside the spec, or a signature over another hash', async () => {
    const extra = await verifyWacz(wacz({ signedData: (s) => ({ ...s, comment: 'x' }) }));
    expect(extra.failedAt).toBe(3);
    const other = await verifyWacz(wacz({ signedData: (s) => ({ ...s, hash: `${s.hash}0` }) }));
    expect(other.outcome).toBe('failed');
    expect(failedEvidence(other, 2)[0]).toMatch(/^signedData.hash/);
  });

  it('refuses a file no hash covers, and an unsigned archive', async () => {
    const unlisted = await verifyWacz(
      wacz({ unlisted: { 'extra/added.html': Buffer.from('<p>later</p>') } }),
    );
    expect(unlisted.failedAt).toBe(1);
    expect(failedEvidence(unlisted, 1)).toEqual([
      'extra/added.html: in the archive but not listed in datapackage.json (no hash covers it)',
    ]);
    const unsigned = await verifyWacz(wacz({ unsigned: true }));
    expect(unsigned.failedAt).toBe(2);
    expect(failedEvidence(unsigned, 2)[0]).toContain('not signed');
  });

  it('refuses a record whose recordDigest, offset or URL is not its own, and a response outside the index', async () => {
    const digest = await verifyWacz(
      wacz({ index: (l) => l.map((x) => ({ ...x, recordDigest: `sha256:${'0'.repeat(64)}` })) }),
    );
    expect(digest.failedAt).toBe(6);
    expect(failedEvidence(digest, 6)[0]).toMatch(/recordDigest sha256:0+, the record's bytes are sha256:/);
    const offset = await verifyWacz(
      wacz({ index: (l) => l.map((x) => ({ ...x, offset: '10', recordDigest: undefined })) }),
    );
    expect(offset.failedAt).toBe(6);
    const url = await verifyWacz(
      wacz({ index: (l) => l.map((x) => ({ ...x, url: 'https://example.test/other' })) }),
    );
    expect(failedEvidence(url, 6)[0]).toContain('the record is of https://example.test/page');
    const missing = await verifyWacz(wacz({ index: () => [] }));
    expect(failedEvidence(missing, 6)).toContainEqual(
      expect.stringMatching(/https:\/\/example.test\/page: a response record outside the index/),
    );
  });

  it('a file that is not a WACZ is unusable input: exit status 2 from notary-verify', async () => {
    await expect(verifyWacz(new TextEncoder().encode('not a zip'))).rejects.toThrow(WaczFormatError);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-cli-'));
    try {
      await writeFile(path.join(dir, 'bad.wacz'), 'not a zip');
      const bad = await runCli([path.join(dir, 'bad.wacz')]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('not a WACZ');
      await writeFile(path.join(dir, 'good.wacz'), wacz());
      const good = await runCli([path.join(dir, 'good.wacz')]);
      expect(good.code, good.stdout).toBe(0);
      expect(good.stdout).toContain('Signed (anonymous form) by the key with SHA-256');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
