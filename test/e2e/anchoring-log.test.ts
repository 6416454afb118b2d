import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { parseVerifierKey, verifyCheckpoint } from '@notary/trust/signed-note';
import type { ServedAnchored } from '@notary/verify/anchored-checkpoint';
import { runCli } from '@notary/verify/cli';
import { parseReceipt, type Receipt } from '@notary/verify/receipt';
import { servedConsistency } from '@notary/verify/transparency-log';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBytes, waitRegistered } from '../harness/anchored';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

/**
 * The transparency log's checkpoint anchored on both devnets (Hardhat with the EAS contracts, the Stacks node): each
 * batch's tree ends with the checkpoint the log had signed at the cut, so the root each chain holds commits to the
 * log. Two batches anchored one after the other give two anchored checkpoints that the log's tiles prove consistent;
 * a receipt verifies offline with its anchored checkpoint (checks 1 to 4 through the devnets' endpoints) and online
 * finds the newest anchored checkpoint consistent with it. Then the log is rewritten below the first anchored
 * checkpoint (a leaf changed, the tree rebuilt): the next batch anchors a checkpoint that cannot be consistent with
 * the first one, and `notary-verify --online` says so on the first receipt.
 */

describe('the log checkpoint anchored with every batch, on the devnets', () => {
  let t: TestService;
  let token: string;
  let vkey: string;
  let evmRpc: string;
  let stacksApi: string;
  const files = new Map<string, Uint8Array>();

  beforeAll(async () => {
    t = await startTestService('postgresql', { ANCHORING: 'devnet' });
    token = await t.token('anchored-log@example.com');
    vkey = t.service.deps.transparencyLog.identity.verifierKey;
    const devnets = t.service.anchoring?.devnets;
    if (!devnets) throw new Error('no devnets');
    evmRpc = devnets.evm.rpcUrl;
    stacksApi = devnets.stacks.url;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  /** Uploads a random file and waits until it is registered on both chains; returns its receipt. */
  const notarize = async (name: string): Promise<Receipt> => {
    const bytes = randomBytes(500);
    const doc = await uploadBytes(t, token, bytes, name);
    files.set(doc.id, bytes);
    await waitRegistered(t, token, doc.id);
    const res = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
    expect(res.status).toBe(200);
    return parseReceipt(res.body);
  };

  /** The newest anchored checkpoint the log serves (`/log/anchored`), or undefined while there is none. */
  const servedAnchored = async (): Promise<ServedAnchored | undefined> => {
    const res = await fetch(`${t.url}/log/anchored`);
    return res.status === 200 ? ((await res.json()) as ServedAnchored) : undefined;
  };
  const servedSize = async () => {
    const served = await servedAnchored();
    return served ? Number(served.checkpoint.split('\n')[1]) : 0;
  };

  /** `notary-verify <file> --receipt ... --log-key ... --evm-rpc ... --stacks-api ... [extra] --json`. */
  const verifyCli = async (receipt: Receipt, extra: string[] = []) => {
    const file = path.join(t.dataDir, `${receipt.document.id}.bin`);
    const receiptFile = path.join(t.dataDir, `${receipt.document.id}.receipt.json`);
    await writeFile(file, files.get(receipt.document.id) ?? new Uint8Array(0));
    await writeFile(receiptFile, JSON.stringify(receipt));
    const args = [file, '--receipt', receiptFile, '--log-key', vkey, '--evm-rpc', evmRpc];
    // The service is on loopback: the caller's fetch stands for `--allow-private`.
    const run = await runCli([...args, '--stacks-api', stacksApi, ...extra], { fetch });
    return run;
  };

  const receipts: Receipt[] = [];

  it('anchors the checkpoint with the first batch; the receipt verifies offline with it', async () => {
    const receipt = await notarize('first.bin');
    receipts.push(receipt);
    expect(receipt.version).toBe(4);
    const anchored = receipt.transparencyLog?.anchored;
    if (!anchored || !receipt.merkle) throw new Error(`no anchored checkpoint: ${JSON.stringify(receipt)}`);
    expect(anchored).toMatchObject({
      batchRoot: receipt.merkle.root,
      leafIndex: receipt.merkle.leafCount - 1,
    });
    const run = await verifyCli(receipt, ['--json']);
    const report = JSON.parse(run.stdout) as {
      exitCode: number;
      checks: { status: string }[];
      transparencyLog: { status: string; anchored: { status: string; anchoredOn: string[]; size: number } };
    };
    expect(report.checks.slice(0, 4).map((c) => c.status)).toEqual(['passed', 'passed', 'passed', 'passed']);
    expect(run.code, run.stdout).toBe(0);
    expect(report.transparencyLog).toMatchObject({
      status: 'passed',
      anchored: { status: 'passed', anchoredOn: ['evm', 'stacks'] },
    });
    const text = await verifyCli(receipt);
    expect(text.stdout).toMatch(
      /anchored checkpoint: \d+ leaves, the last leaf of batch root [0-9a-f]{64}, anchored on evm, stacks/,
    );
    // A checkpoint the log key did not sign in the receipt's place fails the verification.
    const forged = structuredClone(receipt);
    if (forged.transparencyLog?.anchored) {
      forged.transparencyLog.anchored.checkpoint = forged.transparencyLog.anchored.checkpoint.replace(
        /\n\d+\n/,
        '\n999\n',
      );
    }
    const failed = await verifyCli(forged, ['--json']);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ transparencyLog: { anchored: { status: 'failed' } } });
  });

  it('anchors a second checkpoint with the next batch, consistent with the first', async () => {
    const receipt = await notarize('second.bin');
    receipts.push(receipt);
    const [first, second] = receipts.map((r) => r.transparencyLog?.anchored);
    if (!first || !second) throw new Error('no anchored checkpoints');
    expect(second.batchRoot).not.toBe(first.batchRoot);
    const key = parseVerifierKey(vkey);
    const older = await verifyCheckpoint(first.checkpoint, key);
    const newer = await verifyCheckpoint(second.checkpoint, key);
    expect(newer.size).toBeGreaterThan(older.size);
    expect(await servedConsistency(fetch, `${t.url}/log`, older, newer)).toBe(true);
    // Online, the newest checkpoint anchored (once its batch is confirmed on both chains) extends the first one.
    await expect.poll(servedSize, { timeout: 30_000 }).toBe(newer.size);
    const run = await verifyCli(receipts[0] as Receipt, ['--online', '--json']);
    expect(run.code, run.stdout).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      transparencyLog: {
        anchored: { status: 'passed', online: { status: 'consistent', servedSize: newer.size } },
      },
    });
  });

  it('a log rewritten below the first anchored checkpoint anchors one that cannot be consistent with it', async () => {
    const sql = t.service.deps.db.fork() as SqlEntityManager;
    const before = await servedSize();
    // The operator changes the first leaf and rebuilds the tree from the entries (as a restore of an edited dump).
    await sql.execute('update log_entry set entry = ? where leaf_index = 0', [Buffer.from('forged entry')]);
    await sql.execute('delete from log_tile');
    await sql.execute('update log_entry set leaf_index = null where leaf_index >= 0');
    await sql.execute('delete from log_checkpoint');
    await t.service.deps.transparencyLog.integrate();
    const third = await notarize('third.bin');
    const anchored = third.transparencyLog?.anchored;
    if (!anchored) throw new Error('no anchored checkpoint');
    const newer = await verifyCheckpoint(anchored.checkpoint, parseVerifierKey(vkey));
    await expect.poll(servedSize, { timeout: 30_000 }).toBe(newer.size);
    expect(newer.size).toBeGreaterThan(before);
    const older = await verifyCheckpoint(
      receipts[0]?.transparencyLog?.anchored?.checkpoint ?? '',
      parseVerifierKey(vkey),
    );
    expect(await servedConsistency(fetch, `${t.url}/log`, older, newer)).toBe(false);
    // Offline the first receipt still verifies: its checkpoints are the evidence of what the log said then.
    expect((await verifyCli(receipts[0] as Receipt)).code).toBe(0);
    const run = await verifyCli(receipts[0] as Receipt, ['--online', '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      transparencyLog: {
        status: 'failed',
        anchored: {
          online: {
            status: 'fork',
            servedSize: newer.size,
            evidence: { receipt: receipts[0]?.transparencyLog?.anchored?.checkpoint },
          },
        },
      },
    });
    const text = await verifyCli(receipts[0] as Receipt, ['--online']);
    expect(text.stdout).toContain('FORK: the newest checkpoint the log at');
    expect(text.stdout).toContain('something anchored before was changed or removed');
  });
});
