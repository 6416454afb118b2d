/**
 * One suite, two adapters: the fs adapter behind its signed-URL route on a loopback Express app, and the S3
 * adapter against a real S3 server (Ceph RADOS Gateway, see test/harness/radosgw.ts). The S3 half fails, not
 * skips, when radosgw is not installed (`.ci/install-radosgw.sh`).
 */

import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { AppError } from '@notary/shared';
import { parse as parseContentDisposition } from 'content-disposition';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRadosgw } from '../../../../test/harness/radosgw';
import { createSignedFileRoute } from '../../http/files';
import type { ObjectStorage } from '../../ports/storage';
import { FsObjectStorage } from './fs';
import { S3ObjectStorage } from './s3';

const MiB = 1024 * 1024;

/** What the shared cases need to know about one adapter. */
interface Subject {
  storage: ObjectStorage;
  /** In-flight uploads under `prefix`: temp files (fs; they have no key) or multipart uploads (S3). */
  pending(prefix: string): Promise<string[]>;
  /** Makes every URL signed with `expiresInSeconds: 1` before the call expire. */
  expireOneSecondUrls(): Promise<void>;
  /**
   * Runs `hook` once, as late as the adapter allows before `put` resolves: S3 right after PutObject or
   * CompleteMultipartUpload succeeded (the object exists); fs when `body` ends (before the rename).
   */
  onceCommitted(body: Readable, hook: () => void): void;
  /** Query parameter names of the adapter's signed URLs. */
  params: { signature: string; expiry: string; contentType: string; disposition: string };
  close(): Promise<void>;
}

async function fsSubject(): Promise<Subject & { fs: FsObjectStorage; baseUrl: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'notary-fs-storage-'));
  let clockOffsetMs = 0;
  let baseUrl = '';
  const fs = new FsObjectStorage({
    root,
    secret: randomBytes(32),
    publicBaseUrl: () => baseUrl,
    clock: () => Date.now() + clockOffsetMs,
  });
  const app = express();
  app.use('/files', createSignedFileRoute(fs));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    fs,
    baseUrl,
    storage: fs,
    pending: async () => readdir(path.join(root, '.tmp')).catch(() => []),
    expireOneSecondUrls: async () => {
      clockOffsetMs += 2000;
    },
    onceCommitted: (body, hook) => {
      body.once('end', hook);
    },
    params: { signature: 'sig', expiry: 'exp', contentType: 'ct', disposition: 'cd' },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function s3Subject(): Promise<Subject & { s3: S3ObjectStorage }> {
  const rgw = await startRadosgw();
  try {
    const s3 = new S3ObjectStorage(
      {
        kind: 's3',
        endpoint: rgw.endpoint,
        bucket: `notary-test-${randomBytes(4).toString('hex')}`,
        region: rgw.region,
        accessKeyId: rgw.accessKeyId,
        secretAccessKey: rgw.secretAccessKey,
        forcePathStyle: true,
      },
      { listPageSize: 2 },
    );
    await s3.ensureBucket();
    await s3.ensureBucket(); // idempotent
    let commitHook: (() => void) | undefined;
    s3.client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (commitHook && /^(PutObject|CompleteMultipartUpload)Command$/.test(context.commandName ?? '')) {
          const hook = commitHook;
          commitHook = undefined;
          hook();
        }
        return out;
      },
      { step: 'initialize', name: 'testCommitHook' },
    );
    return {
      s3,
      storage: s3,
      pending: async (prefix) => {
        const out = await s3.client.send(
          new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: prefix }),
        );
        return (out.Uploads ?? []).map((u) => `${u.Key} ${u.UploadId}`);
      },
      // SigV4 expiry is checked by the server's clock: nothing to inject, wait it out.
      expireOneSecondUrls: () => sleep(2500),
      onceCommitted: (_body, hook) => {
        commitHook = hook;
      },
      params: {
        signature: 'X-Amz-Signature',
        expiry: 'X-Amz-Expires',
        contentType: 'response-content-type',
        disposition: 'response-content-disposition',
      },
      close: () => rgw.stop(),
    };
  } catch (e) {
    await rgw.stop();
    throw e;
  }
}

