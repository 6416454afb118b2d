import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { AppError } from '@notary/shared';
import type { CID } from 'multiformats/cid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IpfsTestGateway, startIpfsGateway, zeros } from '../../../../test/harness/ipfs-gateway';
import type { IpfsConfig } from '../../config';
import { createIpfsGateways, IPFS_BUSY_RETRY_AFTER_SECONDS } from '.';
import { DAG_LIMITS, type DagLimits } from './dag';

/**
 * The bounds of one IPFS read against a loopback trustless gateway serving crafted DAGs no importer writes:
 * a block linked thousands of times is fetched once; huge nodes of tiny files, empty parts and leaves read
 * again past the cache end within the budgets with a BAD_REQUEST naming them; a gateway stalling between
 * blocks meets the overall deadline; reads beyond the concurrency are refused with 429; an abort or a
 * destroyed stream stops every request (the gateway sees the held ones closed, and no more).
 */

const MiB = 1024 * 1024;
let gw: IpfsTestGateway;

beforeAll(async () => {
  gw = await startIpfsGateway();
});
afterAll(async () => {
  await gw?.close();
});

function client(options: Partial<IpfsConfig> = {}, limits: Partial<DagLimits> = {}) {
  return createIpfsGateways(
    {
      gateways: [gw.url],
      publicGateway: 'https://ipfs.example',
      timeoutMs: 60_000,
      importTimeoutMs: 120_000,
      concurrency: 4,
      ...options,
    },
    { ...DAG_LIMITS, ...limits },
  );
}

/** Reads the whole file: its size and SHA-256, or the error it failed with. */
async function read(ipfs: ReturnType<typeof client>, cid: CID, signal = new AbortController().signal) {
  try {
    const file = await ipfs.fetchFile(cid.toString(), { signal });
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of file.stream) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { declared: file.size, size, sha256: hash.digest('hex') };
  } catch (e) {
    return e as AppError;
  }
}

/** Requests the gateway received for `cid` since `from`. */
const requestsFor = (cid: CID, from = 0) =>
  gw.requests.slice(from).filter((r) => r.cid === cid.toString()).length;

/** Resolves once the gateway has seen `n` more `event`s (counted from the call). */
function gatewayEvents(event: 'request' | 'abandoned', n: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const on = () => {
      if (++seen < n) return;
      gw.events.off(event, on);
      resolve();
    };
    gw.events.on(event, on);
  });
}

