import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@notary/platform/log';
import { EvmEasChain } from '@notary/server/adapters/chains/evm-eas';
import { type HardhatDevnet, startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { type RpcProxy, startRpcProxy } from '@notary/server/adapters/chains/rpc-proxy.testing';
import { type Service, startService } from '@notary/server/bootstrap';
import { type Config, loadConfig } from '@notary/server/config';
import { DocumentAnchor } from '@notary/server/db/entities';
import { AnchorWorker } from '@notary/server/domain/anchoring/anchor-worker';
import { collectBatch } from '@notary/server/domain/anchoring/batch-cut';
import { runOperatorCommand } from '@notary/server/domain/operator/commands';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api } from '../harness/http';
import { createTestDatabase } from '../harness/postgres';

/**
 * An EVM RPC URL that carries a provider key (Infura-style `/v3/<key>`, `?apikey=`, `user:pass@`) never leaves
 * the service: the real service (PostgreSQL, `ANCHORING=configured`) anchors on the Hardhat devnet through a
 * loopback "provider" that knows the URL and, like careless providers, echoes the URL and the key in its
 * error answers. The provider fails in every way (500, 429 with and without `Retry-After`, a JSON-RPC
 * refusal, a dropped connection, connection refused); afterwards everything the service wrote is searched
 * for the secrets: every log line, every row of every table, the data directory, the receipts, the
 * certificates (streams uncompressed), `GET /api/onchain/info`, the public verification and the operator
 * CLI's output.
 */

const exec = promisify(execFile);

const PATH_KEY = '5ec7e75ec7e7a11ce5ec7e75ec7e7b0b';
const QUERY_KEY = 'QkeySECRETq7319zz';
const USER = 'notaryop';
const PASSWORD = 'PwSECRETp4417xy';

let devnet: HardhatDevnet;
let proxy: RpcProxy;
let database: { url: string; drop(): Promise<void> };
let dataDir: string;
let env: Record<string, string>;
let config: Config;
let service: Service;
let base: string;
const lines: string[] = [];
const consoleLines: string[] = [];

/** What every secret looks like wherever it could leak (the credentials also as their Basic header). */
function secrets(): string[] {
  return [
    PATH_KEY,
    QUERY_KEY,
    PASSWORD,
    Buffer.from(`${USER}:${PASSWORD}`).toString('base64'),
    devnet.funderPrivateKey.replace(/^0x/, ''),
  ];
}

function expectClean(what: string, text: string): void {
  for (const secret of secrets()) {
    if (text.includes(secret)) {
      const at = text.indexOf(secret);
      throw new Error(`${what} leaks a secret: …${text.slice(Math.max(0, at - 200), at + 80)}…`);
    }
  }
}

/** A provider's echo of what it was called at, with a full keyed URL and the bare key. */
const echo = (r: { url: string }) =>
  `invalid project id ${PATH_KEY} for https://${USER}:${PASSWORD}@mainnet.rpc.example${r.url} (apikey ${QUERY_KEY})`;

async function token(email: string): Promise<string> {
  const ctx = {
    em: service.deps.db.fork(),
    identity: service.identity.admin,
    directory: service.identity.directory,
    storage: service.deps.storage,
  };
  await runOperatorCommand(ctx, { command: 'user:create', email });
  return runOperatorCommand({ ...ctx, em: service.deps.db.fork() }, { command: 'token', email });
}

beforeAll(async () => {
  devnet = await startHardhatDevnet();
  // The schema is registered beforehand (as on a real network), so the service's first calls are reads.
  const direct = new EvmEasChain({
    rpcUrl: devnet.rpcUrl,
    privateKey: devnet.funderPrivateKey,
    easAddress: devnet.easAddress,
    schemaRegistryAddress: devnet.schemaRegistryAddress,
    network: 'x',
    chainId: devnet.chainId,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
  });
  await direct.ensureSchema();
  direct.close();
  proxy = await startRpcProxy(devnet.rpcUrl);
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-evm-secrets-'));
  const rpcUrl = new URL(`${proxy.url}/v3/${PATH_KEY}?apikey=${QUERY_KEY}`);
  rpcUrl.username = USER;
  rpcUrl.password = PASSWORD;
  env = {
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'debug',
    RATE_LIMITS: 'off',
    ANCHORING: 'configured',
    ANCHOR_BATCH_SECONDS: '1',
    EVM_RPC_URL: rpcUrl.toString(),
    EVM_PRIVATE_KEY: devnet.funderPrivateKey,
    EVM_CHAIN_ID: String(devnet.chainId),
    EAS_ADDRESS: devnet.easAddress,
    EAS_SCHEMA_REGISTRY_ADDRESS: devnet.schemaRegistryAddress,
    EVM_CONFIRMATIONS: '1',
  };
  config = loadConfig(env);
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[method].bind(console);
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      consoleLines.push(
        args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '),
      );
      original(...args);
    });
  }
  // The runner's first call (the schema check) gets a 500 that echoes the URL; its worker's first nonce read
  // a 429 with Retry-After.
  proxy.fault(1, { kind: 'answer', status: 500, body: echo });
  proxy.fault(1, { kind: 'answer', status: 429, headers: { 'retry-after': '1' }, body: echo }, [
    'eth_getTransactionCount',
  ]);
  const logger = createLogger({
    level: 'debug',
    format: 'json',
    destination: { write: (l) => lines.push(l) },
  });
  service = await startService(config, { log: logger });
  base = `http://127.0.0.1:${(service.server.address() as { port: number }).port}`;
}, 180_000);

