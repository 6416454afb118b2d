import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { toHex } from '@notary/trust/bytes';
import { parseVerifierKey, verifyCheckpoint } from '@notary/trust/signed-note';
import {
  leafHash,
  parseEntryBundle,
  TILE_WIDTH,
  tileReader,
  tileWidth,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from '@notary/trust/tlog';
import { naiveRoot } from '@notary/trust/tlog.testing';
import { decodeLeaf } from '@notary/trust/tlog-leaf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../../test/harness/db-templates';
import { createTestDatabase } from '../../../../test/harness/postgres';
import { fileLogSigner } from '../../adapters/log-key/file';
import { type Database, openDatabase } from '../../db';
import { Tenant, type TenantEntity } from '../../db/entities';
import { recordUploadedDocument } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import { TileSet } from './tiles';
import { type StoredCheckpoint, TransparencyLog, tenantCommitment } from './transparency-log';

describe('TileSet', () => {
  it('grows tiles leaf by leaf to the roots of the recursive definition, across level-1 and level-2 tiles', () => {
    const entries = Array.from({ length: 66_000 }, (_, i) => new TextEncoder().encode(`leaf ${i}`));
    const leaves = entries.map(leafHash);
    const tiles = new TileSet();
    let size = 0;
    for (const cut of [1, 255, 256, 257, 1000, 65_535, 65_536, 65_537, 66_000]) {
      tiles.appendEntries(size, entries.slice(size, cut));
      size = cut;
      expect(toHex(treeRoot(size, tiles.reader()))).toBe(toHex(naiveRoot(leaves.slice(0, size))));
    }
    expect(tiles.hashes(2, 0).length).toBe(32);
    expect(() => tiles.push(0, 10, leaves[10] as Uint8Array)).toThrow(RangeError);
  });
});

type Kind = 'pglite' | 'postgresql';

describe.each<Kind>(['pglite', 'postgresql'])('the transparency log on %s', (kind) => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  let tlog: TransparencyLog;
  let actor: Actor;
  const secret = 'a'.repeat(40);
  const anchoring = { enqueueAnchoring: async () => {} };
  const record = (i: number) =>
    recordUploadedDocument(
      db.fork(),
      actor,
      {
        storageKey: null,
        fileName: `f${i}.txt`,
        fileSize: 1,
        mimeType: 'text/plain',
        sha256Hash: toHex(leafHash(new TextEncoder().encode(`doc ${i} ${randomUUID()}`))),
        consentTimestamp: new Date(),
      },
      { anchoring, log: tlog },
    );

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tlog-'));
    if (kind === 'pglite') {
      db = await openTestPglite();
      drop = async () => {};
    } else {
      const pg = await createTestDatabase();
      db = await openDatabase({ databaseUrl: pg.url, dataDir: '' });
      drop = pg.drop;
    }
    const em = db.fork();
    const tenant: TenantEntity = em.create(Tenant, {
      id: randomUUID(),
      kind: 'personal',
      externalId: randomUUID(),
      name: 'T',
      serialPrefix: 'TLOG',
      serialPrefixKey: 'TLOG',
    });
    await em.flush();
    actor = { userId: 'u1', email: null, tenant, role: 'owner', ip: null };
    tlog = new TransparencyLog(() => db.fork(), await fileLogSigner(dir, 'notary.test/log'), secret);
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    await drop?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives every notarization a leaf, in order and without gaps, provable offline against signed checkpoints', async () => {
    const key = parseVerifierKey(tlog.identity.verifierKey);
    const empty = await tlog.integrate();
    expect(empty.size).toBe(0);
    // Documents recorded concurrently while the sequencer runs (each commit wakes it): whatever order they commit
    // in, no index is skipped.
    const docs = [];
    for (let round = 0; round < 4; round++) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, i) => record(round * 10 + i)));
      docs.push(...batch);
      await tlog.integrate();
    }
    const head = await tlog.integrate();
    expect(head.size).toBe(docs.length);
    const sql = db.fork() as SqlEntityManager;
    const indexes: { leaf_index: string }[] = await sql.execute(
      'select leaf_index from log_entry order by leaf_index',
    );
    expect(indexes.map((r) => Number(r.leaf_index))).toEqual(docs.map((_, i) => i));

    const cp = await verifyCheckpoint(head.note, key);
    expect(toHex(cp.root)).toBe(toHex(head.root));
    for (const doc of docs) {
      const p = await tlog.proofFor(doc.id);
      if (!p) throw new Error(`no proof for ${doc.serialNumber}`);
      const leaf = decodeLeaf(p.entry);
      expect(leaf).toEqual({
        serial: doc.serialNumber,
        sha256: doc.sha256Hash,
        time: doc.createdAt.toISOString(),
        tenant: tenantCommitment(secret, actor.tenant.id),
      });
      expect(verifyInclusion(leafHash(p.entry), p.leafIndex, p.checkpoint.size, p.proof, cp.root)).toBe(true);
    }

    // Every checkpoint made is consistent with every later one, and signed by the log's key.
    const rows: { size: string; note: string }[] = await sql.execute(
      'select size, note from log_checkpoint order by size',
    );
    const checkpoints = await Promise.all(rows.map((r) => verifyCheckpoint(r.note, key)));
    expect(checkpoints.length).toBeGreaterThan(4);
    for (const a of checkpoints) {
      for (const b of checkpoints) {
        if (a.size > b.size) continue;
        const proof = await tlog.consistency(a.size, b.size);
        expect(verifyConsistency(a.size, b.size, proof, a.root, b.root)).toBe(true);
      }
    }

    // The tiles and entry bundles served rebuild the head's root; each entry hashes to its level-0 tile hash.
    const served = async (level: number, index: number) => {
      const width = tileWidth(level, index, head.size);
      const bytes = await tlog.tile({ level, index, ...(width < TILE_WIDTH ? { width } : {}) });
      if (!bytes) throw new Error(`tile ${level}/${index} not served`);
      return bytes;
    };
    const level0 = await served(0, 0);
    expect(
      toHex(
        treeRoot(
          head.size,
          tileReader(() => level0),
        ),
      ),
    ).toBe(toHex(head.root));
    const bundle = await tlog.tile({ level: 'entries', index: 0, width: head.size });
    expect(bundle && parseEntryBundle(bundle).map((e) => toHex(leafHash(e)))).toEqual(
      Array.from({ length: head.size }, (_, i) => toHex(level0.subarray(i * 32, i * 32 + 32))),
    );
    // A full tile the log does not hold yet, a partial one wider than what it holds: nothing.
    expect(await tlog.tile({ level: 0, index: 0 })).toBeUndefined();
    expect(await tlog.tile({ level: 0, index: 0, width: head.size + 1 })).toBeUndefined();
  });

  it.runIf(kind === 'postgresql')(
    'integrates an entry numbered before others but committed after them, however often the sequencer ran meanwhile',
    async () => {
      const start = await tlog.integrate();
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered = () => {};
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      // The straggler's transaction holds its entry (numbered, uncommitted) until released.
      const straggler = recordUploadedDocument(
        db.fork(),
        actor,
        {
          storageKey: null,
          fileName: 'late.txt',
          fileSize: 1,
          mimeType: 'text/plain',
          sha256Hash: toHex(leafHash(new TextEncoder().encode(`late ${randomUUID()}`))),
          consentTimestamp: new Date(),
        },
        {
          anchoring: {
            enqueueAnchoring: async () => {
              entered();
              await gate;
            },
          },
          log: tlog,
        },
      );
      await inside;
      const later = [];
      for (let i = 0; i < 3; i++) {
        later.push(await record(2000 + i));
        await tlog.integrate();
      }
      const during = await tlog.integrate();
      expect(during.size).toBe(start.size + later.length);
      release();
      const late = await straggler;
      const after = await tlog.integrate();
      expect(after.size).toBe(during.size + 1);
      const proof = await tlog.proofFor(late.id);
      expect(proof?.leafIndex).toBe(during.size);
      const sql = db.fork() as SqlEntityManager;
      const [ids]: { late: string; first: string }[] = await sql.execute(
        `select (select id from log_entry where document_id = ?) as late,
                (select id from log_entry where document_id = ?) as first`,
        [late.id, later[0]?.id],
      );
      expect(Number(ids?.late)).toBeLessThan(Number(ids?.first));
    },
  );

  it('cannot join a rewritten history to the checkpoints already published; issued proofs still verify', async () => {
    const key = parseVerifierKey(tlog.identity.verifierKey);
    const before = await tlog.integrate();
    const sql = db.fork() as SqlEntityManager;
    const doc = await record(1000);
    const issuedAt = await tlog.integrate();
    const issued = await tlog.proofFor(doc.id);
    if (!issued) throw new Error('no proof');
    const entries: { leaf_index: string; entry: Uint8Array }[] = await sql.execute(
      'select leaf_index, entry from log_entry where leaf_index is not null order by leaf_index',
    );
    const rewrites: Array<[string, Uint8Array[]]> = [
      ['changed', entries.map((e, i) => (i === 3 ? new TextEncoder().encode('forged') : e.entry))],
      ['removed', entries.filter((_, i) => i !== 3).map((e) => e.entry)],
      [
        'inserted',
        [
          ...entries.slice(0, 3).map((e) => e.entry),
          new TextEncoder().encode('x'),
          ...entries.slice(3).map((e) => e.entry),
        ],
      ],
      ['rolled back', entries.slice(0, before.size - 2).map((e) => e.entry)],
    ];
    for (const [what, forged] of rewrites) {
      // The operator rebuilds the tree from the forged entries and has the log sign what follows.
      await sql.execute('delete from log_tile');
      await sql.execute('delete from log_checkpoint');
      await sql.execute('update log_entry set leaf_index = null');
      await sql.execute('delete from log_entry');
      for (const entry of forged) {
        await sql.execute('insert into log_entry (entry, created_at) values (?, ?)', [
          Buffer.from(entry),
          new Date(),
        ]);
      }
      const next: StoredCheckpoint = await tlog.integrate();
      const forgedCp = await verifyCheckpoint(next.note, key);
      const joins =
        forgedCp.size >= issuedAt.size &&
        verifyConsistency(
          issuedAt.size,
          forgedCp.size,
          await tlog.consistency(issuedAt.size, forgedCp.size),
          issuedAt.root,
          forgedCp.root,
        );
      expect({ what, joins }).toEqual({ what, joins: false });
      // What was handed out before still verifies against its own signed checkpoint.
      const cp = await verifyCheckpoint(issued.checkpoint.note, key);
      expect(verifyInclusion(leafHash(issued.entry), issued.leafIndex, cp.size, issued.proof, cp.root)).toBe(
        true,
      );
    }
  });

  it('offers its latest checkpoint to anchoring only while its own key signed it, and proves a leaf at an older size', async () => {
    await record(1000);
    const head = await tlog.integrate();
    expect((await tlog.anchorableCheckpoint(db.fork()))?.note).toBe(head.note);
    // Another key on the same database (a lost data directory): the checkpoint is not its own.
    const otherDir = await mkdtemp(path.join(os.tmpdir(), 'tlog-other-'));
    try {
      const other = new TransparencyLog(
        () => db.fork(),
        await fileLogSigner(otherDir, 'notary.test/log'),
        secret,
      );
      expect(await other.anchorableCheckpoint(db.fork())).toBeUndefined();
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
    await record(1001);
    const grown = await tlog.integrate();
    const proof = await tlog.inclusionAt(head.size - 1, head.size);
    const row: { entry: Uint8Array }[] = await (db.fork() as SqlEntityManager).execute(
      'select entry from log_entry where leaf_index = ?',
      [head.size - 1],
    );
    expect(
      verifyInclusion(
        leafHash(new Uint8Array(row[0]?.entry ?? [])),
        head.size - 1,
        head.size,
        proof,
        head.root,
      ),
    ).toBe(true);
    await expect(tlog.inclusionAt(grown.size, grown.size)).rejects.toThrow(RangeError);
  });
});

