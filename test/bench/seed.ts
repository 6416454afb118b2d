/**
 * `npm run bench -- seed --documents N --email <address> [--org <name>] [--objects]`: fills the service's
 * database with a cartório-sized archive for one workspace, fast, as the service itself would have written it.
 *
 * The database is the service's own (`DATABASE_URL`, else the embedded PGlite under `DATA_DIR`: the same
 * configuration the service and the operator CLI read), its migrations applied first. The user is created the
 * way the operator CLI's `user:create` creates one (identity provider row and personal workspace), so they can
 * sign in; with `--org` the organization is found by name or created (`org:create`, the user as owner). The
 * documents go into that workspace, with every table the service fills for them:
 * - `document`: Portuguese file names of a notary's office (escrituras, procurações, certidões, scans), sizes
 *   drawn log-uniformly per kind (e.g. 150 KB to 6 MB for a deed), SHA-256 of a per-document content (unique),
 *   serial numbers `<tenant prefix>-<10 Crockford characters>` as `newSerialNumber` makes them, creation times
 *   spread over `--years` years; about 3 % IPFS imports (reference-only: no storage key), 1 % web captures
 *   (archive and screenshot keys), 4 % published on the acervo feed, 0.5 % LGPD-deleted (row as
 *   `deleteDocumentUnderLgpd` leaves it: keys, publication and IP cleared, policies revoked, audit row);
 * - anchoring: batches of 1 to 400 documents with their real RFC 6962 Merkle root and proofs
 *   (`buildMerkleTree`), one confirmed EVM (EAS attestation) and one Stacks transaction per batch, documents
 *   `registered` on both; the newest documents stay `pending`, not yet batched. The transactions name the
 *   devnets' network and contracts (Hardhat's EAS, a devnet Stacks contract), so a receipt is complete under
 *   any configuration; none of them exists on a chain;
 * - sharing: about 6 % of documents with one or two policies (link, public, wallet, e-mail) and their access log;
 * - the tenant's storage counter (`tenant_storage`, when the migration that adds it has run) recomputed from the
 *   rows, then `VACUUM ANALYZE` so the planner sees the archive as a long-running service would.
 * Rows only, unless `--objects`: then every stored document (and capture screenshot) gets a tiny object, its
 * content the one its SHA-256 is of and its size the object's, in the service's object storage (S3 or files,
 * as configured). Rows go in through `json_populate_recordset` (one JSON parameter per few thousand rows, one
 * transaction per chunk), on PostgreSQL and PGlite alike. With PGlite the service must be stopped (one process
 * per data directory). Progress (rows/s) goes to stdout.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Database } from '@notary/platform/db/database';
import type { PgliteWorker } from '@notary/platform/db/pglite-worker';
import { createCore, publicUrlFor, serviceLogger } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { Tenant } from '@notary/server/db/entities';
import { buildMerkleTree } from '@notary/server/domain/anchoring/merkle';
import { runOperatorCommand } from '@notary/server/domain/operator/commands';
import { DEVNET_EAS_CONTRACTS, DEVNET_EVM_NETWORK } from '@notary/server/ports/chains';
import { CROCKFORD_ALPHABET } from '@notary/shared';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { create as createDigest } from 'multiformats/hashes/digest';
import { sha256 } from 'multiformats/hashes/sha2';
import pg from 'pg';

export const SEED_USAGE = `Usage: npm run bench -- seed --documents N --email E [options]

Fills the service's database (DATABASE_URL, else the embedded database under DATA_DIR; its migrations are
applied first) with N documents of a notary's office in E's personal workspace, or in organization NAME's
(created with E as owner when missing). E is created as the operator CLI's user:create does (signs in as usual).
Rows only: documents have storage keys but no stored bytes, unless --objects (so without it a download, a
certificate or the receipt of a stored PDF answers as for a lost object). With the embedded database, stop the
service first.

  --documents N      documents to add (required)
  --email E          the user (required)
  --org NAME         an organization's workspace instead of the personal one
  --objects          also store a tiny object per stored document (its content is what its SHA-256 is of)
  --seed S           deterministic choices (names, sizes, times) from S; default random
  --years Y          creation times spread over the last Y years (default 5)
  --chunk C          documents per transaction (default 5000)`;

/** What to seed, and where (`env`: the service's configuration variables, `process.env` by default). */
export interface SeedOptions {
  documents: number;
  email: string;
  org?: string | undefined;
  objects?: boolean;
  seed?: string | undefined;
  years?: number;
  chunk?: number;
  env?: NodeJS.ProcessEnv;
  /** Progress lines; default `console.log`. */
  log?: (line: string) => void;
}

/** One seeded document, as tests and benches look it up. */
export interface SeededDocument {
  id: string;
  serialNumber: string;
  sha256Hash: string;
  fileName: string;
  mimeType: string;
  deleted: boolean;
  published: boolean;
  anchored: boolean;
}

