import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli.ts';
import { merkleProofHolds, recomputeMerkleRoot } from './merkle.ts';
import { parseReceipt, type Receipt, ReceiptFormatError, receiptJsonSchema } from './receipt.ts';
import { CheckBuilder } from './report.ts';
import { verify } from './verify.ts';

const SRC = import.meta.dirname;
/** Files that may use Node: the command line wrapper, `extend` (it writes with @notary/pdf), the schema writer, tests. */
const NODE_ONLY = /^(cli|extend|write-schema|write-icp-brasil-roots)\.ts$|\.test\.ts$/;

const sha = (...parts: (Buffer | Uint8Array)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** A receipt of `file` with no chain legs (anchoring off), for the checks that need no endpoint. */
function receiptFor(file: Uint8Array, merkle: Receipt['merkle'] = null): Receipt {
  return parseReceipt({
    format: 'notary-receipt',
    version: 1,
    service: { name: 'Notary', url: 'http://localhost:3000' },
    document: {
      id: '6f1c1d2e-0000-4000-8000-000000000001',
      serialNumber: 'ABC-1',
      sha256: sha(file).toString('hex'),
      fileName: 'f.bin',
      fileSize: file.length,
      mimeType: 'application/octet-stream',
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
    merkle,
    evm: null,
    stacks: null,
    timestamp: null,
  });
}

describe('receipt schema', () => {
  it('docs/receipt.schema.json is the JSON Schema of ReceiptSchema (npm run schema -w @notary/verify)', () => {
    const published = JSON.parse(readFileSync(path.join(SRC, '../../docs/receipt.schema.json'), 'utf8'));
    expect(published).toEqual(receiptJsonSchema());
  });

  it('refuses another version, a non-receipt and extra fields, naming the problem', () => {
    const good = receiptFor(new Uint8Array([1, 2, 3]));
    expect(() => parseReceipt({ ...good, version: 2 })).toThrow(/version 2 is not supported/);
    expect(() => parseReceipt('not json')).toThrow(ReceiptFormatError);
    expect(() => parseReceipt({ ...good, document: { ...good.document, sha256: 'ABC' } })).toThrow(
      /document\.sha256/,
    );
    expect(() => parseReceipt({ ...good, extra: 1 })).toThrow(ReceiptFormatError);
    expect(parseReceipt(JSON.stringify(good))).toEqual(good);
  });
});

describe('Merkle proofs (RFC 6962 with SHA-256)', () => {
  it('recomputes the root of a 3-leaf tree from each leaf (odd node promoted) and refuses a changed sibling', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((s) => sha(Buffer.from(s))) as [Buffer, Buffer, Buffer];
    const leaf = (h: Buffer) => sha(Buffer.of(0), h);
    const node = (l: Buffer, r: Buffer) => sha(Buffer.of(1), l, r);
    const ab = node(leaf(a), leaf(b));
    const root = node(ab, leaf(c)).toString('hex');
    const hex = (x: Buffer) => x.toString('hex');
    const proofs = [
      {
        h: a,
        siblings: [
          { position: 'right' as const, hash: hex(leaf(b)) },
          { position: 'right' as const, hash: hex(leaf(c)) },
        ],
      },
      {
        h: b,
        siblings: [
          { position: 'left' as const, hash: hex(leaf(a)) },
          { position: 'right' as const, hash: hex(leaf(c)) },
        ],
      },
      { h: c, siblings: [{ position: 'left' as const, hash: hex(ab) }] },
    ];
    for (const p of proofs) expect(await recomputeMerkleRoot(hex(p.h), p)).toBe(root);
    const bad = { siblings: [{ position: 'left' as const, hash: hex(ab).replace(/^./, '0') }] };
    expect(await merkleProofHolds(hex(c), bad, root)).toBe(false);
    // A batch of one: the root is the hash itself.
    expect(await recomputeMerkleRoot(hex(a), { siblings: [] })).toBe(hex(a));
  });
});

describe('verify without chains', () => {
  it('passes 1 and 2, reports 3 to 6 as not run, and fails 1 on a changed byte', async () => {
    const file = new Uint8Array([1, 2, 3, 4]);
    const receipt = receiptFor(file, {
      hashing: 'sha256-rfc6962',
      leafIndex: 0,
      leafCount: 1,
      siblings: [],
      root: sha(file).toString('hex'),
    });
    const report = await verify({ file, receipt });
    expect(report.checks.map((c) => c.status)).toEqual([
      'passed',
      'passed',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
    ]);
    expect(report.ok).toBe(true);
    const changed = await verify({ file: new Uint8Array([1, 2, 3, 5]), receipt });
    expect(changed).toMatchObject({ ok: false, failedAt: 1 });
  });

  it('runs only the requested checks; the others are not run, "not requested"', async () => {
    const file = new Uint8Array([9, 9]);
    const receipt = receiptFor(file, {
      hashing: 'sha256-rfc6962',
      leafIndex: 0,
      leafCount: 1,
      siblings: [],
      root: sha(file).toString('hex'),
    });
    const report = await verify({ file: new Uint8Array([9, 8]), receipt, checks: [2] });
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      [1, 'not-run'],
      [2, 'passed'],
      [3, 'not-run'],
      [4, 'not-run'],
      [5, 'not-run'],
      [6, 'not-run'],
    ]);
    expect(report.checks[0]?.summary).toBe('not requested');
    expect(report.ok).toBe(true);
  });

  it('a check with a part that could not run is partial; a contradiction makes it failed', () => {
    const partial = new CheckBuilder(5);
    partial.expect(true, 'signature', 'valid');
    partial.skip('the chain (no --tsa-ca given)');
    expect(partial.result('ok').status).toBe('partial');
    const failed = new CheckBuilder(5);
    failed.skip('the chain');
    failed.expect(false, 'signature', 'invalid', 'x');
    expect(failed.result('ok')).toMatchObject({ status: 'failed', summary: 'failed: signature (x)' });
  });
});

