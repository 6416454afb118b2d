import { createPrivateKey, sign } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { LOG_KEY_FILE } from '@notary/server/adapters/log-key/file';
import { TileSet } from '@notary/server/domain/log/tiles';
import {
  ed25519KeyId,
  formatCheckpoint,
  formatSignedNote,
  parseVerifierKey,
} from '@notary/trust/signed-note';
import { entryBundle, parseTilePath, TILE_WIDTH, tileWidth, treeRoot } from '@notary/trust/tlog';
import { runCli } from '@notary/verify/cli';
import { runMonitorCli } from '@notary/verify/monitor-cli';
import { parseReceipt, type Receipt } from '@notary/verify/receipt';
import { checkLogProof } from '@notary/verify/transparency-log';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

/**
 * The transparency log through the running service: a few dozen notarizations, then every receipt (version 3)
 * proves its leaf offline against the log key, `notary-verify monitor` follows the served checkpoint and tiles and
 * lists a tenant's entries; tampering with the database (a leaf changed, a rollback) is reported by the monitor while
 * the receipts already issued still verify; a split view (one checkpoint served here, another of the same size,
 * also signed by the log key, served elsewhere) is reported as a fork with both signed checkpoints. Online,
 * `notary-verify --online` finds the log consistent with a receipt, and reports the rolled-back log as a fork.
 */

const DOCS = 24;