/** What a seed run did; `samples` are a few documents of each kind (first, last, deleted, published...). */
export interface SeedResult {
  userId: string;
  tenantId: string;
  serialPrefix: string;
  /** Organization slug with `--org`. */
  orgSlug?: string;
  documents: number;
  deleted: number;
  published: number;
  batches: number;
  policies: number;
  accessLogRows: number;
  objects: number;
  /** Every row written, all tables. */
  rows: number;
  /** Bytes of the tenant's live stored documents after the run; null when the counter table does not exist. */
  usedBytes: number | null;
  seconds: number;
  /** Documents per second over the insert phase (excludes start-up and VACUUM ANALYZE). */
  documentsPerSecond: number;
  samples: SeededDocument[];
}

// --- Deterministic choices -------------------------------------------------------------------------------

/** mulberry32: a small seeded PRNG (uniform 32-bit outputs); enough for picking names and sizes. */
class Rng {
  private state: number;
  constructor(seed: string) {
    this.state = createHash('sha256').update(seed).digest().readUInt32LE(0);
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  hex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes; i++) s += this.int(256).toString(16).padStart(2, '0');
    return s;
  }
  /** A version 4 UUID (RFC 9562 5.4) from this generator. */
  uuid(): string {
    const h = this.hex(16).split('');
    h[12] = '4';
    h[16] = '89ab'[this.int(4)] as string;
    const s = h.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
  /** Log-uniform integer in [min, max]: file sizes spread over orders of magnitude. */
  logUniform(min: number, max: number): number {
    return Math.round(min * (max / min) ** this.next());
  }
}

const FIRST = [
  'Ana',
  'João',
  'Maria',
  'José',
  'Francisca',
  'Antônio',
  'Adriana',
  'Carlos',
  'Juliana',
  'Paulo',
  'Márcia',
  'Lucas',
  'Fernanda',
  'Pedro',
  'Patrícia',
  'Rafael',
  'Aline',
  'Marcos',
  'Beatriz',
  'Luiz',
  'Camila',
  'Gabriel',
  'Helena',
  'Raimundo',
  'Sebastião',
  'Luciana',
  'Roberto',
  'Vanessa',
  'Thiago',
  'Sandra',
] as const;
const LAST = [
  'Silva',
  'Santos',
  'Oliveira',
  'Souza',
  'Rodrigues',
  'Ferreira',
  'Alves',
  'Pereira',
  'Lima',
  'Gomes',
  'Costa',
  'Ribeiro',
  'Martins',
  'Carvalho',
  'Almeida',
  'Lopes',
  'Soares',
  'Fernandes',
  'Vieira',
  'Barbosa',
  'Rocha',
  'Dias',
  'Nascimento',
  'Andrade',
  'Moreira',
  'Nunes',
  'Marques',
  'Machado',
  'Mendes',
  'Freitas',
  'Cardoso',
  'Ramos',
  'Gonçalves',
  'Santana',
  'Teixeira',
  'Araújo',
  'Cavalcanti',
  'Monteiro',
] as const;
const COMPANY = [
  'Agropecuária Vale Verde',
  'Construtora Horizonte',
  'Comércio de Grãos Paraná',
  'Imobiliária Sol',
  'Transportes Rápido Sul',
  'Padaria Pão Quente',
  'Clínica Bem Estar',
  'Metalúrgica Aço Forte',
] as const;
const SITES = [
  'www.in.gov.br',
  'www.tjsp.jus.br',
  'www.cnj.jus.br',
  'g1.globo.com',
  'www.gov.br',
  'www.folha.uol.com.br',
  'www.registrodeimoveis.org.br',
] as const;
const CITIES = [
  'São Paulo',
  'Campinas',
  'Curitiba',
  'Belo Horizonte',
  'Recife',
  'Salvador',
  'Goiânia',
  'Porto Alegre',
  'Fortaleza',
  'Manaus',
] as const;

const PDF = 'application/pdf';
const JPEG = 'image/jpeg';
const PNG = 'image/png';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const WACZ = 'application/wacz';

