import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/core';
import { AppError, type Role } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../../test/harness/db-templates';
import { simulatedDisk, usedBytes } from '../../adapters/free-space/simulated.testing';
import { FsObjectStorage } from '../../adapters/storage/fs';
import type { Database } from '../../db';
import { Document, Tenant, type TenantEntity } from '../../db/entities';
import type { AnchoringQueue } from '../../ports/anchoring-queue';
import type { FreeSpace } from '../../ports/free-space';
import type { Actor } from '../tenancy/actor';
import { DISK_RECHECK_BYTES } from './disk-floor';
import { type IntakeSource, type NotarizeDeps, notarize } from './notarize';

/**
 * The one notarization path against the embedded database and local object storage, with intakes fed by hand:
 * what is checked before any byte is read, what is recorded, and that no object outlives a failure.
 */

const MiB = 1024 * 1024;

/** An intake of `bytes` (none: no file part) that records what notarize asked of it. */
function intake(
  bytes: Buffer | undefined,
  options: { consent?: boolean; announced?: number; failAtEnd?: Error } = {},
): IntakeSource & { announced: boolean; wasRead: boolean } {
  const source = {
    announced: false,
    wasRead: false,
    announce: () => {
      source.announced = true;
      return options.announced;
    },
    read: async (onFile: Parameters<IntakeSource['read']>[0]) => {
      source.wasRead = true;
      if (bytes) {
        const stream = Readable.from([bytes], { objectMode: false });
        const ended = new Promise((resolve) => stream.once('end', resolve));
        onFile({ stream, fileName: 'dir/note.txt', declaredType: 'application/pdf' });
        await ended;
      }
      if (options.failAtEnd) throw options.failAtEnd;
      return { consentAt: options.consent === false ? undefined : new Date() };
    },
  };
  return source;
}

