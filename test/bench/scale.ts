/**
 * `npm run bench -- scale [--sizes 0,100000,1000000] [--databases postgresql,pglite] [--reps 20]
 * [--org-documents 100000] [--no-doc]`: whether the service's cost stays flat as one tenant's archive grows.
 *
 * Per database (PostgreSQL: a fresh database created on the local server through `TEST_PG_ADMIN_URL` and
 * dropped at the end; PGlite: a fresh data directory), for each size in increasing order, the archive of
 * `bench@example.com`'s personal workspace is grown to that many documents with `seed.ts` (size 0, the empty
 * archive, holds 1,000: a few anchored batches, so that the known hash, the serial and the receipt are measured
 * on the same kind of document at every size; the service stopped,
 * then started again as its own process, `node --import tsx server/src/main.ts`, loopback, `ANCHORING=off`,
 * `RATE_LIMITS=off`, no storage quota, `MAIL_DEV=1`), and measured over HTTP, each figure the median and p95 of
 * `reps` runs in ms:
 * - upload of a 200 KB file of random bytes (a new file each run), and the share of it spent in the database
 *   (PostgreSQL only: `pg_stat_statements` when loaded, else n/a);
 * - public verify by hash, known (a different seeded document each run: the verify cache never answers) and
 *   unknown (random), and by serial (a different seeded serial each run);
 * - the documents list: first page (limit 50), a deep page (the 20th, through `nextCursor`), search `q` by file
 *   name part and by hash prefix (n/a where the service has no `limit`/`cursor`/`q`);
 * - the acervo feed (limit 60): first and last page;
 * - a seeded document's receipt; the certificate of a one-page PDF uploaded by the bench;
 * - LGPD deletion of one document (the bench's uploads, one per run);
 * - the orphan sweep (`storage:sweep` through the operator CLI, objects: the bench's uploads);
 * - the server's RSS after the measurements.
 * At the largest size, once per database: the deletion of an organization of `--org-documents` documents (time
 * from confirm to its answer, the server's peak RSS), then a second one killed with SIGKILL mid-way, the server
 * started again, and the time until its resume job finishes it (`org:deletion-status`): n/a when the service has
 * no resumable deletion. A size whose seeding fails (PGlite out of memory, the disk full) is reported as not
 * finished, and that database's larger sizes are not tried.
 * The results go to stdout and, unless `--no-doc`, to the "Scale" section of docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '@notary/shared';
import pg from 'pg';
import { type Child, freePort, readRss, runCommand, sampleRss, startChild } from './lib';
import { type SeededDocument, type SeedResult, seed, seededHash, seededSerial } from './seed';

const EMAIL = 'bench@example.com';
const ORG_NAME = 'Cartório Bench';
const ORG_KILLED_NAME = 'Cartório Interrompido';
const UPLOAD_BYTES = 200 * 1024;
/** Documents seeded at size 0 (see the loop over sizes). */
const EMPTY_ARCHIVE_DOCUMENTS = 1000;
const LIST_LIMIT = 50;
const DEEP_PAGE = 20;
const SERVER_START_TIMEOUT_MS = 300_000;
/** Goals (the spec'd ones): at the largest size vs empty, these stay within 1.2×; the list's first page < 50 ms. */
const FLAT_RATIO = 1.2;
const LIST_FIRST_PAGE_MS = 50;
const FLAT_MEASURES = [
  'upload',
  'verifyKnown',
  'verifyUnknown',
  'serial',
  'listFirst',
  'acervoFirst',
  'receipt',
];

type Kind = 'postgresql' | 'pglite';

/** Median and p95 of a measure in ms; null when the service lacks the feature (n/a). */
export interface Stat {
  median: number;
  p95: number;
  runs: number;
}

export interface SizeResult {
  size: number;
  /** Documents in the tenant actually (the bench's uploads aside). */
  documents: number;
  seedSeconds: number;
  seedDocumentsPerSecond: number;
  measures: Record<string, Stat | null>;
  notes: string[];
  serverRssMB: number;
  /** 1-minute load average of the machine when the measures began (other work disturbs the figures). */
  loadAverage: number;
  /** Set when the seed did not reach the size (then no measures). */
  unfinished?: string;
}

export interface OrgDeletionResult {
  documents: number;
  seconds: number | null;
  peakRssMB: number | null;
  resumedAfterKill: string;
}

