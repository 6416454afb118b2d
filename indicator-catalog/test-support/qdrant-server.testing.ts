import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '@notary/shared';
import type { Schemas } from '@qdrant/js-client-rest';
import { z } from 'zod';

/**
 * A Qdrant REST server on 127.0.0.1 (a free port) for tests, since Qdrant has no Debian or npm package to run.
 * It implements the calls the catalog's adapter makes, with the request and response shapes of Qdrant's OpenAPI (the
 * types below are the client's, generated from it): `GET /`, collection exists/get/create, payload index create, points
 * upsert/delete/query/scroll/count. Request bodies are validated (unknown fields rejected, ids must be unsigned
 * integers or UUIDs, vectors of the collection's size); the search is exact cosine over vectors normalized on upsert,
 * as Qdrant does for `Cosine`. Every call is logged in `calls` as `METHOD /path`.
 */

const Uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'not a UUID');
const PointId = z.union([z.number().int().min(0), Uuid]);
const Payload = z.record(z.string(), z.unknown());

const FieldCondition = z
  .object({
    key: z.string(),
    match: z
      .union([
        z.object({ value: z.union([z.string(), z.number(), z.boolean()]) }).strict(),
        z.object({ any: z.union([z.array(z.string()), z.array(z.number())]) }).strict(),
        z.object({ except: z.union([z.array(z.string()), z.array(z.number())]) }).strict(),
      ])
      .optional(),
  })
  .strict();
const HasId = z.object({ has_id: z.array(PointId) }).strict();
type FilterT = {
  must?: ConditionT | ConditionT[] | null;
  should?: ConditionT | ConditionT[] | null;
  must_not?: ConditionT | ConditionT[] | null;
};
type ConditionT = z.infer<typeof FieldCondition> | z.infer<typeof HasId> | FilterT;
const Condition: z.ZodType<ConditionT> = z.lazy(() => z.union([FieldCondition, HasId, Filter]));
const Clauses = z.union([Condition, z.array(Condition)]).nullish();
const Filter: z.ZodType<FilterT> = z.lazy(() =>
  z.object({ must: Clauses, should: Clauses, must_not: Clauses }).strict(),
);
const WithPayload = z.union([z.boolean(), z.array(z.string())]).nullish();

const CreateCollection = z
  .object({
    vectors: z
      .object({
        size: z.number().int().min(1).max(65536),
        distance: z.enum(['Cosine', 'Euclid', 'Dot', 'Manhattan']),
      })
      .strict(),
  })
  .strict();
const CreateFieldIndex = z
  .object({
    field_name: z.string().min(1),
    field_schema: z
      .enum(['keyword', 'integer', 'float', 'geo', 'text', 'bool', 'datetime', 'uuid'])
      .nullish(),
  })
  .strict();
const UpsertPoints = z
  .object({
    points: z
      .array(z.object({ id: PointId, vector: z.array(z.number()), payload: Payload.nullish() }).strict())
      .min(1),
  })
  .strict();
const DeletePoints = z.union([
  z.object({ points: z.array(PointId) }).strict(),
  z.object({ filter: Filter }).strict(),
]);
const QueryPoints = z
  .object({
    query: z.union([z.array(z.number()), z.object({ nearest: z.array(z.number()) }).strict()]),
    limit: z.number().int().min(1).nullish(),
    offset: z.number().int().min(0).nullish(),
    filter: Filter.nullish(),
    with_payload: WithPayload,
    with_vector: z.boolean().nullish(),
    score_threshold: z.number().nullish(),
  })
  .strict();
const ScrollPoints = z
  .object({
    filter: Filter.nullish(),
    limit: z.number().int().min(1).nullish(),
    offset: PointId.nullish(),
    with_payload: WithPayload,
    with_vector: z.boolean().nullish(),
  })
  .strict();
const CountPoints = z.object({ filter: Filter.nullish(), exact: z.boolean().optional() }).strict();

interface StoredPoint {
  id: string | number;
  vector: Float32Array;
  payload: Record<string, unknown>;
  version: number;
}

interface Collection {
  size: number;
  distance: string;
  points: Map<string, StoredPoint>;
  indexes: Map<string, string>;
  version: number;
}

class QdrantHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const asList = (c: ConditionT | ConditionT[] | null | undefined): ConditionT[] =>
  c === undefined || c === null ? [] : Array.isArray(c) ? c : [c];

function matches(point: StoredPoint, condition: ConditionT): boolean {
  if ('has_id' in condition) return condition.has_id.some((id) => String(id) === String(point.id));
  if ('key' in condition) {
    const value = point.payload[condition.key];
    const m = condition.match;
    if (!m) return false;
    if ('value' in m) return value === m.value;
    if ('any' in m) return (m.any as unknown[]).includes(value);
    return !(m.except as unknown[]).includes(value);
  }
  return matchesFilter(point, condition);
}