/**
 * A pseudo-random byte stream (AES-256-CTR keystream, so no two parts look alike) of `total` bytes in 64 KiB
 * chunks, hashing what it emits. With `stallAt` it stops producing there (never ends) until destroyed.
 */
function generated(total: number, options: { stallAt?: number } = {}) {
  const cipher = createCipheriv('aes-256-ctr', randomBytes(32), randomBytes(16));
  const hash = createHash('sha256');
  let produced = 0;
  let onStall: () => void = () => undefined;
  const stalled = new Promise<void>((resolve) => {
    onStall = resolve;
  });
  const limit = Math.min(total, options.stallAt ?? total);
  const stream = new Readable({
    read() {
      if (produced >= limit) {
        if (limit < total) onStall();
        else this.push(null);
        return;
      }
      const chunk = cipher.update(Buffer.alloc(Math.min(64 * 1024, limit - produced)));
      produced += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, stalled, sha256: () => hash.copy().digest('hex'), produced: () => produced };
}

async function sha256Of(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

async function keys(storage: ObjectStorage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const k of storage.list(prefix)) out.push(k);
  return out;
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Replaces one query parameter's value in the raw URL, leaving every other byte as signed. */
function tamper(url: string, name: string, change: (value: string) => string): string {
  const re = new RegExp(`([?&]${name}=)([^&]*)`);
  const match = re.exec(url);
  if (match?.[2] === undefined) throw new Error(`no ${name} in ${url}`);
  const next = encodeURIComponent(change(decodeURIComponent(match[2])));
  return url.replace(re, `$1${next}`);
}

const flipLastHex = (v: string) => v.slice(0, -1) + (v.endsWith('0') ? '1' : '0');

/** `global.gc` without a command-line flag (vitest workers do not get `--expose-gc`). */
v8.setFlagsFromString('--expose-gc');
const forceGc = vm.runInNewContext('gc') as () => void;

let counter = 0;
const newPrefix = () => `t${++counter}-${randomBytes(4).toString('hex')}/`;

const expectAppError = async (promise: Promise<unknown>, code: string) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
};

describe.each([
  ['fs', fsSubject],
  ['s3 (radosgw)', s3Subject],
] as const)('object storage: %s', (_name, makeSubject) => {
  let t: Subject;
  beforeAll(async () => {
    t = await makeSubject();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('round-trips exact bytes, reports size, exists and list', async () => {
    const prefix = newPrefix();
    const key = `${prefix}hello.txt`;
    const bytes = Buffer.from('héllo, wörld\n\u0000\u00ff', 'utf8');
    expect(await t.storage.exists(key)).toBe(false);
    await expect(t.storage.put(key, Readable.from([bytes]), { contentType: 'text/plain' })).resolves.toEqual({
      size: bytes.length,
    });
    expect(await t.storage.exists(key)).toBe(true);
    const back = await sha256Of(await t.storage.get(key));
    expect(back).toEqual({ sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length });
    expect(await keys(t.storage, prefix)).toEqual([key]);
  });

  it('stores an empty object', async () => {
    const key = `${newPrefix()}empty`;
    await expect(t.storage.put(key, Readable.from([]))).resolves.toEqual({ size: 0 });
    expect(await t.storage.exists(key)).toBe(true);
    expect((await sha256Of(await t.storage.get(key))).size).toBe(0);
  });

  it('streams a 20 MiB body of unknown length (several 8 MiB parts on S3) byte for byte', async () => {
    const key = `${newPrefix()}big.bin`;
    const source = generated(20 * MiB + 12345);
    await expect(t.storage.put(key, source.stream)).resolves.toEqual({ size: 20 * MiB + 12345 });
    const back = await sha256Of(await t.storage.get(key));
    expect(back).toEqual({ sha256: source.sha256(), size: 20 * MiB + 12345 });
  });

  it('keeps memory flat while streaming 256 MiB of unknown length', async () => {
    const key = `${newPrefix()}huge.bin`;
    const total = 256 * MiB;
    const source = generated(total);
    // Sample retained (not merely allocated) buffer memory: a full GC before each sample.
    forceGc();
    const base = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const sampler = setInterval(() => {
      forceGc();
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
    }, 40);
    try {
      await expect(t.storage.put(key, source.stream)).resolves.toEqual({ size: total });
    } finally {
      clearInterval(sampler);
    }
    console.log(
      `[storage test] ${_name}: peak retained buffers ${(peak / MiB).toFixed(1)} MiB for ${total / MiB} MiB`,
    );
    // S3: 2 parts in flight + 1 filling + its concatenation, 8 MiB each (measured 40-65 MiB); fs: a few chunks.
    expect(peak).toBeLessThan(96 * MiB);
    await t.storage.delete(key);
  }, 180_000);

  it('lists in byte order, filters by prefix and paginates', async () => {
    const prefix = newPrefix();
    const names = ['a/c', 'a-b', 'a.x', 'a0', 'b', 'ab/z', 'a/b/d'];
    for (const n of names) await t.storage.put(`${prefix}${n}`, Readable.from([Buffer.from(n)]));
    const sorted = names.map((n) => `${prefix}${n}`).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    expect(await keys(t.storage, prefix)).toEqual(sorted);
    expect(await keys(t.storage, `${prefix}a/`)).toEqual([`${prefix}a/b/d`, `${prefix}a/c`]);
    expect(await keys(t.storage, `${prefix}a`)).toEqual(sorted.filter((k) => k.startsWith(`${prefix}a`)));
    expect(await keys(t.storage, `${prefix}zz`)).toEqual([]);
  });

  it('a put aborted mid-stream leaves no object, temp file or multipart upload', async () => {
    const prefix = newPrefix();
    const key = `${prefix}aborted.bin`;
    const source = generated(40 * MiB, { stallAt: 12 * MiB });
    const controller = new AbortController();
    const put = t.storage.put(key, source.stream, { signal: controller.signal });
    put.catch(() => undefined);
    await source.stalled;
    await until(async () => (await t.pending(prefix)).length > 0, 'the upload to be in flight');
    // Nothing is visible under the key while the upload runs.
    expect(await t.storage.exists(key)).toBe(false);
    expect(await keys(t.storage, prefix)).toEqual([]);
    const reason = new Error('client went away');
    controller.abort(reason);
    await expect(put).rejects.toBe(reason);
    expect(source.stream.destroyed).toBe(true);
    expect(await keys(t.storage, prefix)).toEqual([]);
    expect(await t.pending(prefix)).toEqual([]);
    expect(await t.storage.exists(key)).toBe(false);
  });

  it('an abort arriving after the last byte, while the object is being committed, still leaves nothing', async () => {
    const prefix = newPrefix();
    for (const size of [1000, 9 * MiB]) {
      const key = `${prefix}late-${size}`;
      const source = generated(size);
      const controller = new AbortController();
      const reason = new Error('changed my mind');
      t.onceCommitted(source.stream, () => controller.abort(reason));
      await expect(t.storage.put(key, source.stream, { signal: controller.signal })).rejects.toBe(reason);
      expect(await t.storage.exists(key)).toBe(false);
    }
    expect(await keys(t.storage, prefix)).toEqual([]);
    expect(await t.pending(prefix)).toEqual([]);
  });

  it('a put whose stream errors mid-way rejects with that error and leaves nothing', async () => {
    const prefix = newPrefix();
    const key = `${prefix}broken.bin`;
    const source = generated(40 * MiB, { stallAt: 12 * MiB });
    const put = t.storage.put(key, source.stream);
    put.catch(() => undefined);
    await source.stalled;
    await until(async () => (await t.pending(prefix)).length > 0, 'the upload to be in flight');
    source.stream.destroy(new Error('disk on fire'));
    await expect(put).rejects.toThrow('disk on fire');
    expect(await keys(t.storage, prefix)).toEqual([]);
    expect(await t.pending(prefix)).toEqual([]);
  });

  it('a stream failing before any byte, or an already aborted signal, leaves nothing', async () => {
    const prefix = newPrefix();
    const failing = new Readable({
      read() {
        this.destroy(new Error('no bytes for you'));
      },
    });
    await expect(t.storage.put(`${prefix}a`, failing)).rejects.toThrow('no bytes for you');
    const reason = new Error('too late');
    const body = Readable.from([Buffer.from('x')]);
    await expect(t.storage.put(`${prefix}b`, body, { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
    expect(body.destroyed).toBe(true);
    expect(await keys(t.storage, prefix)).toEqual([]);
    expect(await t.pending(prefix)).toEqual([]);
  });

  it('delete is idempotent; get of a missing object is NOT_FOUND', async () => {
    const key = `${newPrefix()}doomed`;
    await t.storage.delete(key);
    await t.storage.put(key, Readable.from([Buffer.from('bye')]));
    await t.storage.delete(key);
    await t.storage.delete(key);
    expect(await t.storage.exists(key)).toBe(false);
    await expectAppError(t.storage.get(key), 'NOT_FOUND');
  });

  it('rejects keys that could escape or collide with internals (BAD_REQUEST)', async () => {
    for (const bad of ['', '../x', '/abs', 'a//b', 'a/../b', 'a/./b', '.tmp/x', 'a b', 'a\\b', 'é', 'a/']) {
      const body = Readable.from([Buffer.from('x')]);
      await expectAppError(t.storage.put(bad, body), 'BAD_REQUEST');
      expect(body.destroyed).toBe(true);
      await expectAppError(
        t.storage.presignGet(bad, {
          expiresInSeconds: 60,
          contentType: 'text/plain',
          disposition: 'inline',
          fileName: 'x',
        }),
        'BAD_REQUEST',
      );
    }
    const opts = {
      expiresInSeconds: 60,
      contentType: 'text/plain',
      disposition: 'inline',
      fileName: 'x',
    } as const;
    await expectAppError(t.storage.presignGet('k', { ...opts, expiresInSeconds: 0 }), 'BAD_REQUEST');
    await expectAppError(t.storage.presignGet('k', { ...opts, expiresInSeconds: 8 * 86400 }), 'BAD_REQUEST');
    await expectAppError(
      t.storage.presignGet('k', { ...opts, contentType: 'text/html\r\nX-Evil: 1' }),
      'BAD_REQUEST',
    );
    await expectAppError(t.storage.presignGet('k', { ...opts, fileName: 'a\nb' }), 'BAD_REQUEST');
    await expectAppError(t.storage.presignGet('k', { ...opts, fileName: '📄'.repeat(256) }), 'BAD_REQUEST');
    await expect(
      t.storage.presignGet('k', { ...opts, contentType: 'text/plain; charset=utf-8' }),
    ).resolves.toBeTruthy();
  });

  it('a presigned URL serves the bytes inline with the signed type and a Unicode file name', async () => {
    const key = `${newPrefix()}doc.pdf`;
    const bytes = Buffer.from('%PDF-1.7\n% not really a pdf\n');
    await t.storage.put(key, Readable.from([bytes]), { contentType: 'application/pdf' });
    const fileName = 'relatório – 日本.pdf';
    const url = await t.storage.presignGet(key, {
      expiresInSeconds: 300,
      contentType: 'application/pdf',
      disposition: 'inline',
      fileName,
    });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const cd = parseContentDisposition(res.headers.get('content-disposition') ?? '');
    expect(cd.type).toBe('inline');
    expect(cd.parameters.filename).toBe(fileName);
    // The header is plain ASCII whatever the name (RFC 8187 filename* plus an ASCII fallback).
    expect(res.headers.get('content-disposition')).toMatch(/^[\x20-\x7e]+$/);
  });

  it('a presigned URL carries the longest allowed file name (255 astral code points)', async () => {
    const key = `${newPrefix()}long-name`;
    await t.storage.put(key, Readable.from([Buffer.from('x')]));
    const fileName = `${'📄'.repeat(250)}.json`;
    const url = await t.storage.presignGet(key, {
      expiresInSeconds: 300,
      contentType: 'application/json',
      disposition: 'attachment',
      fileName,
    });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(parseContentDisposition(res.headers.get('content-disposition') ?? '').parameters.filename).toBe(
      fileName,
    );
  });

  it('a presigned URL can force a download with a neutral type', async () => {
    const key = `${newPrefix()}page.html`;
    const bytes = Buffer.from('<script>alert(1)</script>');
    await t.storage.put(key, Readable.from([bytes]), { contentType: 'text/html' });
    const url = await t.storage.presignGet(key, {
      expiresInSeconds: 300,
      contentType: 'application/octet-stream',
      disposition: 'attachment',
      fileName: 'página "final".html',
    });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const cd = parseContentDisposition(res.headers.get('content-disposition') ?? '');
    expect(cd).toMatchObject({ type: 'attachment', parameters: { filename: 'página "final".html' } });
  });

  it('an expired URL is refused with 403', async () => {
    const key = `${newPrefix()}short-lived`;
    await t.storage.put(key, Readable.from([Buffer.from('soon gone')]));
    const url = await t.storage.presignGet(key, {
      expiresInSeconds: 1,
      contentType: 'text/plain',
      disposition: 'inline',
      fileName: 'x.txt',
    });
    await t.expireOneSecondUrls();
    const res = await fetch(url);
    expect(res.status).toBe(403);
    await res.arrayBuffer();
  });

  it('a tampered URL (key, signature, expiry, content type, disposition) is refused with 403', async () => {
    const prefix = newPrefix();
    const key = `${prefix}mine.pdf`;
    const other = `${prefix}theirs.pdf`;
    await t.storage.put(key, Readable.from([Buffer.from('mine')]));
    await t.storage.put(other, Readable.from([Buffer.from('theirs')]));
    const url = await t.storage.presignGet(key, {
      expiresInSeconds: 300,
      contentType: 'application/pdf',
      disposition: 'attachment',
      fileName: 'mine.pdf',
    });
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('mine');

    const p = t.params;
    const tampered = {
      key: url.replace(key, other),
      signature: tamper(url, p.signature, flipLastHex),
      expiry: tamper(url, p.expiry, (v) => String(Number(v) + 3600)),
      contentType: tamper(url, p.contentType, () => 'text/html'),
      disposition: tamper(url, p.disposition, (v) => v.replace('attachment', 'inline')),
    };
    for (const [what, bad] of Object.entries(tampered)) {
      expect(bad, what).not.toBe(url);
      const res = await fetch(bad);
      expect(res.status, what).toBe(403);
      expect(await res.text(), what).not.toContain('theirs');
    }
  });

  it('a valid URL for an object deleted since is 404', async () => {
    const key = `${newPrefix()}gone`;
    await t.storage.put(key, Readable.from([Buffer.from('x')]));
    const url = await t.storage.presignGet(key, {
      expiresInSeconds: 300,
      contentType: 'text/plain',
      disposition: 'inline',
      fileName: 'gone.txt',
    });
    await t.storage.delete(key);
    const res = await fetch(url);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  });
});

describe('object storage: fs signed-file route', () => {
  let t: Awaited<ReturnType<typeof fsSubject>>;
  beforeAll(async () => {
    t = await fsSubject();
  });
  afterAll(async () => {
    await t?.close();
  });
  const sign = (key: string, contentType = 'image/svg+xml') =>
    t.fs.presignGet(key, { expiresInSeconds: 60, contentType, disposition: 'inline', fileName: 'x.svg' });

  it('serves hostile content inert: nosniff, sandboxing CSP, no caching, exact length and type', async () => {
    const key = `${newPrefix()}evil.svg`;
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>';
    await t.fs.put(key, Readable.from([Buffer.from(svg)]));
    const res = await fetch(await sign(key));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(svg)));
    expect(await res.text()).toBe(svg);
  });

  it('keeps a text type exactly as signed (no charset appended)', async () => {
    const key = `${newPrefix()}note.txt`;
    await t.fs.put(key, Readable.from([Buffer.from('hi')]));
    const res = await fetch(await sign(key, 'text/plain'));
    expect(res.headers.get('content-type')).toBe('text/plain');
    await res.arrayBuffer();
  });

  it('answers HEAD with the headers and no body', async () => {
    const key = `${newPrefix()}head.bin`;
    await t.fs.put(key, Readable.from([Buffer.alloc(1000, 7)]));
    const res = await fetch(await sign(key, 'application/octet-stream'), { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1000');
    expect(res.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('errors are JSON {message, code}: bad signature, repeated parameter, missing parameters, expiry', async () => {
    const key = `${newPrefix()}e.txt`;
    await t.fs.put(key, Readable.from([Buffer.from('e')]));
    const url = await sign(key, 'text/plain');
    const cases: [string, string][] = [
      [tamper(url, 'sig', flipLastHex), 'Invalid signature'],
      [`${url}&ct=text/html`, 'Invalid signature'],
      [url.split('?')[0] ?? '', 'Invalid signature'],
      [`${t.baseUrl}/files/${key}?sig=${'0'.repeat(64)}`, 'Invalid signature'],
    ];
    for (const [bad, message] of cases) {
      const res = await fetch(bad);
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ message, code: 'FORBIDDEN' });
    }
    const query = new URL(url).searchParams;
    const exp = Number(query.get('exp'));
    await expect(t.fs.verifySignedRequest(key, query, exp * 1000)).resolves.toMatchObject({ size: 1 });
    await expect(t.fs.verifySignedRequest(key, query, exp * 1000 + 1)).rejects.toThrow('URL expired');
  });

  it('removes temp files left by a crash once they are stale, not those of running puts', async () => {
    const source = generated(3 * MiB, { stallAt: 1 * MiB });
    const put = t.fs.put(`${newPrefix()}running`, source.stream);
    put.catch(() => undefined);
    await source.stalled;
    const tmp = path.join(t.fs.root, '.tmp');
    await writeFile(path.join(tmp, 'crashed.part'), 'left over');
    const old = new Date(Date.now() - 25 * 3600 * 1000);
    await utimes(path.join(tmp, 'crashed.part'), old, old);
    expect(await t.fs.removeStaleTempFiles()).toBe(1);
    expect(await readdir(tmp)).toHaveLength(1);
    source.stream.destroy(new Error('stop'));
    await expect(put).rejects.toThrow('stop');
    expect(await readdir(tmp)).toEqual([]);
  });

  it('publishes a put only when complete (temp file renamed into place)', async () => {
    const prefix = newPrefix();
    const key = `${prefix}slow.bin`;
    const source = generated(3 * MiB, { stallAt: 1 * MiB });
    const put = t.fs.put(key, source.stream);
    put.catch(() => undefined);
    await source.stalled;
    expect(await t.fs.exists(key)).toBe(false);
    expect(await t.pending(prefix)).toHaveLength(1);
    source.stream.destroy(new Error('stop'));
    await expect(put).rejects.toThrow('stop');
    expect(await t.pending(prefix)).toEqual([]);
  });
});
