import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { simulatedDisk, usedBytes } from '@notary/server/adapters/free-space/simulated.testing';
import type { WebCapturer } from '@notary/server/ports/capture';
import type { DocumentDto, ErrorBody } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { type IpfsTestGateway, startIpfsGateway } from '../harness/ipfs-gateway';
import { startTestService, storedKeys, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

const MiB = 1024 * 1024;
const FLOOR = 24 * MiB;
const BOUNDARY = 'diskFloorBoundary9c1f';
const REFUSED: ErrorBody = {
  code: 'INSUFFICIENT_STORAGE',
  message: 'The server is running out of disk space and accepts no new files for now: try again later',
};

/**
 * `POST /api/documents/upload` of `bytes` sent in 1 MiB chunks without Content-Length (chunked), so the
 * service cannot know the size before the bytes arrive: what a disk filling mid-upload looks like.
 */
function streamedUpload(
  base: string,
  token: string,
  bytes: Buffer,
): Promise<{ status: number; body: DocumentDto & ErrorBody }> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="consent"\r\n\r\ntrue\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/api/documents/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString() || '{}') }),
      );
    });
    req.on('error', reject);
    req.write(head);
    let at = 0;
    const more = () => {
      while (at < bytes.length) {
        const chunk = bytes.subarray(at, at + MiB);
        at += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', more);
          return;
        }
      }
      req.end(`\r\n--${BOUNDARY}--\r\n`);
    };
    more();
  });
}

