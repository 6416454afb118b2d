import { createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { easAbi } from '@notary/server/adapters/chains/eas-abi';
import { StacksNotaryChain } from '@notary/server/adapters/chains/stacks';
import { hashFromHex, type MerkleProof, verifyMerkleProof } from '@notary/server/domain/anchoring/merkle';
import { sweepOrphanedObjects } from '@notary/server/domain/documents/orphans';
import type { DocumentDto } from '@notary/shared';
import { errorMessage } from '@notary/shared';
import { AbiCoder, Contract, Interface, JsonRpcProvider, Network } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Child, freePort, runCommand } from '../bench/lib';
import { seedPglite } from '../harness/db-templates';
import { api } from '../harness/http';
import { NODE, ROOT, startNpmStart } from '../harness/npm-start';
import { type ProductionStandIns, startProductionStandIns } from '../harness/production-shape';
import { radosgwAvailable } from '../harness/radosgw';
import { startTestService, storedKeys, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

/**
 * Chaos: the service SIGKILLed at random moments under concurrent uploaders, restarted each time, then held to
 * what docs/deployment.md ("What a crash can cost") promises. The moments come from a seeded generator whose seed
 * is printed: `CHAOS_SEED=<seed>` replays the same kill points (the same count of answered uploads before each
 * kill, the same delay after it, the same upload sizes). A kill lands wherever the uploads and the anchoring are
 * at that moment: in a body, between the object and its row, between a signed transaction and its broadcast.
 */

const ROUNDS = 3;
const UPLOADERS = 6;
const KiB = 1024;

/** A seeded generator of floats in [0, 1) (mulberry32): the same seed, the same kill points. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** An upload the service answered 201: what it said, and the hash of what was sent. */
interface Acked {
  doc: DocumentDto;
  sha256: string;
}

/** What the rounds did: uploads answered 201, uploads cut by a kill (their hashes), restart times. */
interface ChaosOutcome {
  acked: Acked[];
  cut: Set<string>;
  /** Other answers (a 503 while starting, say): never acknowledged, so never promised. */
  refused: number;
  /** Milliseconds from each start to its listening line. */
  startsMs: number[];
  /** The bearer token the uploaders used. */
  token: string;
}

/**
 * `ROUNDS` rounds of: start the service (`start`), run `UPLOADERS` uploaders against it, SIGKILL it once a seeded
 * count of uploads was answered 201 plus a seeded delay, wait for the uploaders to see it. Returns with the
 * service killed.
 */
async function chaosRounds(
  seed: number,
  start: () => Promise<{ child: Child; url: string }>,
  token: () => Promise<string>,
  maxUploadBytes: number,
): Promise<ChaosOutcome> {
  const random = seeded(seed);
  const outcome: ChaosOutcome = { acked: [], cut: new Set(), refused: 0, startsMs: [], token: '' };
  for (let round = 0; round < ROUNDS; round++) {
    const started = Date.now();
    const { child, url } = await start();
    outcome.startsMs.push(Date.now() - started);
    if (!outcome.token) outcome.token = await token();
    const bearer = outcome.token;
    const killAfter = 4 + Math.floor(random() * 24);
    const delayMs = Math.floor(random() * 300);
    const sizes = Array.from({ length: 400 }, () => KiB + Math.floor(random() * maxUploadBytes));
    let answered = 0;
    let killed = false;
    let next = 0;
    const kill = () => {
      if (killed) return;
      killed = true;
      child.process.kill('SIGKILL');
    };
    const uploader = async (n: number) => {
      while (!killed) {
        const bytes = randomBytes(sizes[next++ % sizes.length] ?? KiB);
        const hash = sha256(bytes);
        const form = new FormData();
        form.set('consent', 'true');
        form.set('file', new Blob([bytes]), `chaos-${round}-${n}.bin`);
        try {
          const res = await fetch(`${url}/api/documents/upload`, {
            method: 'POST',
            headers: { authorization: `Bearer ${bearer}` },
            body: form,
          });
          if (res.status !== 201) {
            outcome.refused++;
            await res.arrayBuffer().catch(() => undefined);
            continue;
          }
          outcome.acked.push({ doc: (await res.json()) as DocumentDto, sha256: hash });
          if (++answered === killAfter) setTimeout(kill, delayMs);
        } catch (e) {
          // The connection died with the process: the upload was cut (whatever its body had reached).
          if (!killed) throw new Error(`upload failed before the kill: ${errorMessage(e)}`);
          outcome.cut.add(hash);
        }
      }
    };
    await Promise.all(Array.from({ length: UPLOADERS }, (_, n) => uploader(n)));
    expect(await child.exited).toBe('SIGKILL');
    console.info(
      `round ${round + 1}: killed ${delayMs} ms after its ${killAfter} answered uploads; ` +
        `${outcome.acked.length} answered, ${outcome.cut.size} cut so far`,
    );
  }
  return outcome;
}

/**
 * `poll` until it returns true; throws after `timeoutMs` (a deadline for a broken pipeline, not a pause), with
 * what `explain` then says is still open. Prints how long it took.
 */
async function until(
  what: string,
  timeoutMs: number,
  poll: () => Promise<boolean>,
  explain: () => Promise<string> = async () => '',
): Promise<void> {
  const started = Date.now();
  while (!(await poll())) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`${what}: not within ${timeoutMs} ms; still open: ${await explain()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  console.info(`${what}: ${Date.now() - started} ms`);
}

/** The seed of this run: `CHAOS_SEED` to replay one, else a fresh one; printed either way. */
function chaosSeed(label: string): number {
  const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : randomInt(2 ** 31);
  console.info(`[chaos ${label}] seed ${seed} (CHAOS_SEED=${seed} replays its kill points)`);
  return seed;
}

/**
 * PostgreSQL, radosgw and external chains (a Hardhat node with the EAS contracts, the Clarity-VM Stacks devnet):
 * everything a kill cannot take with it. A second instance in this process (no anchoring) mints the token and
 * reads the database and the bucket afterwards.
 */
describe.skipIf(!radosgwAvailable())(
  'SIGKILL under concurrent uploads: PostgreSQL, S3, external chains',
  () => {
    let standIns: ProductionStandIns;
    let reader: TestService;
    let victim: Child | undefined;
    let dataDir: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      standIns = await startProductionStandIns();
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-chaos-'));
      env = {
        ...standIns.env,
        // The sources under tsx, as the crash test runs them; production-only checks are not what is tried here.
        NODE_ENV: 'test',
        RATE_LIMITS: 'off',
        ANCHOR_BATCH_SECONDS: '1',
        // A transaction a killed start had in hand is taken up by the next once its lease runs out: the
        // shortest lease allowed, so that the last start's wait is the anchoring, not the lease (2 minutes).
        ANCHOR_LEASE_SECONDS: '10',
        EVM_CONFIRMATIONS: '1',
        STACKS_CONFIRMATIONS: '1',
      };
      // Creates the schema and the bucket before the first victim starts.
      reader = await startTestService('postgresql', { ...env, ANCHORING: 'off' });
    }, 240_000);

    afterAll(async () => {
      await victim?.stop();
      await reader?.close();
      await standIns?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('every 201 is recorded intact with a unique serial and anchored once on each chain; a cut upload leaves nothing', async () => {
      const seed = chaosSeed('postgresql');
      const { evm, stacks } = standIns.chains;
      const provider = new JsonRpcProvider(evm.rpcUrl, Network.from(evm.chainId), { staticNetwork: true });
      const stacksChain = new StacksNotaryChain({
        apiUrl: stacks.url,
        privateKey: stacks.senderKey,
        contractId: stacks.contractId,
        network: 'devnet',
        explorerTxPrefix: '',
      });
      try {
        const firstBlock = (await provider.getBlockNumber()) + 1;
        const stacksNonceBefore = await stacksChain.chainNonce();
        const port = await freePort();
        const start = async () => {
          victim = startNpmStart(dataDir, port, env);
          await victim.waitForLine(/\[notary\] listening on/, 120_000);
          return { child: victim, url: `http://127.0.0.1:${port}` };
        };
        const email = freshEmail('chaos');
        const run = await chaosRounds(seed, start, () => reader.token(email), 512 * KiB);
        console.info(
          `[chaos postgresql] ${run.acked.length} answered 201, ${run.cut.size} cut, ${run.refused} refused; ` +
            `starts ${run.startsMs.join(', ')} ms`,
        );
        expect(run.acked.length).toBeGreaterThanOrEqual(ROUNDS * 4);

        // Restarted once more, the service anchors what the kills left pending; every record ends registered.
        await start();
        const em = () => reader.service.deps.db.fork().getConnection();
        await until(
          'every document registered on both chains',
          150_000,
          async () => {
            const [row] = await em().execute(
              `select count(*) filter (where onchain_status <> 'registered' or stacks_status <> 'registered') as open
             from document`,
            );
            return Number((row as { open: string | number }).open) === 0;
          },
          async () =>
            JSON.stringify({
              documents: await em().execute(
                `select onchain_status, stacks_status, count(*) as n from document group by 1, 2`,
              ),
              transactions: await em().execute(
                `select chain, state, attempts, next_attempt_at, last_error from anchor_tx
                where state <> 'confirmed' order by chain, next_attempt_at`,
              ),
            }),
        );
        await victim?.stop();

        await expectRecordsIntact(reader, run);
        await expectAnchoredOnce(
          reader,
          provider,
          firstBlock,
          evm.easAddress,
          stacksChain,
          stacksNonceBefore,
        );
      } finally {
        provider.destroy();
      }
    }, 420_000);
  },
);

