/**
 * The published schemas of the Stacks APIs, pinned in `test/fixtures/stacks-api/` (sources and commits in its
 * README), compiled with ajv: what a real stacks-node (RPC `/v2/*`, `/v3/*`) and a real Hiro Stacks Blockchain
 * API (`/extended/*`) may answer. The Stacks devnet loads this module in tests (`STACKS_DEVNET_SCHEMAS`) and
 * answers HTTP 500 to any answer of its own that breaks them; unit tests feed it the upstream examples.
 *
 * Sources:
 * - stacks-core `docs/rpc/openapi.yaml` and the files it references (`components/schemas/*.yaml`, responses,
 *   examples), byte for byte;
 * - Hiro `openapi.yaml` (the published document): the path items of `/extended`, `/extended/v3/transactions/{tx_id}`
 *   and `/extended/v3/principals/{principal}/nonces`, line ranges copied byte for byte;
 * - Hiro's deprecated v1 routes (absent from the published document): the JSON Schemas of their TypeBox entities
 *   (`src/api/schemas/v1/entities/transactions.ts` `TransactionSchema` / `MempoolTransactionSchema`,
 *   `addresses.ts` `AddressNoncesSchema`) as the TypeBox code itself builds them.
 *
 * Rules beyond the documents, each from the upstream source named beside it, are listed in `routeRules`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { load as parseYaml } from 'js-yaml';

/** One HTTP answer of a Stacks API, as a client received it. */
export interface StacksAnswer {
  method: string;
  /** Request path, with or without its query string (`/extended/v3/transactions/0x…?include=result`). */
  path: string;
  status: number;
  /** The `content-type` header (parameters such as `; charset=utf-8` are ignored). */
  contentType: string | undefined;
  /** The raw body text (a JSON text for JSON answers). */
  body: string;
  /** Response headers, lower-case names; checked where a rule needs them (`retry-after` on a 429). */
  headers?: Record<string, string>;
  /**
   * Which server answered: `node` (a stacks-node: only stacks-core's routes exist, anything else is its
   * text/plain 404) or `indexer` (the Hiro API: its routes, and stacks-core's `/v2` ones it proxies).
   * Default: `indexer` for `/extended` paths, `node` otherwise.
   */
  server?: 'node' | 'indexer';
}

const FIXTURES = fileURLToPath(new URL('../fixtures/stacks-api/', import.meta.url));
const CORE_BASE = 'https://pinned.invalid/stacks-core/';
const HIRO_BASE = 'https://pinned.invalid/hiro/';

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}
type PathItem = Record<string, Operation>;
interface OpenApiDoc {
  paths: Record<string, PathItem>;
  components?: { responses?: Record<string, ResponseObject> };
}

/** A documented route: where its operation lives, for ajv `$ref`s into the pinned documents. */
interface Route {
  api: 'core' | 'hiro';
  template: string;
  regex: RegExp;
  method: string;
  /** `$id` of the document and the JSON pointer of its operation. */
  docId: string;
  operation: Operation;
  doc: OpenApiDoc;
}

// `validateSchema: false`: the OpenAPI documents are added whole (for `$ref`s into them) and are not JSON Schemas.
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
// OpenAPI's own formats (stacks-core: uint64, int64, binary, byte, ip): annotations here, as in the node.
for (const f of ['uint64', 'int64', 'binary', 'byte', 'ip']) ajv.addFormat(f, true);

/** The documents as parsed, by `$id`: walked to pick the variant of a union an answer claims to be. */
const rawDocs = new Map<string, unknown>();
function register(id: string, doc: object): void {
  rawDocs.set(id, doc);
  ajv.addSchema(doc, id);
}

function loadYamlTree(dir: string, base: string): void {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      loadYamlTree(full, `${base}${name}/`);
    } else if (name.endsWith('.yaml') && name !== 'openapi.yaml' && name !== 'redocly.yaml') {
      // `$id` set: the file's own relative `$ref`s resolve beside it even where ajv inlines it.
      const schema = parseYaml(readFileSync(full, 'utf8')) as object;
      register(`${base}${name}`, { ...schema, $id: `${base}${name}` });
    }
  }
}