/** Kinds of files a notary's office registers: weight, name, MIME type and size range (bytes). */
const KINDS: {
  weight: number;
  name: (r: Rng, d: Date) => string;
  mime: string;
  min: number;
  max: number;
}[] = [
  {
    weight: 14,
    mime: PDF,
    min: 150e3,
    max: 6e6,
    name: (r) => `Escritura de Compra e Venda - Matrícula ${10_000 + r.int(190_000)}.pdf`,
  },
  { weight: 10, mime: PDF, min: 60e3, max: 900e3, name: (r) => `Procuração Pública - ${person(r)}.pdf` },
  { weight: 9, mime: PDF, min: 80e3, max: 1.5e6, name: (r) => `Certidão de Nascimento ${person(r)}.pdf` },
  {
    weight: 6,
    mime: PDF,
    min: 80e3,
    max: 1.5e6,
    name: (r) => `Certidão de Casamento ${r.pick(LAST)} e ${r.pick(LAST)}.pdf`,
  },
  {
    weight: 6,
    mime: PDF,
    min: 100e3,
    max: 3e6,
    name: (r) => `Matrícula ${1000 + r.int(99_000)} - ${r.pick(CITIES)}.pdf`,
  },
  { weight: 4, mime: PDF, min: 200e3, max: 8e6, name: (r) => `Contrato Social ${r.pick(COMPANY)} Ltda.pdf` },
  { weight: 3, mime: PDF, min: 100e3, max: 2e6, name: (_r, d) => `Ata de Assembleia ${isoDay(d)}.pdf` },
  { weight: 2, mime: PDF, min: 100e3, max: 2e6, name: (r) => `Testamento Público ${person(r)}.pdf` },
  { weight: 8, mime: PDF, min: 40e3, max: 400e3, name: (r) => `Reconhecimento de Firma ${person(r)}.pdf` },
  { weight: 7, mime: JPEG, min: 400e3, max: 5e6, name: (r) => `RG ${person(r)}.jpg` },
  { weight: 3, mime: PNG, min: 300e3, max: 4e6, name: (r) => `CNH digitalizada ${r.pick(FIRST)}.png` },
  {
    weight: 8,
    mime: JPEG,
    min: 900e3,
    max: 7e6,
    name: (r, d) => `IMG_${compactDay(d)}_${String(r.int(240_000)).padStart(6, '0')}.jpg`,
  },
  { weight: 10, mime: PDF, min: 100e3, max: 20e6, name: (r, d) => `Scan_${isoDay(d)}_${1 + r.int(40)}.pdf` },
  {
    weight: 4,
    mime: DOCX,
    min: 20e3,
    max: 250e3,
    name: (r) => `Minuta escritura ${r.pick(LAST)} v${1 + r.int(5)}.docx`,
  },
  {
    weight: 2,
    mime: XLSX,
    min: 15e3,
    max: 300e3,
    name: (_r, d) => `Emolumentos ${isoDay(d).slice(0, 7)}.xlsx`,
  },
  {
    weight: 4,
    mime: PDF,
    min: 50e3,
    max: 600e3,
    name: (r) => `comprovante_residencia_${r.pick(LAST).toLowerCase()}.pdf`,
  },
];
const KIND_TOTAL = KINDS.reduce((n, k) => n + k.weight, 0);

/** The kind whose cumulative weight covers `ticket` (0 <= ticket < KIND_TOTAL). */
function pickKind(ticket: number): (typeof KINDS)[number] {
  let left = ticket;
  for (const kind of KINDS) {
    left -= kind.weight;
    if (left < 0) return kind;
  }
  return KINDS[0] as (typeof KINDS)[number];
}

function person(r: Rng): string {
  return `${r.pick(FIRST)} ${r.pick(LAST)} ${r.pick(LAST)}`;
}
function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
function compactDay(d: Date): string {
  return isoDay(d).replaceAll('-', '');
}

const SERIAL_SPACE = 1n << 50n;

/** 10 Crockford base32 characters of a 50-bit value (the CODE of `newSerialNumber`). */
function crockford50(v: bigint): string {
  let out = '';
  for (let shift = 45n; shift >= 0n; shift -= 5n) out += CROCKFORD_ALPHABET[Number((v >> shift) & 31n)];
  return out;
}

/** CIDv1 raw of a SHA-256 digest (`bafkrei...`), what an IPFS import of a one-block file names. */
function rawCid(digest: Buffer): string {
  return CID.createV1(raw.code, createDigest(sha256.code, digest)).toString();
}

/** A devnet Stacks deployer (Clarinet's default); the contract name is the service's. */
const STACKS_DEVNET_CONTRACT = 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary';
/** Stacks testnet/devnet chain id (0x80000000). */
const STACKS_DEVNET_CHAIN_ID = 2_147_483_648;
/** Newest documents left `pending`, not batched yet (the next anchoring collection takes them). */
const PENDING_TAIL = 150;
const MAX_BATCH = 400;

type Row = Record<string, string | number | boolean | null | object>;

/** The rows of one chunk, table by table (keys are column names). */
interface ChunkRows {
  document: Row[];
  anchor_batch: Row[];
  anchor_tx: Row[];
  document_anchor: Row[];
  access_policy: Row[];
  access_log_entry: Row[];
  document_deletion: Row[];
}

/**
 * Serials of a run: a bijection of the document's index (an odd multiplier mod 2^50), so a run never repeats
 * one, and anyone knowing the run's seed can name its documents' serials (`seededSerial`).
 */
function serialParams(runId: string): { base: bigint; step: bigint } {
  const r = new Rng(`serial:${runId}`);
  return { base: BigInt(`0x${r.hex(7)}`) % SERIAL_SPACE, step: BigInt(`0x${r.hex(4)}`) * 2n + 1n };
}

