import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3ObjectStorage } from '@notary/server/adapters/storage/s3';
import { AccessLogEntry, AccessPolicy, Document } from '@notary/server/db/entities';
import { AccessPolicySchema, ShareAccessSchema } from '@notary/shared';
import { type BaseWallet, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { jsonRequest, uploadFile } from '../harness/http';
import { startRadosgw } from '../harness/radosgw';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';
import { walletAccessMessage } from '../harness/wallet';

/**
 * Sharing (spec, Public, no credentials: share and access routes; Access log; see also docs/sharing.md)
 * against the real service over HTTP,
 * tried as an attacker would: guessed, malformed, revoked, expired and exhausted tokens, 20 concurrent accesses
 * of a link allowing fewer, wallet signatures replayed, moved to another document, stale, from the future, for
 * another site or by an unauthorized wallet; the e-mail request's answers compared byte for byte. On PGlite and
 * PostgreSQL with file storage, then the presigned URLs against a real S3 server (radosgw).
 */

const PDF = path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf');
const TXT = path.join(FIXTURES_DIR, 'files/contrato.txt');
const SVG = path.join(FIXTURES_DIR, 'files/evil.svg');

type Body = Record<string, unknown>;
type Share = ReturnType<typeof ShareAccessSchema.parse>;

const SHARE_KEYS = ['accessUrl', 'documentId', 'expiresInSeconds', 'fileName', 'permission', 'serialNumber'];
const LOG_KEYS = ['accessorIdentifier', 'accessorType', 'createdAt', 'id', 'ip', 'permission'];

/** A token of the right shape that nobody issued. */
const guessedToken = () => randomBytes(32).toString('base64url');

/** EIP-55's own example `0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed` with one letter's case flipped. */
const BAD_CHECKSUM = '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe.each(DATABASE_KINDS)('sharing on %s', (kind) => {
  // The PGlite service runs in development (the e-mail request then shows a token), PostgreSQL in test.
  const development = kind === 'pglite';
  let t: TestService;
  let owner: string;
  let stranger: string;
  const docs: Record<'pdf' | 'txt' | 'svg', { id: string; serialNumber: string }> = {
    pdf: { id: '', serialNumber: '' },
    txt: { id: '', serialNumber: '' },
    svg: { id: '', serialNumber: '' },
  };

  const req = <T = Body>(method: string, route: string, init: Parameters<typeof jsonRequest>[3] = {}) =>
    jsonRequest<T>(t.url, method, route, init);
  const createPolicy = (docId: string, body: Body, token = owner) =>
    req<{ policy: Body & { id: string }; token?: string; shareUrl?: string }>(
      'POST',
      `/api/documents/${docId}/access-policies`,
      { token, body },
    );
  const policies = async (docId: string, token = owner) =>
    (
      await req<{ policies: (Body & { id: string })[] }>('GET', `/api/documents/${docId}/access-policies`, {
        token,
      })
    ).body.policies;
  const share = (token: string) => req<Share & Body>('GET', `/share/${token}`);
  const walletAccess = (docId: string, body: Body) =>
    req<Share & Body>('POST', `/access/wallet/${docId}`, { body });
  const signed = async (wallet: BaseWallet, docId: string, message: string) =>
    walletAccess(docId, { address: wallet.address, message, signature: await wallet.signMessage(message) });
  /** A Sign-In With Ethereum access message for this service naming `documentId`, issued `offsetSeconds` from now. */
  const accessMessage = (
    wallet: BaseWallet,
    documentId: string,
    offsetSeconds = 0,
    more: Partial<Parameters<typeof walletAccessMessage>[0]> = {},
  ) =>
    walletAccessMessage({
      serviceUrl: t.url,
      address: wallet.address,
      documentId,
      issuedAt: new Date(Date.now() + offsetSeconds * 1000),
      ...more,
    });

  beforeAll(async () => {
    t = await startTestService(kind, { NODE_ENV: development ? 'development' : 'test' });
    owner = await t.token('ana@sharing.example');
    stranger = await t.token('mallory@sharing.example');
    for (const [name, file] of [
      ['pdf', PDF],
      ['txt', TXT],
      ['svg', SVG],
    ] as const) {
      const up = await uploadFile(t.url, owner, file);
      expect(up.status).toBe(201);
      docs[name] = { id: up.body.id as string, serialNumber: up.body.serialNumber as string };
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('policies: created, listed and revoked by the owner only; bodies validated; link tokens stored hashed', async () => {
    const route = `/api/documents/${docs.pdf.id}/access-policies`;
    expect((await req('POST', route, { body: { kind: 'link' } })).status).toBe(401);
    expect((await req('GET', route)).status).toBe(401);
    expect((await createPolicy(docs.pdf.id, { kind: 'link' }, stranger)).status).toBe(403);
    expect((await req('GET', route, { token: stranger })).status).toBe(403);
    expect((await createPolicy(randomUUID(), { kind: 'link' })).status).toBe(404);
    expect((await createPolicy('not-a-uuid', { kind: 'link' })).status).toBe(404);
    for (const body of [
      {},
      { kind: 'bogus' },
      { kind: 'link', permission: 'edit' },
      { kind: 'link', maxAccesses: 0 },
      { kind: 'link', expiresInSeconds: 0 },
      { kind: 'link', expiresInSeconds: 400 * 86400 },
      { kind: 'link', addresses: ['0x0000000000000000000000000000000000000001'] },
      { kind: 'public', addresses: ['a@example.com'] },
      { kind: 'wallet' },
      { kind: 'wallet', addresses: [] },
      { kind: 'wallet', addresses: ['0x123'] },
      { kind: 'wallet', addresses: [BAD_CHECKSUM] },
      { kind: 'email', addresses: ['not-an-address'] },
    ]) {
      const res = await createPolicy(docs.pdf.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ code: 'BAD_REQUEST' });
    }

    const created = await createPolicy(docs.pdf.id, { kind: 'link', maxAccesses: 3, expiresInSeconds: 3600 });
    expect(created.status).toBe(201);
    const policy = AccessPolicySchema.parse(created.body.policy);
    expect(policy).toMatchObject({
      documentId: docs.pdf.id,
      kind: 'link',
      permission: 'download',
      status: 'active',
      accessCount: 0,
      maxAccesses: 3,
      addresses: [],
      revokedAt: null,
    });
    expect(Date.parse(policy.expiresAt as string) - Date.now()).toBeGreaterThan(3500_000);
    const token = created.body.token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.body.shareUrl).toBe(`${t.url}/share/${token}`);
    // Only the SHA-256 is on record; the token never appears again.
    const row = await t.service.deps.db.fork().findOneOrFail(AccessPolicy, { id: policy.id });
    expect(row.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    const listed = await req('GET', route, { token: owner });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const wallet = Wallet.createRandom();
    const w = await createPolicy(docs.pdf.id, {
      kind: 'wallet',
      addresses: [wallet.address, wallet.address],
    });
    expect(w.status).toBe(201);
    expect(w.body.policy.addresses).toEqual([wallet.address.toLowerCase()]);
    expect(w.body.token).toBeUndefined();

    const revoke = `/api/documents/${docs.pdf.id}/access-policies/${policy.id}`;
    expect((await req('DELETE', revoke)).status).toBe(401);
    expect((await req('DELETE', revoke, { token: stranger })).status).toBe(403);
    expect(
      (await req('DELETE', `/api/documents/${docs.pdf.id}/access-policies/${randomUUID()}`, { token: owner }))
        .status,
    ).toBe(404);
    // A policy of another document is not found through this one.
    expect(
      (await req('DELETE', `/api/documents/${docs.txt.id}/access-policies/${policy.id}`, { token: owner }))
        .status,
    ).toBe(404);
    expect(await req('DELETE', revoke, { token: owner })).toEqual({ status: 200, body: { ok: true } });
    expect(await req('DELETE', revoke, { token: owner })).toEqual({ status: 200, body: { ok: true } });
    expect((await policies(docs.pdf.id)).find((p) => p.id === policy.id)).toMatchObject({
      status: 'revoked',
    });
    expect((await share(token)).status).toBe(404);
  });

  it('organizations: policies and the access log follow one rule: the uploader while editor+, admins, owners', async () => {
    const [o, a, e1, e2, r] = ['owner', 'admin', 'editor', 'editor2', 'reader'].map(freshEmail) as string[];
    const org: TestOrg = await makeOrg(t, 'Sharing Org', [
      [o as string, 'owner'],
      [a as string, 'admin'],
      [e1 as string, 'editor'],
      [e2 as string, 'editor'],
      [r as string, 'reader'],
    ]);
    const tok = (who: string | undefined) => org.tokens[who as string] as string;
    const up = await uploadFile(t.url, tok(e1), TXT);
    expect(up.status).toBe(201);
    const id = up.body.id as string;
    const route = `/api/documents/${id}/access-policies`;
    const first = await createPolicy(id, { kind: 'link' }, tok(e1));
    expect(first.status).toBe(201);
    expect(first.body.policy.createdBy).toBe(org.ids[e1 as string]);
    const revokeRoute = `${route}/${first.body.policy.id}`;

    // Another editor of the same organization, a reader, another tenant: 403 on every policy route and the log.
    for (const [who, token] of [
      ['other editor', tok(e2)],
      ['reader', tok(r)],
      ['other tenant', owner],
    ] as const) {
      for (const [method, path, body] of [
        ['POST', route, { kind: 'public' }],
        ['GET', route, undefined],
        ['DELETE', revokeRoute, undefined],
        ['GET', `/access-log/${id}`, undefined],
      ] as const) {
        const res = await req(method, path, { token, body });
        expect(res.status, `${who}: ${method} ${path}`).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
    }
    // Nothing they tried took effect: still one active link, no public policy.
    expect((await policies(id, tok(e1))).map((p) => [p.kind, p.status])).toEqual([['link', 'active']]);
    expect((await share(first.body.token as string)).status).toBe(200);

    // The uploader, an admin and an owner: create, list, read the log, revoke.
    for (const who of [e1, a, o]) {
      const created = await createPolicy(id, { kind: 'link' }, tok(who));
      expect(created.status, who).toBe(201);
      expect((await req('GET', route, { token: tok(who) })).status, who).toBe(200);
      const log = await req<{ log: Body[] }>('GET', `/access-log/${id}`, { token: tok(who) });
      expect(log.status, who).toBe(200);
      expect(log.body.log).toHaveLength(1);
      expect((await req('DELETE', `${route}/${created.body.policy.id}`, { token: tok(who) })).status).toBe(
        200,
      );
    }
    expect((await req('DELETE', revokeRoute, { token: tok(a) })).status).toBe(200);

    // The uploader demoted to reader owns the document no more; an admin still does.
    await t.operator({ command: 'member:add', org: org.slug, email: e1 as string, role: 'reader' });
    for (const [method, path, body] of [
      ['POST', route, { kind: 'link' }],
      ['GET', route, undefined],
      ['GET', `/access-log/${id}`, undefined],
    ] as const) {
      expect((await req(method, path, { token: tok(e1), body })).status, `demoted: ${method} ${path}`).toBe(
        403,
      );
    }
    expect((await req('GET', `/access-log/${id}`, { token: tok(a) })).status).toBe(200);

    // Malformed ids are 404 before any query (never a database error).
    for (const bad of ['-'.repeat(36), 'not-a-uuid', `${id.slice(0, -1)}g`]) {
      for (const [method, path, body] of [
        ['POST', `/api/documents/${bad}/access-policies`, { kind: 'link' }],
        ['GET', `/api/documents/${bad}/access-policies`, undefined],
        ['DELETE', `/api/documents/${bad}/access-policies/${first.body.policy.id}`, undefined],
        ['DELETE', `${route}/${bad}`, undefined],
        ['GET', `/access-log/${bad}`, undefined],
        ['GET', `/access/public/${bad}`, undefined],
      ] as const) {
        const res = await req(method, path, { token: tok(a), body });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      }
    }
  });

  it('share links: download (3600 s) and view (900 s) answers whose URLs serve the bytes as the view rules say', async () => {
    const pdfBytes = await readFile(PDF);
    const download = await createPolicy(docs.pdf.id, { kind: 'link' });
    const res = await share(download.body.token as string);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(SHARE_KEYS);
    expect(ShareAccessSchema.parse(res.body)).toMatchObject({
      documentId: docs.pdf.id,
      fileName: 'tracemonkey.pdf',
      serialNumber: docs.pdf.serialNumber,
      permission: 'download',
      expiresInSeconds: 3600,
    });
    expect(Number(new URL(res.body.accessUrl).searchParams.get('exp')) - Date.now() / 1000).toBeGreaterThan(
      3590,
    );
    const file = await fetch(res.body.accessUrl);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/octet-stream');
    expect(file.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(Buffer.from(await file.arrayBuffer()).equals(pdfBytes)).toBe(true);

    const view = await share(
      (await createPolicy(docs.pdf.id, { kind: 'link', permission: 'view' })).body.token as string,
    );
    expect(view.body).toMatchObject({ permission: 'view', expiresInSeconds: 900 });
    const exp = Number(new URL(view.body.accessUrl).searchParams.get('exp')) - Date.now() / 1000;
    expect(exp).toBeGreaterThan(890);
    expect(exp).toBeLessThanOrEqual(901);
    const inline = await fetch(view.body.accessUrl);
    expect(inline.headers.get('content-type')).toBe('application/pdf');
    expect(inline.headers.get('content-disposition')).toMatch(/^inline/);
    expect(Buffer.from(await inline.arrayBuffer()).equals(pdfBytes)).toBe(true);

    // SVG is never served inline, not even to a view link.
    const svg = await share(
      (await createPolicy(docs.svg.id, { kind: 'link', permission: 'view' })).body.token as string,
    );
    const svgFile = await fetch(svg.body.accessUrl);
    expect(svgFile.headers.get('content-type')).toBe('application/octet-stream');
    expect(svgFile.headers.get('content-disposition')).toMatch(/^attachment/);
    await svgFile.arrayBuffer();

    const counted = (await policies(docs.pdf.id)).find((p) => p.id === download.body.policy.id);
    expect(counted).toMatchObject({ accessCount: 1, status: 'active' });
  });

  it('share links as an attacker tries them: guessed, malformed, altered, expired and exhausted', async () => {
    const created = await createPolicy(docs.txt.id, { kind: 'link', maxAccesses: 2 });
    const token = created.body.token as string;
    for (const guess of [
      guessedToken(),
      guessedToken(),
      'abc',
      `${token}x`,
      token.slice(0, -1),
      `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
      encodeURIComponent("' or 1=1 --"),
    ]) {
      const res = await share(guess);
      expect(res.status, guess).toBe(404);
      expect(res.body).toEqual({ message: 'Invalid share token', code: 'NOT_FOUND' });
    }
    expect((await share(token)).status).toBe(200);
    expect((await share(token)).status).toBe(200);
    const exhausted = await share(token);
    expect(exhausted.status).toBe(410);
    expect(exhausted.body.code).toBe('GONE');
    expect((await share(token)).status).toBe(410);
    expect((await policies(docs.txt.id)).find((p) => p.id === created.body.policy.id)).toMatchObject({
      accessCount: 2,
      status: 'exhausted',
    });

    // Expiry: a link valid a minute, used once, then its expiry moved to the past in the database (instead of
    // waiting: a busy machine could spend the whole validity before the first access).
    const brief = await createPolicy(docs.txt.id, { kind: 'link', expiresInSeconds: 60 });
    expect((await share(brief.body.token as string)).status).toBe(200);
    await t.service.deps.db
      .fork()
      .nativeUpdate(AccessPolicy, { id: brief.body.policy.id }, { expiresAt: new Date(Date.now() - 1000) });
    const expired = await share(brief.body.token as string);
    expect(expired.status).toBe(410);
    expect(expired.body.message).toMatch(/expired/);
    expect((await policies(docs.txt.id)).find((p) => p.id === brief.body.policy.id)).toMatchObject({
      accessCount: 1,
      status: 'expired',
    });
  });

  it('20 concurrent accesses of a link allowing 7: exactly 7 succeed, each counted and logged once', async () => {
    const created = await createPolicy(docs.txt.id, { kind: 'link', maxAccesses: 7 });
    const token = created.body.token as string;
    const results = await Promise.all(Array.from({ length: 20 }, () => share(token)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 410)).toHaveLength(13);
    const em = t.service.deps.db.fork();
    expect((await em.findOneOrFail(AccessPolicy, { id: created.body.policy.id })).accessCount).toBe(7);
    expect(await em.count(AccessLogEntry, { policy: created.body.policy.id })).toBe(7);

    // The same through the public policy.
    await createPolicy(docs.svg.id, { kind: 'public', maxAccesses: 5 });
    const pub = await Promise.all(
      Array.from({ length: 20 }, () => req('GET', `/access/public/${docs.svg.id}`)),
    );
    expect(pub.filter((r) => r.status === 200)).toHaveLength(5);
    expect(pub.filter((r) => r.status === 410)).toHaveLength(15);
  });

  it('public access: 404 until shared, one public policy at a time, 410 once expired, 404 once revoked', async () => {
    const route = `/access/public/${docs.pdf.id}`;
    expect((await req('GET', route)).status).toBe(404);
    expect((await req('GET', `/access/public/${randomUUID()}`)).status).toBe(404);
    expect((await req('GET', '/access/public/not-a-uuid')).status).toBe(404);
    expect((await req('GET', route)).body).toEqual({
      message: 'This document is not publicly shared',
      code: 'NOT_FOUND',
    });

    const first = await createPolicy(docs.pdf.id, { kind: 'public', permission: 'view' });
    expect(first.status).toBe(201);
    expect(first.body.token).toBeUndefined();
    const res = await req<Share>('GET', route);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(SHARE_KEYS);
    expect(res.body).toMatchObject({ documentId: docs.pdf.id, permission: 'view', expiresInSeconds: 900 });
    expect((await fetch(res.body.accessUrl)).status).toBe(200);

    // A second public policy replaces the first.
    const second = await createPolicy(docs.pdf.id, {
      kind: 'public',
      permission: 'download',
      expiresInSeconds: 3600,
    });
    const list = await policies(docs.pdf.id);
    expect(list.find((p) => p.id === first.body.policy.id)).toMatchObject({ status: 'revoked' });
    expect((await req<Share>('GET', route)).body).toMatchObject({
      permission: 'download',
      expiresInSeconds: 3600,
    });

    // Expired (its expiry moved into the past in the database): 410.
    await t.service.deps.db
      .fork()
      .nativeUpdate(AccessPolicy, { id: second.body.policy.id }, { expiresAt: new Date(Date.now() - 1000) });
    const expired = await req('GET', route);
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe('GONE');

    const third = await createPolicy(docs.pdf.id, { kind: 'public' });
    expect((await req('GET', route)).status).toBe(200);
    expect(
      (
        await req('DELETE', `/api/documents/${docs.pdf.id}/access-policies/${third.body.policy.id}`, {
          token: owner,
        })
      ).status,
    ).toBe(200);
    expect((await req('GET', route)).status).toBe(404);
  });

  it('wallet access: signatures verified, bound to the document, fresh and single use; addresses checked', async () => {
    const alice = Wallet.createRandom();
    const eve = Wallet.createRandom();
    // Alice may open the PDF and the text; the SVG allows her one access only.
    await createPolicy(docs.pdf.id, { kind: 'wallet', addresses: [alice.address] });
    await createPolicy(docs.txt.id, {
      kind: 'wallet',
      addresses: [alice.address.toLowerCase()],
      permission: 'view',
    });
    await createPolicy(docs.svg.id, {
      kind: 'wallet',
      addresses: [alice.address.toUpperCase().replace('0X', '0x')],
      maxAccesses: 1,
    });

    const message = accessMessage(alice, docs.pdf.id);
    const signature = await alice.signMessage(message);
    const ok = await walletAccess(docs.pdf.id, { address: alice.address, message, signature });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(Object.keys(ok.body).sort()).toEqual(SHARE_KEYS);
    expect(ok.body).toMatchObject({
      documentId: docs.pdf.id,
      permission: 'download',
      expiresInSeconds: 3600,
    });
    expect(
      Buffer.from(await (await fetch(ok.body.accessUrl)).arrayBuffer()).equals(await readFile(PDF)),
    ).toBe(true);

    // The captured request replayed: refused, even within the window, even with the address in lower case.
    const replay = await walletAccess(docs.pdf.id, { address: alice.address, message, signature });
    expect(replay.status).toBe(401);
    expect(replay.body.message).toMatch(/already used/);
    expect(
      (await walletAccess(docs.pdf.id, { address: alice.address.toLowerCase(), message, signature })).status,
    ).toBe(401);
    // The signature for document A presented for document B (which also authorizes Alice): refused.
    const moved = await walletAccess(docs.txt.id, { address: alice.address, message, signature });
    expect(moved.status).toBe(401);
    expect(moved.body.message).toMatch(/document id/);

    // Bound to this service: the id may sit in a resource; another site's domain or URI, or the wrong
    // address line, is 401.
    const byResource = await signed(
      alice,
      docs.txt.id,
      accessMessage(alice, docs.txt.id, 0, {
        statement: 'Open a shared document on Notary.',
        uri: `${t.url}/access/wallet`,
        resources: [`urn:uuid:${docs.txt.id}`],
        expirationTime: new Date(Date.now() + 300_000),
      }),
    );
    expect(byResource.status, JSON.stringify(byResource.body)).toBe(200);
    expect(byResource.body).toMatchObject({ permission: 'view', expiresInSeconds: 900 });
    const phished = await signed(
      alice,
      docs.txt.id,
      accessMessage(alice, docs.txt.id, 0, { domain: 'evil.example' }),
    );
    expect(phished.status).toBe(401);
    expect(phished.body.message).toMatch(/must be for 127\.0\.0\.1:/);
    const foreignUri = await signed(
      alice,
      docs.txt.id,
      accessMessage(alice, docs.txt.id, 0, { uri: `https://evil.example/access/wallet/${docs.txt.id}` }),
    );
    expect(foreignUri.status).toBe(401);
    expect(foreignUri.body.message).toMatch(/URI must be on/);
    const otherLine = await signed(
      alice,
      docs.txt.id,
      walletAccessMessage({ serviceUrl: t.url, address: eve.address, documentId: docs.txt.id }),
    );
    expect(otherLine.status).toBe(401);
    // Without the document id anywhere: 401.
    const noId = await signed(
      alice,
      docs.txt.id,
      accessMessage(alice, docs.txt.id, 0, { statement: 'Open a document.', uri: t.url }),
    );
    expect(noId.status).toBe(401);
    expect(noId.body.message).toMatch(/document id/);
    // The free-form and JSON messages accepted before this service named itself are refused now.
    for (const legacy of [
      `I request access to document ${docs.pdf.id}.\nIssued At: ${new Date().toISOString()}`,
      JSON.stringify({ documentId: docs.pdf.id, issuedAt: new Date().toISOString() }),
    ]) {
      const res = await signed(alice, docs.pdf.id, legacy);
      expect(res.status, legacy).toBe(401);
      expect(res.body.message).toMatch(/Sign-In With Ethereum \(EIP-4361\)/);
    }

    // Unauthorized wallet, forged claims, bad signatures: 401.
    expect((await signed(eve, docs.pdf.id, accessMessage(eve, docs.pdf.id))).status).toBe(401);
    const m = accessMessage(alice, docs.pdf.id);
    expect(
      (
        await walletAccess(docs.pdf.id, {
          address: alice.address,
          message: m,
          signature: await eve.signMessage(m),
        })
      ).status,
    ).toBe(401);
    expect(
      (await walletAccess(docs.pdf.id, { address: alice.address, message: m, signature: '0x1234' })).status,
    ).toBe(401);
    expect(
      (
        await walletAccess(docs.pdf.id, {
          address: alice.address,
          message: m,
          signature: `0x${'ab'.repeat(65)}`,
        })
      ).status,
    ).toBe(401);
    // Freshness: a message signed 11 minutes ago (replayed outside the window), 5 minutes ahead, expired.
    expect((await signed(alice, docs.pdf.id, accessMessage(alice, docs.pdf.id, -660))).status).toBe(401);
    expect((await signed(alice, docs.pdf.id, accessMessage(alice, docs.pdf.id, 300))).status).toBe(401);
    const expired = await signed(
      alice,
      docs.pdf.id,
      accessMessage(alice, docs.pdf.id, -60, { expirationTime: new Date(Date.now() - 1000) }),
    );
    expect(expired.status).toBe(401);
    expect(expired.body.message).toMatch(/expired/);
    expect((await signed(alice, docs.pdf.id, accessMessage(alice, docs.pdf.id, -540))).status).toBe(200);
    // Unknown or malformed document ids: not authorized.
    const unknown = randomUUID();
    expect((await signed(alice, unknown, accessMessage(alice, unknown))).status).toBe(401);
    expect((await signed(alice, 'not-a-uuid', accessMessage(alice, 'not-a-uuid'))).status).toBe(401);

    // Invalid addresses: 400, before anything else.
    for (const address of ['0x123', 'alice', `${alice.address}00`, BAD_CHECKSUM, '']) {
      const res = await walletAccess(docs.pdf.id, {
        address,
        message: m,
        signature: await alice.signMessage(m),
      });
      expect(res.status, address).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
    expect((await walletAccess(docs.pdf.id, { address: alice.address, message: m })).status).toBe(400);

    // A policy allowing one access: then 410.
    expect((await signed(alice, docs.svg.id, accessMessage(alice, docs.svg.id))).status).toBe(200);
    expect((await signed(alice, docs.svg.id, accessMessage(alice, docs.svg.id))).status).toBe(410);

    const log = await req<{ log: Body[] }>('GET', `/access-log/${docs.pdf.id}`, { token: owner });
    const walletEntries = log.body.log.filter((e) => e.accessorType === 'wallet');
    expect(walletEntries).toHaveLength(2);
    for (const entry of walletEntries) expect(entry.accessorIdentifier).toBe(alice.address.toLowerCase());
  });

  it('e-mail access request: the same answer for any address or document; nothing counted; verify is 501', async () => {
    const policy = await createPolicy(docs.pdf.id, { kind: 'email', addresses: ['Reader@Example.COM'] });
    expect(policy.body.policy.addresses).toEqual(['reader@example.com']);
    const ask = (docId: string, email: string) =>
      req<{ message: string; token?: string }>('POST', `/access/email/${docId}/request`, { body: { email } });
    const answers = [
      await ask(docs.pdf.id, 'reader@example.com'),
      await ask(docs.pdf.id, 'READER@example.com'),
      await ask(docs.pdf.id, 'intruder@example.com'),
      await ask(docs.txt.id, 'reader@example.com'),
      await ask(randomUUID(), 'reader@example.com'),
      await ask('not-a-uuid', 'reader@example.com'),
    ];
    const first = answers[0] as { status: number; body: { message: string; token?: string } };
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body.message).toBe(first.body.message);
      expect(Object.keys(a.body).sort()).toEqual(development ? ['message', 'token'] : ['message']);
      if (development) expect(a.body.token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    }
    expect(
      (await req('POST', `/access/email/${docs.pdf.id}/request`, { body: { email: 'nope' } })).status,
    ).toBe(400);
    expect((await req('POST', `/access/email/${docs.pdf.id}/request`, { body: {} })).status).toBe(400);

    for (const token of [first.body.token ?? 'x', guessedToken()]) {
      expect(await req('GET', `/access/email/verify/${token}`)).toEqual({
        status: 501,
        body: { message: 'E-mail magic-link verification is not implemented', code: 'NOT_IMPLEMENTED' },
      });
    }
    expect((await policies(docs.pdf.id)).find((p) => p.id === policy.body.policy.id)).toMatchObject({
      accessCount: 0,
    });
  });

  it('access log: every access with its accessor, permission, IP and time, newest first; the owner only', async () => {
    const route = `/access-log/${docs.pdf.id}`;
    expect((await req('GET', route)).status).toBe(401);
    expect((await req('GET', route, { token: stranger })).status).toBe(403);
    expect((await req('GET', `/access-log/${randomUUID()}`, { token: owner })).status).toBe(404);
    const res = await req<{ log: (Body & { createdAt: string })[] }>('GET', route, { token: owner });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['log']);
    const em = t.service.deps.db.fork();
    expect(res.body.log).toHaveLength(await em.count(AccessLogEntry, { document: docs.pdf.id }));
    expect(res.body.log.length).toBeGreaterThanOrEqual(6);
    for (const entry of res.body.log) {
      expect(Object.keys(entry).sort()).toEqual(LOG_KEYS);
      expect(entry.ip).toMatch(/127\.0\.0\.1/);
      expect(['download', 'view']).toContain(entry.permission);
    }
    const times = res.body.log.map((e) => e.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    // Links are logged as `link:<policy id>`, the public policy as `public`, wallets by their address.
    const kinds = new Set(
      res.body.log.map((e) =>
        e.accessorType === 'wallet' ? 'wallet' : String(e.accessorIdentifier).split(':')[0],
      ),
    );
    expect(kinds).toEqual(new Set(['link', 'public', 'wallet']));
    for (const e of res.body.log) {
      if (e.accessorType !== 'wallet') expect(e.accessorType).toBe('anonymous');
    }
    // The owner's own routes never count as accesses.
    const before = await em.fork().count(AccessLogEntry, {});
    expect((await req('GET', `/api/documents/${docs.pdf.id}/download`, { token: owner })).status).toBe(200);
    expect(await em.fork().count(AccessLogEntry, {})).toBe(before);
  });

  it('every new route is in the OpenAPI document with its method', async () => {
    const doc = await jsonRequest<{ paths: Record<string, Record<string, unknown>> }>(
      t.url,
      'GET',
      '/api/openapi.json',
    );
    expect(doc.status).toBe(200);
    for (const [route, method] of [
      ['/api/documents/{id}/access-policies', 'post'],
      ['/api/documents/{id}/access-policies', 'get'],
      ['/api/documents/{id}/access-policies/{policyId}', 'delete'],
      ['/share/{token}', 'get'],
      ['/access/public/{documentId}', 'get'],
      ['/access/wallet/{documentId}', 'post'],
      ['/access/email/{documentId}/request', 'post'],
      ['/access/email/verify/{token}', 'get'],
      ['/access-log/{documentId}', 'get'],
      ['/api/documents/{id}/publish', 'patch'],
      ['/api/documents/{id}', 'delete'],
      ['/api/settings/acervo-token', 'post'],
      ['/api/settings/acervo-token', 'delete'],
      ['/api/settings/acervo-token', 'get'],
      ['/api/public/acervo', 'get'],
    ] as const) {
      expect(doc.body.paths[route], `${method} ${route}`).toHaveProperty([method]);
    }
  });

  it('a document without a stored file cannot be shared into a broken URL', async () => {
    // A reference-only record (e.g. an IPFS import) has no storage key.
    const up = await uploadFile(t.url, owner, TXT);
    await t.service.deps.db.fork().nativeUpdate(Document, { id: up.body.id as string }, { storageKey: null });
    const link = await createPolicy(up.body.id as string, { kind: 'link' });
    expect((await share(link.body.token as string)).status).toBe(404);
    expect((await policies(up.body.id as string))[0]).toMatchObject({ accessCount: 0 });
  });
});

/** The share URLs with the production storage adapter: a real S3 server that checks signatures and expiry. */
describe('share URLs on S3 (radosgw)', () => {
  let rgw: Awaited<ReturnType<typeof startRadosgw>>;
  let t: TestService;
  let owner: string;
  let pdf: { id: string };

  const req = <T = Body>(method: string, route: string, init: Parameters<typeof jsonRequest>[3] = {}) =>
    jsonRequest<T>(t.url, method, route, init);
  const linkFor = async (body: Body) =>
    (await req<{ token: string }>('POST', `/api/documents/${pdf.id}/access-policies`, { token: owner, body }))
      .body.token;

  beforeAll(async () => {
    rgw = await startRadosgw();
    t = await startTestService('pglite', {
      S3_ENDPOINT: rgw.endpoint,
      S3_BUCKET: 'notary-sharing',
      S3_REGION: rgw.region,
      S3_ACCESS_KEY_ID: rgw.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
    });
    owner = await t.token('s3-sharing@example.com');
    const up = await uploadFile(t.url, owner, PDF);
    expect(up.status).toBe(201);
    pdf = { id: up.body.id as string };
  });
  afterAll(async () => {
    await t?.close();
    await rgw?.stop();
  });

  it('download and view URLs fetch the bytes from S3, signed for 3600 s and 900 s; tampering is refused', async () => {
    expect(t.service.deps.storage.kind).toBe('s3');
    const bytes = await readFile(PDF);
    for (const [permission, seconds, type, disposition] of [
      ['download', 3600, 'application/octet-stream', /^attachment/],
      ['view', 900, 'application/pdf', /^inline/],
    ] as const) {
      const res = await req<Share>('GET', `/share/${await linkFor({ kind: 'link', permission })}`);
      expect(res.status).toBe(200);
      expect(res.body.expiresInSeconds).toBe(seconds);
      const url = new URL(res.body.accessUrl);
      expect(url.origin).toBe(new URL(rgw.endpoint).origin);
      expect(url.searchParams.get('X-Amz-Expires')).toBe(String(seconds));
      const signedAt = Date.parse(
        (url.searchParams.get('X-Amz-Date') as string).replace(
          /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
          '$1-$2-$3T$4:$5:$6Z',
        ),
      );
      expect(Math.abs(signedAt - Date.now())).toBeLessThan(60_000);
      const file = await fetch(url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe(type);
      expect(file.headers.get('content-disposition')).toMatch(disposition);
      expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
      // A longer validity, or another disposition, breaks the signature.
      const longer = new URL(url);
      longer.searchParams.set('X-Amz-Expires', String(seconds * 2));
      expect((await fetch(longer)).status).toBe(403);
      const other = new URL(url);
      other.searchParams.set('response-content-type', 'text/html');
      expect((await fetch(other)).status).toBe(403);
    }
    const pub = await req('POST', `/api/documents/${pdf.id}/access-policies`, {
      token: owner,
      body: { kind: 'public' },
    });
    expect(pub.status).toBe(201);
    const open = await req<Share>('GET', `/access/public/${pdf.id}`);
    expect(Buffer.from(await (await fetch(open.body.accessUrl)).arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('the S3 server refuses a share URL once it has expired', async () => {
    // The same URL the share route signs (same key, type and disposition), but signed two minutes ago and valid
    // one: S3 checks the expiry on its own clock, so an expired URL is made by its signing date, not by waiting.
    const doc = await t.service.deps.db.fork().findOneOrFail(Document, { id: pdf.id });
    const storage = t.service.deps.storage as S3ObjectStorage;
    const command = (fileName: string) =>
      new GetObjectCommand({
        Bucket: storage.bucket,
        Key: doc.storageKey as string,
        ResponseContentType: 'application/octet-stream',
        ResponseContentDisposition: `attachment; filename="${fileName}"`,
      });
    const fresh = await fetch(await getSignedUrl(storage.client, command('a.pdf'), { expiresIn: 60 }));
    expect(fresh.status).toBe(200);
    await fresh.arrayBuffer();
    const stale = await fetch(
      await getSignedUrl(storage.client, command('a.pdf'), {
        expiresIn: 60,
        signingDate: new Date(Date.now() - 120_000),
      }),
    );
    expect(stale.status).toBe(403);
    expect(await stale.text()).toMatch(/AccessDenied/);
  });
});