describe('notarize', () => {
  let db: Database;
  let dir: string;
  let storage: FsObjectStorage;
  let tenant: TenantEntity;
  /** Whether each anchoring request ran inside a transaction. */
  const enqueued: boolean[] = [];
  const anchoringQueue: AnchoringQueue = {
    enqueueAnchoring: async (tx: EntityManager) => {
      enqueued.push(tx.isInTransaction());
    },
  };
  const roomWithoutEnd: FreeSpace = { freeBytes: async () => Number.POSITIVE_INFINITY };
  const deps = (quotaBytes = 0, disk?: { freeSpace: FreeSpace; floorBytes: number }): NotarizeDeps => ({
    storage,
    anchoringQueue,
    config: { tenantStorageQuotaBytes: quotaBytes, diskFreeFloorBytes: disk?.floorBytes ?? 0 },
    freeSpace: disk?.freeSpace ?? roomWithoutEnd,
  });
  const actor = (role: Role = 'owner'): Actor => ({
    userId: 'u1',
    email: null,
    tenant,
    role,
    ip: '127.0.0.1',
  });
  const keys = async () => {
    const out: string[] = [];
    for await (const key of storage.list()) out.push(key);
    return out;
  };

  beforeAll(async () => {
    db = await openTestPglite();
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-notarize-'));
    storage = new FsObjectStorage({ root: dir, secret: 's', publicBaseUrl: () => 'http://localhost' });
    const em = db.fork();
    tenant = em.create(Tenant, {
      id: crypto.randomUUID(),
      kind: 'personal',
      externalId: 'u1',
      name: 'T',
      serialPrefix: 'NT',
    });
    await em.flush();
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stores the bytes, records the Document and requests its anchoring in the same transaction', async () => {
    const bytes = Buffer.from('hello, notary\n');
    const doc = await notarize(db.fork(), deps(), actor('editor'), {
      kind: 'stored',
      origin: { sourceType: 'upload' },
      source: intake(bytes),
    });
    expect(doc).toMatchObject({
      fileName: 'note.txt',
      fileSize: bytes.length,
      mimeType: 'text/plain',
      sha256Hash: createHash('sha256').update(bytes).digest('hex'),
      sourceType: 'upload',
      sourceUri: null,
      consentGiven: true,
    });
    expect(enqueued).toEqual([true]);
    expect(await keys()).toEqual([doc.storageKey]);
    expect(await db.fork().count(Document, { id: doc.id })).toBe(1);
  });

  it('refuses a reader before the intake is announced or read', async () => {
    const source = intake(Buffer.from('x'));
    await expect(
      notarize(db.fork(), deps(), actor('reader'), {
        kind: 'stored',
        origin: { sourceType: 'upload' },
        source,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect([source.announced, source.wasRead]).toEqual([false, false]);
  });

  it('answers 413 from the announced size or a full quota before reading', async () => {
    const tooBig = intake(Buffer.from('x'), { announced: 251 * 1024 * 1024 });
    await expect(
      notarize(db.fork(), deps(), actor(), {
        kind: 'stored',
        origin: { sourceType: 'upload' },
        source: tooBig,
      }),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'The file exceeds the 250 MB limit' });
    const full = intake(Buffer.from('x'));
    await expect(
      notarize(db.fork(), deps(1), actor(), {
        kind: 'stored',
        origin: { sourceType: 'upload' },
        source: full,
      }),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect([tooBig.wasRead, full.wasRead]).toEqual([false, false]);
  });

  it('leaves no object behind: past the quota, without consent, or when the client goes after the file', async () => {
    const before = await keys();
    const documents = await db.fork().count(Document, {});
    const cases: [IntakeSource, object][] = [
      [
        intake(Buffer.alloc(2 * MiB, 1)),
        { code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/quota/) },
      ],
      [
        intake(Buffer.from('x'), { consent: false }),
        { code: 'BAD_REQUEST', message: expect.stringMatching(/Consent/) },
      ],
      [intake(Buffer.from('x'), { failAtEnd: new Error('gone') }), { message: 'gone' }],
      [intake(undefined), { code: 'BAD_REQUEST', message: expect.stringMatching(/Missing file/) }],
    ];
    for (const [source, error] of cases) {
      await expect(
        notarize(db.fork(), deps(MiB), actor(), { kind: 'stored', origin: { sourceType: 'upload' }, source }),
      ).rejects.toMatchObject(error);
    }
    expect(await keys()).toEqual(before);
    expect(await db.fork().count(Document, {})).toBe(documents);
  });

  it('a web capture that records nothing removes the screenshot it brought too', async () => {
    const before = await keys();
    const screenshotKey = `${tenant.id}/shot`;
    await storage.put(screenshotKey, Readable.from([Buffer.from('png')], { objectMode: false }));
    await expect(
      notarize(db.fork(), deps(), actor(), {
        kind: 'stored',
        origin: { sourceType: 'web-capture', sourceUri: 'https://example.com/', screenshotKey },
        source: intake(Buffer.from('wacz'), { consent: false }),
      }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(await keys()).toEqual(before);
  });

  /**
   * A reference intake as the IPFS import builds it: `chunks` produced on demand (counted), the size the
   * source declares, and `failAfter` chunks an error such as a gateway's. Resolves once the stream ended.
   */
  function referenceIntake(
    chunks: () => Generator<Buffer>,
    options: { size?: number; failAfter?: number; consent?: boolean } = {},
  ): IntakeSource & { pulled: number } {
    const source = {
      pulled: 0,
      announce: () => undefined,
      read: async (onFile: Parameters<IntakeSource['read']>[0]) => {
        const stream = Readable.from(
          (function* () {
            for (const chunk of chunks()) {
              if (options.failAfter !== undefined && source.pulled >= options.failAfter) {
                throw new AppError('BAD_GATEWAY', 'verification failed');
              }
              source.pulled++;
              yield chunk;
            }
          })(),
          { objectMode: false },
        );
        onFile({ stream, fileName: undefined, declaredType: undefined, size: options.size });
        await finished(stream);
        return { consentAt: options.consent === false ? undefined : new Date() };
      },
    };
    return source;
  }

  it('a reference intake hashes without storing: no object, no storage key, no quota, anchored in the same transaction', async () => {
    const before = await keys();
    enqueued.length = 0;
    const chunks = [Buffer.from('%PDF-1.7\n'), Buffer.alloc(3 * MiB, 7)];
    const doc = await notarize(db.fork(), deps(1), actor('editor'), {
      kind: 'reference',
      sourceType: 'ipfs',
      sourceUri: 'ipfs://bafkreia',
      source: referenceIntake(function* () {
        yield* chunks;
      }),
    });
    expect(doc).toMatchObject({
      storageKey: null,
      fileName: 'unnamed',
      fileSize: 3 * MiB + 9,
      mimeType: 'application/pdf',
      sha256Hash: createHash('sha256').update(Buffer.concat(chunks)).digest('hex'),
      sourceType: 'ipfs',
      sourceUri: 'ipfs://bafkreia',
    });
    expect(enqueued).toEqual([true]);
    expect(await keys()).toEqual(before);
  });

  it('a reference intake: 413 from the declared size before any byte, or as the bytes pass 250 MB; a failing source records nothing', async () => {
    const documents = await db.fork().count(Document, {});
    const zeros = (total: number) =>
      function* () {
        for (let left = total; left > 0; left -= MiB) yield Buffer.alloc(Math.min(MiB, left));
      };
    const declared = referenceIntake(zeros(251 * MiB), { size: 251 * MiB });
    const streamed = referenceIntake(zeros(251 * MiB));
    const failing = referenceIntake(zeros(4 * MiB), { failAfter: 2 });
    const cases: [ReturnType<typeof referenceIntake>, object][] = [
      [declared, { code: 'PAYLOAD_TOO_LARGE', message: 'The file exceeds the 250 MB limit' }],
      [streamed, { code: 'PAYLOAD_TOO_LARGE', message: 'The file exceeds the 250 MB limit' }],
      [failing, { code: 'BAD_GATEWAY', message: 'verification failed' }],
      [referenceIntake(zeros(1), { consent: false }), { code: 'BAD_REQUEST' }],
    ];
    for (const [source, error] of cases) {
      await expect(
        notarize(db.fork(), deps(), actor(), {
          kind: 'reference',
          sourceType: 'ipfs',
          sourceUri: 'ipfs://b',
          source,
        }),
      ).rejects.toMatchObject(error);
    }
    // The declared size stops it before the first byte; the stream, one chunk past the limit.
    expect(declared.pulled).toBeLessThanOrEqual(1);
    expect(streamed.pulled).toBeLessThanOrEqual(252);
    expect(await db.fork().count(Document, {})).toBe(documents);
  });

  it('refuses a reader a reference intake before reading it', async () => {
    const source = referenceIntake(function* () {
      yield Buffer.from('x');
    });
    await expect(
      notarize(db.fork(), deps(), actor('reader'), {
        kind: 'reference',
        sourceType: 'ipfs',
        sourceUri: 'ipfs://x',
        source,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(source.pulled).toBe(0);
  });

  /** An upload intake streaming `total` bytes in chunks of 1 MiB (as busboy hands them over), never announced. */
  function chunkedIntake(total: number): IntakeSource & { wasRead: boolean } {
    const source = {
      wasRead: false,
      announce: () => undefined,
      read: async (onFile: Parameters<IntakeSource['read']>[0]) => {
        source.wasRead = true;
        const stream = Readable.from(
          (function* () {
            for (let left = total; left > 0; left -= MiB) yield Buffer.alloc(Math.min(MiB, left), 5);
          })(),
          { objectMode: false },
        );
        onFile({ stream, fileName: 'big.bin', declaredType: undefined });
        await finished(stream);
        return { consentAt: new Date() };
      },
    };
    return source;
  }

  describe('the disk floor (DISK_FREE_FLOOR_BYTES)', () => {
    const floorBytes = 16 * MiB;
    const upload = (source: IntakeSource) =>
      ({ kind: 'stored', origin: { sourceType: 'upload' }, source }) as const;

    it('below the floor: 507 before a byte is read, for uploads and IPFS imports alike; nothing stored or recorded', async () => {
      const before = await keys();
      const documents = await db.fork().count(Document, {});
      // The files already kept fill the disk to 1 byte under the floor.
      const disk = simulatedDisk({ dir, capacityBytes: (await usedBytes(dir)) + floorBytes - 1 });
      const refused = {
        code: 'INSUFFICIENT_STORAGE',
        message: 'The server is running out of disk space and accepts no new files for now: try again later',
      };
      const file = intake(Buffer.from('x'));
      await expect(
        notarize(db.fork(), deps(0, { freeSpace: disk, floorBytes }), actor(), upload(file)),
      ).rejects.toMatchObject(refused);
      const imported = referenceIntake(function* () {
        yield Buffer.from('x');
      });
      await expect(
        notarize(db.fork(), deps(0, { freeSpace: disk, floorBytes }), actor(), {
          kind: 'reference',
          sourceType: 'ipfs',
          sourceUri: 'ipfs://x',
          source: imported,
        }),
      ).rejects.toMatchObject(refused);
      expect([file.wasRead, imported.pulled]).toEqual([false, 0]);
      // An announced size that would cross the floor is refused up front too.
      disk.capacityBytes += 2 * MiB;
      const announced = intake(Buffer.alloc(2 * MiB), { announced: 2 * MiB });
      await expect(
        notarize(db.fork(), deps(0, { freeSpace: disk, floorBytes }), actor(), upload(announced)),
      ).rejects.toMatchObject(refused);
      expect(announced.wasRead).toBe(false);
      expect(await keys()).toEqual(before);
      expect(await db.fork().count(Document, {})).toBe(documents);
    });

    it('a file that crosses the floor while it streams is cut off and removed (507); earlier files stay whole; the room left still takes a smaller one', async () => {
      const kept = await notarize(db.fork(), deps(), actor(), upload(intake(Buffer.from('kept before'))));
      const before = await keys();
      const documents = await db.fork().count(Document, {});
      // 20 MiB above the floor: a 40 MiB file, never announced, gets past the first check only.
      const disk = simulatedDisk({ dir, capacityBytes: (await usedBytes(dir)) + floorBytes + 20 * MiB });
      const big = chunkedIntake(40 * MiB);
      await expect(
        notarize(db.fork(), deps(0, { freeSpace: disk, floorBytes }), actor(), upload(big)),
      ).rejects.toMatchObject({ code: 'INSUFFICIENT_STORAGE' });
      expect(big.wasRead).toBe(true);
      expect(await keys()).toEqual(before);
      expect(await readdir(path.join(dir, '.tmp'))).toEqual([]);
      expect(await db.fork().count(Document, {})).toBe(documents);
      // What it had written is gone: the room above the floor is whole again.
      expect(await disk.freeBytes('data')).toBe(floorBytes + 20 * MiB);
      const readings = disk.readings;
      // A file that fits the room left above the floor is taken, checked now and then, not at every chunk.
      const fits = await notarize(
        db.fork(),
        deps(0, { freeSpace: disk, floorBytes }),
        actor(),
        upload(chunkedIntake(10 * MiB)),
      );
      expect(fits.fileSize).toBe(10 * MiB);
      expect(disk.readings - readings).toBeLessThanOrEqual(2 + Math.ceil((10 * MiB) / DISK_RECHECK_BYTES));
      const stored = await storage.get(kept.storageKey ?? '');
      expect(Buffer.concat(await stored.toArray()).toString()).toBe('kept before');
    });

    it('a free space that cannot be read lets the intake through; a floor of 0 never asks', async () => {
      const broken: FreeSpace = {
        freeBytes: async () => {
          throw new Error('statfs failed');
        },
      };
      const doc = await notarize(
        db.fork(),
        deps(0, { freeSpace: broken, floorBytes }),
        actor(),
        upload(chunkedIntake(3 * MiB)),
      );
      expect(doc.fileSize).toBe(3 * MiB);
      const asked = simulatedDisk({ dir, capacityBytes: 0 });
      await notarize(
        db.fork(),
        deps(0, { freeSpace: asked, floorBytes: 0 }),
        actor(),
        upload(intake(Buffer.from('y'))),
      );
      expect(asked.readings).toBe(0);
    });
  });
});