export interface ScaleResults {
  date: string;
  machine: string;
  reps: number;
  databases: { kind: Kind; sizes: SizeResult[]; orgDeletion: OrgDeletionResult | null }[];
}

export interface ScaleContext {
  root: string;
  node: string;
  addCleanup: (label: string, run: () => Promise<void>) => void;
}

function stat(samples: number[]): Stat {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95), runs: sorted.length };
}

async function timedRuns(reps: number, run: (i: number) => Promise<void>): Promise<Stat> {
  // Warm-up runs, not counted: the smallest archive is measured right after the server starts (cold JIT and
  // caches), which would otherwise make every later size look cheaper.
  for (let w = 0; w < 5; w++) await run(-1 - w);
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await run(i);
    samples.push(performance.now() - t);
  }
  return stat(samples);
}

/** A one-page PDF, written by hand (header, four objects, a correct xref table). */
function smallPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << >> >>',
    '<< /Length 0 >>\nstream\n\nendstream',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out);
}

interface Http {
  status: number;
  body: unknown;
  text: string;
}

async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<Http> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

function expectStatus(what: string, res: Http, ...ok: number[]): Http {
  if (!ok.includes(res.status)) throw new Error(`${what} answered ${res.status}: ${res.text.slice(0, 400)}`);
  return res;
}

async function upload(base: string, token: string, bytes: Buffer, name: string): Promise<{ id: string }> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([new Uint8Array(bytes)]), name);
  const res = await fetch(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${text.slice(0, 400)}`);
  const body = JSON.parse(text) as { id?: string; document?: { id: string } };
  const id = body.id ?? body.document?.id;
  if (!id) throw new Error(`upload answer without an id: ${text.slice(0, 200)}`);
  return { id };
}

/** Runs `npm run bench -- scale` (see the module comment). */
export async function benchScale(
  ctx: ScaleContext,
  options: { sizes: number[]; kinds: Kind[]; reps: number; orgDocuments: number },
): Promise<ScaleResults> {
  const results: ScaleResults = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, Node ${process.versions.node}`,
    reps: options.reps,
    databases: [],
  };
  for (const kind of options.kinds) {
    results.databases.push(await benchDatabase(ctx, kind, options));
  }
  return results;
}