/**
 * Every 201 is a row with its serial and hash whose stored bytes hash to it; serials are unique; a row nobody got
 * a 201 for is one of the cut uploads, complete (its commit beat the kill, its answer did not). What the kills
 * left in the bucket without a row (bytes stored before the row, parts of a multipart upload) goes with the sweep.
 */
async function expectRecordsIntact(reader: TestService, run: ChaosOutcome): Promise<void> {
  const rows: { id: string; serial_number: string; sha256_hash: string; storage_key: string }[] =
    await reader.service.deps.db
      .fork()
      .getConnection()
      .execute('select id, serial_number, sha256_hash, storage_key from document');
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const { doc, sha256: hash } of run.acked) {
    const row = byId.get(doc.id);
    expect(row, `answered 201 but not recorded: ${doc.serialNumber}`).toBeDefined();
    expect(row?.serial_number).toBe(doc.serialNumber);
    expect(row?.sha256_hash).toBe(hash);
  }
  expect(new Set(rows.map((r) => r.serial_number)).size).toBe(rows.length);
  const acked = new Set(run.acked.map((a) => a.doc.id));
  const unanswered = rows.filter((r) => !acked.has(r.id));
  for (const r of unanswered) expect(run.cut.has(r.sha256_hash), `a record nobody sent: ${r.id}`).toBe(true);
  console.info(`${unanswered.length} of ${run.cut.size} cut uploads committed before the kill`);
  const storage = reader.service.deps.storage;
  for (const r of rows) {
    const chunks: Buffer[] = [];
    for await (const chunk of await storage.get(r.storage_key)) chunks.push(chunk as Buffer);
    expect(sha256(Buffer.concat(chunks)), `stored bytes of ${r.serial_number}`).toBe(r.sha256_hash);
  }
  const report = await sweepOrphanedObjects(reader.service.deps.db.fork(), storage, {
    incompleteMaxAgeMs: 0,
    now: new Date(Date.now() + 24 * 3600_000),
  });
  console.info(
    `sweep: ${report.removed.length} orphaned objects, ${report.incompleteUploads} incomplete uploads`,
  );
  const keys = new Set(rows.map((r) => r.storage_key));
  const left = (await storedKeys(reader)).filter((k) => !keys.has(k) && !k.startsWith('.'));
  expect(left).toEqual([]);
}