function matchesFilter(point: StoredPoint, filter: FilterT | null | undefined): boolean {
  if (!filter) return true;
  const must = asList(filter.must);
  const should = asList(filter.should);
  const mustNot = asList(filter.must_not);
  return (
    must.every((c) => matches(point, c)) &&
    (should.length === 0 || should.some((c) => matches(point, c))) &&
    !mustNot.some((c) => matches(point, c))
  );
}

function selectPayload(
  payload: Record<string, unknown>,
  selector: boolean | string[] | null | undefined,
  fallback: boolean,
) {
  const sel = selector ?? fallback;
  if (sel === false) return null;
  if (sel === true) return { ...payload };
  return Object.fromEntries(sel.filter((k) => k in payload).map((k) => [k, payload[k]]));
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const i = result.error.issues[0];
    throw new QdrantHttpError(400, `Format error in JSON body: ${i?.path.join('.')}: ${i?.message}`);
  }
  return result.data;
}

export interface QdrantServer {
  url: string;
  apiKey: string | undefined;
  /** `METHOD /path` of every request, in order. */
  calls: string[];
  collections: Map<string, Collection>;
  /** The next `count` requests whose `METHOD /path` contains `match` answer 500. */
  failNext(match: string, count?: number): void;
  close(): Promise<void>;
}