/** The SHA-256 (hex) of document `i` (0-based) of the run seeded with `runId`. */
export function seededHash(runId: string, i: number): string {
  return createHash('sha256').update(contentOf(runId, i)).digest('hex');
}

/** The serial number of document `i` (0-based) of the run seeded with `runId` into a tenant with `prefix`. */
export function seededSerial(runId: string, prefix: string, i: number): string {
  const { base, step } = serialParams(runId);
  return `${prefix}-${crockford50((base + BigInt(i) * step) % SERIAL_SPACE)}`;
}

/** Content whose SHA-256 a seeded document carries (and which `--objects` stores). */
function contentOf(runId: string, i: number): Buffer {
  return Buffer.from(`Notary seeded document ${runId} #${i}\n`);
}

// --- The run --------------------------------------------------------------------------------------------

/**
 * Seeds `documents` documents (see the module comment for what rows) into the workspace of `email` (or of
 * organization `org`) in the database `env` configures. Returns counts, timings and sample documents.
 * @throws Error for a production service or real networks (`refuseRealService`); when the embedded database is
 *   in use by a running service (`EDATADIRLOCKED`); the database's errors as they are (a chunk is one transaction: the chunks before it stay).
 */
/**
 * The seed writes "registered" anchors that no chain holds: never into the database of a service in production
 * (`NODE_ENV=production`) or one that anchors on real networks (`ANCHORING=configured`, or chain variables set).
 * @throws Error naming which, before anything is opened.
 */
export function refuseRealService(env: NodeJS.ProcessEnv): void {
  if (env.NODE_ENV === 'production') {
    throw new Error(
      'seed: NODE_ENV=production: the seed writes anchors no chain holds, never into a real archive',
    );
  }
  // As the service reads it: ANCHORING, else configured whenever a chain's endpoint is set.
  const chains = env.EVM_RPC_URL !== undefined || env.STACKS_API_URL !== undefined;
  if ((env.ANCHORING ?? (chains ? 'configured' : 'devnet')) === 'configured') {
    throw new Error(
      'seed: this configuration anchors on real networks; the seed writes anchors no chain holds',
    );
  }
}