/**
 * Counted on the chains: one EAS attestation per batch and none else since `firstBlock` (each root attested once),
 * one Stacks transaction of the sender per batch (its nonce moved by the count of batches) with the root on record;
 * each document in exactly one batch, its proof leading to the attested root, its attestation that batch's.
 */
async function expectAnchoredOnce(
  reader: TestService,
  provider: JsonRpcProvider,
  firstBlock: number,
  easAddress: string,
  stacks: StacksNotaryChain,
  stacksNonceBefore: bigint,
): Promise<void> {
  const db = reader.service.deps.db.fork().getConnection();
  const anchors: {
    document_id: string;
    root: string;
    proof: MerkleProof;
    sha256_hash: string;
    onchain_attestation_uid: string;
    stacks_tx_id: string | null;
  }[] = await db.execute(
    `select a.document_id, b.root, a.proof, d.sha256_hash, d.onchain_attestation_uid, d.stacks_tx_id
       from document d join document_anchor a on a.document_id = d.id join anchor_batch b on b.id = a.batch_id`,
  );
  const [{ n: documents }] = (await db.execute('select count(*)::int as n from document')) as [{ n: number }];
  expect(anchors).toHaveLength(documents);
  expect(new Set(anchors.map((a) => a.document_id)).size).toBe(documents);
  const roots = new Set(anchors.map((a) => a.root));

  const eas = new Interface(easAbi());
  const logs = await provider.getLogs({
    address: easAddress,
    topics: [eas.getEvent('Attested')?.topicHash ?? ''],
    fromBlock: firstBlock,
  });
  const contract = new Contract(easAddress, easAbi(), provider);
  const attested = new Map<string, string>();
  for (const log of logs) {
    const uid = String(eas.parseLog(log)?.args.getValue('uid'));
    const att = (await contract.getFunction('getAttestation').staticCall(uid)) as { data: string };
    const [root] = AbiCoder.defaultAbiCoder().decode(['bytes32'], att.data);
    attested.set(uid, String(root).replace(/^0x/, ''));
  }
  const attestedRoots = [...attested.values()];
  expect(new Set(attestedRoots).size, 'a root attested twice').toBe(attestedRoots.length);
  expect(new Set(attestedRoots)).toEqual(roots);
  for (const a of anchors) {
    expect(verifyMerkleProof(hashFromHex(a.sha256_hash), a.proof, hashFromHex(a.root))).toBe(true);
    expect(attested.get(a.onchain_attestation_uid)).toBe(a.root);
    expect(a.stacks_tx_id).toMatch(/^[0-9a-f]{64}$/);
  }
  expect(await stacks.chainNonce()).toBe(stacksNonceBefore + BigInt(roots.size));
  for (const root of roots) expect(await stacks.readAnchor(root), `root ${root} on Stacks`).toBeDefined();
  console.info(`${documents} documents in ${roots.size} batches, one anchor each per chain`);
}