describe('the command line', () => {
  it('exits 2 on unusable input, 1 on a failed check, 0 when verified', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-verify-cli-'));
    try {
      const file = path.join(dir, 'f.bin');
      const receiptPath = path.join(dir, 'r.json');
      await writeFile(file, Buffer.from('hello'));
      await writeFile(receiptPath, JSON.stringify(receiptFor(new Uint8Array(Buffer.from('hello')))));
      expect((await runCli([file])).code).toBe(2);
      expect((await runCli([file, '--receipt', receiptPath, '--certificate', receiptPath])).code).toBe(2);
      expect((await runCli([file, '--receipt', path.join(dir, 'missing.json')])).stderr).toMatch(/ENOENT/);
      expect((await runCli([file, '--receipt', file])).code).toBe(2);
      expect((await runCli([file, '--receipt', receiptPath, '--bogus'])).code).toBe(2);
      const ok = await runCli([file, '--receipt', receiptPath]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('[2] Merkle proof: NOT RUN');
      await writeFile(file, Buffer.from('hellO'));
      const bad = await runCli([file, '--receipt', receiptPath, '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, failedAt: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('runs in a browser', () => {
  it('the checking core imports no Node module', () => {
    const offenders: string[] = [];
    for (const name of readdirSync(SRC)) {
      if (!name.endsWith('.ts') || NODE_ONLY.test(name)) continue;
      const text = readFileSync(path.join(SRC, name), 'utf8');
      for (const m of text.matchAll(/from\s+'([^']+)'/g)) {
        const spec = m[1] ?? '';
        if (spec.startsWith('node:') || /^(fs|path|crypto|os|buffer|stream|util)$/.test(spec)) {
          offenders.push(`${name} -> ${spec}`);
        }
      }
      if (/\bBuffer\.|\bprocess\./.test(text)) offenders.push(`${name} uses Buffer or process`);
    }
    expect(offenders).toEqual([]);
  });

  it('bundles for the browser platform with every dependency (esbuild, no Node built-in)', async () => {
    const result = await build({
      entryPoints: [path.join(SRC, 'index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      metafile: true,
    });
    expect(result.errors).toEqual([]);
    const bytes = result.outputFiles[0]?.contents.length ?? 0;
    console.info(`[verifier] browser bundle: ${(bytes / 1024).toFixed(0)} KiB`);
    expect(bytes).toBeGreaterThan(0);
  });
});