function readDoc(file: string): OpenApiDoc {
  return parseYaml(readFileSync(file, 'utf8')) as OpenApiDoc;
}

const coreDoc = readDoc(path.join(FIXTURES, 'stacks-core/openapi.yaml'));
const hiroDoc = readDoc(path.join(FIXTURES, 'hiro/openapi.extract.yaml'));
loadYamlTree(path.join(FIXTURES, 'stacks-core/components/schemas'), `${CORE_BASE}components/schemas/`);
register(`${CORE_BASE}openapi.yaml`, coreDoc);
register(`${HIRO_BASE}openapi.extract.yaml`, hiroDoc);
const v1 = JSON.parse(readFileSync(path.join(FIXTURES, 'hiro/v1-entities.schema.json'), 'utf8')) as Record<
  'transaction' | 'mempoolTransaction' | 'addressNonces',
  object
>;
register(`${HIRO_BASE}v1-entities.schema.json`, v1);

/** Hiro's error body (`{ error, message? }`): the published `4XX` answer, used for the v1 routes too. */
const HIRO_ERROR_POINTER = `${HIRO_BASE}openapi.extract.yaml#/paths/~1extended/get/responses/4XX/content/application~1json/schema`;

/**
 * Hiro's deprecated v1 routes, in the shape of OpenAPI operations, their schemas the TypeBox entities
 * (`src/api/routes/v1/tx.ts` `GET /:tx_id` → `Type.Union([TransactionSchema, MempoolTransactionSchema])`;
 * `src/api/routes/v1/address.ts` `GET /:principal/nonces` → `AddressNoncesSchema`).
 */
const v1Doc: OpenApiDoc = {
  paths: {
    '/extended/v1/tx/{tx_id}': {
      get: {
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: {
                  anyOf: [
                    { $ref: `${HIRO_BASE}v1-entities.schema.json#/transaction` },
                    { $ref: `${HIRO_BASE}v1-entities.schema.json#/mempoolTransaction` },
                  ],
                },
              },
            },
          },
          '4XX': { content: { 'application/json': { schema: { $ref: HIRO_ERROR_POINTER } } } },
        },
      },
    },
    '/extended/v1/address/{principal}/nonces': {
      get: {
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: { $ref: `${HIRO_BASE}v1-entities.schema.json#/addressNonces` },
              },
            },
          },
          '4XX': { content: { 'application/json': { schema: { $ref: HIRO_ERROR_POINTER } } } },
        },
      },
    },
  },
};
register(`${HIRO_BASE}v1-routes.json`, v1Doc);

function routesOf(doc: OpenApiDoc, api: Route['api'], docId: string): Route[] {
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('');
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      routes.push({
        api,
        template,
        regex: new RegExp(`^${source}/?$`),
        method: method.toUpperCase(),
        docId,
        operation,
        doc,
      });
    }
  }
  return routes;
}

const coreRoutes = routesOf(coreDoc, 'core', `${CORE_BASE}openapi.yaml`);
const hiroRoutes = [
  ...routesOf(hiroDoc, 'hiro', `${HIRO_BASE}openapi.extract.yaml`),
  ...routesOf(v1Doc, 'hiro', `${HIRO_BASE}v1-routes.json`),
];

/** The most specific template first: `/v2/transactions/unconfirmed/{txid}` before a `{…}` catch. */
function findRoute(routes: Route[], method: string, pathname: string): Route | undefined {
  const matches = routes.filter((r) => r.method === method && r.regex.test(pathname));
  matches.sort((a, b) => literalLength(b.template) - literalLength(a.template));
  return matches[0];
}

function literalLength(template: string): number {
  return template.replace(/\{[^}]+\}/g, '').length;
}