/**
 * The embedded default: PGlite and files under `DATA_DIR`, the in-process devnets. The records and their bytes
 * are promised as above; the devnets are fresh chains at every start, so what the last start anchored is what
 * can be counted (docs/deployment.md, "What a crash can cost").
 */
describe('SIGKILL under concurrent uploads: the embedded default', () => {
  let victim: Child | undefined;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-chaos-embedded-'));
    // The kills are the point, not initdb: the first start opens a migrated copy (db-templates.ts).
    await seedPglite(dataDir);
  });
  afterAll(async () => {
    await victim?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('every 201 is recorded intact with a unique serial and registered on both devnets of the last start', async () => {
    const seed = chaosSeed('embedded');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The devnets are new chains at every start, so nothing anchored before a kill outlives it: the kills fall
    // on uploads only (and the starts skip the devnets' minute under load); the last start anchors everything.
    const start = async (anchoring: 'off' | 'devnet' = 'off') => {
      victim = startNpmStart(dataDir, port, {
        NODE_ENV: 'test',
        RATE_LIMITS: 'off',
        ANCHORING: anchoring,
        ANCHOR_BATCH_SECONDS: '1',
      });
      await victim.waitForLine(/\[notary\] listening on/, 240_000);
      return { child: victim, url };
    };
    // The operator CLI, through the running service's admin socket (PGlite has one process).
    const cli = (...args: string[]) =>
      runCommand(NODE, ['--import', 'tsx', 'server/src/cli/main.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, NODE_ENV: undefined, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        timeoutMs: 120_000,
      });
    const email = freshEmail('chaos-embedded');
    const token = async () => {
      expect((await cli('user:create', '--email', email)).code).toBe(0);
      return (await cli('token', '--email', email)).stdout.trim();
    };
    const run = await chaosRounds(seed, () => start(), token, 256 * KiB);
    console.info(
      `[chaos embedded] ${run.acked.length} answered 201, ${run.cut.size} cut, ${run.refused} refused; ` +
        `starts ${run.startsMs.join(', ')} ms`,
    );
    expect(run.acked.length).toBeGreaterThanOrEqual(ROUNDS * 4);
    await start('devnet');
    const bearer = run.token;
    const seen = new Map<string, DocumentDto>();
    await until('every document registered on both devnets', 150_000, async () => {
      const listed = await listAll(url, bearer);
      for (const d of listed) seen.set(d.id, d);
      return listed.every((d) => d.onchainStatus === 'registered' && d.stacksStatus === 'registered');
    });
    for (const { doc, sha256: hash } of run.acked) {
      const got = seen.get(doc.id);
      expect(got, `answered 201 but not recorded: ${doc.serialNumber}`).toBeDefined();
      expect(got?.serialNumber).toBe(doc.serialNumber);
      expect(got?.sha256Hash).toBe(hash);
      const link = await api<{ downloadUrl: string }>(url, `/api/documents/${doc.id}/download`, {
        token: bearer,
      });
      const bytes = new Uint8Array(await (await fetch(link.body.downloadUrl)).arrayBuffer());
      expect(sha256(bytes), `stored bytes of ${doc.serialNumber}`).toBe(hash);
    }
    const all = [...seen.values()];
    expect(new Set(all.map((d) => d.serialNumber)).size).toBe(all.length);
    const acked = new Set(run.acked.map((a) => a.doc.id));
    for (const d of all.filter((x) => !acked.has(x.id))) expect(run.cut.has(d.sha256Hash)).toBe(true);
    // Anchored once per batch on each devnet of the last start: the documents sharing an attestation share one
    // Stacks transaction, and the other way round.
    const pairs = new Set(all.map((d) => `${d.onchainAttestationUid} ${d.stacksTxId}`));
    expect(new Set(all.map((d) => d.onchainAttestationUid)).size).toBe(pairs.size);
    expect(new Set(all.map((d) => d.stacksTxId)).size).toBe(pairs.size);
    console.info(`[chaos embedded] ${all.length} documents in ${pairs.size} batches`);
    await victim?.stop();
  }, 600_000);
});

/** Every document of the caller's tenant (`GET /api/documents`, page after page). */
async function listAll(url: string, token: string): Promise<DocumentDto[]> {
  const all: DocumentDto[] = [];
  let cursor: string | null = null;
  do {
    const res: { body: { documents: DocumentDto[]; nextCursor?: string | null } } = await api(
      url,
      `/api/documents?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token },
    );
    all.push(...res.body.documents);
    cursor = res.body.nextCursor ?? null;
  } while (cursor);
  return all;
}
