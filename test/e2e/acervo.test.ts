import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { AcervoToken, Document } from '@notary/server/db/entities';
import { AcervoFeedSchema, DocumentSchema } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { api, jsonRequest, uploadFile } from '../harness/http';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * Publishing and the acervo feed (spec, Documents: publish; Acervo feed, Settings, Limits; see also
 * docs/sharing.md, Sharing,
 * access log and acervo) over HTTP on PGlite and PostgreSQL: who may publish and manage the token, the token of
 * one tenant never reading another's, rotation and disabling taking effect at once, pagination bounds, the
 * 5-minute cache and the rate limit.
 */

const FILES = ['pdfs/tracemonkey.pdf', 'files/contrato.txt', 'files/evil.svg'].map((f) =>
  path.join(FIXTURES_DIR, f),
);
const ITEM_KEYS = ['author', 'metadata', 'publishedAt', 'serialNumber', 'title'];

type Body = Record<string, unknown>;
type Feed = ReturnType<typeof AcervoFeedSchema.parse>;

/** A client address of its own per call (`X-Forwarded-For` from loopback is trusted): rate limits stay apart. */
const randomIp = () => `10.${randomBytes(3).join('.')}`;

describe.each(DATABASE_KINDS)('acervo on %s', (kind) => {
  let t: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let personal: string;
  const people = {
    owner: freshEmail('owner'),
    admin: freshEmail('admin'),
    editor: freshEmail('editor'),
    reader: freshEmail('reader'),
    other: freshEmail('other'),
  };
  const docsA: { id: string; serialNumber: string; fileName: string }[] = [];
  let docB: { id: string; serialNumber: string };
  let tokenA = '';
  let tokenB = '';

  const req = <T = Body>(method: string, route: string, init: Parameters<typeof jsonRequest>[3] = {}) =>
    jsonRequest<T>(t.url, method, route, init);
  const as = (who: keyof typeof people) => (who === 'other' ? b : a).tokens[people[who]] as string;
  const feed = (token: string | undefined, query = '', ip = randomIp()) =>
    api<Feed & Body>(t.url, `/api/public/acervo${query}`, { token, headers: { 'x-forwarded-for': ip } });
  const publish = (id: string, body: Body, token: string) =>
    req<{ document: Body }>('PATCH', `/api/documents/${id}/publish`, { token, body });

  beforeAll(async () => {
    t = await startTestService(kind, { RATE_LIMITS: 'on' });
    a = await makeOrg(t, 'Acervo A', [
      [people.owner, 'owner'],
      [people.admin, 'admin'],
      [people.editor, 'editor'],
      [people.reader, 'reader'],
    ]);
    b = await makeOrg(t, 'Acervo B', [[people.other, 'owner']]);
    personal = await t.token(freshEmail('personal'));
    for (const file of FILES) {
      const up = await uploadFile(t.url, as('editor'), file);
      expect(up.status).toBe(201);
      docsA.push({
        id: up.body.id as string,
        serialNumber: up.body.serialNumber as string,
        fileName: path.basename(file),
      });
    }
    const up = await uploadFile(t.url, as('other'), FILES[0] as string);
    docB = { id: up.body.id as string, serialNumber: up.body.serialNumber as string };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('acervo token settings: admin and owner only; the token is shown once and stored hashed', async () => {
    const route = '/api/settings/acervo-token';
    for (const method of ['POST', 'GET', 'DELETE']) {
      expect((await req(method, route)).status, method).toBe(401);
      for (const who of ['editor', 'reader'] as const) {
        const res = await req(method, route, { token: as(who) });
        expect(res.status, `${method} ${who}`).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
    }
    expect(await req('GET', route, { token: as('admin') })).toEqual({
      status: 200,
      body: { enabled: false, createdAt: null },
    });
    const created = await req<{ token: string; createdAt: string }>('POST', route, { token: as('admin') });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['createdAt', 'token']);
    tokenA = created.body.token;
    expect(tokenA).toMatch(/^acv_[A-Za-z0-9_-]{43}$/);
    const row = await t.service.deps.db.fork().findOneOrFail(AcervoToken, { tenant: a.tenantId });
    expect(row.tokenHash).toBe(createHash('sha256').update(tokenA).digest('hex'));
    const status = await req('GET', route, { token: as('owner') });
    expect(status).toEqual({ status: 200, body: { enabled: true, createdAt: created.body.createdAt } });

    const other = await req<{ token: string }>('POST', route, { token: as('other') });
    expect(other.status).toBe(201);
    tokenB = other.body.token;
    // A personal workspace has its own feed, managed by its owner.
    expect((await req('POST', route, { token: personal })).status).toBe(201);
  });

  it('publish: editor or higher; only the fields sent are rewritten; other tenants 403, unknown 404', async () => {
    const [pdf, txt, svg] = docsA as [(typeof docsA)[0], (typeof docsA)[0], (typeof docsA)[0]];
    expect(
      (await req('PATCH', `/api/documents/${pdf.id}/publish`, { body: { published: true } })).status,
    ).toBe(401);
    expect((await publish(pdf.id, { published: true }, as('reader'))).status).toBe(403);
    expect((await publish(pdf.id, { published: true }, as('other'))).status).toBe(403);
    expect((await publish(pdf.id, { published: true }, personal)).status).toBe(403);
    expect(
      (await publish('00000000-0000-4000-8000-000000000000', { published: true }, as('editor'))).status,
    ).toBe(404);
    for (const body of [
      {},
      { published: 'yes' },
      { published: true, title: 'x'.repeat(501) },
      { published: true, author: 7 },
    ]) {
      expect((await publish(pdf.id, body, as('editor'))).status, JSON.stringify(body)).toBe(400);
    }

    const first = await publish(
      pdf.id,
      { published: true, title: '  Contrato social  ', author: 'Ana', metadata: '{"livro":3}' },
      as('editor'),
    );
    expect(first.status).toBe(200);
    const doc = DocumentSchema.parse(first.body.document);
    expect(doc).toMatchObject({
      id: pdf.id,
      published: true,
      acervoTitle: 'Contrato social',
      acervoAuthor: 'Ana',
      metadata: '{"livro":3}',
    });
    expect(Math.abs(Date.parse(doc.publishedAt as string) - Date.now())).toBeLessThan(60_000);

    const second = await publish(pdf.id, { published: true, author: 'Bia' }, as('admin'));
    expect(second.body.document).toMatchObject({
      acervoTitle: 'Contrato social',
      acervoAuthor: 'Bia',
      metadata: '{"livro":3}',
      publishedAt: doc.publishedAt,
    });
    const got = await req<{ document: Body }>('GET', `/api/documents/${pdf.id}`, { token: as('reader') });
    expect(got.body.document).toMatchObject({ published: true, acervoAuthor: 'Bia' });

    // Unpublishing keeps the curator fields; publishing again gives a new publication time.
    const off = await publish(pdf.id, { published: false }, as('editor'));
    expect(off.body.document).toMatchObject({
      published: false,
      publishedAt: null,
      acervoTitle: 'Contrato social',
    });
    await new Promise((r) => setTimeout(r, 5));
    const again = await publish(pdf.id, { published: true }, as('owner'));
    expect(Date.parse(again.body.document.publishedAt as string)).toBeGreaterThan(
      Date.parse(doc.publishedAt as string),
    );

    // An empty title clears it (the feed then falls back to the file name).
    expect((await publish(txt.id, { published: true, title: 'Provisório' }, as('editor'))).status).toBe(200);
    expect(
      (await publish(txt.id, { published: true, title: '' }, as('editor'))).body.document.acervoTitle,
    ).toBeNull();
    expect((await publish(svg.id, { published: true }, as('editor'))).status).toBe(200);
    expect((await publish(docB.id, { published: true, title: 'B only' }, as('other'))).status).toBe(200);
  });

  it("the feed: the token's own tenant only, published documents newest first, title falling back to the file name", async () => {
    const [pdf, txt, svg] = docsA as [(typeof docsA)[0], (typeof docsA)[0], (typeof docsA)[0]];
    for (const token of [
      undefined,
      'garbage',
      `acv_${randomBytes(32).toString('base64url')}`,
      tokenA.slice(0, -1),
      as('admin'), // a session JWT is not an acervo token
    ]) {
      const res = await feed(token);
      expect(res.status, String(token)).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
    }
    const res = await feed(tokenA);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    const body = AcervoFeedSchema.parse(res.body);
    expect(Object.keys(res.body).sort()).toEqual(['documents', 'total']);
    expect(body.total).toBe(3);
    for (const item of body.documents) expect(Object.keys(item).sort()).toEqual(ITEM_KEYS);
    expect(body.documents.map((d) => d.serialNumber)).toEqual([
      svg.serialNumber,
      txt.serialNumber,
      pdf.serialNumber,
    ]);
    expect(body.documents).toEqual([
      {
        serialNumber: svg.serialNumber,
        title: 'evil.svg',
        author: '',
        metadata: '',
        publishedAt: expect.any(String),
      },
      {
        serialNumber: txt.serialNumber,
        title: 'contrato.txt',
        author: '',
        metadata: '',
        publishedAt: expect.any(String),
      },
      {
        serialNumber: pdf.serialNumber,
        title: 'Contrato social',
        author: 'Bia',
        metadata: '{"livro":3}',
        publishedAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain(docB.serialNumber);
    // The token names the tenant: naming another one in the query changes nothing.
    for (const query of [`?tenant=${b.tenantId}`, `?tenantId=${b.tenantId}&orgId=${b.id}`]) {
      const tried = await feed(tokenA, query);
      expect(tried.status).toBe(200);
      expect(tried.body).toEqual(res.body);
    }

    // Tenant B's token reads B's feed only; the personal workspace published nothing.
    const fromB = await feed(tokenB);
    expect(fromB.body).toEqual({
      documents: [
        {
          serialNumber: docB.serialNumber,
          title: 'B only',
          author: '',
          metadata: '',
          publishedAt: expect.any(String),
        },
      ],
      total: 1,
    });

    // Pages.
    const page = await feed(tokenA, '?limit=1&offset=1');
    expect(page.body).toMatchObject({ total: 3, documents: [{ serialNumber: txt.serialNumber }] });
    expect((await feed(tokenA, '?offset=3')).body).toEqual({ documents: [], total: 3 });
    expect((await feed(tokenA, '?limit=60&offset=0')).body.documents).toHaveLength(3);
    for (const query of [
      '?limit=0',
      '?limit=61',
      '?limit=-1',
      '?limit=abc',
      '?limit=1.5',
      '?offset=-1',
      '?offset=x',
    ]) {
      const bad = await feed(tokenA, query);
      expect(bad.status, query).toBe(400);
      expect(bad.body.code).toBe('BAD_REQUEST');
    }
  });

  it('pages are cached 5 minutes; publication changes made through the service show at once', async () => {
    const [pdf] = docsA as [(typeof docsA)[0]];
    const before = await feed(tokenA, '?limit=3');
    expect(before.body.documents.map((d) => d.serialNumber)).toContain(pdf.serialNumber);
    // A change behind the service's back: the cached page does not see it, an uncached page does.
    await t.service.deps.db
      .fork()
      .nativeUpdate(Document, { id: pdf.id }, { acervoTitle: 'Changed in the database' });
    expect((await feed(tokenA, '?limit=3')).body).toEqual(before.body);
    const fresh = await feed(tokenA, '?limit=4');
    expect(fresh.body.documents.find((d) => d.serialNumber === pdf.serialNumber)?.title).toBe(
      'Changed in the database',
    );
    // Unpublishing through the route invalidates the tenant's pages.
    expect((await publish(pdf.id, { published: false }, as('editor'))).status).toBe(200);
    const after = await feed(tokenA, '?limit=3');
    expect(after.body.total).toBe(2);
    expect(JSON.stringify(after.body)).not.toContain(pdf.serialNumber);
    expect((await publish(pdf.id, { published: true }, as('editor'))).status).toBe(200);
    expect((await feed(tokenA, '?limit=3')).body.documents[0]?.serialNumber).toBe(pdf.serialNumber);
  });

  it('rotation replaces the token at once; disabling stops the feed; concurrent rotations leave one token', async () => {
    const route = '/api/settings/acervo-token';
    const rotated = await req<{ token: string }>('POST', route, { token: as('owner') });
    expect(rotated.status).toBe(201);
    expect(rotated.body.token).not.toBe(tokenA);
    expect((await feed(tokenA)).status).toBe(401);
    expect((await feed(rotated.body.token)).status).toBe(200);
    // B is untouched by A's rotation.
    expect((await feed(tokenB)).status).toBe(200);

    const many = await Promise.all(
      Array.from({ length: 5 }, () => req<{ token: string }>('POST', route, { token: as('admin') })),
    );
    expect(many.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const working: string[] = [];
    for (const r of many) if ((await feed(r.body.token)).status === 200) working.push(r.body.token);
    expect(working).toHaveLength(1);
    expect(await t.service.deps.db.fork().count(AcervoToken, { tenant: a.tenantId })).toBe(1);

    expect(await req('DELETE', route, { token: as('admin') })).toEqual({ status: 200, body: { ok: true } });
    expect((await feed(working[0])).status).toBe(401);
    expect(await req('GET', route, { token: as('admin') })).toEqual({
      status: 200,
      body: { enabled: false, createdAt: null },
    });
    expect(await req('DELETE', route, { token: as('admin') })).toEqual({ status: 200, body: { ok: true } });
    tokenA = (await req<{ token: string }>('POST', route, { token: as('admin') })).body.token;
    expect((await feed(tokenA)).body.total).toBe(3);
  });

  it('rate limit: 60 feed requests a minute per client IP, then 429', async () => {
    const ip = randomIp();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await feed(i % 2 ? tokenA : 'wrong', '', ip)).status);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    const limited = await feed(tokenA, '', ip);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      message: expect.stringMatching(/^Too many requests \(acervo limit\): try again in \d+ s$/),
      code: 'RATE_LIMITED',
      retryAfterSeconds: expect.any(Number),
    });
    expect((await feed(tokenA, '', randomIp())).status).toBe(200);
  });
});
