import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@notary/platform/log';
import { privateKeyToAddress, randomPrivateKey } from '@stacks/transactions';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../test/harness/db-templates';
import { startChains } from '../adapters/chains';
import { EvmEasChain } from '../adapters/chains/evm-eas';
import { StacksNotaryChain } from '../adapters/chains/stacks';
import type { Database } from '../db';
import { AnchorTx, Tenant } from '../db/entities';
import { collectBatch } from '../domain/anchoring/batch-cut';
import { addPendingDocument } from '../domain/anchoring/pending-documents.testing';
import type { AnchorChain } from '../ports/chains';
import { startAnchoring } from './anchoring';
import { quietWorker } from './evm-pipeline.testing';

/**
 * A chain RPC URL's API key never reaches the logs nor `anchor_tx.last_error`. A loopback "provider" refuses
 * every call with 401 and, as careless providers do, echoes the URL it was called at (key included) in its
 * body; the adapters are built with the key in the URL's path, query and (Stacks) credentials. The real
 * pipeline, the real runner and the real logger (pino, JSON lines) run against it.
 */

const PATH_KEY = 'pAthK3y0123456789abcdefGHIJKLmn';
const QUERY_KEY = 'qUeryK3y9876543210zyxwvuTSRQPo';
const PASSWORD = 'pAssw0rdSecret42';
const SECRETS = [PATH_KEY, QUERY_KEY, PASSWORD];

let server: Server;
let base: string;
let db: Database;
let tenantId: string;
/** Every request the provider saw: the adapters did call the URLs with the keys. */
const seen: { url: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `invalid API key for ${base}${req.url}`, key: PATH_KEY }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  db = await openTestPglite();
  const em = db.fork();
  tenantId = randomUUID();
  em.create(Tenant, { id: tenantId, kind: 'personal', externalId: 'u1', name: 'T', serialPrefix: 'RD' });
  await em.flush();
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await db?.close();
});

/** A JSON logger and the lines it wrote; `next(pattern)` resolves with the first line matching. */
function capturingLogger() {
  const lines: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const logger = createLogger({
    level: 'debug',
    format: 'json',
    destination: {
      write: (line: string) => {
        lines.push(line);
        for (const w of waiting.filter((x) => x.pattern.test(line))) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve(line);
        }
      },
    },
  });
  const next = (pattern: RegExp) =>
    new Promise<string>((resolve) => {
      const found = lines.find((l) => pattern.test(l));
      if (found) resolve(found);
      else waiting.push({ pattern, resolve });
    });
  return { logger, lines, next };
}

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

const evmRpcUrl = () => `${base}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`;
const stacksApiUrl = () => `${base.replace('://', `://operator:${PASSWORD}@`)}/v1/ext/${PATH_KEY}`;

function evmChain(rpcUrl = evmRpcUrl()): EvmEasChain {
  return new EvmEasChain({
    rpcUrl,
    privateKey: Wallet.createRandom().privateKey,
    easAddress: `0x${'11'.repeat(20)}`,
    schemaRegistryAddress: `0x${'22'.repeat(20)}`,
    network: 'redaction-test',
    chainId: 31337,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
    gasLimit: 300_000n,
  });
}

function stacksChain(apiUrl = stacksApiUrl()): StacksNotaryChain {
  const key = randomPrivateKey();
  return new StacksNotaryChain({
    apiUrl,
    privateKey: key,
    contractId: `${privateKeyToAddress(key, 'testnet')}.notary`,
    network: 'testnet',
    explorerTxPrefix: '',
  });
}