async function benchDatabase(
  ctx: ScaleContext,
  kind: Kind,
  options: { sizes: number[]; reps: number; orgDocuments: number },
): Promise<ScaleResults['databases'][number]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `notary-scale-${kind}-`));
  ctx.addCleanup(`${kind} data dir`, () => rm(dataDir, { recursive: true, force: true }));
  let databaseUrl: string | undefined;
  if (kind === 'postgresql') {
    const adminUrl = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `notary_scale_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    ctx.addCleanup(`drop ${name}`, async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    });
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ANCHORING: 'off',
    RATE_LIMITS: 'off',
    TENANT_STORAGE_QUOTA_BYTES: '0',
    MAIL_DEV: '1',
    // One port for the server and the operator CLI: session tokens name the service's URL as their issuer.
    PORT: String(await freePort()),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  delete env.REDIS_URL;
  const operator = async (args: string[]): Promise<string> => {
    const r = await runCommand(ctx.node, ['--import', 'tsx', 'server/src/cli/main.ts', ...args], {
      cwd: ctx.root,
      env,
      timeoutMs: 1_800_000,
    });
    if (r.code !== 0) throw new Error(`notary ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
    return r.stdout.trim();
  };
  let server: Child | undefined;
  let base = '';
  const start = async () => {
    server = startChild('server', ctx.node, ['--import', 'tsx', 'server/src/main.ts'], {
      cwd: ctx.root,
      env,
    });
    const s = server;
    ctx.addCleanup(`${kind} server ${s.pid}`, () => s.stop());
    base = (await s.waitForLine(/\[notary\] listening on (\S+)/, SERVER_START_TIMEOUT_MS))[1] ?? '';
    return s;
  };
  const stop = async () => {
    await server?.stop(60_000);
    server = undefined;
  };
  const runs: { runId: string; prefix: string; count: number }[] = [];
  const samples: SeededDocument[] = [];
  const sizes: SizeResult[] = [];
  const log = (line: string) => console.log(`[scale:${kind}] ${line}`);
  let have = 0;
  let orgDeletion: OrgDeletionResult | null = null;
  const maxSize = Math.max(...options.sizes);

  for (const size of [...options.sizes].sort((a, b) => a - b)) {
    // The empty archive holds a few anchored batches (0.1 % of the largest size): the known hash, the serial and
    // the receipt measured on it are the same kind of document (anchored, with a Merkle proof) as at the larger
    // sizes, and no run asks for a document an earlier run put in the verify cache.
    const add = Math.max(size, EMPTY_ARCHIVE_DOCUMENTS) - have;
    let seeded: SeedResult | undefined;
    const seedStarted = performance.now();
    if (add > 0 || have === 0) {
      const runId = `scale-${kind}-${size}-${randomBytes(3).toString('hex')}`;
      try {
        seeded = await seed({ documents: add, email: EMAIL, seed: runId, env, log: (line) => log(line) });
      } catch (e) {
        // This database stops here; the sizes measured so far are reported.
        const reason = e instanceof Error ? e.message.split('\n')[0] : String(e);
        log(`seeding to ${size} documents failed: ${reason}`);
        sizes.push({
          size,
          documents: have,
          seedSeconds: (performance.now() - seedStarted) / 1000,
          seedDocumentsPerSecond: 0,
          measures: {},
          notes: [`seeding to ${size} documents failed: ${reason}`],
          serverRssMB: 0,
          loadAverage: os.loadavg()[0] ?? 0,
          unfinished: reason ?? 'failed',
        });
        break;
      }
      runs.push({ runId, prefix: seeded.serialPrefix, count: seeded.documents });
      samples.push(...seeded.samples);
      have += seeded.documents;
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const srv = await start();
    const result: SizeResult = {
      size,
      documents: have,
      seedSeconds,
      seedDocumentsPerSecond: seeded && seeded.documents > 0 ? seeded.documentsPerSecond : 0,
      measures: {},
      notes: [],
      serverRssMB: 0,
      loadAverage: os.loadavg()[0] ?? 0,
    };
    log(`${have} documents; measuring (${options.reps} runs each)`);
    const token = async () => operator(['token', '--email', EMAIL]);
    let bearer = await token();
    const m = result.measures;
    const tryMeasure = async (name: string, run: () => Promise<Stat>) => {
      try {
        bearer = await token();
        m[name] = await run();
        log(`${name}: median ${m[name]?.median.toFixed(1)} ms, p95 ${m[name]?.p95.toFixed(1)} ms`);
      } catch (e) {
        m[name] = null;
        result.notes.push(`${name}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
        log(`${name}: n/a (${result.notes[result.notes.length - 1]})`);
      }
    };

    // Upload: a new 200 KB file each run; the uploads are what the LGPD deletion removes later.
    const uploaded: string[] = [];
    const dbTime = databaseUrl ? await statementsProbe(databaseUrl) : undefined;
    let dbMs = 0;
    await tryMeasure('upload', () =>
      timedRuns(options.reps, async (i) => {
        const before = dbTime ? await dbTime.total() : 0;
        const { id } = await upload(base, bearer, randomBytes(UPLOAD_BYTES), `upload-${i}.bin`);
        if (dbTime && i >= 0) dbMs += (await dbTime.total()) - before;
        uploaded.push(id);
      }),
    );
    if (dbTime && m.upload) {
      m.uploadDatabase = { median: dbMs / m.upload.runs, p95: Number.NaN, runs: m.upload.runs };
    } else {
      m.uploadDatabase = null;
      result.notes.push('uploadDatabase: needs PostgreSQL with pg_stat_statements loaded');
    }
    await dbTime?.close();

    // Verify: a different seeded document (or random hash) each run, so no answer comes from the cache.
    const seededAt = (i: number) => {
      let k = Math.floor(((i + 2) * 7919 * 104729) % Math.max(1, have));
      for (const r of runs) {
        if (k < r.count) return { hash: seededHash(r.runId, k), serial: seededSerial(r.runId, r.prefix, k) };
        k -= r.count;
      }
      return undefined;
    };
    await tryMeasure('verifyKnown', () =>
      timedRuns(options.reps, async (i) => {
        const d = seededAt(i + 1000);
        const res = expectStatus('verify', await call(`${base}/api/public/verify?hash=${d?.hash}`), 200);
        if ((res.body as { found?: boolean }).found !== true)
          throw new Error(`seeded hash ${d?.hash} not found`);
      }),
    );
    await tryMeasure('serial', () =>
      timedRuns(options.reps, async (i) => {
        const d = seededAt(i + 5500);
        expectStatus('serial', await call(`${base}/api/public/documents/${d?.serial}`), 200);
      }),
    );
    await tryMeasure('verifyUnknown', () =>
      timedRuns(options.reps, async () => {
        const hash = randomBytes(32).toString('hex');
        expectStatus('verify', await call(`${base}/api/public/verify?hash=${hash}`), 200);
      }),
    );

    // The documents list: first page, a deep page through the cursor, search.
    type Page = { documents?: unknown[]; nextCursor?: string | null };
    const list = async (query: string) =>
      expectStatus('list', await call(`${base}/api/documents?${query}`, { token: bearer }), 200).body as Page;
    await tryMeasure('listFirst', () =>
      timedRuns(options.reps, async () => {
        const page = await list(`limit=${LIST_LIMIT}`);
        if (!page.documents) throw new Error('the documents list has no limit/cursor paging');
      }),
    );
    await tryMeasure('listDeep', async () => {
      let cursor: string | null | undefined;
      for (let p = 1; p < DEEP_PAGE; p++) {
        const page = await list(
          `limit=${LIST_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      if (!cursor) throw new Error(`fewer than ${DEEP_PAGE} pages, or no cursor`);
      const at = cursor;
      return timedRuns(options.reps, async () => {
        await list(`limit=${LIST_LIMIT}&cursor=${encodeURIComponent(at)}`);
      });
    });
    await tryMeasure('searchName', () =>
      timedRuns(options.reps, async (i) => {
        const q = ['Procuração', 'Matrícula', 'Certidão', 'Silva', 'Escritura', 'Scan_20'][i < 0 ? 0 : i % 6];
        const page = await list(`limit=${LIST_LIMIT}&q=${encodeURIComponent(q as string)}`);
        if (!page.documents) throw new Error('the documents list has no search');
      }),
    );
    await tryMeasure('searchHash', () =>
      timedRuns(options.reps, async (i) => {
        const q = have > 0 ? (seededAt(i + 9000)?.hash.slice(0, 10) ?? 'abcdef0123') : 'abcdef0123';
        const page = await list(`limit=${LIST_LIMIT}&q=${q}`);
        if (!page.documents) throw new Error('the documents list has no search');
      }),
    );

    // The acervo feed: first and last page.
    const acervo = await call(`${base}/api/settings/acervo-token`, {
      method: 'POST',
      token: bearer,
      body: {},
    });
    const acervoToken = (acervo.body as { token?: string } | undefined)?.token;
    const feed = async (query: string) => {
      const res = expectStatus(
        'acervo',
        await call(`${base}/api/public/acervo?${query}`, { token: acervoToken }),
        200,
      );
      return res.body as { documents: unknown[]; total?: number; nextCursor?: string | null };
    };
    await tryMeasure('acervoFirst', () =>
      timedRuns(options.reps, async () => {
        if (!acervoToken) throw new Error(`no acervo token (${acervo.status})`);
        await feed('limit=60');
      }),
    );
    await tryMeasure('acervoLast', async () => {
      if (!acervoToken) throw new Error(`no acervo token (${acervo.status})`);
      const total = (await feed('limit=60')).total ?? 0;
      const offset = Math.max(0, total - 60);
      return timedRuns(options.reps, async () => {
        await feed(`limit=60&offset=${offset}`);
      });
    });

    // Receipt of a seeded document (anchored, not a PDF: rows only), else of an upload.
    const receiptOf = samples.find((s) => s.anchored && !s.deleted && s.mimeType !== 'application/pdf')?.id;
    await tryMeasure('receipt', () =>
      timedRuns(options.reps, async () => {
        const id = receiptOf ?? uploaded[0];
        expectStatus('receipt', await call(`${base}/api/documents/${id}/receipt`, { token: bearer }), 200);
      }),
    );
    await tryMeasure('certificate', async () => {
      const { id } = await upload(base, bearer, smallPdf(), 'certidao.pdf');
      return timedRuns(Math.min(options.reps, 10), async () => {
        const res = await fetch(`${base}/api/documents/${id}/certificate`, {
          headers: { authorization: `Bearer ${bearer}` },
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`certificate answered ${res.status}`);
      });
    });
    await tryMeasure('lgpdDelete', () =>
      timedRuns(Math.min(options.reps, uploaded.length - 1), async () => {
        const id = uploaded.pop();
        expectStatus(
          'LGPD deletion',
          await call(`${base}/api/documents/${id}?reason=${encodeURIComponent('Pedido do titular')}`, {
            method: 'DELETE',
            token: bearer,
          }),
          200,
        );
      }),
    );
    await tryMeasure('orphanSweep', () =>
      timedRuns(3, async () => {
        await operator(['storage:sweep']);
      }),
    );
    result.serverRssMB = readRss(srv.pid) / 2 ** 20;

    if (size === maxSize && options.orgDocuments > 0) {
      await stop();
      orgDeletion = await benchOrgDeletion(options.orgDocuments, env, log, start, stop, operator);
    }
    await stop();
    sizes.push(result);
  }
  await stop();
  return { kind, sizes, orgDeletion };

  /** `pg_stat_statements` total execution time, when the extension is loaded (it rarely is by default). */
  async function statementsProbe(url: string) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query('create extension if not exists pg_stat_statements');
      await c.query('select sum(total_exec_time) from pg_stat_statements');
    } catch {
      await c.end();
      return undefined;
    }
    return {
      total: async () =>
        Number(
          (await c.query('select coalesce(sum(total_exec_time), 0) as t from pg_stat_statements')).rows[0]?.t,
        ),
      close: () => c.end(),
    };
  }
}

/** The org deletion measurements (see the module comment). */
async function benchOrgDeletion(
  documents: number,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  start: () => Promise<Child>,
  stop: () => Promise<void>,
  operator: (args: string[]) => Promise<string>,
): Promise<OrgDeletionResult> {
  const dataDir = env.DATA_DIR as string;
  const result: OrgDeletionResult = { documents, seconds: null, peakRssMB: null, resumedAfterKill: 'n/a' };
  const measured = await seed({ documents, email: EMAIL, org: ORG_NAME, env, log });
  const killed = await seed({ documents, email: EMAIL, org: ORG_KILLED_NAME, env, log });
  const srv = await start();
  const base = (await srv.waitForLine(/\[notary\] listening on (\S+)/, 1000))[1] ?? '';
  const codeFor = async (slug: string): Promise<{ token: string; code: string }> => {
    const token = await operator(['token', '--email', EMAIL, '--org', slug]);
    const known = new Set(await readdir(path.join(dataDir, 'mail')).catch(() => [] as string[]));
    expectStatus(
      'deletion request',
      await call(`${base}/api/org/delete/request`, { method: 'POST', token, body: {} }),
      200,
    );
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for (const f of await readdir(path.join(dataDir, 'mail')).catch(() => [] as string[])) {
        if (known.has(f)) continue;
        const code = /^\s+(\d{6})\s*$/m.exec(await readFile(path.join(dataDir, 'mail', f), 'utf8'))?.[1];
        if (code) return { token, code };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('no deletion code mailed');
  };
  try {
    const a = await codeFor(measured.orgSlug as string);
    const sampler = sampleRss(srv.pid, 50);
    const t = performance.now();
    const res = await call(`${base}/api/org/delete/confirm`, {
      method: 'POST',
      token: a.token,
      body: { code: a.code },
    });
    const { peak } = sampler.stop();
    expectStatus('deletion confirm', res, 200);
    result.seconds = (performance.now() - t) / 1000;
    result.peakRssMB = peak / 2 ** 20;
    log(
      `organization deletion of ${documents} documents: ${result.seconds.toFixed(1)} s, peak RSS ${result.peakRssMB.toFixed(0)} MB`,
    );
  } catch (e) {
    log(`organization deletion: ${errorMessage(e)}`);
  }
  try {
    const b = await codeFor(killed.orgSlug as string);
    void call(`${base}/api/org/delete/confirm`, {
      method: 'POST',
      token: b.token,
      body: { code: b.code },
    }).catch(() => undefined);
    // SIGKILL once the deletion has started removing documents.
    const deadline = Date.now() + 120_000;
    let status = '';
    let seen = false;
    while (Date.now() < deadline) {
      status = await operator(['org:deletion-status']).catch((e: Error) => `error ${e.message}`);
      if (/documents [1-9]\d*\//.test(status) || status.startsWith('error')) break;
      if (status !== 'none') seen = true;
      else if (seen)
        throw new Error('the deletion finished before it could be killed (more --org-documents)');
      await new Promise((r) => setTimeout(r, 100));
    }
    if (status.startsWith('error'))
      throw new Error(`org:deletion-status unavailable: ${status.slice(0, 200)}`);
    srv.process.kill('SIGKILL');
    await srv.exited;
    log(`killed the server mid-deletion: ${status.split('\n')[0]}`);
    const t = performance.now();
    await start();
    const until = Date.now() + 1_800_000;
    let failures = 0;
    while (Date.now() < until) {
      // A failing status read is retried (and reported if it keeps failing): the resume job may hold the row.
      status = await operator(['org:deletion-status']).catch((e: Error) => {
        if (++failures > 20) throw e;
        log(`org:deletion-status failed, retrying: ${e.message.replace(/\s+/g, ' ').slice(0, 300)}`);
        return 'error';
      });
      if (status === 'none') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    result.resumedAfterKill =
      status === 'none'
        ? `resumed and finished ${((performance.now() - t) / 1000).toFixed(1)} s after restart`
        : `not finished 30 min after restart: ${status}`;
    log(`organization deletion after SIGKILL: ${result.resumedAfterKill}`);
  } catch (e) {
    result.resumedAfterKill = `n/a (${e instanceof Error ? e.message.replace(/\s+/g, ' ').slice(0, 300) : String(e)})`;
  }
  await stop();
  return result;
}

const LABELS: Record<string, string> = {
  upload: 'upload 200 KB',
  uploadDatabase: 'upload: database time',
  verifyKnown: 'verify by hash, known',
  verifyUnknown: 'verify by hash, unknown',
  serial: 'verify by serial',
  listFirst: `documents list, first page (limit ${LIST_LIMIT})`,
  listDeep: `documents list, page ${DEEP_PAGE} by cursor`,
  searchName: 'documents list, q = file name part',
  searchHash: 'documents list, q = hash prefix',
  acervoFirst: 'acervo, first page (60)',
  acervoLast: 'acervo, last page (60)',
  receipt: 'receipt',
  certificate: 'certificate, 1-page PDF',
  lgpdDelete: 'LGPD deletion of one document',
  orphanSweep: 'orphan sweep (storage:sweep, CLI included)',
};

/** The results as markdown: one table per database, sizes as columns, the goals checked. */
export function reportScale(r: ScaleResults): string {
  const fmt = (s: Stat | null | undefined) =>
    s ? `${s.median.toFixed(1)}${Number.isNaN(s.p95) ? '' : ` / ${s.p95.toFixed(1)}`}` : 'n/a';
  const lines = [
    `Scale bench (\`npm run bench -- scale\`), ${r.date}, ${r.machine}, load average ${os.loadavg()[0]?.toFixed(1)}. ` +
      `Median / p95 in ms over ${r.reps} runs (fewer where noted in the module comment of test/bench/scale.ts). ` +
      `Goals: at the largest size vs empty, ${FLAT_MEASURES.map((k) => LABELS[k]).join(', ')} within ${FLAT_RATIO}×; ` +
      `the list's first page under ${LIST_FIRST_PAGE_MS} ms.`,
  ];
  for (const db of r.databases) {
    const sizes = db.sizes;
    const first = sizes[0];
    const last = [...sizes].reverse().find((s) => !s.unfinished);
    lines.push('', `**${db.kind === 'postgresql' ? 'PostgreSQL' : 'PGlite'}**`, '');
    lines.push(
      `| measure | ${sizes.map((s) => (s.size === 0 ? `empty (${s.documents.toLocaleString('en')} docs)` : `${s.size.toLocaleString('en')} docs`)).join(' | ')} | largest measured / empty | goal |`,
    );
    lines.push(`| --- | ${sizes.map(() => '---').join(' | ')} | --- | --- |`);
    for (const key of Object.keys(LABELS)) {
      const ratio =
        first && last && first.measures[key] && last.measures[key]
          ? (last.measures[key]?.median ?? 0) / (first.measures[key]?.median ?? 1)
          : undefined;
      let goal = '';
      if (FLAT_MEASURES.includes(key) && ratio !== undefined) goal = ratio <= FLAT_RATIO ? '✅' : '❌';
      if (key === 'listFirst' && last?.measures[key]) {
        goal +=
          (last.measures[key]?.median ?? 0) < LIST_FIRST_PAGE_MS
            ? ` < ${LIST_FIRST_PAGE_MS} ms ✅`
            : ` < ${LIST_FIRST_PAGE_MS} ms ❌`;
      }
      lines.push(
        `| ${LABELS[key]} | ${sizes.map((s) => (s.unfinished ? 'not finished' : fmt(s.measures[key]))).join(' | ')} | ${ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}×`} | ${goal} |`,
      );
    }
    lines.push(
      `| load average when measured | ${sizes.map((s) => s.loadAverage.toFixed(1)).join(' | ')} | | |`,
    );
    lines.push(`| server RSS after (MB) | ${sizes.map((s) => s.serverRssMB.toFixed(0)).join(' | ')} | | |`);
    lines.push(
      `| seed time (s) / documents per s | ${sizes.map((s) => `${s.seedSeconds.toFixed(0)} / ${s.seedDocumentsPerSecond.toFixed(0)}`).join(' | ')} | | |`,
    );
    if (db.orgDeletion) {
      const o = db.orgDeletion;
      lines.push(
        '',
        `Organization deletion of ${o.documents.toLocaleString('en')} documents (beside the largest archive): ` +
          `${o.seconds === null ? 'n/a' : `${o.seconds.toFixed(1)} s`}, server peak RSS ` +
          `${o.peakRssMB === null ? 'n/a' : `${o.peakRssMB.toFixed(0)} MB`}; killed with SIGKILL mid-way: ${o.resumedAfterKill}.`,
      );
    }
    const notes = [...new Set(sizes.flatMap((s) => s.notes))];
    if (notes.length) lines.push('', `n/a: ${notes.join('; ')}.`);
  }
  return lines.join('\n');
}

const SECTION_START = '<!-- scale:start -->';
const SECTION_END = '<!-- scale:end -->';

/** Writes `body` as the "Scale" section of docs/benchmarks.md (replacing the previous one). */
async function writeScaleSection(root: string, body: string): Promise<void> {
  const file = path.join(root, 'docs', 'benchmarks.md');
  const text = await readFile(file, 'utf8');
  const section = `${SECTION_START}\n${body}\n${SECTION_END}`;
  const from = text.indexOf(SECTION_START);
  const to = text.indexOf(SECTION_END);
  const next =
    from >= 0 && to > from
      ? `${text.slice(0, from)}${section}${text.slice(to + SECTION_END.length)}`
      : `${text.trimEnd()}\n\n## Scale\n\n${SCALE_INTRO}\n\n${section}\n`;
  await writeFile(file, next);
}

const SCALE_INTRO =
  "How the cost of the everyday requests changes as one tenant's archive grows from empty to a large " +
  "cartório's million documents. `npm run bench -- seed` fills the archive (test/bench/seed.ts: anchored " +
  'batches with real Merkle proofs, shares, access log, acervo items, LGPD deletions; rows only), ' +
  '`npm run bench -- scale` measures (test/bench/scale.ts says how). The table below is rewritten by each run.';

/** `npm run bench -- scale ...` (see the module comment). */
export async function scaleCommand(argv: string[], ctx: ScaleContext): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: 'string' },
      databases: { type: 'string' },
      reps: { type: 'string' },
      'org-documents': { type: 'string' },
      'no-doc': { type: 'boolean' },
    },
    strict: true,
  });
  const sizes = (values.sizes ?? '0,100000,1000000').split(',').map((s) => Number(s.trim()));
  if (sizes.some((s) => !Number.isInteger(s) || s < 0))
    throw new Error(`--sizes: integers >= 0 (got ${values.sizes})`);
  const kinds = (values.databases ?? 'postgresql,pglite').split(',').map((s) => s.trim()) as Kind[];
  if (kinds.some((k) => k !== 'postgresql' && k !== 'pglite'))
    throw new Error('--databases: postgresql, pglite');
  const reps = Number(values.reps ?? 20);
  const orgDocuments = Number(values['org-documents'] ?? 100_000);
  const results = await benchScale(ctx, { sizes, kinds, reps, orgDocuments });
  const report = reportScale(results);
  console.log(`\n${report}\n`);
  if (!values['no-doc']) {
    await writeScaleSection(ctx.root, report);
    console.log('[scale] docs/benchmarks.md (Scale) updated');
  }
}