export async function seed(options: SeedOptions): Promise<SeedResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const n = options.documents;
  if (!Number.isInteger(n) || n < 0) throw new Error(`--documents must be a non-negative integer (got ${n})`);
  const chunkSize = options.chunk ?? 5000;
  const years = options.years ?? 5;
  const runId =
    options.seed ?? createHash('sha256').update(`${Date.now()}:${Math.random()}`).digest('hex').slice(0, 12);
  const rng = new Rng(runId);
  const started = performance.now();

  refuseRealService(options.env ?? process.env);
  const config = loadConfig({ ...(options.env ?? process.env), ANCHORING: 'off', LOG_LEVEL: 'warn' });
  const core = await createCore(config, publicUrlFor(config, config.port), {
    log: serviceLogger(config, 'stderr'),
  });
  try {
    const operator = (cmd: Parameters<typeof runOperatorCommand>[1]) =>
      runOperatorCommand(
        {
          em: core.db.fork(),
          identity: core.identity.admin,
          directory: core.deps.directory,
          storage: core.storage,
        },
        cmd,
      );
    const email = options.email.trim().toLowerCase();
    const userId = await operator({ command: 'user:create', email });
    let tenantWhere: { kind: 'personal' | 'organization'; externalId: string } = {
      kind: 'personal',
      externalId: userId,
    };
    let orgSlug: string | undefined;
    if (options.org !== undefined) {
      const name = options.org.trim();
      const listed = (await operator({ command: 'org:list' }))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t'))
        .find((cols) => cols[2] === name);
      const [orgId, slug] = listed
        ? [listed[0], listed[1]]
        : (await operator({ command: 'org:create', name, owner: email })).split(' ');
      if (!orgId || !slug) throw new Error(`could not find or create organization ${name}`);
      if (listed) {
        await operator({ command: 'member:add', org: slug, email, role: 'owner' });
      }
      orgSlug = slug;
      tenantWhere = { kind: 'organization', externalId: orgId };
    }
    const em = core.db.fork() as SqlEntityManager;
    const tenant = await em.findOneOrFail(Tenant, tenantWhere);
    log(
      `[seed] ${n} documents into ${tenant.kind} workspace ${tenant.id} (prefix ${tenant.serialPrefix}) of ${email}` +
        ` on ${core.db.kind}, seed ${runId}${options.objects ? ', with objects' : ', rows only'}`,
    );

    const bulk = await openBulk(core.db, config.databaseUrl);
    const exec = (q: BulkQuery, table: keyof ChunkRows, rows: Row[], returning = false) =>
      rows.length === 0
        ? Promise.resolve([] as { id: string }[])
        : q<{ id: string }>(
            `insert into "${table}" select * from json_populate_recordset(null::"${table}", $1::json)` +
              (returning ? ' on conflict do nothing returning id' : ''),
            [JSON.stringify(rows)],
          );

    const serials = serialParams(runId);
    const now = Date.now();
    const span = years * 365.25 * 86_400_000;
    const firstAt = now - 3_600_000 - span;
    const step = n > 0 ? span / n : 0;
    let evmBlock = 1_000_000 + rng.int(1000);
    let stacksBlock = 150_000 + rng.int(1000);
    let nonce = 0;
    const phase = { generate: 0, objects: 0, insert: 0 };
    const totals = {
      deleted: 0,
      published: 0,
      batches: 0,
      policies: 0,
      logs: 0,
      objects: 0,
      rows: 0,
      docs: 0,
    };
    const samples: SeededDocument[] = [];
    const insertStarted = performance.now();
    let lastReport = insertStarted;

    /** Stores the chunk's objects, then its rows in one transaction; keeps samples, prints progress. */
    const writeChunk = async (
      rows: ChunkRows,
      objects: { key: string; body: Buffer; contentType: string }[],
      docs: Row[],
      to: number,
    ): Promise<void> => {
      const objectsStarted = performance.now();
      for (const o of objects) {
        await core.storage.put(o.key, Readable.from([o.body]), { contentType: o.contentType });
      }
      totals.objects += objects.length;
      const insertStartedAt = performance.now();
      phase.objects += insertStartedAt - objectsStarted;
      await bulk.transaction(async (t) => {
        const inserted = new Set((await exec(t, 'document', rows.document, true)).map((r) => r.id));
        // A serial or hash already in the database (a second run with the same --seed): that document is
        // skipped, and so is everything that points at it.
        const kept = (r: Row) => inserted.has(r.document_id as string);
        await exec(t, 'anchor_batch', rows.anchor_batch);
        await exec(t, 'anchor_tx', rows.anchor_tx);
        await exec(t, 'document_anchor', rows.document_anchor.filter(kept));
        await exec(t, 'access_policy', rows.access_policy.filter(kept));
        await exec(t, 'access_log_entry', rows.access_log_entry.filter(kept));
        await exec(t, 'document_deletion', rows.document_deletion.filter(kept));
        totals.docs += inserted.size;
        totals.rows += Object.values(rows).reduce((sum: number, r: Row[]) => sum + r.length, 0);
      });
      phase.insert += performance.now() - insertStartedAt;
      const first = docs[0];
      if (first && samples.length < 32) samples.push(sampleOf(first));
      const last = docs[docs.length - 1];
      if (last && to === n) samples.push(sampleOf(last));
      const deleted = samples.some((x) => x.deleted) ? undefined : docs.find((d) => d.deleted_at !== null);
      if (deleted) samples.push(sampleOf(deleted));
      const published = samples.some((x) => x.published) ? undefined : docs.find((d) => d.published === true);
      if (published) samples.push(sampleOf(published));
      // One live, anchored document per MIME type (a receipt of a stored PDF reads its object: --objects).
      for (const d of docs) {
        if (
          d.deleted_at === null &&
          d.onchain_status === 'registered' &&
          !samples.some((x) => x.mimeType === d.mime_type && !x.deleted && x.anchored)
        )
          samples.push(sampleOf(d));
      }
      const t = performance.now();
      if (t - lastReport > 2000 || to === n) {
        const sec = (t - insertStarted) / 1000;
        log(
          `[seed] ${to}/${n} documents, ${Math.round(totals.docs / sec)} documents/s, ` +
            `${Math.round(totals.rows / sec)} rows/s (all tables); generating ${(phase.generate / 1000).toFixed(1)} s, ` +
            `objects ${(phase.objects / 1000).toFixed(1)} s, database ${(phase.insert / 1000).toFixed(1)} s`,
        );
        lastReport = t;
      }
    };
    let pending: Promise<void> = Promise.resolve();
    for (let from = 0; from < n; from += chunkSize) {
      const to = Math.min(n, from + chunkSize);
      const generateStarted = performance.now();
      const rows: ChunkRows = {
        document: [],
        anchor_batch: [],
        anchor_tx: [],
        document_anchor: [],
        access_policy: [],
        access_log_entry: [],
        document_deletion: [],
      };
      const objects: { key: string; body: Buffer; contentType: string }[] = [];
      const docs: (Row & { created: number; digest: Buffer })[] = [];
      for (let i = from; i < to; i++) {
        const created = Math.round(firstAt + i * step + rng.next() * step);
        const createdAt = new Date(created);
        const kind = pickKind(rng.int(KIND_TOTAL));
        const content = contentOf(runId, i);
        const digest = createHash('sha256').update(content).digest();
        const id = rng.uuid();
        const roll = rng.next();
        const source = roll < 0.03 ? 'ipfs' : roll < 0.04 ? 'web-capture' : 'upload';
        let fileName = kind.name(rng, createdAt);
        let mime = kind.mime;
        let sourceUri: string | null = null;
        let storageKey: string | null = `${tenant.id}/${rng.uuid()}`;
        let screenshotKey: string | null = null;
        if (source === 'ipfs') {
          sourceUri = `ipfs://${rawCid(digest)}`;
          storageKey = null;
        } else if (source === 'web-capture') {
          const site = rng.pick(SITES);
          sourceUri = `https://${site}/${rng.hex(4)}`;
          fileName = `${site}-${isoDay(createdAt)}.wacz`;
          mime = WACZ;
          screenshotKey = `${tenant.id}/${rng.uuid()}`;
        }
        const fileSize = options.objects && storageKey ? content.length : rng.logUniform(kind.min, kind.max);
        if (options.objects && storageKey) {
          objects.push({ key: storageKey, body: content, contentType: mime });
          if (screenshotKey) objects.push({ key: screenshotKey, body: content, contentType: PNG });
        }
        const deleted = rng.chance(0.005);
        const deletedAt = deleted
          ? new Date(Math.min(now - 60_000, created + rng.int(400) * 86_400_000))
          : null;
        const published = !deleted && rng.chance(0.04);
        const publishedAt = published
          ? new Date(Math.min(now - 60_000, created + rng.int(30) * 86_400_000))
          : null;
        const doc = {
          id,
          tenant_id: tenant.id,
          serial_number: `${tenant.serialPrefix}-${crockford50((serials.base + BigInt(i) * serials.step) % SERIAL_SPACE)}`,
          file_name: fileName,
          file_size: fileSize,
          mime_type: mime,
          sha256_hash: digest.toString('hex'),
          source_type: source,
          source_uri: sourceUri,
          storage_key: deleted ? null : storageKey,
          screenshot_key: deleted ? null : screenshotKey,
          onchain_status: 'pending',
          onchain_tx_hash: null,
          onchain_attestation_uid: null,
          onchain_at: null,
          stacks_status: 'pending',
          stacks_tx_id: null,
          stacks_anchored_at: null,
          consent_given: true,
          consent_timestamp: new Date(created - 1000 - rng.int(20_000)).toISOString(),
          uploader_user_id: userId,
          uploader_ip: deleted
            ? null
            : `${rng.pick([177, 179, 186, 187, 189, 191, 200, 201])}.${rng.int(256)}.${rng.int(256)}.${1 + rng.int(254)}`,
          created_at: createdAt.toISOString(),
          published,
          published_at: publishedAt?.toISOString() ?? null,
          acervo_title: published ? fileName.replace(/\.[a-z]+$/, '') : null,
          acervo_author: published ? `${rng.pick(FIRST)} ${rng.pick(LAST)}, tabelião substituto` : null,
          metadata: published
            ? `Livro ${1 + rng.int(900)}, folha ${1 + rng.int(400)}; ${rng.pick(CITIES)}`
            : null,
          deleted_at: deletedAt?.toISOString() ?? null,
          created: created,
          digest,
        };
        docs.push(doc);
        if (deleted) {
          totals.deleted++;
          rows.document_deletion.push({
            id: rng.uuid(),
            document_id: id,
            tenant_id: tenant.id,
            deleted_by: userId,
            deleted_by_email: email,
            role: 'owner',
            ip: `200.${rng.int(256)}.${rng.int(256)}.${1 + rng.int(254)}`,
            reason: rng.pick([
              'Pedido do titular (LGPD, art. 18, VI)',
              'Dados pessoais enviados por engano',
              null,
            ]),
            deleted_at: (deletedAt as Date).toISOString(),
          });
        }
        if (published) totals.published++;
        if (rng.chance(0.06)) {
          const policyCount = 1 + rng.int(2);
          for (let p = 0; p < policyCount; p++) {
            const kindOf = rng.pick(['link', 'link', 'public', 'wallet', 'email'] as const);
            const policyId = rng.uuid();
            const permission = rng.chance(0.7) ? 'download' : 'view';
            const policyAt = created + (1 + rng.int(72)) * 3_600_000;
            const wallet = `0x${rng.hex(20)}`;
            const mail = `${rng.pick(FIRST).toLowerCase()}.${rng.pick(LAST).toLowerCase()}@example.com.br`;
            const accesses = rng.int(6);
            const revoked = deleted
              ? (deletedAt as Date).toISOString()
              : rng.chance(0.1)
                ? new Date(Math.min(now - 1000, policyAt + 86_400_000)).toISOString()
                : null;
            rows.access_policy.push({
              id: policyId,
              document_id: id,
              kind: kindOf,
              token_hash: kindOf === 'link' ? rng.hex(32) : null,
              permission,
              expires_at: rng.chance(0.5) ? new Date(policyAt + 30 * 86_400_000).toISOString() : null,
              max_accesses: rng.chance(0.3) ? 10 : null,
              access_count: accesses,
              addresses: kindOf === 'wallet' ? [wallet] : kindOf === 'email' ? [mail] : null,
              created_by: userId,
              created_at: new Date(policyAt).toISOString(),
              revoked_at: revoked,
            });
            for (let a = 0; a < accesses; a++) {
              rows.access_log_entry.push({
                id: rng.uuid(),
                document_id: id,
                policy_id: policyId,
                accessor_type: kindOf === 'wallet' ? 'wallet' : kindOf === 'email' ? 'email' : 'anonymous',
                accessor_identifier:
                  kindOf === 'wallet'
                    ? wallet
                    : kindOf === 'email'
                      ? mail
                      : kindOf === 'link'
                        ? `link:${policyId}`
                        : 'public',
                permission,
                ip: `${rng.pick([177, 189, 200, 201])}.${rng.int(256)}.${rng.int(256)}.${1 + rng.int(254)}`,
                created_at: new Date(Math.min(now - 1000, policyAt + (a + 1) * 3_600_000)).toISOString(),
              });
            }
            totals.policies++;
            totals.logs += accesses;
          }
        }
      }

      // Anchoring batches of this chunk's documents in creation order; the run's newest stay pending.
      const anchoredEnd = Math.max(from, Math.min(to, n - PENDING_TAIL)) - from;
      for (let b = 0; b < anchoredEnd; ) {
        const size = Math.min(anchoredEnd - b, 1 + rng.int(MAX_BATCH));
        const members = docs.slice(b, b + size);
        b += size;
        const tree = buildMerkleTree(members.map((d) => new Uint8Array(d.digest)));
        const batchId = rng.uuid();
        const batchAt = (members[members.length - 1] as { created: number }).created + 60_000;
        const evmTx = `0x${rng.hex(32)}`;
        const uid = `0x${rng.hex(32)}`;
        const stacksTx = rng.hex(32);
        evmBlock += 1 + rng.int(300);
        stacksBlock += 1 + rng.int(20);
        nonce++;
        rows.anchor_batch.push({
          id: batchId,
          created_at: new Date(batchAt).toISOString(),
          leaf_count: size,
          root: Buffer.from(tree.root).toString('hex'),
          status: 'anchored',
        });
        const txRow = (chain: 'evm' | 'stacks'): Row => ({
          id: rng.uuid(),
          batch_id: batchId,
          chain,
          state: 'confirmed',
          nonce: String(nonce),
          tx_hash: chain === 'evm' ? evmTx : `0x${stacksTx}`,
          raw: null,
          replaced_tx_hashes: null,
          max_fee:
            chain === 'evm' ? String(1_000_000_000 + rng.int(2_000_000_000)) : String(2000 + rng.int(3000)),
          priority_fee: chain === 'evm' ? '1000000' : null,
          attempts: 0,
          refusals: 0,
          last_error: null,
          broadcast_at: new Date(batchAt + 5000).toISOString(),
          next_attempt_at: new Date(batchAt + 900_000).toISOString(),
          attestation_uid: chain === 'evm' ? uid : null,
          block_number: String(chain === 'evm' ? evmBlock : stacksBlock),
          network: chain === 'evm' ? DEVNET_EVM_NETWORK.network : 'devnet',
          chain_id: chain === 'evm' ? DEVNET_EVM_NETWORK.chainId : STACKS_DEVNET_CHAIN_ID,
          contract: chain === 'evm' ? DEVNET_EAS_CONTRACTS.eas : STACKS_DEVNET_CONTRACT,
          created_at: new Date(batchAt).toISOString(),
          updated_at: new Date(batchAt + 900_000).toISOString(),
        });
        rows.anchor_tx.push(txRow('evm'), txRow('stacks'));
        members.forEach((d, leaf) => {
          d.onchain_status = 'registered';
          d.onchain_tx_hash = evmTx;
          d.onchain_attestation_uid = uid;
          d.onchain_at = new Date(batchAt + 20_000).toISOString();
          d.stacks_status = 'registered';
          d.stacks_tx_id = stacksTx;
          d.stacks_anchored_at = new Date(batchAt + 600_000).toISOString();
          rows.document_anchor.push({
            document_id: d.id as string,
            batch_id: batchId,
            leaf_index: leaf,
            proof: tree.proofs[leaf] as object,
          });
        });
        totals.batches++;
      }
      rows.document = docs.map(({ created: _c, digest: _d, ...row }) => row);

      phase.generate += performance.now() - generateStarted;
      // The database writes this chunk while the next one is generated (two processes, two cores).
      await pending;
      pending = writeChunk(rows, objects, docs, to);
    }
    await pending;
    const insertSeconds = (performance.now() - insertStarted) / 1000;

    let usedBytes: number | null = null;
    const hasCounter = await em.execute<{ r: string | null }[]>(
      `select to_regclass('tenant_storage')::text as r`,
    );
    if (hasCounter[0]?.r) {
      await em.execute(
        `insert into tenant_storage (tenant_id, used_bytes, updated_at)
         select ?, coalesce(sum(file_size), 0), now() from document
          where tenant_id = ? and deleted_at is null and storage_key is not null
         on conflict (tenant_id) do update set used_bytes = excluded.used_bytes, updated_at = excluded.updated_at`,
        [tenant.id, tenant.id],
      );
      const [row] = await em.execute<{ used_bytes: string | number }[]>(
        'select used_bytes from tenant_storage where tenant_id = ?',
        [tenant.id],
      );
      usedBytes = Number(row?.used_bytes ?? 0);
    } else {
      log('[seed] no tenant_storage table in this database: the storage counter is left alone');
    }
    await bulk.close();
    log('[seed] VACUUM ANALYZE');
    for (const table of [
      'document',
      'document_anchor',
      'anchor_batch',
      'anchor_tx',
      'access_policy',
      'access_log_entry',
      'document_deletion',
    ]) {
      await em.execute(`vacuum analyze "${table}"`);
    }
    const seconds = (performance.now() - started) / 1000;
    const result: SeedResult = {
      userId,
      tenantId: tenant.id,
      serialPrefix: tenant.serialPrefix,
      ...(orgSlug ? { orgSlug } : {}),
      documents: totals.docs,
      deleted: totals.deleted,
      published: totals.published,
      batches: totals.batches,
      policies: totals.policies,
      accessLogRows: totals.logs,
      objects: totals.objects,
      rows: totals.rows,
      usedBytes,
      seconds,
      documentsPerSecond: insertSeconds > 0 ? totals.docs / insertSeconds : 0,
      samples,
    };
    log(
      `[seed] done: ${result.documents} documents (${result.deleted} LGPD-deleted, ${result.published} published), ` +
        `${result.batches} batches, ${result.policies} policies, ${result.accessLogRows} access log rows, ` +
        `${result.objects} objects, ${result.rows} rows in ${seconds.toFixed(1)} s ` +
        `(${Math.round(result.documentsPerSecond)} documents/s while inserting)` +
        (usedBytes === null ? '' : `; tenant storage ${usedBytes} bytes`),
    );
    return result;
  } finally {
    await core.close();
  }
}