afterAll(async () => {
  vi.restoreAllMocks();
  await service?.close();
  await proxy?.close();
  await devnet?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Every row of every table (pg-boss's included) as JSON text. */
async function databaseDump(): Promise<string> {
  const conn = service.deps.db.fork().getConnection();
  const tables: { schema: string; name: string }[] = await conn.execute(
    `select table_schema as schema, table_name as name from information_schema.tables
      where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  expect(tables.length).toBeGreaterThan(10);
  const out: string[] = [];
  for (const t of tables) {
    const rows: { j: string }[] = await conn.execute(
      `select row_to_json(x)::text as j from "${t.schema}"."${t.name}" x`,
    );
    out.push(`## ${t.schema}.${t.name}`, ...rows.map((r) => r.j));
  }
  return out.join('\n');
}

async function filesUnder(dir: string): Promise<string> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(await readFile(path.join(entry.parentPath, entry.name), 'latin1'));
  }
  return out.join('\n');
}

describe('an RPC URL with a key never leaves the service', () => {
  it('through 500, 429, a JSON-RPC refusal, a dropped connection and connection refused: anchored, and the key is nowhere', {
    timeout: 240_000,
  }, async () => {
    const owner = await token('secrets@example.com');

    // 1. The service's own runner: setup fails once (500), the worker is rate-limited once (429), then it anchors.
    const doc1 = await upload(owner, 'one.bin');
    const done1 = await waitEvm(owner, doc1.id);
    expect(done1.onchainTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(lines.some((l) => l.includes('setup failed'))).toBe(true);
    expect(lines.some((l) => l.includes('rate-limited by the RPC endpoint (HTTP 429, Retry-After: 1)'))).toBe(
      true,
    );

    // 2. A worker on the same database and logger, on a clock this test moves, through every other failure.
    await service.anchoring?.stop();
    let clock = Date.now();
    const evm = config.anchoring.mode === 'configured' ? config.anchoring.evm : undefined;
    if (!evm) throw new Error('no EVM configuration');
    const chain = new EvmEasChain({ ...evm, rpcTimeoutMs: 3_000, rateLimit: { now: () => clock } });
    const anchorLog = createLogger({
      level: 'debug',
      format: 'json',
      destination: { write: (l) => lines.push(l) },
    }).child({ module: 'anchor' });
    const worker = new AnchorWorker({
      chain,
      fork: () => service.deps.db.fork(),
      log: anchorLog,
      confirmations: 1,
      stuckAfterMs: 600_000,
      pollMs: 0,
      backoffMs: 0,
      maxBackoffMs: 0,
      maxAttempts: 5,
      leaseMs: 0,
      now: () => new Date(clock),
    });
    try {
      const doc2 = await upload(owner, 'two.bin');
      await ensureBatched(doc2.id);
      clock = Date.now(); // the batch's row is due
      const stored: string[] = [];
      const step = async () => {
        await worker.tick();
        const rows: { last_error: string | null }[] = await service.deps.db
          .fork()
          .getConnection()
          .execute(`select last_error from anchor_tx where last_error is not null`);
        stored.push(...rows.map((r) => r.last_error as string));
      };
      proxy.fault(1, { kind: 'reset' }, ['eth_getTransactionCount']);
      await step(); // the connection dropped
      await proxy.refuse();
      await step(); // connection refused
      await proxy.accept();
      proxy.fault(1, { kind: 'answer', status: 200, body: (r) => rpcError(-32000, echo(r)) }, [
        'eth_sendRawTransaction',
      ]);
      await step(); // refused by the "node" with the key in its message
      proxy.fault(1, { kind: 'answer', status: 500, body: echo }, ['eth_sendRawTransaction']);
      await step(); // HTTP 500 that echoes the URL
      proxy.fault(1, { kind: 'answer', status: 429, body: (r) => rpcError(-32005, echo(r)) }, [
        'eth_sendRawTransaction',
      ]);
      await step(); // rate-limited, no Retry-After: 1 s
      clock += 1_000;
      for (let i = 0; i < 5; i++) await step();
      expect(proxy.pendingFaults()).toBe(0);
      const done2 = await waitEvm(owner, doc2.id);
      expect(done2.onchainStatus).toBe('registered');
      const errors = stored.join('\n');
      for (const kind of [
        'unexpected: socket hang up',
        'unexpected: connect ECONNREFUSED',
        'rejected: invalid project id ***',
        'unreachable: HTTP 500',
        'rate-limited',
      ]) {
        expect(errors).toContain(kind);
      }

      // 3. A batch left retrying after a refusal that echoes the key: what the CLI lists.
      const doc3 = await upload(owner, 'three.bin');
      await ensureBatched(doc3.id);
      clock = Math.max(clock, Date.now());
      proxy.fault(1, { kind: 'answer', status: 200, body: (r) => rpcError(-32000, echo(r)) }, [
        'eth_sendRawTransaction',
      ]);
      await step();

      // The provider did see the keys: they were really in play.
      expect(proxy.requests.some((r) => r.url === `/v3/${PATH_KEY}?apikey=${QUERY_KEY}`)).toBe(true);
      expect(
        proxy.requests.every(
          (r) => r.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
        ),
      ).toBe(true);

      // Everything the service wrote or answers.
      expectClean('the logs', lines.join('\n'));
      expect(lines.join('\n')).toContain('/v3/***?apikey=***');
      expectClean('the console', consoleLines.join('\n'));
      expectClean('the stored errors', errors);
      expectClean('the database', await databaseDump());
      expectClean('the data directory', await filesUnder(dataDir));
      const info = await fetch(`${base}/api/onchain/info`);
      expect(info.status).toBe(200);
      expectClean('GET /api/onchain/info', await info.text());
      for (const doc of [doc1, done2, doc3]) {
        const receipt = await fetch(`${base}/api/documents/${doc.id}/receipt`, {
          headers: { authorization: `Bearer ${owner}` },
        });
        expect(receipt.status).toBe(200);
        expectClean(`the receipt of ${doc.fileName}`, await receipt.text());
        const verify = await fetch(`${base}/api/public/verify?hash=${doc.sha256Hash}`);
        expectClean('the public verification', await verify.text());
        const cert = await fetch(`${base}/api/documents/${doc.id}/certificate`, {
          headers: { authorization: `Bearer ${owner}` },
        });
        expect(cert.status).toBe(200);
        const pdf = Buffer.from(await cert.arrayBuffer());
        expectClean(`the certificate of ${doc.fileName}`, pdf.toString('latin1'));
        expectClean(`the certificate of ${doc.fileName}, uncompressed`, await uncompressedPdf(pdf));
      }
      const cli = await operatorCli('anchors:status');
      expect(cli).toMatch(/error\tevm\tqueued\t.*rejected: invalid project id \*\*\*/);
      expectClean('the CLI', cli);
    } finally {
      chain.close();
    }
  });
});

function rpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } });
}