function pointerEscape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The response object for `status`: exact, then `4XX`-style, then `default`; `$ref`s to components followed. */
function responseFor(route: Route, status: number): { key: string; response: ResponseObject } | undefined {
  const responses = route.operation.responses ?? {};
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
  if (!key) return undefined;
  let response = responses[key] as ResponseObject;
  let pointerBase = `/paths/${pointerEscape(route.template)}/${route.method.toLowerCase()}/responses/${pointerEscape(key)}`;
  if (response.$ref?.startsWith('#/components/responses/')) {
    const name = response.$ref.slice('#/components/responses/'.length);
    response = route.doc.components?.responses?.[name] ?? {};
    pointerBase = `/components/responses/${pointerEscape(name)}`;
  }
  return { key: pointerBase, response };
}

const compiled = new Map<string, ValidateFunction>();
function validatorAt(ref: string): ValidateFunction {
  let v = compiled.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: ref });
    compiled.set(ref, v);
  }
  return v;
}

function errorsText(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? 'invalid'}`);
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Checks one answer against the pinned schemas of its route (picked by method and path; see `StacksAnswer.server`).
 * @returns the violations, each a sentence naming the route, status and what is wrong; empty when the answer is
 *   one the real API may give.
 */
export function validateStacksAnswer(answer: StacksAnswer): string[] {
  const url = new URL(answer.path, 'http://stacks.invalid');
  const pathname = decodeURIComponent(url.pathname);
  const method = answer.method.toUpperCase();
  const where = `${method} ${pathname} → ${answer.status}`;
  const type = mediaType(answer.contentType);
  const server = answer.server ?? (pathname.startsWith('/extended') ? 'indexer' : 'node');

  // CORS preflight: stacks-core answers OPTIONS itself (Access-Control-Allow-* headers, no body).
  if (method === 'OPTIONS') {
    return answer.status === 200 || answer.status === 204
      ? []
      : [`${where}: a CORS preflight answers 200/204`];
  }
  const extra = routeRules(answer, pathname, url.searchParams, method, type, where);
  if (extra.stop) return extra.violations;

  const route =
    server === 'node'
      ? findRoute(coreRoutes, method, pathname)
      : (findRoute(hiroRoutes, method, pathname) ?? findRoute(coreRoutes, method, pathname));
  if (!route && answer.status === 429) return gatewayLimit(answer, where);
  if (!route) {
    // No such route: stacks-core's router answers `404 text/plain` "No such API endpoint '<verb> <path>'"
    // (stackslib/src/net/httpcore.rs); Hiro's (Fastify) a JSON `{ error: 'Not Found', message, statusCode }`.
    if (answer.status !== 404) return [`${where}: no documented route; the real server answers 404`];
    if (server === 'node') {
      return type === 'text/plain'
        ? []
        : [`${where}: stacks-node's 404 is text/plain, got ${type || 'none'}`];
    }
    return jsonAgainst(HIRO_ERROR_POINTER, answer, where, type);
  }
  if (answer.status === 429 && !(route.operation.responses && '429' in route.operation.responses)) {
    return gatewayLimit(answer, where);
  }
  const found = responseFor(route, answer.status);
  if (!found)
    return [...extra.violations, `${where}: status not documented for ${route.method} ${route.template}`];
  const content = found.response.content ?? {};
  if (!(type in content)) {
    return [
      ...extra.violations,
      `${where}: content type ${type || 'none'} not documented (documented: ${Object.keys(content).join(', ') || 'no body'})`,
    ];
  }
  const media = content[type];
  const schemaRef = media?.schema
    ? `${route.docId}#${found.key}/content/${pointerEscape(type)}/schema`
    : undefined;
  if (type === 'application/json') {
    const found = schemaRef ? jsonAgainst(schemaRef, answer, where, type) : [];
    return [...extra.violations, ...errata(route, answer, where, found)];
  }
  // text/plain and other non-JSON types: the schemas are `type: string`, which any text is.
  return extra.violations;
}