/** A statement with `$n` parameters, answering its rows. */
type BulkQuery = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/**
 * The bulk insert path, bypassing the ORM (which formats parameters into the SQL text client-side: seconds
 * per few MB of JSON): a `pg` client with bind parameters on PostgreSQL, the PGlite worker's own `query`.
 */
interface Bulk {
  transaction(fn: (q: BulkQuery) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

async function openBulk(db: Database, databaseUrl: string | undefined): Promise<Bulk> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const q: BulkQuery = async <T>(sql: string, params: unknown[]) =>
      (await client.query(sql, params)).rows as T[];
    return {
      transaction: async (fn) => {
        await client.query('begin');
        try {
          await fn(q);
          await client.query('commit');
        } catch (e) {
          await client.query('rollback').catch(() => undefined);
          throw e;
        }
      },
      close: () => client.end(),
    };
  }
  // The worker the service hands MikroORM (`openDatabase`: a factory in `driverOptions.pglite`).
  const config = db.orm.config as unknown as { get(key: 'driverOptions'): { pglite?: () => PgliteWorker } };
  const driverOptions = config.get('driverOptions');
  const worker = driverOptions.pglite?.();
  if (!worker) throw new Error('the embedded database has no PGlite worker to write through');
  return {
    transaction: (fn) =>
      worker.transaction(async (tx) => {
        await fn(async <T>(sql: string, params: unknown[]) => (await tx.query<T>(sql, params)).rows);
      }),
    close: async () => undefined,
  };
}

