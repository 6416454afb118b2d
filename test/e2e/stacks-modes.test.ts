import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLog } from '@notary/platform/log';
import { type StacksDevnet, startStacksDevnet } from '@notary/server/adapters/chains/devnets/stacks-devnet';
import { ChainConfigError, startChains } from '@notary/server/adapters/chains/index';
import { loadConfig } from '@notary/server/config';
import { startAnchoring } from '@notary/server/jobs/anchoring';
import type { DocumentDto } from '@notary/shared';
import type { Receipt } from '@notary/verify/receipt';
import type { CheckResult } from '@notary/verify/report';
import { verify } from '@notary/verify/verify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBytes } from '../harness/anchored';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

/**
 * Stacks anchoring and check 4 on every kind of Stacks API the service and the verifier meet, end to end: the
 * real service (`ANCHORING=configured`, Stacks only) anchors through one Clarity-VM devnet whose switches make it
 * a Hiro API with v3 routes, an older one with v1 routes, a bare stacks-node, an indexer lagging behind its
 * node, a gateway answering 429s, a fork orphaning the transaction; the verifier then reads each receipt back.
 * Every devnet answer is held to the pinned upstream schemas (test/harness/stacks-devnet-guard.ts).
 */

/** Polls the document until its Stacks leg is registered (the deadline is for a broken pipeline only). */
async function waitStacksRegistered(t: TestService, token: string, id: string): Promise<DocumentDto> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await api<{ document: DocumentDto }>(t.url, `/api/documents/${id}`, { token });
    if (res.body.document.stacksStatus === 'registered') return res.body.document;
    if (Date.now() > deadline) throw new Error(`not registered in time: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The service anchoring on Stacks only, through `url`. */
function stacksService(
  dev: StacksDevnet,
  url: string,
  env: Record<string, string> = {},
): Promise<TestService> {
  return startTestService('pglite', {
    ANCHORING: 'configured',
    ANCHOR_BATCH_SECONDS: '0.2',
    STACKS_API_URL: url,
    STACKS_PRIVATE_KEY: dev.senderKey,
    STACKS_CONTRACT_ID: dev.contractId,
    STACKS_NETWORK: 'devnet',
    STACKS_CONFIRMATIONS: '1',
    ...env,
  });
}

interface Anchored {
  bytes: Uint8Array;
  receipt: Receipt;
  txId: string;
}

/** Uploads a file, waits for its Stacks anchor and returns its receipt. */
async function anchorOne(t: TestService): Promise<Anchored> {
  const token = await t.token('stacks-modes@example.com');
  const bytes = randomBytes(300);
  const doc = await uploadBytes(t, token, bytes, 'modes.bin');
  await waitStacksRegistered(t, token, doc.id);
  const res = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
  expect(res.status).toBe(200);
  const leg = res.body.stacks;
  if (leg?.status !== 'registered') throw new Error(`Stacks leg not registered: ${JSON.stringify(leg)}`);
  return { bytes, receipt: res.body, txId: leg.txId };
}

/** Check 4 of `a`'s receipt through `endpoints`. */
async function check4(a: Anchored, endpoints: string[], receipt: Receipt = a.receipt): Promise<CheckResult> {
  const report = await verify({
    file: a.bytes,
    receipt,
    stacksApiUrls: endpoints,
    checks: [4],
    timeoutMs: 5000,
  });
  const check = report.checks.find((c) => c.id === 4);
  if (!check) throw new Error('no check 4');
  return check;
}

/**
 * An older Hiro API in front of the devnet: Fastify's 404 for every `/extended/v3` route (it predates them), the
 * rest passed through, so readers find only the v1 routes (410 once the devnet's `v1Gone` is on).
 */
async function olderHiroApi(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.startsWith('/extended/v3/')) {
      const body = JSON.stringify({
        message: `Route ${req.method}:${path.split('?')[0]} not found`,
        error: 'Not Found',
        statusCode: 404,
      });
      res.writeHead(404, { 'content-type': 'application/json' }).end(body);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${path}`, {
        method: req.method,
        headers: req.headers['content-type'] ? { 'content-type': req.headers['content-type'] } : {},
        ...(body ? { body } : {}),
        redirect: 'manual',
      })
        .then(async (upstream) => {
          const text = Buffer.from(await upstream.arrayBuffer());
          const headers: Record<string, string> = {
            'content-type': upstream.headers.get('content-type') ?? 'text/plain',
          };
          const retryAfter = upstream.headers.get('retry-after');
          if (retryAfter) headers['retry-after'] = retryAfter;
          res.writeHead(upstream.status, headers);
          res.end(text);
        })
        .catch((e: unknown) => res.writeHead(502).end(String(e)));
    });
  });
  server.keepAliveTimeout = 0;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on. */
