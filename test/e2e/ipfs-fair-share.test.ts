import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FairQueue, FairQueueSnapshot } from '@notary/platform/fair-queue';
import { validarAccessCode } from '@notary/server/domain/certificates/validar';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { type IpfsTestGateway, startIpfsGateway } from '../harness/ipfs-gateway';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

/**
 * The IPFS read slots shared fairly across tenants, against a loopback gateway that never answers some blocks:
 * three accounts holding every import place cannot keep a fourth tenant out for longer than one import.
 */

type Reply = { status: number; body: { message?: string; code?: string; sourceType?: string } };
type Answer = Reply | Error;

/** Resolves once the queue's state satisfies `ready`, woken by its change events (no polling, no sleeps). */
async function queueState(queue: FairQueue, ready: (s: FairQueueSnapshot) => boolean): Promise<void> {
  while (!ready(queue.snapshot())) await once(queue, 'change');
}

describe('IPFS imports: three accounts holding every place with a stalling gateway', () => {
  let gw: IpfsTestGateway;
  let t: TestService;
  const held = new Set<string>();

  beforeAll(async () => {
    gw = await startIpfsGateway();
    gw.hold = (cid) => held.has(cid);
    t = await startTestService('pglite', { IPFS_GATEWAYS: gw.url, IPFS_IMPORT_CONCURRENCY: '3' });
  });
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  /** An import the client can hang up on; its answer, or the fetch's error once it did. */
  function importCid(token: string, cid: string) {
    const client = new AbortController();
    const answer: Promise<Answer> = fetch(`${t.url}/api/documents/import/ipfs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cid, consent: true }),
      signal: client.signal,
    }).then(
      async (res): Promise<Answer> => ({ status: res.status, body: (await res.json()) as Reply['body'] }),
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    return { client, answer };
  }

  /** A file whose block the gateway never serves. */
  async function stalledFile(): Promise<string> {
    const cid = (await gw.putBlock(Buffer.from(`stalled ${randomUUID()}`), 'raw')).toString();
    held.add(cid);
    return cid;
  }

  it('a fourth tenant takes the place of a waiting import of one of them and its import runs as soon as one running import ends; certificates keep their own slots', async () => {
    const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((n) => t.token(freshEmail(`ipfs-${n}`))));
    const sybils = [a, b, c].map((token) => token ?? '');
    const queue = t.service.deps.ipfs.queues.import;
    expect(queue.snapshot()).toMatchObject({ concurrency: 3, maxWaiting: 3, maxPerKey: 3 });

    const running = await Promise.all(sybils.map(async (token) => importCid(token, await stalledFile())));
    await queueState(queue, (s) => s.running === 3);
    // Their first (and only) requests reached the gateway, which holds them.
    while (gw.requests.filter((r) => held.has(r.cid)).length < 3) await once(gw.events, 'request');
    const waiting = await Promise.all(sybils.map(async (token) => importCid(token, await stalledFile())));
    await queueState(queue, (s) => s.waiting === 3);

    // Every place is taken: another import of theirs is refused at once, before any request.
    const requests = gw.requests.length;
    const refused = await importCid(sybils[1] ?? '', await stalledFile()).answer;
    expect(refused).toMatchObject({
      status: 429,
      body: {
        code: 'RATE_LIMITED',
        message:
          'The service is reading as many IPFS files at once as it allows (3), and as many wait: try again shortly',
      },
    });
    expect(gw.requests.length).toBe(requests);
    // The imports and the certificates of imported PDFs have separate slots: the certificates' are all free.
    expect(t.service.deps.ipfs.queues.certificate.snapshot()).toMatchObject({ running: 0, waiting: 0 });

    // The fourth tenant's import takes the place of the newest waiting import of a tenant holding the most.
    const file = await gw.putBlock(Buffer.from(`the fourth tenant's ${randomUUID()}`), 'raw');
    const fourth = importCid(d ?? '', file.toString());
    const lost = await Promise.race(waiting.map((w) => w.answer));
    expect(lost).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    await queueState(queue, (s) =>
      s.keys.some((k) => k.running === 0 && k.waiting === 1 && s.keys.length === 4),
    );

    // One running import ends (its client hangs up): the next slot is the fourth tenant's, whose import completes.
    running[0]?.client.abort();
    const done = await fourth.answer;
    expect(done).toMatchObject({ status: 201, body: { sourceType: 'ipfs' } });

    for (const { client } of [...running, ...waiting]) client.abort();
    await Promise.all([...running, ...waiting].map((r) => r.answer));
    await queueState(queue, (s) => s.running === 0 && s.waiting === 0);
  });
});

describe('IPFS certificate reads on the public route: the caller’s share, not the owner’s', () => {
  const SECRET = 'ipfs-fair-share-secret-0123456789abcdef0123';
  let gw: IpfsTestGateway;
  let t: TestService;
  const held = new Set<string>();

  beforeAll(async () => {
    gw = await startIpfsGateway();
    gw.hold = (cid) => held.has(cid);
    // A stalled read ends at the import deadline: the public certificate is then issued apart, saying why.
    t = await startTestService('pglite', { SECRET, IPFS_GATEWAYS: gw.url, IPFS_IMPORT_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  it('an anonymous call for an imported PDF’s certificate reads it on its address’s share of the certificate slots', async () => {
    const token = (await t.token(freshEmail('ipfs-owner'))) ?? '';
    const pdf = await readFile(path.join(FIXTURES_DIR, 'pdfs', 'asciihexdecode.pdf'));
    const cid = (await gw.putBlock(pdf, 'raw')).toString();
    const imported = await fetch(`${t.url}/api/documents/import/ipfs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cid, consent: true }),
    });
    expect(imported.status).toBe(201);
    const doc = (await imported.json()) as DocumentDto;
    expect(doc.mimeType).toBe('application/pdf');

    // From now on the gateway holds the file: the certificate's read stays in its slot while we look.
    held.add(cid);
    const queue = t.service.deps.ipfs.queues.certificate;
    const code = validarAccessCode(SECRET, doc.serialNumber);
    const answer = fetch(`${t.url}/api/public/documents/${doc.serialNumber}/certificate?_secretCode=${code}`);
    await queueState(queue, (s) => s.running === 1);
    const [share] = queue.snapshot().keys;
    expect(share?.key).toMatch(/^anonymous (::ffff:)?127\.0\.0\.1$/);

    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    await res.arrayBuffer();
  });
});