/**
 * Where a pinned document and the server it documents disagree, the server's source decides (each case names
 * it); the document's violations for that case are replaced by the source's rule.
 * - `POST /v2/transactions` 400 `NotEnoughFunds`: stacks-core sends `reason_data.expected`/`actual` as `0x` and 32
 *   hex digits (u128, stackslib/src/chainstate/stacks/db/blocks.rs `MemPoolRejection::into_json`), where
 *   `transaction-submission-error.schema.yaml` says integer.
 */
function errata(route: Route, answer: StacksAnswer, where: string, violations: string[]): string[] {
  if (route.api === 'core' && route.template === '/v2/transactions' && answer.status === 400) {
    const body = JSON.parse(answer.body) as { reason?: unknown; reason_data?: Record<string, unknown> };
    if (body.reason === 'NotEnoughFunds') {
      const kept = violations.filter((v) => !/\/reason_data\/(expected|actual) must be integer$/.test(v));
      for (const field of ['expected', 'actual']) {
        const value = body.reason_data?.[field];
        if (typeof value !== 'string' || !/^0x[0-9a-f]{32}$/.test(value)) {
          kept.push(`${where}: NotEnoughFunds reason_data.${field} is a u128 as 0x and 32 hex digits`);
        }
      }
      return kept;
    }
  }
  return violations;
}

/**
 * A 429 of Hiro's gateway (docs.hiro.so, "Response headers": `retry-after` when rate limited, with the
 * `ratelimit-*` headers); its body is not published. A route that documents its own 429 (stacks-core's
 * `/v3/block_proposal`) is held to its document instead.
 */
function gatewayLimit(answer: StacksAnswer, where: string): string[] {
  const retry = answer.headers?.['retry-after'];
  return retry && /^\d+$/.test(retry) ? [] : [`${where}: a 429 carries Retry-After in seconds`];
}

function jsonAgainst(ref: string, answer: StacksAnswer, where: string, type: string): string[] {
  if (type !== 'application/json') return [`${where}: expected application/json, got ${type || 'none'}`];
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return [`${where}: body is not JSON`];
  }
  const leaves = variants(ref, body, 0);
  if (leaves.length === 0) return [`${where}: no variant of the schema has the answer's type fields`];
  let best: string[] | undefined;
  for (const leaf of leaves) {
    const validate = validatorAt(leaf);
    if (validate(body)) return [];
    const found = errorsText(validate.errors).map((e) => `${where}: ${e}`);
    if (!best || found.length < best.length) best = found;
  }
  return best ?? [];
}

/**
 * The variants of a union (`anyOf`/`oneOf`, through `$ref`s) whose single-valued properties (`const`, or an
 * `enum` of one: `tx_type`, `type`, `okay`) the body does not contradict, as `$ref`s to compile. A body valid
 * against one of them is valid against the union, and ajv compiles a few small variants far faster than Hiro's
 * whole transaction unions (seconds each).
 */
function variants(ref: string, body: unknown, depth: number): string[] {
  const node = resolveRef(ref);
  if (typeof node !== 'object' || node === null || depth > 6) return [ref];
  const n = node as Record<string, unknown>;
  if (
    typeof n.$ref === 'string' &&
    Object.keys(n).every((k) => ['$ref', 'description', 'title'].includes(k))
  ) {
    return variants(absoluteRef(n.$ref, ref), body, depth + 1);
  }
  const key = Array.isArray(n.anyOf) ? 'anyOf' : Array.isArray(n.oneOf) ? 'oneOf' : undefined;
  const plain = Object.keys(n).every((k) => ['anyOf', 'oneOf', 'description', 'title'].includes(k));
  if (!key || !plain) return [ref];
  const out: string[] = [];
  (n[key] as unknown[]).forEach((_, i) => {
    const branch = `${ref}/${key}/${i}`;
    if (fits(deref(branch), body)) out.push(...variants(branch, body, depth + 1));
  });
  return out;
}