describe('RPC URL keys stay out of logs and stored errors', () => {
  it('the runner: a failed EVM setup is logged without the key', async () => {
    const { logger, lines, next } = capturingLogger();
    const config = {
      mode: 'configured',
      batchSeconds: 3600,
      batchMax: 10,
      evm: {
        rpcUrl: evmRpcUrl(),
        privateKey: Wallet.createRandom().privateKey,
        network: 'redaction-test',
        chainId: 31337,
        easAddress: `0x${'11'.repeat(20)}`,
        schemaRegistryAddress: `0x${'22'.repeat(20)}`,
        schemaUid: undefined,
        confirmations: 1,
        explorerTxPrefix: '',
        attestationScanPrefix: '',
      },
      stacks: undefined,
    } as const;
    const chains = await startChains(config);
    const runner = await startAnchoring({
      config,
      chains: chains.entries,
      fork: () => db.fork(),
      log: logger.child({ module: 'anchor' }),
    });
    try {
      const line = await next(/setup failed/);
      expect(line).toContain('401');
      expect(line).toContain('/v2/***?apikey=***');
    } finally {
      await runner.stop();
      await chains.stop();
    }
    expect(seen.some((r) => r.url === `/v2/${PATH_KEY}?apikey=${QUERY_KEY}`)).toBe(true);
    expectNoSecret(lines.join('\n'));
  });

  it('the pipeline: a refused call on each chain stores and logs its error without the key', async () => {
    const { logger, lines } = capturingLogger();
    const em = db.fork();
    addPendingDocument(em, tenantId, 'RD-1');
    await em.flush();
    const batch = await collectBatch(db.fork(), { chains: ['evm', 'stacks'], maxBatchSize: 10 });
    expect(batch.leafCount).toBe(1);
    const chains: AnchorChain[] = [evmChain(), stacksChain()];
    try {
      for (const chain of chains) {
        const worker = quietWorker({
          chain,
          fork: () => db.fork(),
          log: logger.child({ module: 'anchor' }),
        });
        expect(await worker.tick()).toBe(1);
      }
    } finally {
      (chains[0] as EvmEasChain).close();
    }
    const rows = await db
      .fork()
      .find(AnchorTx, { batch: batch.batchId as string }, { orderBy: { chain: 'asc' } });
    expect(rows.map((r) => r.chain)).toEqual(['evm', 'stacks']);
    for (const row of rows) {
      expect(row.state).toBe('queued');
      expect(row.lastError).toContain('401');
      expectNoSecret(row.lastError ?? '');
    }
    expect(rows[0]?.lastError).toContain('/v2/***?apikey=***');
    // The Stacks adapter sent the URL's credentials as Basic authentication, not in the URL.
    const stacksCall = seen.find((r) => r.url.startsWith(`/v1/ext/${PATH_KEY}/`));
    expect(stacksCall?.authorization).toBe(`Basic ${Buffer.from(`operator:${PASSWORD}`).toString('base64')}`);
    expect(lines.filter((l) => l.includes('retrying'))).toHaveLength(2);
    expectNoSecret(lines.join('\n'));
  });
});

describe('no piece of a configured chain URL reaches an error, a refusal or a log line', () => {
  /** Keys a heuristic cannot see: short, all letters, percent-encoded, a matrix parameter, the userinfo. */
  const urls: [string, () => string, string[]][] = [
    [
      'a short all-letter segment, a matrix and a query value',
      () => `${base}/hushkey;apikey=mk1?token=qv9`,
      ['hushkey', 'mk1', 'qv9'],
    ],
    [
      'user-info and a percent-encoded segment',
      () => `${base.replace('://', '://operator:pw4u@')}/v1/s%C3%A9cr%C3%A9t`,
      ['operator', 'pw4u', 'sécrét', 's%C3%A9cr%C3%A9t'],
    ],
    ["an unknown provider's subdomain", () => 'http://acct7781.rpc.invalid/', ['acct7781']],
  ];
  const cases = urls.flatMap(([name, url, secrets]) => [
    ['evm', name, url, secrets] as const,
    ['stacks', name, url, secrets] as const,
  ]);

  it.each(cases)('%s: %s', async (kind, _name, urlOf, secrets) => {
    const url = urlOf();
    const chain = kind === 'evm' ? evmChain(url) : stacksChain(url);
    const { logger, lines } = capturingLogger();
    const told: string[] = [];
    const calls = [
      () => chain.chainNonce(),
      () => chain.broadcast(new Uint8Array([1, 2, 3])),
      () => chain.getStatus(kind === 'evm' ? `0x${'ab'.repeat(32)}` : 'ab'.repeat(32)),
    ];
    try {
      for (const call of calls) {
        try {
          told.push(JSON.stringify(await call()));
        } catch (e) {
          logger.error({ err: e }, `${kind} call failed`);
          told.push(String(e), (e as Error).stack ?? '');
        }
      }
    } finally {
      if (chain instanceof EvmEasChain) chain.close();
    }
    expect(lines.length).toBeGreaterThan(0);
    const text = [...told, ...lines].join('\n');
    expect(text).toContain('***');
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