async function upload(
  t: TestService,
  token: string,
  text: string,
): Promise<{ id: string; serialNumber: string }> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([text]), 'note.txt');
  const res = await fetch(`${t.url}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; serialNumber: string };
}

/** A loopback server answering the tlog-tiles paths below `/log` from `resources`. */
async function staticLog(
  resources: Map<string, Uint8Array | string>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = resources.get((req.url ?? '').replace(/^\/log\//, ''));
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200).end(typeof body === 'string' ? body : Buffer.from(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/log`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the transparency log of a running service', () => {
  let t: TestService;
  let token: string;
  let vkey: string;
  const receipts: Receipt[] = [];
  const docs: { id: string; serialNumber: string; text: string }[] = [];

  beforeAll(async () => {
    t = await startTestService('pglite');
    token = await t.token('log-owner@example.com');
    vkey = t.service.deps.transparencyLog.identity.verifierKey;
  });
  afterAll(async () => {
    await t?.close();
  });

  const checkpointSize = async () => {
    const res = await fetch(`${t.url}/log/checkpoint`);
    return Number((await res.text()).split('\n')[1]);
  };

  it('proves every notarization offline from its receipt, and the monitor finds the log consistent', async () => {
    for (let i = 0; i < DOCS; i++) {
      const text = `document ${i} ${Date.now()}`;
      docs.push({ ...(await upload(t, token, text)), text });
    }
    await expect.poll(checkpointSize, { timeout: 20_000 }).toBe(DOCS);
    const cp = await fetch(`${t.url}/log/checkpoint`);
    expect(cp.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(cp.headers.get('cache-control')).toBe('public, max-age=5');
    const tile = await fetch(`${t.url}/log/tile/0/000.p/${DOCS}`);
    expect([tile.status, tile.headers.get('cache-control')]).toEqual([
      200,
      'public, max-age=31536000, immutable',
    ]);
    expect((await fetch(`${t.url}/log/tile/0/000`)).status).toBe(404);

    for (const doc of docs) {
      const res = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
      const receipt = parseReceipt(res.body);
      expect(receipt.version).toBe(3);
      expect(receipt.transparencyLog?.verifierKey).toBe(vkey);
      const log = await checkLogProof(receipt, [vkey]);
      expect(log).toMatchObject({ status: 'passed', keyChecked: true, problems: [] });
      receipts.push(receipt);
    }
    // Another key is not the log's: the receipt's checkpoint does not pass.
    const other = vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+');
    expect((await checkLogProof(receipts[0] as Receipt, [other]).catch(() => undefined))?.status).not.toBe(
      'passed',
    );

    const state = path.join(t.dataDir, 'monitor-state.json');
    const prefix = docs[0]?.serialNumber.split('-')[0] ?? '';
    const run = await runMonitorCli([
      `${t.url}/log`,
      '--log-key',
      vkey,
      '--state',
      state,
      '--prefix',
      prefix,
      '--json',
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { entries: { serial: string }[]; latest: { size: number } };
    expect(report.entries.map((e) => e.serial)).toEqual(docs.map((d) => d.serialNumber));
    expect(report.latest.size).toBe(DOCS);

    // Online, the log the receipt names still holds the receipt's tree.
    const online = await verifyOnline(0);
    expect(online.transparencyLog.online).toMatchObject({ status: 'consistent', servedSize: DOCS });
  });

  /** `notary-verify <file> --receipt ... --log-key ... --online --json` on the `i`-th document, its report. */
  const verifyOnline = async (i: number) => {
    const file = path.join(t.dataDir, `online-${i}.txt`);
    const receiptFile = path.join(t.dataDir, `online-${i}.receipt.json`);
    await writeFile(file, docs[i]?.text ?? '');
    await writeFile(receiptFile, JSON.stringify(receipts[i]));
    // The service is on loopback: the caller's fetch stands for `--allow-private`.
    const run = await runCli([file, '--receipt', receiptFile, '--log-key', vkey, '--online', '--json'], {
      fetch,
    });
    return JSON.parse(run.stdout) as {
      exitCode: number;
      transparencyLog: { status: string; online?: { status: string; servedSize: number; evidence?: object } };
    };
  };

  it('reports a split view as a fork with both signed checkpoints', async () => {
    // The operator, holding the log key, signs another tree of the same size for someone else.
    const sql = t.service.deps.db.fork() as SqlEntityManager;
    const rows: { entry: Uint8Array }[] = await sql.execute(
      'select entry from log_entry where leaf_index is not null order by leaf_index',
    );
    const forged = rows.map((r, i) =>
      i === 5 ? new TextEncoder().encode('a document that never was') : new Uint8Array(r.entry),
    );
    const tiles = new TileSet();
    tiles.appendEntries(0, forged);
    const key = createPrivateKey(await readFile(path.join(t.dataDir, LOG_KEY_FILE), 'utf8'));
    const { name, publicKey } = parseVerifierKey(vkey);
    const text = formatCheckpoint({
      origin: name,
      size: forged.length,
      root: treeRoot(forged.length, tiles.reader()),
      extensions: [],
    });
    const note = formatSignedNote({
      text,
      signatures: [
        {
          name,
          id: ed25519KeyId(name, publicKey),
          signature: new Uint8Array(sign(null, Buffer.from(text), key)),
        },
      ],
    });
    const resources = new Map<string, Uint8Array | string>([['checkpoint', note]]);
    for (let level = 0; TILE_WIDTH ** level <= forged.length; level++) {
      const width = tileWidth(level, 0, forged.length);
      resources.set(`tile/${level}/000${width < TILE_WIDTH ? `.p/${width}` : ''}`, tiles.hashes(level, 0));
    }
    resources.set(`tile/entries/000.p/${forged.length}`, entryBundle(forged));
    expect([...resources.keys()].filter((k) => k !== 'checkpoint').every((k) => parseTilePath(k))).toBe(true);
    const elsewhere = await staticLog(resources);
    try {
      const run = await runMonitorCli([`${t.url}/log`, elsewhere.url, '--log-key', vkey, '--json']);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as {
        forks: { reason: string; a: { note: string }; b: { note: string } }[];
      };
      expect(report.forks).toHaveLength(1);
      expect(report.forks[0]?.reason).toBe(`two checkpoints of size ${DOCS} with different roots`);
      expect(new Set([report.forks[0]?.a.note, report.forks[0]?.b.note])).toEqual(
        new Set([note, await (await fetch(`${t.url}/log/checkpoint`)).text()]),
      );
    } finally {
      await elsewhere.close();
    }
  });

  it('reports a changed leaf and a rollback, while the receipts already issued still verify', async () => {
    const sql = t.service.deps.db.fork() as SqlEntityManager;
    const state = path.join(t.dataDir, 'monitor-state.json');
    // A leaf rewritten in the database: its entry no longer hashes to the tile the checkpoint covers.
    await sql.execute('update log_entry set entry = ? where leaf_index = 3', [Buffer.from('forged entry')]);
    const changed = await runMonitorCli([`${t.url}/log`, '--log-key', vkey, '--state', state]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain('entry 3 does not hash to its level-0 tile hash');
    // A rollback: the log's history cut back to an older checkpoint, then grown again from there.
    await sql.execute('delete from log_tile');
    await sql.execute('update log_entry set leaf_index = null where leaf_index >= 0');
    await sql.execute('delete from log_checkpoint');
    await t.service.deps.transparencyLog.integrate();
    await upload(t, token, 'after the rollback');
    await expect.poll(checkpointSize, { timeout: 20_000 }).toBeGreaterThan(DOCS);
    const rolled = await runMonitorCli([`${t.url}/log`, '--log-key', vkey, '--state', state]);
    expect(rolled.code).toBe(1);
    expect(rolled.stdout).toMatch(/FORK: the checkpoint seen before \(size 24\) is not a prefix/);
    for (const receipt of receipts) {
      expect((await checkLogProof(receipt, [vkey]))?.status).toBe('passed');
    }
    // Online, the rebuilt log (leaf 3 changed) no longer extends what the receipts were given: a fork, evidenced.
    const online = await verifyOnline(DOCS - 1);
    expect(online.exitCode).toBe(1);
    expect(online.transparencyLog).toMatchObject({
      status: 'failed',
      online: { status: 'fork', evidence: { receipt: receipts[DOCS - 1]?.transparencyLog?.checkpoint } },
    });
  });
});