/** Whether the body agrees with the single-valued properties a variant fixes. */
function fits(schema: unknown, body: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return true;
  const props = (schema as { properties?: Record<string, { const?: unknown; enum?: unknown[] }> }).properties;
  if (!props || typeof body !== 'object' || body === null) return true;
  for (const [name, p] of Object.entries(props)) {
    const fixed =
      'const' in p ? [p.const] : Array.isArray(p.enum) && p.enum.length === 1 ? p.enum : undefined;
    if (fixed && name in body && (body as Record<string, unknown>)[name] !== fixed[0]) return false;
  }
  return true;
}

/** The schema node a `$ref` names (following a node that is only a `$ref`). */
function deref(ref: string): unknown {
  const node = resolveRef(ref);
  const target = (node as { $ref?: unknown } | null)?.$ref;
  return typeof target === 'string' ? deref(absoluteRef(target, ref)) : node;
}

function absoluteRef(target: string, base: string): string {
  if (target.startsWith('#')) return `${base.split('#')[0]}${target}`;
  return new URL(target, base).href;
}

function resolveRef(ref: string): unknown {
  const [id = '', pointer = ''] = ref.split('#');
  let node: unknown = rawDocs.get(id);
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined;
  }
  return node;
}

/**
 * Rules the documents do not state but the real servers keep (each from the source named):
 * - 410 on a deprecated Hiro route (`src/api/deprecation-plugin.ts`): `{ error: 'Gone', message:
 *   'This endpoint has been disabled. …' }`.
 * - `GET /extended/v3/transactions/{tx_id}` (`src/api/routes/v3/transactions.ts`, `pg-store-v3.ts`
 *   `getTransaction`): the heavy fields are present exactly when asked for in `include` (repeated or comma form);
 *   `result` only on mined transactions.
 */
function routeRules(
  answer: StacksAnswer,
  pathname: string,
  query: URLSearchParams,
  method: string,
  type: string,
  where: string,
): { stop: boolean; violations: string[] } {
  if (answer.status === 410) {
    const violations = jsonAgainst(HIRO_ERROR_POINTER, answer, where, type);
    if (violations.length === 0) {
      const body = JSON.parse(answer.body) as { error?: unknown; message?: unknown };
      if (body.error !== 'Gone' || typeof body.message !== 'string') {
        violations.push(
          `${where}: Hiro's 410 body is { error: 'Gone', message: 'This endpoint has been disabled. …' }`,
        );
      } else if (!body.message.startsWith('This endpoint has been disabled. ')) {
        violations.push(`${where}: Hiro's 410 message starts "This endpoint has been disabled. "`);
      }
    }
    return { stop: true, violations };
  }
  if (answer.status === 405 && !pathname.startsWith('/extended')) {
    // A known path with another verb: stacks-core's router answers 405, text/plain, with `Allow`
    // (stackslib/src/net/httpcore.rs `try_handle_request`).
    const known = coreRoutes.some((r) => r.regex.test(pathname) && r.method !== method);
    const ok = known && type === 'text/plain' && Boolean(answer.headers?.allow);
    return {
      stop: true,
      violations: ok ? [] : [`${where}: a 405 is text/plain with Allow, for a known path`],
    };
  }
  if (method === 'GET' && answer.status === 302 && /^\/extended\/v1\/tx\/[^/]+$/.test(pathname)) {
    // Hiro redirects a txid without 0x to the 0x form, query kept (src/api/routes/v1/tx.ts `reply.redirect`).
    const id = pathname.split('/')[4] ?? '';
    const location = answer.headers?.location ?? '';
    const ok = !id.startsWith('0x') && location.startsWith(`/extended/v1/tx/0x${id}`);
    return {
      stop: true,
      violations: ok ? [] : [`${where}: a 302 only for a txid without 0x, to its 0x form`],
    };
  }
  if (
    method === 'GET' &&
    answer.status === 200 &&
    /^\/extended\/v3\/transactions\/[^/]+$/.test(pathname) &&
    type === 'application/json'
  ) {
    const include = new Set(query.getAll('include').flatMap((v) => v.split(',')));
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(answer.body) as Record<string, unknown>;
    } catch {
      return { stop: false, violations: [] };
    }
    const violations: string[] = [];
    const mined = 'block' in body;
    const call = body.contract_call as Record<string, unknown> | undefined;
    const deploy = body.smart_contract as Record<string, unknown> | undefined;
    const present: [string, boolean, boolean][] = [
      ['function_args', call !== undefined && 'function_args' in call, call !== undefined],
      ['source_code', deploy !== undefined && 'source_code' in deploy, deploy !== undefined],
      ['post_conditions', 'post_conditions' in body, true],
      ['result', 'result' in body, mined],
    ];
    for (const [field, has, applies] of present) {
      if (has && !include.has(field)) violations.push(`${where}: ${field} sent without include=${field}`);
      if (!has && applies && include.has(field))
        violations.push(`${where}: include=${field} but ${field} missing`);
    }
    return { stop: false, violations };
  }
  return { stop: false, violations: [] };
}

