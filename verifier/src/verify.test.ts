import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { easArtifacts } from '@notary/server/adapters/chains/eas-abi';
import { type HardhatDevnet, startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { build } from 'esbuild';
import {
  AbiCoder,
  Contract,
  Interface,
  JsonRpcProvider,
  keccak256,
  Network,
  solidityPacked,
  Wallet,
  ZeroAddress,
  ZeroHash,
} from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.ts';
import { EAS_ABI } from './evm.ts';
import { formatReport } from './format.ts';
import { merkleProofHolds, recomputeMerkleRoot } from './merkle.ts';
import { data } from './messages/index.ts';
import { parseReceipt, type Receipt, ReceiptFormatError, receiptJsonSchema } from './receipt.ts';
import { CheckBuilder, type CheckResult, notRun, outcomeOf, type VerifyReport } from './report.ts';
import { verify } from './verify.ts';

const SRC = import.meta.dirname;
/**
 * Files that may use Node: the command line wrapper and its parts that read files (`--dir`, a WACZ, a log to
 * monitor, a certidão's run chain), `extend` (it writes with @notary/pdf), the schema writers, tests.
 */
const NODE_ONLY =
  /^(cli|cli-files|batch-dir|wacz-cli|monitor-cli|chain-cli|extend|write-schema|write-icp-brasil-roots)\.ts$|\.test\.ts$/;

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
  it('reads version 1 receipts (no act) and version 2 with an act, whose MNE the report checks', async () => {
    const file = new Uint8Array([1, 2, 3]);
    const v1 = receiptFor(file);
    expect(v1.version).toBe(1);
    expect((await verify({ file, receipt: v1, checks: [1] })).act).toBeUndefined();
    const act = {
      type: 'ata_notarial' as const,
      mne: '104067.2025.10.13.00006024-37',
      selo: { state: 'SP', code: '1234AB' },
      book: 'L-12',
      page: '34v',
      recordedAt: '2026-01-02T03:04:05.000Z',
    };
    const v2 = parseReceipt({ ...v1, version: 2, act });
    const report = await verify({ file, receipt: v2, checks: [1] });
    expect(report.act).toEqual({ ...act, mneCheck: { valid: true, date: '2025-10-13' } });
    expect(report.outcome).toBe('passed');
    const text = formatReport(report);
    expect(text).toContain('Notarial act: ata_notarial (book L-12, page 34v)');
    expect(text).toContain('selo SP 1234AB');
    expect(text).toMatch(/MNE 104067\.2025\.10\.13\.00006024-37: check digits and date \(2025-10-13\) valid/);
    const wrong = await verify({
      file,
      receipt: { ...v2, act: { ...act, mne: '104067.2025.10.13.00006024-73' } },
      checks: [1],
    });
    expect(wrong.act?.mneCheck).toEqual({
      valid: false,
      problem: 'check digits 73, expected 37 (ISO 7064 MOD 97-10)',
      problemMessage: { code: 'mne.checkDigits', params: { found: '73', expected: '37' } },
    });
    expect(formatReport(wrong)).toContain(
      'MNE 104067.2025.10.13.00006024-73: INVALID, check digits 73, expected 37',
    );
    expect(() => parseReceipt({ ...v2, act: { ...act, mne: '10406720251013000060243' } })).toThrow(
      /act\.mne/,
    );
    expect(() => parseReceipt({ ...v2, act: { ...act, extra: 1 } })).toThrow(ReceiptFormatError);
  });

  it('docs/receipt.schema.json is the JSON Schema of ReceiptSchema (npm run schema -w @notary/verify)', () => {
    const published = JSON.parse(readFileSync(path.join(SRC, '../../docs/receipt.schema.json'), 'utf8'));
    expect(published).toEqual(receiptJsonSchema());
  });

  it('refuses another version, a non-receipt and extra fields, naming the problem', () => {
    const good = receiptFor(new Uint8Array([1, 2, 3]));
    expect(() => parseReceipt({ ...good, version: 5 })).toThrow(
      /version 5 is not supported \(this verifier reads versions 1, 2, 3, 4\): a newer notary-verify judges it/,
    );
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
    partial.expect(true, data('signature'), data('valid'));
    partial.skip(data('the chain (no --tsa-ca given)'));
    expect(partial.result(data('ok')).status).toBe('partial');
    const failed = new CheckBuilder(5);
    failed.skip(data('the chain'));
    failed.expect(false, data('signature'), data('invalid'), 'x');
    expect(failed.result(data('ok'))).toMatchObject({ status: 'failed', summary: 'failed: signature (x)' });
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
      // No chain leg, no token, no certificate: only check 1 applies, and it passes.
      const ok = await runCli([file, '--receipt', receiptPath]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('[2] Merkle proof: NOT RUN (not applicable)');
      expect(ok.stdout).toContain('[6] certificate signature (PAdES): NOT RUN (not applicable)');
      expect(ok.stdout).toMatch(/VERIFIED: every applicable check passed \(1 passed, .*\); exit status 0\n$/);
      const json = JSON.parse((await runCli([file, '--receipt', receiptPath, '--json'])).stdout);
      expect(json).toMatchObject({ outcome: 'passed', exitCode: 0, ok: true, failedAt: null });
      expect(json.checks[1]).toMatchObject({ status: 'not-run', reason: 'not-applicable' });
      await writeFile(file, Buffer.from('hellO'));
      const bad = await runCli([file, '--receipt', receiptPath, '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({
        outcome: 'failed',
        exitCode: 1,
        ok: false,
        failedAt: 1,
      });
      expect((await runCli([file, '--receipt', receiptPath])).stdout).toMatch(
        /NOT VERIFIED: failed at check 1 \(.*\); exit status 1\n$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 3 when a check could not run: a pending anchor, its line and the final line say why', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-verify-cli-'));
    try {
      const bytes = new Uint8Array(Buffer.from('pending'));
      const file = path.join(dir, 'f.bin');
      const receiptPath = path.join(dir, 'r.json');
      await writeFile(file, bytes);
      await writeFile(
        receiptPath,
        JSON.stringify({
          ...receiptFor(bytes),
          evm: {
            status: 'pending',
            network: 'hardhat',
            chainId: 31337,
            schema: 'bytes32 merkleRoot',
            schemaUid: `0x${'11'.repeat(32)}`,
            easAddress: null,
            schemaRegistryAddress: null,
          },
        }),
      );
      const result = await runCli([file, '--receipt', receiptPath]);
      expect(result.code).toBe(3);
      expect(result.stdout).toContain('[2] Merkle proof: NOT RUN (anchor pending)');
      expect(result.stdout).toContain('[3] EVM attestation (EAS): NOT RUN (anchor pending)');
      expect(result.stdout).toContain('[4] Stacks anchor: NOT RUN (not applicable)');
      expect(result.stdout).toMatch(
        /INCOMPLETE: no check failed, but checks 2, 3 could not run in full \(.*\); exit status 3: fetch a newer receipt/,
      );
      const json = JSON.parse((await runCli([file, '--receipt', receiptPath, '--json'])).stdout);
      expect(json).toMatchObject({ outcome: 'incomplete', exitCode: 3, ok: true, failedAt: null });
      expect(json.checks[2]).toMatchObject({ status: 'not-run', reason: 'pending' });
      expect((await runCli(['--help'])).stdout).toMatch(/ 3 {2}incomplete: none failed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the outcome of each combination of statuses', () => {
  const c = (status: CheckResult['status'], reason?: CheckResult['reason']) => ({
    id: 3 as const,
    status,
    ...(reason ? { reason } : {}),
  });
  it.each([
    ['all passed', [c('passed')], 'passed', 0],
    ['not applicable', [c('passed'), c('not-run', 'not-applicable')], 'passed', 0],
    ['not requested', [c('passed'), c('not-run', 'not-requested')], 'passed', 0],
    ['no endpoint', [c('passed'), c('not-run', 'no-endpoint')], 'incomplete', 3],
    ['none answered', [c('passed'), c('not-run', 'unavailable')], 'incomplete', 3],
    ['pending', [c('passed'), c('not-run', 'pending')], 'incomplete', 3],
    ['some answered', [c('passed'), c('partial', 'unavailable')], 'incomplete', 3],
    ['part not checked', [c('passed'), c('partial', 'not-checked')], 'incomplete', 3],
    ['an earlier report without reason', [c('passed'), c('not-run')], 'incomplete', 3],
    ['failed and not run', [c('failed'), c('not-run', 'unavailable')], 'failed', 1],
    ['failed and partial', [c('partial', 'unavailable'), c('failed')], 'failed', 1],
  ] as const)('%s', (_name, checks, outcome, exitCode) => {
    expect(outcomeOf(checks)).toMatchObject({ outcome, exitCode });
  });

  it('a builder: not run when no endpoint answered, partial when one did, failed on a contradiction', () => {
    const none = new CheckBuilder(3);
    none.unavailable('http://a', data('HTTP 429 (rate-limited)'));
    none.unavailable('http://b', data('unreachable: ECONNREFUSED'));
    expect(none.result(data('read'))).toMatchObject({
      status: 'not-run',
      reason: 'unavailable',
      summary:
        'no endpoint answered: http://a (HTTP 429 (rate-limited)); http://b (unreachable: ECONNREFUSED)',
    });
    const some = new CheckBuilder(3);
    some.unavailable('http://a', data('HTTP 410 (gone)'));
    some.answered('http://b');
    some.expect(true, data('root'), data('equal'), 'http://b');
    expect(some.result(data('read'))).toMatchObject({
      status: 'partial',
      reason: 'unavailable',
      summary: 'read; not checked: no answer from http://a (HTTP 410 (gone))',
    });
    const contradicted = new CheckBuilder(3);
    contradicted.unavailable('http://a', data('HTTP 500'));
    contradicted.answered('http://b');
    contradicted.expect(false, data('root'), data('other'), 'http://b');
    expect(contradicted.result(data('read'))).toMatchObject({ status: 'failed' });
    expect(contradicted.result(data('read')).reason).toBeUndefined();
    expect(notRun(5, 'not-applicable', data('no token'))).toMatchObject({
      status: 'not-run',
      reason: 'not-applicable',
    });
  });
});

describe('check 3: evidence from the chain, unavailability from the endpoints (Hardhat devnets)', () => {
  const SCHEMA = 'bytes32 merkleRoot';
  const file = new Uint8Array(Buffer.from('anchored on the devnet'));
  let main: HardhatDevnet;
  /** Another chain (id 1337) with EAS at the same addresses: it never saw the attestation. */
  let otherChain: HardhatDevnet;
  /** The same chain id, fresh: its tip is below the receipt's block (a node not synced that far). */
  let behind: HardhatDevnet;
  let faulty: { url: string; stop(): Promise<void> };
  let closed: string;
  let receipt: Receipt;

  beforeAll(async () => {
    [main, otherChain, behind] = await Promise.all([
      startHardhatDevnet(),
      startHardhatDevnet({ chainId: 1337 }),
      startHardhatDevnet(),
    ]);
    // Blocks before the attestation, so the fresh devnet of the same chain is behind it.
    await main.mine(20);
    const provider = new JsonRpcProvider(main.rpcUrl, Network.from(main.chainId), {
      staticNetwork: true,
      cacheTimeout: -1,
    });
    try {
      const wallet = new Wallet(main.funderPrivateKey, provider);
      const { eas, schemaRegistry } = easArtifacts();
      const registry = new Contract(main.schemaRegistryAddress, schemaRegistry.abi, wallet);
      await (await registry.getFunction('register').send(SCHEMA, ZeroAddress, false)).wait();
      const schemaUid = keccak256(
        solidityPacked(['string', 'address', 'bool'], [SCHEMA, ZeroAddress, false]),
      );
      const root = `0x${sha(file).toString('hex')}`;
      const easContract = new Contract(main.easAddress, eas.abi, wallet);
      const tx = await easContract.getFunction('attest').send({
        schema: schemaUid,
        data: {
          recipient: ZeroAddress,
          expirationTime: 0n,
          revocable: false,
          refUID: ZeroHash,
          data: AbiCoder.defaultAbiCoder().encode(['bytes32'], [root]),
          value: 0n,
        },
      });
      const mined = await tx.wait();
      if (!mined) throw new Error('no receipt');
      const attested = mined.logs
        .map((l) => new Interface(EAS_ABI).parseLog(l))
        .find((l) => l?.name === 'Attested');
      receipt = parseReceipt({
        ...receiptFor(file, {
          hashing: 'sha256-rfc6962',
          leafIndex: 0,
          leafCount: 1,
          siblings: [],
          root: sha(file).toString('hex'),
        }),
        evm: {
          status: 'registered',
          network: 'hardhat',
          chainId: main.chainId,
          schema: SCHEMA,
          schemaUid: schemaUid.toLowerCase(),
          easAddress: main.easAddress,
          schemaRegistryAddress: main.schemaRegistryAddress,
          attestationUid: String(attested?.args.getValue('uid')).toLowerCase(),
          attester: wallet.address,
          txHash: mined.hash.toLowerCase(),
          blockNumber: mined.blockNumber,
          anchoredAt: '2026-01-01T00:00:00.000Z',
        },
      });
    } finally {
      provider.destroy();
    }
    faulty = await startFaultyRpc(main.rpcUrl);
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    closed = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
  }, 60_000);

  afterAll(async () => {
    await faulty?.stop();
    await Promise.all([main?.stop(), otherChain?.stop(), behind?.stop()]);
  });

  const run = (evmRpcUrls: string[], confirmations = 1) =>
    verify({ file, receipt, evmRpcUrls, confirmations, timeoutMs: 5_000 });
  const check3 = (r: VerifyReport) => r.checks[2] as CheckResult;

  it('an honest endpoint: every applicable check passed, outcome passed, exit 0', async () => {
    const report = await run([main.rpcUrl]);
    expect(check3(report).status, JSON.stringify(check3(report), null, 2)).toBe('passed');
    expect(report.checks.map((c) => [c.status, c.reason])).toEqual([
      ['passed', undefined],
      ['passed', undefined],
      ['passed', undefined],
      ['not-run', 'not-applicable'],
      ['not-run', 'not-applicable'],
      ['not-run', 'not-applicable'],
    ]);
    expect(report).toMatchObject({ outcome: 'passed', exitCode: 0, ok: true });
  });

  it('no endpoint given: not run (no endpoint), outcome incomplete, exit 3', async () => {
    const report = await run([]);
    expect(check3(report)).toMatchObject({ status: 'not-run', reason: 'no-endpoint' });
    expect(report).toMatchObject({ outcome: 'incomplete', exitCode: 3, ok: true, failedAt: null });
  });

  it.each([
    ['429 with Retry-After', '/429', /eth_chainId: HTTP 429 \(rate-limited\)/],
    ['410 Gone', '/410', /eth_chainId: HTTP 410 \(gone\)/],
    ['500 in plain text', '/500', /eth_chainId: HTTP 500, not JSON: Internal Server Error/],
    ['an HTML page', '/garbage', /eth_chainId: HTTP 200, not JSON: <html>/],
    ['a JSON-RPC error (method not found)', '/no-method', /eth_chainId: JSON-RPC error -32601/],
    ['a JSON answer that is not JSON-RPC', '/not-rpc', /eth_chainId: not a JSON-RPC response/],
  ])(
    'an endpoint answering %s is unavailable: not run, exit 3 (alone), partial (beside an honest one)',
    async (_name, mode, reason) => {
      const url = `${faulty.url}${mode}`;
      const alone = await run([url]);
      expect(check3(alone), JSON.stringify(check3(alone), null, 2)).toMatchObject({
        status: 'not-run',
        reason: 'unavailable',
      });
      expect(check3(alone).summary).toMatch(reason);
      expect(check3(alone).evidence).toContainEqual(
        expect.objectContaining({ label: 'endpoint unavailable', source: url }),
      );
      expect(alone).toMatchObject({ outcome: 'incomplete', exitCode: 3 });
      const beside = await run([main.rpcUrl, url]);
      expect(check3(beside)).toMatchObject({ status: 'partial', reason: 'unavailable' });
      expect(check3(beside).summary).toMatch(/holds the root.*; not checked: no answer from http:\/\/127/);
      expect(beside).toMatchObject({ outcome: 'incomplete', exitCode: 3 });
    },
  );

  it('an unreachable endpoint, a node of another chain and one not synced to the block are unavailable, not evidence', async () => {
    for (const [url, reason] of [
      [closed, /eth_chainId: unreachable: ECONNREFUSED/],
      [otherChain.rpcUrl, /serves chain 1337, not the receipt's chain 31337 \(hardhat\)/],
      [behind.rpcUrl, /not synced: its tip is block \d+, the receipt's transaction is in block \d+/],
    ] as const) {
      const report = await run([url]);
      expect(check3(report), JSON.stringify(check3(report), null, 2)).toMatchObject({
        status: 'not-run',
        reason: 'unavailable',
      });
      expect(check3(report).summary).toMatch(reason);
      expect(report.exitCode).toBe(3);
    }
    const three = await run([closed, otherChain.rpcUrl, main.rpcUrl]);
    expect(check3(three)).toMatchObject({ status: 'partial', reason: 'unavailable' });
  });

  it('what the chain answered against the receipt fails, alone or beside unavailable endpoints; endpoints that answered and disagree fail', async () => {
    const lying = `${faulty.url}/lying`;
    const alone = await run([lying]);
    expect(check3(alone).status).toBe('failed');
    expect(
      check3(alone)
        .evidence.filter((e) => e.ok === false)
        .map((e) => e.label),
    ).toEqual(['attestation.data (bytes32 merkleRoot)']);
    expect(alone).toMatchObject({ outcome: 'failed', exitCode: 1, failedAt: 3 });
    const mixed = await run([`${faulty.url}/429`, main.rpcUrl, lying]);
    expect(check3(mixed).status).toBe('failed');
    expect(check3(mixed).evidence.find((e) => e.label === 'endpoints agree')?.value).toMatch(
      /disagree on attestation\.data/,
    );
    // A receipt naming an address where the chain has no contract.
    const nowhere = parseReceipt({
      ...receipt,
      evm: { ...receipt.evm, easAddress: '0x000000000000000000000000000000000000dEaD' },
    });
    const none = await verify({ file, receipt: nowhere, evmRpcUrls: [main.rpcUrl] });
    expect(check3(none)).toMatchObject({ status: 'failed' });
    expect(check3(none).summary).toMatch(/answer/);
    expect(check3(none).evidence.find((e) => e.ok === false)?.value).toMatch(
      /getAttestation: no contract at 0x000000000000000000000000000000000000dEaD on this chain/,
    );
  });

  it('fewer confirmations than required is not a contradiction: partial (a part not checked)', async () => {
    const report = await run([main.rpcUrl], 10_000);
    expect(check3(report)).toMatchObject({ status: 'partial', reason: 'not-checked' });
    expect(check3(report).summary).toMatch(
      /not checked: 10000 confirmations at http:\/\/127\.0\.0\.1:\d+ \(\d+ so far\)/,
    );
    expect(report.exitCode).toBe(3);
  });

  it('the command line: 0 verified, 3 with an unavailable endpoint (its line and the final line say why), 1 on a lie', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-verify-evm-'));
    try {
      const filePath = path.join(dir, 'f.bin');
      const receiptPath = path.join(dir, 'r.json');
      await writeFile(filePath, file);
      await writeFile(receiptPath, JSON.stringify(receipt));
      const base = [filePath, '--receipt', receiptPath];
      const ok = await runCli([...base, '--evm-rpc', main.rpcUrl]);
      expect(ok.code, ok.stdout).toBe(0);
      const limited = await runCli([...base, '--evm-rpc', `${faulty.url}/429`]);
      expect(limited.code, limited.stdout).toBe(3);
      expect(limited.stdout).toMatch(
        /\[3\] EVM attestation \(EAS\): NOT RUN \(endpoint unavailable\)\n {4}no endpoint answered: http:\/\/127\.0\.0\.1:\d+\/429 \(eth_chainId: HTTP 429 \(rate-limited\)\)/,
      );
      expect(limited.stdout).toMatch(
        /INCOMPLETE: no check failed, but check 3 could not run in full \(2 passed, 0 partial, 1 not run, 3 not applicable, 0 failed\); exit status 3: try again later or with other endpoints\n$/,
      );
      const partial = await runCli([
        ...base,
        '--evm-rpc',
        main.rpcUrl,
        '--evm-rpc',
        `${faulty.url}/410`,
        '--json',
      ]);
      expect(partial.code).toBe(3);
      expect(JSON.parse(partial.stdout)).toMatchObject({
        outcome: 'incomplete',
        exitCode: 3,
        checks: [{}, {}, { status: 'partial', reason: 'unavailable' }, {}, {}, {}],
      });
      const lie = await runCli([...base, '--evm-rpc', `${faulty.url}/lying`]);
      expect(lie.code).toBe(1);
      expect(formatReport(await run([main.rpcUrl]))).toMatch(/VERIFIED: every applicable check passed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A loopback endpoint that answers as broken or hostile providers do, by path: `/429` (rate-limited, with
 * Retry-After and a JSON-RPC error body), `/410` (a retired route's JSON), `/500` (plain text), `/garbage` (an
 * HTML page), `/no-method` (JSON-RPC error -32601), `/not-rpc` (JSON that is no JSON-RPC response), and
 * `/lying`: `target` behind it with the data of `EAS.getAttestation` altered (the root it holds).
 */
async function startFaultyRpc(target: string): Promise<{ url: string; stop(): Promise<void> }> {
  const selector = new Interface(EAS_ABI).getFunction('getAttestation')?.selector ?? '';
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    switch (req.url) {
      case '/429':
        return json(
          429,
          { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'Too Many Requests' } },
          { 'retry-after': '60' },
        );
      case '/410':
        return json(410, { error: 'Gone', message: 'This endpoint has been disabled.' });
      case '/500':
        res.writeHead(500, { 'content-type': 'text/plain' });
        return res.end('Internal Server Error');
      case '/garbage':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html><body>Sign in to the Wi-Fi</body></html>');
      case '/no-method':
        return json(200, { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'method not found' } });
      case '/not-rpc':
        return json(200, { status: 'ok' });
      default: {
        const call = JSON.parse(body) as { method: string; params?: { data?: string }[] };
        const upstream = await fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const answer = (await upstream.json()) as { result: string };
        if (call.method === 'eth_call' && call.params?.[0]?.data?.startsWith(selector)) {
          // The last 32-byte word of the encoded tuple is the attestation's data: the anchored root.
          const at = answer.result.length - 10;
          const digit = answer.result[at] === '0' ? '1' : '0';
          answer.result = `${answer.result.slice(0, at)}${digit}${answer.result.slice(at + 1)}`;
        }
        return json(upstream.status, answer);
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

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