function sampleOf(d: Row): SeededDocument {
  return {
    id: d.id as string,
    serialNumber: d.serial_number as string,
    sha256Hash: d.sha256_hash as string,
    fileName: d.file_name as string,
    mimeType: d.mime_type as string,
    deleted: d.deleted_at !== null,
    published: d.published === true,
    anchored: d.onchain_status === 'registered',
  };
}

/** `npm run bench -- seed ...`: parses `argv` (after `seed`), seeds, prints progress and the summary. */
export async function seedCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      documents: { type: 'string' },
      email: { type: 'string' },
      org: { type: 'string' },
      objects: { type: 'boolean' },
      seed: { type: 'string' },
      years: { type: 'string' },
      chunk: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help || !values.documents || !values.email) {
    console.log(SEED_USAGE);
    if (!values.help) process.exitCode = 2;
    return;
  }
  const positive = (name: string, v: string | undefined, fallback: number) => {
    const x = v === undefined ? fallback : Number(v);
    if (!Number.isFinite(x) || x <= 0) throw new Error(`--${name} must be a positive number (got ${v})`);
    return x;
  };
  await seed({
    documents: Number(values.documents),
    email: values.email,
    org: values.org,
    objects: values.objects ?? false,
    seed: values.seed,
    years: positive('years', values.years, 5),
    chunk: Math.round(positive('chunk', values.chunk, 5000)),
  });
}