/** Starts the loopback Qdrant. With `apiKey`, requests must carry the `api-key` header (401 otherwise). */
export async function startQdrantServer(options: { apiKey?: string } = {}): Promise<QdrantServer> {
  const collections = new Map<string, Collection>();
  const calls: string[] = [];
  const failures: { match: string; count: number }[] = [];

  const ok = (res: ServerResponse, result: unknown, t0: number) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ result, status: 'ok', time: (performance.now() - t0) / 1000 }));
  };
  const collection = (name: string): Collection => {
    const c = collections.get(name);
    if (!c) throw new QdrantHttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return c;
  };
  const vectorOf = (c: Collection, values: number[]): Float32Array => {
    if (values.length !== c.size) {
      throw new QdrantHttpError(
        400,
        `Wrong input: Vector dimension error: expected dim: ${c.size}, got ${values.length}`,
      );
    }
    const v = Float32Array.from(values);
    if (c.distance === 'Cosine') {
      let sum = 0;
      for (const x of v) sum += x * x;
      const inv = sum > 0 ? 1 / Math.sqrt(sum) : 0;
      for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
    }
    return v;
  };

  async function handle(req: IncomingMessage, res: ServerResponse, t0: number): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    calls.push(`${method} ${path}`);
    if (options.apiKey !== undefined && req.headers['api-key'] !== options.apiKey) {
      throw new QdrantHttpError(401, 'Must provide an API key or an Authorization bearer token');
    }
    const failure = failures.find((f) => f.count > 0 && `${method} ${path}`.includes(f.match));
    if (failure) {
      failure.count--;
      throw new QdrantHttpError(500, 'Service internal error: injected failure');
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = {};
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        throw new QdrantHttpError(400, 'Format error in JSON body: not JSON');
      }
    }
    if (method === 'GET' && path === '/') {
      const info: Schemas['VersionInfo'] = { title: 'qdrant - vector search engine', version: '1.15.0' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(info));
      return;
    }
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!m?.[1]) throw new QdrantHttpError(404, `Unknown route ${method} ${path}`);
    const name = decodeURIComponent(m[1]);
    const rest = m[2] ?? '';
    const route = `${method} ${rest}`;
    switch (route) {
      case 'GET /exists': {
        const result: Schemas['CollectionExistence'] = { exists: collections.has(name) };
        return ok(res, result, t0);
      }
      case 'GET ': {
        const c = collection(name);
        const payloadSchema: Schemas['CollectionInfo']['payload_schema'] = {};
        for (const [field, type] of c.indexes) {
          payloadSchema[field] = {
            data_type: type as Schemas['PayloadSchemaType'],
            points: [...c.points.values()].filter((p) => field in p.payload).length,
          };
        }
        const info: Schemas['CollectionInfo'] = {
          status: 'green',
          optimizer_status: 'ok',
          indexed_vectors_count: 0,
          points_count: c.points.size,
          segments_count: 1,
          config: {
            params: {
              vectors: { size: c.size, distance: c.distance as Schemas['Distance'] },
              shard_number: 1,
              replication_factor: 1,
              write_consistency_factor: 1,
              on_disk_payload: true,
            },
            hnsw_config: {
              m: 16,
              ef_construct: 100,
              full_scan_threshold: 10000,
              max_indexing_threads: 0,
              on_disk: false,
            },
            optimizer_config: {
              deleted_threshold: 0.2,
              vacuum_min_vector_number: 1000,
              default_segment_number: 0,
              max_segment_size: null,
              memmap_threshold: null,
              indexing_threshold: 20000,
              flush_interval_sec: 5,
              max_optimization_threads: null,
            },
            wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
          },
          payload_schema: payloadSchema,
        };
        return ok(res, info, t0);
      }
      case 'PUT ': {
        const spec = parse(CreateCollection, body);
        if (collections.has(name))
          throw new QdrantHttpError(409, `Wrong input: Collection \`${name}\` already exists!`);
        collections.set(name, {
          size: spec.vectors.size,
          distance: spec.vectors.distance,
          points: new Map(),
          indexes: new Map(),
          version: 0,
        });
        return ok(res, true, t0);
      }
      case 'PUT /index': {
        const c = collection(name);
        const spec = parse(CreateFieldIndex, body);
        c.indexes.set(spec.field_name, spec.field_schema ?? 'keyword');
        const result: Schemas['UpdateResult'] = { operation_id: ++c.version, status: 'completed' };
        return ok(res, result, t0);
      }
      case 'PUT /points': {
        const c = collection(name);
        const spec = parse(UpsertPoints, body);
        const version = ++c.version;
        const staged = spec.points.map((p) => ({
          id: p.id,
          vector: vectorOf(c, p.vector),
          payload: { ...(p.payload ?? {}) },
          version,
        }));
        for (const p of staged) c.points.set(String(p.id), p);
        const result: Schemas['UpdateResult'] = { operation_id: version, status: 'completed' };
        return ok(res, result, t0);
      }
      case 'POST /points/delete': {
        const c = collection(name);
        const spec = parse(DeletePoints, body);
        if ('points' in spec) for (const id of spec.points) c.points.delete(String(id));
        else for (const [id, p] of c.points) if (matchesFilter(p, spec.filter)) c.points.delete(id);
        const result: Schemas['UpdateResult'] = { operation_id: ++c.version, status: 'completed' };
        return ok(res, result, t0);
      }
      case 'POST /points/query': {
        const c = collection(name);
        const spec = parse(QueryPoints, body);
        const q = vectorOf(c, Array.isArray(spec.query) ? spec.query : spec.query.nearest);
        const scored: Schemas['ScoredPoint'][] = [];
        for (const p of c.points.values()) {
          if (!matchesFilter(p, spec.filter)) continue;
          let dot = 0;
          for (let i = 0; i < q.length; i++) dot += (q[i] as number) * (p.vector[i] as number);
          if (spec.score_threshold != null && dot < spec.score_threshold) continue;
          scored.push({
            id: p.id,
            version: p.version,
            score: dot,
            payload: selectPayload(p.payload, spec.with_payload, false),
            vector: spec.with_vector ? Array.from(p.vector) : null,
          });
        }
        scored.sort((a, b) => b.score - a.score);
        const offset = spec.offset ?? 0;
        const result: Schemas['QueryResponse'] = {
          points: scored.slice(offset, offset + (spec.limit ?? 10)),
        };
        return ok(res, result, t0);
      }
      case 'POST /points/scroll': {
        const c = collection(name);
        const spec = parse(ScrollPoints, body);
        const limit = spec.limit ?? 10;
        // Qdrant scrolls in id order; `offset` is the first id of the page.
        const sorted = [...c.points.values()]
          .filter((p) => matchesFilter(p, spec.filter))
          .sort((a, b) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0));
        const start = spec.offset == null ? 0 : sorted.findIndex((p) => String(p.id) >= String(spec.offset));
        const page = start < 0 ? [] : sorted.slice(start, start + limit);
        const next = start < 0 ? undefined : sorted[start + limit];
        const result: Schemas['ScrollResult'] = {
          points: page.map((p) => ({
            id: p.id,
            payload: selectPayload(p.payload, spec.with_payload, true),
            vector: spec.with_vector ? Array.from(p.vector) : null,
          })),
          next_page_offset: next ? next.id : null,
        };
        return ok(res, result, t0);
      }
      case 'POST /points/count': {
        const c = collection(name);
        const spec = parse(CountPoints, body);
        const result: Schemas['CountResult'] = {
          count: [...c.points.values()].filter((p) => matchesFilter(p, spec.filter)).length,
        };
        return ok(res, result, t0);
      }
      default:
        throw new QdrantHttpError(404, `Unknown route ${method} ${path}`);
    }
  }

  const server = createServer((req, res) => {
    const t0 = performance.now();
    handle(req, res, t0).catch((e: unknown) => {
      const status = e instanceof QdrantHttpError ? e.status : 500;
      const error: Schemas['ErrorResponse'] = {
        status: { error: errorMessage(e) },
        time: (performance.now() - t0) / 1000,
      };
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: options.apiKey,
    calls,
    collections,
    failNext(match, count = 1) {
      failures.push({ match, count });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