describe('appending to the transparency log', () => {
  let db: Database;
  let dir: string;
  let tlog: TransparencyLog;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tlog-cost-'));
    db = await openTestPglite();
    tlog = new TransparencyLog(() => db.fork(), await fileLogSigner(dir, 'notary.test/log'), 'c'.repeat(40));
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Pages of the log's tables and indexes the database read or found in its cache (its own statistics). */
  const pagesRead = async (): Promise<number> => {
    const sql = db.fork() as SqlEntityManager;
    await sql.execute('select pg_stat_force_next_flush()');
    const [row]: { pages: string }[] = await sql.execute(
      `select sum(coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) + coalesce(idx_blks_hit, 0)
                + coalesce(idx_blks_read, 0) + coalesce(toast_blks_hit, 0) + coalesce(toast_blks_read, 0)
                + coalesce(tidx_blks_hit, 0) + coalesce(tidx_blks_read, 0))::text as pages
         from pg_statio_user_tables where relname like 'log\\_%'`,
    );
    return Number(row?.pages ?? 0);
  };

  /** Grows the log to `size` leaves (entries written by SQL, as many uploads leave them), then appends one. */
  const costOfOneAt = async (size: number): Promise<number> => {
    const sql = db.fork() as SqlEntityManager;
    const head = await tlog.integrate();
    await sql.execute(
      `insert into log_entry (entry, created_at)
       select convert_to('entry ' || n, 'UTF8'), now() from generate_series(?, ?) as n`,
      [head.size + 1, size],
    );
    // Twice: the bound the sequencer reads from moves once the entries it noted are integrated.
    await tlog.integrate();
    await tlog.integrate();
    await sql.execute(
      `insert into log_entry (entry, created_at) values (convert_to('one more', 'UTF8'), now())`,
    );
    const before = await pagesRead();
    const after = await tlog.integrate();
    expect(after.size).toBe(size + 1);
    return (await pagesRead()) - before;
  };

  it('reads as many pages to append one entry at 20,000 leaves as at 1,000 (no scan of what is integrated)', async () => {
    const small = await costOfOneAt(1_000);
    const large = await costOfOneAt(20_000);
    expect(small).toBeGreaterThan(0);
    // A tile more at most: the tree is one level taller (a level-1 tile at 65,536 leaves is not reached here).
    expect(large).toBeLessThanOrEqual(small + 8);
  }, 120_000);
});
