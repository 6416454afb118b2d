import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { Document } from '@notary/server/db/entities';
import { type DocumentDto, errorMessage } from '@notary/shared';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { type PgCluster, postgresBinDir, startPgCluster } from '../harness/pg-cluster';
import { createTestPki } from '../harness/pki';
import { type RadosgwServer, radosgwAvailable, startRadosgw } from '../harness/radosgw';
import { startTestRedis, type TestRedis } from '../harness/redis';
import { startTestService, storedKeys, type TestService } from '../harness/service';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** One upload's outcome as the client saw it. */
interface Outcome {
  status: number;
  retryAfter: string | null;
  code: string | undefined;
  sha256: string;
  doc: DocumentDto | undefined;
}

/**
 * One upload (64 KiB and a bit, random bytes). A transport failure (connection cut before an answer) is an
 * outcome too, status 0: the test then says so instead of losing the client.
 */
async function upload(t: TestService, token: string, bytes: Uint8Array): Promise<Outcome> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([bytes]), 'outage.bin');
  const outcome: Outcome = {
    status: 0,
    retryAfter: null,
    code: undefined,
    sha256: sha256(bytes),
    doc: undefined,
  };
  try {
    const res = await fetch(`${t.url}/api/documents/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
      // A bound on a hung answer, not a duration the test relies on.
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await res.json()) as DocumentDto & { code?: string };
    outcome.status = res.status;
    outcome.retryAfter = res.headers.get('retry-after');
    if (res.status === 201) outcome.doc = body;
    else outcome.code = body.code;
  } catch (e) {
    outcome.code = errorMessage(e);
  }
  return outcome;
}

/**
 * `uploaders` clients uploading one after another until `during` has run and `after` more uploads were
 * acknowledged: the outage happens in the middle of the load, and the load itself shows the service recovered.
 * Counting, not waiting: `during` starts once `before` uploads were acknowledged.
 */
async function underLoad(
  t: TestService,
  token: string,
  during: (refusals: (count: number) => Promise<void>) => Promise<void>,
  counts = { uploaders: 4, before: 4, after: 8 },
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const events = new EventEmitter();
  let target = counts.before;
  let done = false;
  const acknowledged = () => outcomes.filter((o) => o.status === 201).length;
  const reached = () =>
    acknowledged() >= target ? Promise.resolve() : once(events, 'reached').then(() => undefined);
  const uploader = async () => {
    while (!done) {
      const o = await upload(t, token, randomBytes(64 * 1024 + Math.floor(Math.random() * 4096)));
      outcomes.push(o);
      if (acknowledged() >= target) events.emit('reached');
      if (o.status === 503) events.emit('refused');
    }
  };
  const clients = Array.from({ length: counts.uploaders }, uploader);
  await reached();
  const refusals = async (count: number) => {
    for (let seen = 0; seen < count; seen++) await once(events, 'refused');
  };
  await during(refusals);
  target = acknowledged() + counts.after;
  await reached();
  done = true;
  await Promise.all(clients);
  return outcomes;
}

/**
 * Every client of `outcomes` (all the uploads the service ever had) got 201 or a 503 naming when to retry; every
 * 201 is recorded with its bytes intact, no other row exists, and no object is stored without its row.
 */
async function expectNothingLost(t: TestService, outcomes: Outcome[]): Promise<void> {
  for (const o of outcomes) {
    if (o.status === 201) continue;
    expect({ status: o.status, code: o.code }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(Number(o.retryAfter)).toBeGreaterThan(0);
  }
  const em = t.service.deps.db.fork();
  const rows = await em.find(Document, {});
  const acked = outcomes.filter((o) => o.status === 201);
  expect(rows.length).toBe(acked.length);
  for (const o of acked) {
    const row = rows.find((r) => r.id === o.doc?.id);
    expect(row?.sha256Hash).toBe(o.sha256);
    const stream = await t.service.deps.storage.get(row?.storageKey ?? '');
    const hash = createHash('sha256');
    for await (const chunk of stream) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(o.sha256);
  }
  // No object without its row.
  expect((await storedKeys(t)).sort()).toEqual(rows.map((r) => r.storageKey).sort());
}

/**
 * Dependency outages (docs/deployment.md, Outages): the service on a PostgreSQL cluster and a radosgw of the
 * test's own, each taken away in the middle of concurrent uploads and brought back; the service is never
 * restarted.
 */
describe.skipIf(!radosgwAvailable() || !postgresBinDir())(
  'PostgreSQL and the object store away under uploads',
  () => {
    let pg: PgCluster;
    let rgw: RadosgwServer;
    let t: TestService;
    let token: string;
    // Every upload's outcome in this service's life: the checks cover what every test left behind.
    const acknowledged: Outcome[] = [];

    beforeAll(async () => {
      [pg, rgw] = await Promise.all([startPgCluster(), startRadosgw()]);
      t = await startTestService('postgresql', {
        DATABASE_URL: pg.url,
        S3_ENDPOINT: rgw.endpoint,
        S3_BUCKET: 'notary-outages',
        S3_REGION: rgw.region,
        S3_ACCESS_KEY_ID: rgw.accessKeyId,
        S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      });
      token = await t.token('outages@example.com');
    });

    afterAll(async () => {
      await t?.close();
      await Promise.all([pg?.stop(), rgw?.stop()]);
    });

    it('PostgreSQL restarted (pg_ctl restart -m fast): 201 or 503 with Retry-After, every 201 kept intact', async () => {
      const before = (await t.service.deps.db.fork().count(Document, {})) ?? 0;
      expect(before).toBe(0);
      const outcomes = await underLoad(t, token, () => pg.restart());
      acknowledged.push(...outcomes);
      await expectNothingLost(t, acknowledged);
      // No connection the restart cut stays checked out of the pool (they would add up until every query waits).
      const pool = await (
        t.service.deps.db.orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }
      ).getNativeClient();
      await expect.poll(() => pool.totalCount - pool.idleCount).toBe(0);
      // A read through the REST face answers again too.
      const list = await api<{ documents: DocumentDto[] }>(t.url, '/api/documents', { token });
      expect(list.status).toBe(200);
    }, 180_000);

    it('radosgw stopped: uploads answer 503 with Retry-After, none leaves a row; back without a restart', async () => {
      const outcomes = await underLoad(t, token, async (refusals) => {
        await rgw.stopGateway();
        // The outage as clients see it: refusals counted, not a time waited.
        await refusals(4);
        await rgw.startGateway();
      });
      expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThanOrEqual(4);
      acknowledged.push(...outcomes);
      await expectNothingLost(t, acknowledged);
    }, 180_000);
  },
);

/** Redis away: limits are counted by the instance alone (fail open to the per-instance limiter), uploads go on. */
describe('Redis away', () => {
  let redis: TestRedis;
  let t: TestService;
  let token: string;

  beforeAll(async () => {
    redis = await startTestRedis();
    t = await startTestService('pglite', { REDIS_URL: redis.url, RATE_LIMITS: 'on' });
    token = await t.token('redis-outage@example.com');
  });

  afterAll(async () => {
    await t?.close();
    await redis?.stop();
  });

  it('uploads still answer 201, the upload limit still holds per instance, and Redis counts again once back', async () => {
    const bytes = () => randomBytes(1024);
    expect((await upload(t, token, bytes())).status).toBe(201);
    await redis.stop();
    // Counted in this instance's memory from zero: the spec's 10 a minute, then 429.
    const during: number[] = [];
    for (let i = 0; i < 11; i++) during.push((await upload(t, token, bytes())).status);
    expect(during).toEqual([...Array(10).fill(201), 429]);
    await redis.start();
    // The fresh Redis counts from zero: once the client reconnected, the upload budget is whole again.
    await expect.poll(async () => (await upload(t, token, bytes())).status, { interval: 200 }).toBe(201);
  });
});

/**
 * The TSA failing every request: timestamps and signed certificates are made when asked for, so nothing
 * waits in the service; the client gets 502 naming the TSA with Retry-After, and the same request succeeds
 * once the TSA answers again.
 */
describe('TSA away', () => {
  let tsa: TestTsa;
  let t: TestService;
  let token: string;
  let doc: DocumentDto;

  beforeAll(async () => {
    const pki = await createTestPki();
    tsa = await startTestTsa(pki);
    t = await startTestService('pglite', { ...signingEnv(pki, tsa), SIGNING_LEVEL: 'B-T' });
    token = await t.token('tsa-outage@example.com');
    const o = await upload(t, token, randomBytes(2048));
    if (!o.doc) throw new Error(`upload: ${o.status}`);
    doc = o.doc;
  });

  afterAll(async () => {
    await t?.close();
    await tsa?.stop();
  });

  const timestamp = () =>
    fetch(`${t.url}/api/documents/${doc.id}/timestamp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
  const certificate = () =>
    fetch(`${t.url}/api/documents/${doc.id}/certificate?signed=1`, {
      headers: { authorization: `Bearer ${token}` },
    });

  it('502 with Retry-After and a message naming the TSA while it fails; 200 once it is back', async () => {
    tsa.setMode('fail-500');
    for (const res of [await timestamp(), await certificate()]) {
      const body = (await res.json()) as { code: string; message: string };
      expect({ status: res.status, code: body.code }).toEqual({ status: 502, code: 'BAD_GATEWAY' });
      expect(body.message).toMatch(/^TSA .* answered HTTP 500/);
      expect(res.headers.get('retry-after')).toBe('30');
    }
    tsa.setMode('ok');
    const stamped = await timestamp();
    expect(stamped.status).toBe(200);
    await stamped.arrayBuffer();
    const signed = await certificate();
    expect(signed.status).toBe(200);
    expect(signed.headers.get('x-service-signed')).toBe('pades');
    await signed.arrayBuffer();
  });
});