/** The stored bytes of a document, through its download URL. */
async function downloaded(t: TestService, token: string, id: string): Promise<Buffer> {
  const link = await api<{ downloadUrl: string }>(t.url, `/api/documents/${id}/download`, { token });
  return Buffer.from(await (await fetch(link.body.downloadUrl)).arrayBuffer());
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('the disk floor (DISK_FREE_FLOOR_BYTES), with an injected free-space reader', () => {
  let t: TestService;
  let gw: IpfsTestGateway;
  let token: string;
  let objects: string;
  /** A disk just large enough for what is stored now plus `above` bytes over the floor. */
  const diskWithRoom = async (above: number) =>
    simulatedDisk({ dir: objects, capacityBytes: (await usedBytes(objects)) + FLOOR + above });
  const documents = async () =>
    (await api<{ documents: DocumentDto[] }>(t.url, '/api/documents', { token })).body.documents;

  beforeAll(async () => {
    gw = await startIpfsGateway();
    t = await startTestService('pglite', { DISK_FREE_FLOOR_BYTES: String(FLOOR), IPFS_GATEWAYS: gw.url });
    token = await t.token(freshEmail('disk'));
    objects = path.join(t.dataDir, 'objects');
  });
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  it('a full disk refuses uploads, IPFS imports and captures with 507 before anything is read, fetched or started; nothing is lost', async () => {
    const earlier = randomBytes(3 * MiB);
    const kept = await streamedUpload(t.url, token, earlier);
    expect(kept.status).toBe(201);
    const keys = await storedKeys(t);

    t.service.deps.freeSpace = await diskWithRoom(-1);
    const upload = await streamedUpload(t.url, token, randomBytes(MiB));
    expect(upload).toEqual({ status: 507, body: REFUSED });

    const cid = (await gw.addFile(randomBytes(2048), 'v1')).toString();
    const imported = await api<ErrorBody>(t.url, '/api/documents/import/ipfs', {
      method: 'POST',
      token,
      body: { cid, consent: true },
    });
    expect({ status: imported.status, body: imported.body }).toEqual({ status: 507, body: REFUSED });
    expect(gw.requests).toEqual([]);

    let captures = 0;
    const standIn: WebCapturer = {
      capture: async () => {
        captures++;
        throw new Error('the browser must not start');
      },
    };
    t.service.deps.capturer = standIn;
    const captured = await api<ErrorBody>(t.url, '/api/documents/capture', {
      method: 'POST',
      token,
      body: { url: 'http://example.test/', consent: true },
    });
    expect({ status: captured.status, body: captured.body }).toEqual({ status: 507, body: REFUSED });
    // The capture's temporary directory is guarded too, even when the data volume has room.
    t.service.deps.freeSpace = simulatedDisk({ dir: objects, capacityBytes: FLOOR - 1, volume: 'temp' });
    const tempFull = await api<ErrorBody>(t.url, '/api/documents/capture', {
      method: 'POST',
      token,
      body: { url: 'http://example.test/', consent: true },
    });
    expect(tempFull.status).toBe(507);
    expect(captures).toBe(0);

    // Nothing half-stored, nothing recorded, the earlier document whole.
    expect(await storedKeys(t)).toEqual(keys);
    expect((await documents()).map((d) => d.id)).toEqual([kept.body.id]);
    expect(sha256(await downloaded(t, token, kept.body.id))).toBe(sha256(earlier));

    // Room again: the same import goes through.
    t.service.deps.freeSpace = await diskWithRoom(10 * MiB);
    const again = await api<DocumentDto>(t.url, '/api/documents/import/ipfs', {
      method: 'POST',
      token,
      body: { cid, consent: true },
    });
    expect(again.status).toBe(201);
  });

  it('an upload that would cross the floor mid-stream is cut off: 507, the partial object removed, no row; a smaller one still fits', async () => {
    const before = await documents();
    const keys = await storedKeys(t);
    t.service.deps.freeSpace = await diskWithRoom(20 * MiB);
    const big = await streamedUpload(t.url, token, randomBytes(60 * MiB));
    expect(big).toEqual({ status: 507, body: REFUSED });
    expect(await storedKeys(t)).toEqual(keys);
    expect(await readdir(path.join(objects, '.tmp'))).toEqual([]);
    expect(await documents()).toEqual(before);

    const small = randomBytes(8 * MiB);
    const fits = await streamedUpload(t.url, token, small);
    expect(fits.status).toBe(201);
    expect(sha256(await downloaded(t, token, fits.body.id))).toBe(sha256(small));
  });
});

/**
 * The same against a real small file system: a tmpfs mounted as `DATA_DIR` (needs root and `mount`; where the
 * machine refuses, these tests are skipped and the injected reader above stands for it).
 */
describe('the disk floor on a real 64 MiB tmpfs DATA_DIR', () => {
  let mountPoint: string;
  let mounted = false;
  let t: TestService | undefined;
  let token: string;

  beforeAll(async () => {
    mountPoint = await mkdtemp(path.join(os.tmpdir(), 'notary-tmpfs-'));
    try {
      await promisify(execFile)('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', mountPoint]);
      mounted = true;
    } catch {
      return;
    }
    // PostgreSQL keeps the database off the small volume: only the stored files, secret and mail live there.
    t = await startTestService('postgresql', { DATA_DIR: mountPoint, DISK_FREE_FLOOR_BYTES: String(FLOOR) });
    token = await t.token(freshEmail('tmpfs'));
  });
  afterAll(async () => {
    await t?.close();
    if (mounted) await promisify(execFile)('umount', [mountPoint]);
    await rmdir(mountPoint).catch(() => rm(mountPoint, { recursive: true, force: true }));
  });

  it('fills up: an upload crossing the floor is 507 and leaves nothing; below the floor nothing is accepted; earlier files intact', async (ctx) => {
    if (!t) ctx.skip();
    const service = t as TestService;
    const docs = async () =>
      (await api<{ documents: DocumentDto[] }>(service.url, '/api/documents', { token })).body.documents;
    const first = randomBytes(10 * MiB);
    const kept = await streamedUpload(service.url, token, first);
    expect(kept.status).toBe(201);
    const keys = await storedKeys(service);

    // About 54 MiB free: 40 more would leave 14, under the 24 MiB floor.
    const crossing = await streamedUpload(service.url, token, randomBytes(40 * MiB));
    expect(crossing).toEqual({ status: 507, body: REFUSED });
    expect(await storedKeys(service)).toEqual(keys);
    expect(await readdir(path.join(mountPoint, 'objects', '.tmp'))).toEqual([]);
    expect((await docs()).map((d) => d.id)).toEqual([kept.body.id]);

    // Something else fills the volume to under the floor: even a byte is refused at once.
    const filler = path.join(mountPoint, 'filler.bin');
    await writeFile(filler, Buffer.alloc(32 * MiB));
    expect(await streamedUpload(service.url, token, Buffer.from('x'))).toEqual({
      status: 507,
      body: REFUSED,
    });
    await rm(filler);
    const after = await streamedUpload(service.url, token, Buffer.from('room again'));
    expect(after.status).toBe(201);
    expect(sha256(await downloaded(service, token, kept.body.id))).toBe(sha256(first));
  });
});
