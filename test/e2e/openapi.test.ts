import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { DocumentDto } from '@notary/shared';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBytes } from '../harness/anchored';
import { startTestService, type TestService } from '../harness/service';

/**
 * The OpenAPI document the service publishes (`GET /api/openapi.json`) is held to two outside judges: Redocly's
 * recommended rules (the linter API portals and client generators use), and the service's own answers, success
 * and error, each validated with a JSON Schema 2020-12 validator (Ajv) against the schema the document declares
 * for that operation and status. An answer with a status the operation does not declare fails too.
 */

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: Record<string, unknown>;
}

/** The operation of `doc` whose path template matches `route` (query string ignored). */
function findOperation(
  doc: OpenApiDocument,
  method: string,
  route: string,
): { template: string; op: Operation } {
  const pathname = route.split('?')[0] ?? route;
  const candidates = Object.entries(doc.paths).filter(([template, ops]) => {
    if (!ops[method.toLowerCase()]) return false;
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return pattern.test(pathname);
  });
  // A literal segment beats a parameter (`/access/email/verify/{token}` over `/access/email/{documentId}/…`).
  candidates.sort((a, b) => (a[0].match(/\{/g)?.length ?? 0) - (b[0].match(/\{/g)?.length ?? 0));
  const found = candidates[0];
  if (!found) throw new Error(`${method} ${pathname}: no operation in the OpenAPI document`);
  const op = found[1][method.toLowerCase()];
  if (!op) throw new Error(`${method} ${pathname}: no operation`);
  return { template: found[0], op };
}

describe('the OpenAPI document', () => {
  let t: TestService;
  let doc: OpenApiDocument;
  let ajv: Ajv2020;
  let alice: string;
  let bob: string;
  let aliceDoc: DocumentDto;
  const checked: string[] = [];

  beforeAll(async () => {
    t = await startTestService('pglite');
    alice = await t.token('openapi-alice@example.com');
    bob = await t.token('openapi-bob@example.com');
    aliceDoc = await uploadBytes(t, alice, randomBytes(2048), 'contrato.bin');
    const res = await fetch(`${t.url}/api/openapi.json`);
    doc = (await res.json()) as OpenApiDocument;
    // OpenAPI 3.1 schemas are JSON Schema 2020-12 plus annotations (`example`); formats are descriptive here.
    ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema({ $id: 'openapi.json', components: doc.components ?? {} });
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * Calls `route` and validates the answer against what the document declares for its operation and status.
   * Returns the status and parsed body.
   */
  async function call(
    method: string,
    route: string,
    init: { token?: string; body?: unknown } = {},
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${t.url}${route}`, {
      method,
      headers,
      redirect: 'manual',
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    const { template, op } = findOperation(doc, method, route);
    const where = `${method} ${route} (${template}) answered ${res.status}: ${text.slice(0, 300)}`;
    const declared = op.responses?.[String(res.status)] ?? op.responses?.default;
    expect(declared, `${where}: status not declared`).toBeDefined();
    const type = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    let body: unknown = text;
    if (type === 'application/json') {
      body = text ? JSON.parse(text) : undefined;
      const schema = declared?.content?.['application/json']?.schema;
      expect(schema, `${where}: no JSON schema declared`).toBeDefined();
      // Local references point into the document's components.
      const rooted = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'),
      );
      const validate = ajv.compile(rooted);
      const ok = validate(body);
      expect(ok, `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    } else if (declared?.content) {
      expect(Object.keys(declared.content), `${where}: content type ${type} not declared`).toContain(type);
    }
    checked.push(`${method} ${template} ${res.status}`);
    return { status: res.status, body };
  }

  it("passes Redocly's recommended rules", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(doc, null, 1));
      await writeFile(path.join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
      const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
      const run = spawnSync(process.execPath, [cli, 'lint', 'openapi.json', '--format=stylish'], {
        cwd: dir,
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        },
        timeout: 120_000,
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      // Warnings count too, but two: the spec fixes both e-mail access paths (`/access/email/{documentId}/request`
      // and `/access/email/verify/{token}`, which a router can confuse), and the verification route answers only
      // 501 (not implemented), so it has no 4XX to declare.
      const warnings = `${run.stdout}\n${run.stderr}`
        .split('\n')
        .filter((line) => /\bwarning\b/.test(line))
        .map((line) => line.replace(/^\s*\d+:\d+\s+/, '').replace(/\s+/g, ' '));
      expect(warnings).toEqual([
        expect.stringMatching(/^warning no-ambiguous-paths .*\/access\/email\/verify\/\{token\}/),
        expect.stringMatching(/^warning operation-4xx-response /),
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('describes what the service answers to ordinary calls, success and error', async () => {
    const id = aliceDoc.id;
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const serial = aliceDoc.serialNumber;

    // Public routes.
    expect((await call('GET', '/health')).status).toBe(200);
    expect((await call('GET', '/api/onchain/info')).status).toBe(200);
    expect((await call('GET', `/api/public/verify?hash=${aliceDoc.sha256Hash}`)).status).toBe(200);
    expect((await call('GET', `/api/public/verify?hash=${'0'.repeat(64)}`)).status).toBe(200);
    expect((await call('GET', '/api/public/verify?hash=xyz')).status).toBe(400);
    expect((await call('GET', `/api/public/documents/${serial}`)).status).toBe(200);
    expect((await call('GET', '/api/public/documents/ZZZ-2026-99999999')).status).toBeGreaterThanOrEqual(400);
    expect((await call('GET', '/api/public/acervo?limit=10&offset=0')).status).toBe(401);

    // The owner's routes.
    expect((await call('GET', '/api/documents')).status).toBe(401);
    expect((await call('GET', '/api/documents', { token: alice })).status).toBe(200);
    expect((await call('GET', `/api/documents/${id}`, { token: alice })).status).toBe(200);
    expect((await call('GET', `/api/documents/${id}`, { token: bob })).status).toBe(403);
    expect((await call('GET', `/api/documents/${unknownId}`, { token: alice })).status).toBe(404);
    expect((await call('GET', `/api/documents/${id}/receipt`, { token: alice })).status).toBe(200);
    expect((await call('GET', `/api/documents/${id}/anchor-proof`, { token: alice })).status).toBeLessThan(
      500,
    );
    expect(
      (await call('GET', `/api/documents/${id}/verify?hash=${aliceDoc.sha256Hash}`, { token: alice })).status,
    ).toBe(200);
    expect((await call('GET', `/api/documents/${id}/verify?hash=nothex`, { token: alice })).status).toBe(400);
    expect((await call('GET', `/api/documents/${id}/download`, { token: alice })).status).toBe(200);
    expect((await call('GET', `/api/documents/${id}/view`, { token: alice })).status).toBe(200);
    expect(
      (await call('PATCH', `/api/documents/${id}/publish`, { token: alice, body: { published: 'yes' } }))
        .status,
    ).toBe(400);
    expect(
      (
        await call('PATCH', `/api/documents/${id}/publish`, {
          token: alice,
          body: { published: true, title: 'Contrato' },
        })
      ).status,
    ).toBe(200);

    // Sharing.
    const policy = await call('POST', `/api/documents/${id}/access-policies`, {
      token: alice,
      body: { kind: 'link', permission: 'view', expiresInSeconds: 3600 },
    });
    expect(policy.status).toBe(201);
    expect(
      (
        await call('POST', `/api/documents/${id}/access-policies`, {
          token: alice,
          body: { kind: 'telepathy' },
        })
      ).status,
    ).toBe(400);
    expect((await call('GET', `/api/documents/${id}/access-policies`, { token: alice })).status).toBe(200);
    expect((await call('GET', `/api/documents/${id}/access-policies`, { token: bob })).status).toBe(403);
    const created = policy.body as { token?: string; policy?: { id: string }; id?: string };
    const shareToken = created.token;
    if (shareToken) expect((await call('GET', `/share/${shareToken}`)).status).toBe(200);
    expect((await call('GET', `/share/${'x'.repeat(40)}`)).status).toBe(404);
    expect((await call('GET', `/access/public/${id}`)).status).toBeGreaterThanOrEqual(400);
    expect((await call('GET', `/access-log/${id}`, { token: alice })).status).toBe(200);
    const policyId = created.policy?.id ?? created.id;
    if (policyId) {
      expect(
        (await call('DELETE', `/api/documents/${id}/access-policies/${policyId}`, { token: alice })).status,
      ).toBe(200);
    }

    // Workspace settings and team.
    expect((await call('GET', '/api/settings/acervo-token', { token: alice })).status).toBe(200);
    const acervo = await call('POST', '/api/settings/acervo-token', { token: alice });
    expect(acervo.status).toBe(201);
    const acervoToken = (acervo.body as { token: string }).token;
    expect((await call('GET', '/api/public/acervo?limit=10&offset=0', { token: acervoToken })).status).toBe(
      200,
    );
    expect((await call('GET', '/api/public/acervo?limit=0', { token: acervoToken })).status).toBe(400);
    expect((await call('DELETE', '/api/settings/acervo-token', { token: alice })).status).toBe(200);
    expect((await call('GET', '/api/team/members', { token: alice })).status).toBeLessThan(500);
    expect(
      (await call('POST', '/api/team/invitations', { token: alice, body: { role: 'sovereign' } })).status,
    ).toBe(400);

    // Intake refusals: the input errors of the IPFS import and the web capture.
    expect(
      (
        await call('POST', '/api/documents/import/ipfs', {
          token: alice,
          body: { cid: 'not-a-cid', consent: true },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call('POST', '/api/documents/import/ipfs', {
          token: alice,
          body: { cid: 'bafy', consent: false },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call('POST', '/api/documents/capture', {
          token: alice,
          body: { url: 'ftp://example', consent: true },
        })
      ).status,
    ).toBeGreaterThanOrEqual(400);

    // LGPD deletion, then what is gone.
    expect((await call('DELETE', `/api/documents/${id}`, { token: bob })).status).toBe(403);
    expect((await call('DELETE', `/api/documents/${id}?reason=titular`, { token: alice })).status).toBe(200);
    expect((await call('GET', `/api/documents/${id}/download`, { token: alice })).status).toBe(410);

    expect(checked.length).toBeGreaterThan(40);
  });
});