/** Uploads 64 random bytes as `name` (`POST /api/documents/upload`, consent given). */
async function upload(owner: string, name: string): Promise<DocumentDto> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([randomBytes(64)]), name);
  const res = await fetch(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as DocumentDto;
}

/** Polls `GET /api/documents/:id` until its EVM registration is there (a deadline for a broken pipeline). */
async function waitEvm(owner: string, id: string): Promise<DocumentDto> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const res = await api<{ document: DocumentDto }>(base, `/api/documents/${id}`, { token: owner });
    if (res.body.document.onchainStatus === 'registered') return res.body.document;
    if (Date.now() > deadline) throw new Error(`not registered in time: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The document is in a batch: cut here unless the stopped runner's last collection already did. */
async function ensureBatched(id: string): Promise<void> {
  const em = service.deps.db.fork();
  if (await em.findOne(DocumentAnchor, { document: id })) return;
  await collectBatch(service.deps.db.fork(), { chains: ['evm'], maxBatchSize: 1000 });
  expect(await service.deps.db.fork().findOne(DocumentAnchor, { document: id })).not.toBeNull();
}

/** The PDF with every stream uncompressed (qpdf QDF mode). */
async function uncompressedPdf(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-'));
  try {
    const input = path.join(dir, 'in.pdf');
    const output = path.join(dir, 'out.pdf');
    await writeFile(input, pdf);
    await exec('qpdf', ['--qdf', '--object-streams=disable', input, output]).catch((e: { code?: number }) => {
      if (e.code !== 3) throw e; // 3: warnings only
    });
    return await readFile(output, 'latin1');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The operator CLI as an operator runs it (same environment, the key in EVM_RPC_URL): stdout and stderr. */
async function operatorCli(...args: string[]): Promise<string> {
  const { stdout, stderr } = await exec(
    path.resolve('node_modules/.bin/node'),
    ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), ...args],
    { env: { ...process.env, ...env }, maxBuffer: 16 << 20 },
  );
  return `${stdout}\n${stderr}`;
}
