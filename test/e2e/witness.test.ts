import { createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { LOG_KEY_FILE, LOG_NAME_FILE } from '@notary/server/adapters/log-key/file';
import { originHash } from '@notary/server/domain/log/witness';
import {
  COSIGNATURE_V1_TYPE,
  formatAddCheckpoint,
  parseCosignerKey,
  verifyCosignatures,
} from '@notary/trust/cosignature';
import {
  ed25519KeyId,
  ed25519VerifierKey,
  formatCheckpoint,
  formatSignedNote,
  parseCheckpoint,
  parseSignedNote,
} from '@notary/trust/signed-note';
import { runCli } from '@notary/verify/cli';
import { parseReceipt, type Receipt } from '@notary/verify/receipt';
import { checkLogProof } from '@notary/verify/transparency-log';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { createTestDatabase } from '../harness/postgres';
import { startTestService, type TestService } from '../harness/service';

/**
 * Two services on loopback, each a witness of the other's transparency log (C2SP tlog-witness): checkpoints get
 * cosigned both ways and receipts carry the cosignatures, which `notary-verify --witness` checks; with its witness
 * down a log goes on notarizing and its checkpoint waits for the quorum, cosigned once the witness is back; the
 * witness refuses what it must (unknown log, bad signature, wrong old size, bad proof) and a log whose database was
 * rolled back and grown again cannot get its next checkpoint cosigned.
 */

/** An Ed25519 key pair and its public key bytes. */
function ed25519(): { privateKey: KeyObject; publicKey: Uint8Array; pem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x ?? '';
  return {
    privateKey,
    publicKey: new Uint8Array(Buffer.from(x, 'base64url')),
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** A port free now (the service binds it a moment later; loopback, nobody else asks for it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One instance's identity, made before it starts so that the other can be configured with it. */
interface Instance {
  dir: string;
  port: number;
  logKey: string;
  /** Signs a checkpoint text as the log (what someone holding the log's key could do). */
  signAsLog(text: string): string;
  witnessKey: string;
  env: Record<string, string>;
}

async function instance(name: string): Promise<Instance> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `notary-witness-${name}-`));
  const log = ed25519();
  await writeFile(path.join(dir, LOG_KEY_FILE), log.pem, { mode: 0o600 });
  await writeFile(path.join(dir, LOG_NAME_FILE), `${name}.test/log\n`);
  const witness = ed25519();
  const witnessKeyFile = path.join(dir, 'witness.pem');
  await writeFile(witnessKeyFile, witness.pem, { mode: 0o600 });
  return {
    dir,
    port: await freePort(),
    logKey: ed25519VerifierKey(`${name}.test/log`, log.publicKey),
    signAsLog: (text) =>
      formatSignedNote({
        text,
        signatures: [
          {
            name: `${name}.test/log`,
            id: ed25519KeyId(`${name}.test/log`, log.publicKey),
            signature: new Uint8Array(sign(null, Buffer.from(text), log.privateKey)),
          },
        ],
      }),
    witnessKey: ed25519VerifierKey(`${name}.test/witness`, witness.publicKey, COSIGNATURE_V1_TYPE),
    env: { WITNESS_KEY_FILE: witnessKeyFile, WITNESS_NAME: `${name}.test/witness` },
  };
}

/** The environment of `self`, witnessed by `other` and witnessing `other`'s log. */
function envOf(self: Instance, other: Instance): Record<string, string> {
  return {
    ...self.env,
    DATA_DIR: self.dir,
    PORT: String(self.port),
    WITNESS_LOGS: other.logKey,
    LOG_WITNESSES: `http://127.0.0.1:${other.port}/witness ${other.witnessKey}`,
    LOG_WITNESS_QUORUM: '1',
    LOG_WITNESS_RETRY_SECONDS: '1',
  };
}

async function upload(t: TestService, token: string, text: string): Promise<{ id: string }> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([text]), 'note.txt');
  const res = await fetch(`${t.url}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

const checkpointOf = async (t: TestService): Promise<string> =>
  (await fetch(`${t.url}/log/checkpoint`)).text();
const sizeOf = (note: string): number => parseCheckpoint(parseSignedNote(note).text).size;

/** The checkpoint `t` serves: its size and the witnesses of `keys` whose cosignature verifies. */
async function cosigners(t: TestService, keys: string[]): Promise<{ size: number; by: string[] }> {
  const note = await checkpointOf(t);
  const verified = await verifyCosignatures(note, keys.map(parseCosignerKey));
  return { size: sizeOf(note), by: verified.map((v) => v.name) };
}

describe('witnesses of the transparency log', () => {
  let a: Instance;
  let b: Instance;
  let ta: TestService | undefined;
  let tb: TestService | undefined;
  let tokenA: string;
  let tokenB: string;
  let databaseA: Awaited<ReturnType<typeof createTestDatabase>>;
  const live = (t: TestService | undefined): TestService => {
    if (!t) throw new Error('the instance is not running');
    return t;
  };

  beforeAll(async () => {
    a = await instance('a');
    b = await instance('b');
    // B first, its witness A still down: B's checkpoints wait until A starts.
    tb = await startTestService('pglite', envOf(b, a));
    // A on PostgreSQL, a database this test keeps across A's restart.
    databaseA = await createTestDatabase();
    a.env.DATABASE_URL = databaseA.url;
    ta = await startTestService('postgresql', envOf(a, b));
    tokenA = await ta.token('witness-a@example.com');
    tokenB = await tb.token('witness-b@example.com');
  });
  afterAll(async () => {
    await ta?.close();
    await tb?.close();
    await databaseA?.drop();
    await rm(a.dir, { recursive: true, force: true });
    await rm(b.dir, { recursive: true, force: true });
  });

  it('gets each log cosigned by the other instance, and receipts carry the cosignature', async () => {
    const doc = await upload(live(ta), tokenA, `a ${Date.now()}`);
    await upload(live(tb), tokenB, `b ${Date.now()}`);
    await expect
      .poll(() => cosigners(live(ta), [b.witnessKey]), { timeout: 30_000 })
      .toEqual({
        size: 1,
        by: ['b.test/witness'],
      });
    await expect
      .poll(() => cosigners(live(tb), [a.witnessKey]), { timeout: 30_000 })
      .toEqual({
        size: 1,
        by: ['a.test/witness'],
      });
    // A's own signature is still there, and only B's cosignature was added.
    const note = await checkpointOf(live(ta));
    expect(parseSignedNote(note).signatures.map((s) => s.name)).toEqual(['a.test/log', 'b.test/witness']);
    // B serves what it cosigned for A to monitors (C2SP tlog-witness, Monitor Retrieval).
    const served = await fetch(`${live(tb).url}/witness/${originHash('a.test/log')}/checkpoint`);
    expect([served.status, await served.text()]).toEqual([200, note]);

    const res = await api<Receipt>(live(ta).url, `/api/documents/${doc.id}/receipt`, { token: tokenA });
    const receipt = parseReceipt(res.body);
    expect(receipt.transparencyLog?.checkpoint).toBe(note);
    expect(await checkLogProof(receipt, [a.logKey], { keys: [b.witnessKey] })).toMatchObject({
      problems: [],
      status: 'passed',
      witnesses: { cosignedBy: ['b.test/witness'], quorum: 1 },
    });
    // Another witness key (A's own): the quorum of one is not met.
    expect(await checkLogProof(receipt, [a.logKey], { keys: [a.witnessKey] })).toMatchObject({
      status: 'failed',
      witnesses: { cosignedBy: [], quorum: 1 },
    });

    // The command line: the same receipt passes its log check with B's key and fails with another.
    const receiptFile = path.join(a.dir, 'receipt.json');
    const file = path.join(a.dir, 'note.txt');
    await writeFile(receiptFile, JSON.stringify(res.body));
    await writeFile(file, 'not the document');
    const cli = async (witness: string) => {
      const run = await runCli([
        file,
        '--receipt',
        receiptFile,
        '--log-key',
        a.logKey,
        '--witness',
        witness,
        '--json',
      ]);
      return (JSON.parse(run.stdout) as { transparencyLog?: { status: string } }).transparencyLog?.status;
    };
    expect(await cli(b.witnessKey)).toBe('passed');
    expect(await cli(a.witnessKey)).toBe('failed');
  });

  it('refuses unknown logs, bad signatures, a wrong old size and a bad proof', async () => {
    const witnessUrl = `${live(tb).url}/witness/add-checkpoint`;
    const post = async (body: string) => {
      const res = await fetch(witnessUrl, { method: 'POST', body });
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };
    const head = await live(ta).service.deps.transparencyLog.checkpoint();
    if (!head) throw new Error('no checkpoint');
    const { note, size } = head;
    // Another log, correctly signed by its own key: unknown to B.
    const stranger = ed25519();
    const text = formatCheckpoint({
      origin: 'c.test/log',
      size: 1,
      root: new Uint8Array(32),
      extensions: [],
    });
    const strangerNote = formatSignedNote({
      text,
      signatures: [
        {
          name: 'c.test/log',
          id: ed25519KeyId('c.test/log', stranger.publicKey),
          signature: new Uint8Array(sign(null, Buffer.from(text), stranger.privateKey)),
        },
      ],
    });
    expect((await post(formatAddCheckpoint({ oldSize: 0, proof: [], note: strangerNote }))).status).toBe(404);
    // A's checkpoint with its signature altered.
    const sig = parseSignedNote(note).signatures[0];
    if (!sig) throw new Error('no signature');
    const bad = sig.signature.slice();
    bad[0] = (bad[0] ?? 0) ^ 1;
    const forged = formatSignedNote({
      text: parseSignedNote(note).text,
      signatures: [{ ...sig, signature: bad }],
    });
    expect((await post(formatAddCheckpoint({ oldSize: size, proof: [], note: forged }))).status).toBe(403);
    // B holds A at `size`: any other old size is answered with it.
    expect(await post(formatAddCheckpoint({ oldSize: 0, proof: [], note }))).toEqual({
      status: 409,
      type: 'text/x.tlog.size',
      body: `${size}\n`,
    });
    expect((await post(formatAddCheckpoint({ oldSize: size + 1, proof: [], note }))).status).toBe(400);
    expect((await post('old 1\nnot a hash\n\n')).status).toBe(400);
    // Checkpoints signed with A's key that are not A's tree (the key holder forking the log): another root of
    // the same size, a larger tree with a made-up proof. Refused, and B still holds A at `size`.
    const other = (n: number) =>
      a.signAsLog(
        formatCheckpoint({ origin: 'a.test/log', size: n, root: new Uint8Array(32).fill(5), extensions: [] }),
      );
    expect((await post(formatAddCheckpoint({ oldSize: size, proof: [], note: other(size) }))).status).toBe(
      422,
    );
    const madeUp = [new Uint8Array(32).fill(9), new Uint8Array(32).fill(8)];
    expect(
      (await post(formatAddCheckpoint({ oldSize: size, proof: madeUp, note: other(size + 4) }))).status,
    ).toBe(422);
    expect((await post(formatAddCheckpoint({ oldSize: 0, proof: [], note }))).body).toBe(`${size}\n`);
    // The same checkpoint again is cosigned again (same size, same root).
    const again = await post(formatAddCheckpoint({ oldSize: size, proof: [], note }));
    expect(again.status).toBe(200);
    expect(await verifyCosignatures(note + again.body, [parseCosignerKey(b.witnessKey)])).toHaveLength(1);
  });

  it('keeps notarizing with its witness down; the checkpoint waits for the quorum and is cosigned on its return', async () => {
    await live(ta).close();
    ta = undefined;
    await upload(live(tb), tokenB, `b while a is down ${Date.now()}`);
    await expect.poll(async () => sizeOf(await checkpointOf(live(tb))), { timeout: 20_000 }).toBe(2);
    const waiting = await live(tb).service.deps.logWitnessing?.cosignLatest();
    expect(waiting).toEqual({ size: 2, cosignedBy: [], final: false });
    expect(await cosigners(live(tb), [a.witnessKey])).toEqual({ size: 2, by: [] });
    // A back on the same port and database.
    ta = await startTestService('postgresql', envOf(a, b));
    await expect
      .poll(() => cosigners(live(tb), [a.witnessKey]), { timeout: 30_000 })
      .toEqual({
        size: 2,
        by: ['a.test/witness'],
      });
  });

  it('refuses to cosign once the log was rolled back and grown again (the consistency proof fails)', async () => {
    const t = live(tb);
    const head = await t.service.deps.transparencyLog.checkpoint();
    expect(head?.size).toBe(2);
    // Someone holding B's database removes its last leaf and what followed, then the log goes on.
    const sql = t.service.deps.db.fork() as SqlEntityManager;
    await sql.execute('delete from log_entry where leaf_index >= 1');
    await sql.execute('delete from log_checkpoint where size >= 2');
    await sql.execute(
      'update log_tile set hashes = substring(hashes from 1 for 32) where level = 0 and idx = 0',
    );
    await upload(t, tokenB, `b after the rollback ${Date.now()}`);
    await upload(t, tokenB, `b after the rollback, again ${Date.now()}`);
    await expect.poll(async () => sizeOf(await checkpointOf(t)), { timeout: 20_000 }).toBe(3);
    const state = await t.service.deps.logWitnessing?.cosignLatest();
    expect(state).toEqual({ size: 3, cosignedBy: [], final: false });
    expect(await cosigners(t, [a.witnessKey])).toEqual({ size: 3, by: [] });
    // A still holds B's log at 2, as it cosigned it.
    const kept = await fetch(`${live(ta).url}/witness/${originHash('b.test/log')}/checkpoint`);
    const keptNote = await kept.text();
    expect(sizeOf(keptNote)).toBe(2);
    expect(parseCheckpoint(parseSignedNote(keptNote).text).root).toEqual(head?.root);
  });
});