/** The stacks-core examples (`components/examples/*.example.json`) with the route and status they document. */
export function stacksCoreExamples(): { name: string; answer: StacksAnswer }[] {
  const out: { name: string; answer: StacksAnswer }[] = [];
  for (const route of coreRoutes) {
    for (const [status, raw] of Object.entries(route.operation.responses ?? {})) {
      if (!/^\d+$/.test(status)) continue;
      const found = responseFor(route, Number(status));
      for (const [type, media] of Object.entries(found?.response.content ?? {})) {
        const examples = (media as { examples?: Record<string, { $ref?: string; value?: unknown }> })
          .examples;
        for (const [name, ex] of Object.entries(examples ?? {})) {
          let value = ex.value;
          if (ex.$ref) {
            const file = JSON.parse(readFileSync(path.join(FIXTURES, 'stacks-core', ex.$ref), 'utf8')) as {
              value: unknown;
            };
            value = file.value;
          }
          if (value === undefined) continue;
          const concrete = route.template.replace(/\{[^}]+\}/g, 'x');
          out.push({
            name: `${route.method} ${route.template} ${status} ${name}`,
            answer: {
              method: route.method,
              path: concrete,
              status: Number(status),
              contentType: type,
              body: type === 'application/json' ? JSON.stringify(value) : String(value),
              server: 'node',
            },
          });
        }
        void raw;
      }
    }
  }
  return out;
}

// Compiled at load, not on a devnet's first answers: ajv takes a few hundred ms per transaction variant, enough
// to make a client's request time out. The bodies only select the variants (contract calls) the devnet sends.
{
  const tx = `/extended/v1/tx/0x${'0'.repeat(64)}`;
  const warm: [string, string, string, unknown][] = [
    ['GET', '/v2/info', '200', {}],
    ['GET', `/v2/accounts/${'S'.repeat(30)}`, '200', {}],
    ['GET', '/v2/fees/transfer', '200', 1],
    ['POST', '/v2/transactions', '200', ''],
    ['POST', '/v2/transactions', '400', {}],
    ['POST', '/v2/contracts/call-read/a/b/c', '200', { okay: true }],
    ['GET', `/v2/transactions/unconfirmed/${'0'.repeat(64)}`, '200', {}],
    ['GET', '/extended', '200', {}],
    ['GET', tx, '200', { tx_type: 'contract_call' }],
    ['GET', tx, '404', {}],
    ['GET', `/extended/v3/transactions/0x${'0'.repeat(64)}`, '200', { type: 'contract_call' }],
    ['GET', '/extended/v1/address/x/nonces', '200', {}],
    ['GET', '/extended/v3/principals/x/nonces', '200', {}],
  ];
  for (const [method, p, status, body] of warm) {
    validateStacksAnswer({
      method,
      path: p,
      status: Number(status),
      contentType: 'application/json',
      body: JSON.stringify(body),
    });
  }
}