describe('one IPFS read is bounded', () => {
  it('a leaf linked 5000 times is fetched once, and the file reads whole', async () => {
    const leaf = await gw.putBlock(Buffer.alloc(1024, 7), 'raw');
    const root = await gw.putFileNode({
      links: Array.from({ length: 5000 }, () => ({ cid: leaf, size: 1024 })),
    });
    const from = gw.requests.length;
    const got = await read(client(), root);
    expect(got).toEqual({
      declared: 5000 * 1024,
      size: 5000 * 1024,
      sha256: createHash('sha256')
        .update(Buffer.alloc(5000 * 1024, 7))
        .digest('hex'),
    });
    expect(gw.requests.length - from).toBe(2);
    expect(requestsFor(leaf, from)).toBe(1);
  });

  it('200 MiB of zeros (one leaf under interior nodes mostly alike) is 4 requests', async () => {
    const root = await gw.addFile(zeros(200 * MiB), 'v1');
    const from = gw.requests.length;
    const got = await read(client(), root);
    expect(got).toMatchObject({ declared: 200 * MiB, size: 200 * MiB });
    // The root, one full interior node (4 of 5 alike), the last interior node, one leaf.
    expect(gw.requests.length - from).toBe(4);
  });

  it('a 2 MiB node of a tiny file linked 5000 times: BAD_REQUEST naming the block budget, the node fetched once', async () => {
    const leaf = await gw.putBlock(Buffer.from('x'), 'raw');
    // One link padded by its name: nearly 2 MiB of block for 1 byte of file.
    const huge = await gw.putFileNode({ links: [{ cid: leaf, size: 1, name: 'p'.repeat(2 * MiB - 200) }] });
    const root = await gw.putFileNode({
      links: Array.from({ length: 5000 }, () => ({ cid: huge, size: 1 })),
    });
    const from = gw.requests.length;
    const error = await read(client(), root);
    expect(error).toMatchObject({ code: 'BAD_REQUEST' });
    const budget = Math.ceil(5000 / 256) + 64;
    expect((error as AppError).message).toBe(
      `cid: ${root} names a DAG this service does not read: it takes more than ${budget} blocks for a file of 5000 bytes (blocks linked over and over, or far larger than the file they make)`,
    );
    expect(requestsFor(huge, from)).toBe(1);
    expect(requestsFor(leaf, from)).toBe(1);
  });

  it('distinct 2 MiB nodes of a tiny file: BAD_REQUEST naming the byte budget after a few blocks', async () => {
    const leaf = await gw.putBlock(Buffer.from('y'), 'raw');
    const huge: CID[] = [];
    for (let i = 0; i < 20; i++) {
      huge.push(
        await gw.putFileNode({ links: [{ cid: leaf, size: 1, name: `${i}`.padEnd(2 * MiB - 200, 'q') }] }),
      );
    }
    const root = await gw.putFileNode({ links: huge.map((cid) => ({ cid, size: 1 })) });
    const from = gw.requests.length;
    const error = await read(client(), root);
    expect(error).toMatchObject({ code: 'BAD_REQUEST' });
    expect((error as AppError).message).toContain(
      `it takes more than ${2 * 20 + 2 * 2 * MiB} bytes of blocks for a file of 20 bytes`,
    );
    // 4 MiB and 40 bytes: the root and one huge node fit, the second is over. Prefetching asks a few ahead.
    const fetched = huge.reduce((n, cid) => n + requestsFor(cid, from), 0);
    expect(fetched).toBeGreaterThanOrEqual(2);
    expect(fetched).toBeLessThanOrEqual(2 + 4);
  });

  it('empty parts: BAD_REQUEST from the node linking them, nothing behind it fetched', async () => {
    const empty = await gw.putFileNode({ links: [] });
    const root = await gw.putFileNode({
      links: Array.from({ length: 5000 }, () => ({ cid: empty, size: 0 })),
    });
    const mixed = await gw.putFileNode({
      links: [
        { cid: await gw.putBlock(Buffer.from('ab'), 'raw'), size: 2 },
        { cid: empty, size: 0 },
      ],
    });
    for (const cid of [root, mixed]) {
      const from = gw.requests.length;
      const error = await read(client(), cid);
      expect(error).toMatchObject({ code: 'BAD_REQUEST' });
      expect((error as AppError).message).toContain(
        `links a part of 0 bytes (${empty}), which no importer writes`,
      );
      expect(gw.requests.slice(from)).toEqual([{ cid: cid.toString(), format: 'raw' }]);
    }
    // An empty file is its root alone, and reads.
    expect(await read(client(), empty)).toMatchObject({ declared: 0, size: 0 });
  });

  it('leaves read again once the cache is full are fetched again and counted against the byte budget', async () => {
    // The same leaf every 5th part, 4 distinct ones between: never two of its requests under way at once.
    const leaf = await gw.putBlock(Buffer.alloc(4096, 1), 'raw');
    const links: { cid: CID; size: number }[] = [];
    for (let i = 0; i < 100; i++) {
      const cid = i % 5 === 0 ? leaf : await gw.putBlock(Buffer.alloc(4096, `again ${i}`), 'raw');
      links.push({ cid, size: 4096 });
    }
    const root = await gw.putFileNode({ links });
    let from = gw.requests.length;
    expect(await read(client(), root)).toMatchObject({ size: 409_600 });
    expect(requestsFor(leaf, from)).toBe(1);
    from = gw.requests.length;
    expect(await read(client({}, { leafCacheBytes: 0 }), root)).toMatchObject({ size: 409_600 });
    expect(requestsFor(leaf, from)).toBe(20);
    from = gw.requests.length;
    // Half the file's size in budget: the leaf fetched again past it is refused.
    const error = await read(client({}, { leafCacheBytes: 0, bytesPerFileByte: 0.5, bytesSlack: 0 }), root);
    expect(error).toMatchObject({ code: 'BAD_REQUEST' });
    expect((error as AppError).message).toContain(
      'more than 204800 bytes of blocks for a file of 409600 bytes',
    );
    expect(gw.requests.length - from).toBeLessThanOrEqual(1 + 204_800 / 4096 + 4);
  });

  it('a gateway stalling between blocks: GATEWAY_TIMEOUT naming IPFS_IMPORT_TIMEOUT_MS, the held requests closed', async () => {
    const a = await gw.putBlock(Buffer.from('stall a'), 'raw');
    const b = await gw.putBlock(Buffer.from('stall b'), 'raw');
    const root = await gw.putFileNode({ links: [a, b].map((cid) => ({ cid, size: 7 })) });
    gw.hold = (cid) => cid === a.toString() || cid === b.toString();
    try {
      const abandoned = gatewayEvents('abandoned', 2);
      const error = await read(client({ importTimeoutMs: 1000 }), root);
      expect(error).toMatchObject({ code: 'GATEWAY_TIMEOUT' });
      expect((error as AppError).message).toBe(
        `Reading ${root} from the IPFS gateways did not finish within 1000 ms (IPFS_IMPORT_TIMEOUT_MS)`,
      );
      await abandoned;
      expect(requestsFor(a)).toBe(1);
      expect(requestsFor(b)).toBe(1);
    } finally {
      gw.hold = undefined;
    }
  });

  it('reads beyond the concurrency are refused with 429 before any request; an abort frees the slot and stops every request', async () => {
    const a = await gw.putBlock(Buffer.from('slot a'), 'raw');
    const b = await gw.putBlock(Buffer.from('slot b'), 'raw');
    const root = await gw.putFileNode({ links: [a, b].map((cid) => ({ cid, size: 6 })) });
    const other = await gw.addFile(Buffer.from('another file'), 'v1');
    const ipfs = client({ concurrency: 1 });
    gw.hold = (cid) => cid === a.toString() || cid === b.toString();
    try {
      const caller = new AbortController();
      const held = gatewayEvents('request', 3);
      const file = await ipfs.fetchFile(root.toString(), { signal: caller.signal });
      const reading = file.stream.toArray().catch((e: unknown) => e);
      await held;

      const from = gw.requests.length;
      const refused = (await read(ipfs, other)) as AppError;
      expect(refused).toMatchObject({
        code: 'RATE_LIMITED',
        retryAfterSeconds: IPFS_BUSY_RETRY_AFTER_SECONDS,
      });
      expect(refused.message).toContain('as many IPFS files at once as it allows (1)');
      expect(gw.requests.length).toBe(from);

      const abandoned = gatewayEvents('abandoned', 2);
      caller.abort(new Error('the client left'));
      // The slot is free as soon as the abort is.
      const next = read(ipfs, other);
      expect(await reading).toEqual(new Error('the client left'));
      await abandoned;
      expect(await next).toMatchObject({ size: 12 });
      // Nothing more was asked for the aborted file.
      expect(requestsFor(a) + requestsFor(b)).toBe(2);
      expect(gw.abandoned.filter((r) => r.cid === a.toString() || r.cid === b.toString())).toHaveLength(2);
    } finally {
      gw.hold = undefined;
    }
  });

  it('a stream destroyed by its reader frees the slot and closes its requests', async () => {
    const a = await gw.putBlock(Buffer.from('destroy a'), 'raw');
    const root = await gw.putFileNode({ links: [{ cid: a, size: 9 }] });
    const ipfs = client({ concurrency: 1 });
    gw.hold = (cid) => cid === a.toString();
    try {
      const held = gatewayEvents('request', 2);
      const file = await ipfs.fetchFile(root.toString(), { signal: new AbortController().signal });
      file.stream.resume();
      await held;
      const abandoned = gatewayEvents('abandoned', 1);
      file.stream.destroy();
      await once(file.stream, 'close');
      await abandoned;
      gw.hold = undefined;
      expect(await read(ipfs, root)).toMatchObject({ size: 9 });
    } finally {
      gw.hold = undefined;
    }
  });
});