async function deadUrl(): Promise<string> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('Stacks anchoring and check 4 on each kind of Stacks API', () => {
  let dev: StacksDevnet;
  beforeAll(async () => {
    dev = await startStacksDevnet({ blockTimeMs: 200 });
  });
  afterAll(async () => {
    await dev?.stop();
  });
  const reset = () => dev.configure({ kind: 'hiro', v1Gone: false, indexerLagBlocks: 0, rateLimit: null });
  /** The devnet's requests from index `from` on. */
  const since = (from: number) => dev.requests().slice(from);

  describe('a Hiro API with v3 routes (detected), behind a gateway that answers 429s', () => {
    let t: TestService;
    let a: Anchored;
    beforeAll(async () => {
      reset();
      t = await stacksService(dev, dev.url);
    });
    afterAll(async () => {
      reset();
      await t?.close();
    });

    it('the pipeline confirms the anchor through /extended/v3, waiting out bursts of 429', async () => {
      const from = dev.requests().length;
      // Four 429s in a row: the reader waits each Retry-After, and past three in a row the pipeline pauses.
      dev.configure({ rateLimit: { next: 4, retryAfterSeconds: 1 } });
      a = await anchorOne(t);
      const seen = since(from);
      expect(seen.filter((r) => r.status === 429)).toHaveLength(4);
      expect(seen.some((r) => r.path.startsWith(`/extended/v3/transactions/${a.txId}?include=`))).toBe(true);
      expect(seen.some((r) => r.path.startsWith('/extended/v1/'))).toBe(false);
    });

    it('check 4 passes on it; partial when one of two endpoints answered; failed for a root never anchored', async () => {
      const from = dev.requests().length;
      const keyed = await verify({
        file: a.bytes,
        receipt: a.receipt,
        stacksApiUrls: [dev.url],
        stacksApiKey: 'verifier-key-0123456789',
        checks: [4],
      });
      expect(keyed.checks.find((c) => c.id === 4)).toMatchObject({ status: 'passed' });
      expect(since(from).every((r) => r.apiKey === 'verifier-key-0123456789')).toBe(true);
      expect(await check4(a, [dev.url])).toMatchObject({ status: 'passed' });
      expect(await check4(a, [dev.url, await deadUrl()])).toMatchObject({
        status: 'partial',
        reason: 'unavailable',
      });
      const merkle = a.receipt.merkle;
      if (!merkle) throw new Error('no merkle proof');
      const other: Receipt = { ...a.receipt, merkle: { ...merkle, root: 'ab'.repeat(32) } };
      const failed = await check4(a, [dev.url], other);
      expect(failed.status).toBe('failed');
      expect(failed.evidence).toContainEqual(
        expect.objectContaining({ label: 'get-anchor', ok: false, value: 'none: the root is not recorded' }),
      );
    });

    it('not run when the only endpoint is rate-limited beyond what the verifier waits', async () => {
      dev.configure({ rateLimit: { limit: 0, windowMs: 600_000 } });
      const check = await check4(a, [dev.url]);
      expect(check).toMatchObject({ status: 'not-run', reason: 'unavailable' });
      expect(check.summary).toMatch(/HTTP 429/);
    });
  });

  describe('an older Hiro API (STACKS_API_KIND=hiro-v1), then a fork and the v1 sunset', () => {
    let t: TestService;
    let a: Anchored;
    let older: Awaited<ReturnType<typeof olderHiroApi>>;
    beforeAll(async () => {
      reset();
      older = await olderHiroApi(dev.url);
      t = await stacksService(dev, older.url, { STACKS_API_KIND: 'hiro-v1' });
    });
    afterAll(async () => {
      reset();
      await t?.close();
      await older?.close();
    });

    it('the pipeline confirms the anchor through /extended/v1', async () => {
      const from = dev.requests().length;
      a = await anchorOne(t);
      const seen = since(from);
      expect(seen.some((r) => r.path === `/extended/v1/tx/${a.txId}`)).toBe(true);
      expect(seen.some((r) => r.path.startsWith('/extended/v3/transactions/0x'))).toBe(false);
      expect(await check4(a, [older.url])).toMatchObject({ status: 'passed' });
    });

    it('failed once a fork orphaned the transaction (v1 canonical: false; v3 does not know it)', async () => {
      dev.markNonCanonical(a.txId);
      const check = await check4(a, [older.url]);
      expect(check.status).toBe('failed');
      expect(check.evidence).toContainEqual(expect.objectContaining({ label: 'canonical', ok: false }));
      expect(await check4(a, [dev.url])).toMatchObject({ status: 'failed' });
    });

    it('not run when the only endpoint answers 410 Gone (v1 disabled, no v3)', async () => {
      dev.configure({ v1Gone: true });
      const check = await check4(a, [older.url]);
      expect(check).toMatchObject({ status: 'not-run', reason: 'unavailable' });
      expect(check.summary).toMatch(/410 Gone/);
    });
  });

  describe('a bare stacks-node (detected)', () => {
    let t: TestService;
    let a: Anchored;
    let from = 0;
    beforeAll(async () => {
      reset();
      dev.configure({ kind: 'node' });
      from = dev.requests().length;
      t = await stacksService(dev, dev.url);
    });
    afterAll(async () => {
      reset();
      await t?.close();
    });

    it('the pipeline confirms the anchor through get-anchor and the account nonce, never /extended', async () => {
      a = await anchorOne(t);
      const extended = since(from).filter((r) => r.address === 'url' && r.path.startsWith('/extended'));
      // The start-up probe asks once and gets the node's text 404.
      expect(extended.map((r) => `${r.path} ${r.status}`)).toEqual(['/extended 404']);
    });

    it('check 4: partial on the node alone (the transaction not checked there), passed with an indexer too', async () => {
      const alone = await check4(a, [dev.url]);
      expect(alone).toMatchObject({ status: 'partial', reason: 'not-checked' });
      expect(alone.summary).toMatch(/a stacks-node without a transaction index/);
      expect(await check4(a, [dev.url, dev.indexerUrl])).toMatchObject({ status: 'passed' });
    });
  });

  describe('an indexer on its own address, lagging behind its node', () => {
    let t: TestService;
    let a: Anchored;
    beforeAll(async () => {
      reset();
      dev.configure({ indexerLagBlocks: 3 });
      t = await stacksService(dev, dev.indexerUrl);
    });
    afterAll(async () => {
      reset();
      await t?.close();
    });

    it('the pipeline confirms the anchor through the indexer', async () => {
      const from = dev.requests().length;
      a = await anchorOne(t);
      expect(since(from).some((r) => r.address === 'indexer' && r.path.startsWith('/extended/v3/'))).toBe(
        true,
      );
    });

    it('check 4: an index behind the receipt block is not evidence against it; caught up, it passes', async () => {
      dev.configure({ indexerLagBlocks: 10_000 });
      const behind = await check4(a, [dev.indexerUrl]);
      expect(behind).toMatchObject({ status: 'partial', reason: 'not-checked' });
      expect(behind.summary).toMatch(/its index has reached block/);
      dev.configure({ indexerLagBlocks: 0 });
      expect(await check4(a, [dev.indexerUrl, dev.url])).toMatchObject({ status: 'passed' });
    });
  });

  describe('the start is refused when the endpoint contradicts the configuration', () => {
    afterAll(reset);
    /**
     * The chains and `startAnchoring` as the service's start builds and runs them, on the configuration the
     * environment gives; the chains are closed again whatever the outcome.
     */
    const start = async (url: string, env: Record<string, string>) => {
      const config = loadConfig({
        NODE_ENV: 'test',
        ANCHORING: 'configured',
        STACKS_API_URL: url,
        STACKS_PRIVATE_KEY: dev.senderKey,
        STACKS_CONTRACT_ID: dev.contractId,
        STACKS_NETWORK: 'devnet',
        ...env,
      }).anchoring;
      if (config.mode === 'off') throw new Error('ANCHORING=configured was asked for');
      const chains = await startChains(config);
      try {
        const runner = await startAnchoring({
          config,
          chains: chains.entries,
          fork: () => {
            throw new Error('a refused start reaches no database');
          },
          log: silentLog,
        });
        await runner.stop();
        return runner;
      } finally {
        await chains.stop();
      }
    };

    it('STACKS_API_KIND=hiro-v3 against a bare node, and STACKS_NETWORK=mainnet against a devnet', async () => {
      dev.configure({ kind: 'node' });
      const withCredentials = dev.url.replace('://', '://operator:s3cret-pass@');
      const kindError = await start(withCredentials, { STACKS_API_KIND: 'hiro-v3' }).catch((e: unknown) => e);
      expect(kindError).toBeInstanceOf(ChainConfigError);
      expect(String(kindError)).toMatch(
        /STACKS_API_KIND=hiro-v3, but http:\/\/\*\*\*@127\.0\.0\.1:\d+ is a stacks-node without a Hiro API \(node\).*set STACKS_API_KIND=node \(or auto\)/,
      );
      expect(String(kindError)).not.toContain('s3cret-pass');
      dev.configure({ kind: 'hiro' });
      const networkError = await start(dev.url, { STACKS_NETWORK: 'mainnet' }).catch((e: unknown) => e);
      expect(networkError).toBeInstanceOf(ChainConfigError);
      expect(String(networkError)).toMatch(
        /STACKS_NETWORK=mainnet expects network_id 0x00000001, but http:\/\/127\.0\.0\.1:\d+ answers 0x80000000/,
      );
    });
  });
});
