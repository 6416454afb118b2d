import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CarBlockIterator } from '@ipld/car';
import * as dagPb from '@ipld/dag-pb';
import { createIpfsGateways } from '@notary/server/adapters/ipfs/index';
import { loadConfig } from '@notary/server/config';
import { type AppError, type DocumentDto, DocumentSchema, RATE_LIMITS } from '@notary/shared';
import { Wallet } from 'ethers';
import { base32upper } from 'multiformats/bases/base32';
import { base36 } from 'multiformats/bases/base36';
import { base58btc } from 'multiformats/bases/base58';
import { CID } from 'multiformats/cid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, fixtureFiles, sha256sum } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { downGatewayUrl, type IpfsTestGateway, startIpfsGateway, zeros } from '../harness/ipfs-gateway';
import { DATABASE_KINDS, startTestService, storedKeys, type TestService } from '../harness/service';
import { freshEmail, makeOrg } from '../harness/tenants';
import { walletAccessMessage } from '../harness/wallet';

/**
 * IPFS import (spec, Documents: `POST /api/documents/import/ipfs`) against loopback trustless gateways built on a real
 * IPFS implementation (`test/harness/ipfs-gateway.ts`): every fixture by CIDv1 and CIDv0, hashes equal to `sha256sum`
 * and to uploads, links at the configured public gateway, anchoring, the certificate, LGPD deletion; lying gateways (a
 * block altered, another file), gateways failing, down or stalling, 413 from the UnixFS root alone, directories and
 * malformed CIDs; REST and /trpc, PGlite and PostgreSQL. The configured public gateway (`https://ipfs.example`) is only
 * named, never contacted.
 */

const exec = promisify(execFile);
const PUBLIC_GATEWAY = 'https://ipfs.example';
const MiB = 1024 * 1024;
const FIXTURES = await fixtureFiles();

type ErrorBody = { message: string; code: string };

/** `POST /api/documents/import/ipfs`. */
function importRest(t: TestService, token: string, body: Record<string, unknown>) {
  return api<DocumentDto & ErrorBody>(t.url, '/api/documents/import/ipfs', { method: 'POST', token, body });
}

/** `documents.importIpfs` through `/trpc` (a tRPC mutation, not batched). */
async function importTrpc(
  t: TestService,
  token: string,
  input: Record<string, unknown>,
): Promise<{ status: number; data?: DocumentDto; error?: { message: string; data: { code: string } } }> {
  const res = await fetch(`${t.url}/trpc/documents.importIpfs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as {
    result?: { data: DocumentDto };
    error?: { message: string; data: { code: string } };
  };
  return {
    status: res.status,
    ...(body.result ? { data: body.result.data } : {}),
    ...(body.error ? { error: body.error } : {}),
  };
}

/** Documents in the whole database (any tenant, deleted or not). */
async function documentCount(t: TestService): Promise<number> {
  const rows: { n: string | number }[] = await t.service.deps.db
    .fork()
    .getConnection()
    .execute('select count(*) as n from document');
  return Number(rows[0]?.n);
}

/** Counts the anchoring requests of the real queue (which it still receives): "no job" means none. */
function countAnchoringRequests(t: TestService): { count: number } {
  const counter = { count: 0 };
  const real = t.service.deps.anchoringQueue;
  t.service.deps.anchoringQueue = {
    enqueueAnchoring: async (tx) => {
      counter.count++;
      await real.enqueueAnchoring(tx);
    },
  };
  return counter;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const expectedLink = (cid: string, name: string, download: boolean) =>
  `${PUBLIC_GATEWAY}/ipfs/${cid}?filename=${encodeURIComponent(name)}${download ? '&download=true' : ''}`;

describe.each(DATABASE_KINDS)('IPFS import on %s', (kind) => {
  let gw: IpfsTestGateway;
  let t: TestService;
  let alice: string;
  let anchoring: { count: number };
  /** Imported by CIDv1 with its file name, by fixture name. */
  const imported = new Map<string, DocumentDto>();

  beforeAll(async () => {
    gw = await startIpfsGateway();
    t = await startTestService(kind, {
      ANCHORING: 'devnet',
      IPFS_GATEWAYS: gw.url,
      IPFS_PUBLIC_GATEWAY: PUBLIC_GATEWAY,
    });
    alice = await t.token(freshEmail('alice'));
    anchoring = countAnchoringRequests(t);
  });
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  it('imports every fixture by CIDv1 and CIDv0: sha256Hash is sha256sum and the upload hash; nothing stored; links at the public gateway', async () => {
    const bob = await t.token(freshEmail('bob'));
    expect(FIXTURES.length).toBeGreaterThan(30);
    for (const file of FIXTURES) {
      const name = path.basename(file);
      const bytes = await readFile(file);
      const hash = await sha256sum(file);
      const v1 = (await gw.addFile(bytes, 'v1')).toString();
      const v0 = (await gw.addFile(bytes, 'v0')).toString();
      expect(v0).toMatch(/^Qm/);
      expect(v1).toMatch(/^b/);

      const byV1 = await importRest(t, alice, { cid: v1, fileName: name, consent: true });
      expect(byV1.status, `${name}: ${JSON.stringify(byV1.body)}`).toBe(201);
      const doc = DocumentSchema.parse(byV1.body);
      expect(doc).toMatchObject({
        fileName: name,
        fileSize: bytes.length,
        sha256Hash: hash,
        sourceType: 'ipfs',
        sourceUri: `ipfs://${v1}`,
        consentGiven: true,
        onchainStatus: 'pending',
        stacksStatus: 'pending',
      });
      imported.set(name, doc);

      // The name defaults to the CID.
      const byV0 = await importRest(t, alice, { cid: v0, consent: true });
      expect(byV0.status, `${name} v0: ${JSON.stringify(byV0.body)}`).toBe(201);
      expect(byV0.body).toMatchObject({ fileName: v0, sha256Hash: hash, sourceUri: `ipfs://${v0}` });

      // The same bytes uploaded: the same hash and media type (both from the content).
      const up = await uploadFile(t.url, bob, file);
      expect(up.status).toBe(201);
      expect(up.body).toMatchObject({ sha256Hash: doc.sha256Hash, mimeType: doc.mimeType });

      const verify = await api<{ found: boolean }>(t.url, `/api/public/verify?hash=${hash}`);
      expect(verify.body.found).toBe(true);
      const bySerial = await api(t.url, `/api/public/documents/${doc.serialNumber}`);
      expect(bySerial.status).toBe(200);

      const dl = await api<{ downloadUrl: string; sha256: string; expiresInSeconds: number }>(
        t.url,
        `/api/documents/${doc.id}/download`,
        { token: alice },
      );
      expect(dl.status).toBe(200);
      expect(dl.body).toEqual({
        downloadUrl: expectedLink(v1, name, true),
        sha256: hash,
        expiresInSeconds: 300,
      });
      const view = await api<{ viewUrl: string; inline: boolean; expiresInSeconds: number }>(
        t.url,
        `/api/documents/${doc.id}/view`,
        { token: alice },
      );
      expect(view.status).toBe(200);
      // Inline exactly when an upload of the same file would be (spec, Documents: rule 4).
      const uploadView = await api<{ inline: boolean }>(t.url, `/api/documents/${up.body.id}/view`, {
        token: bob,
      });
      expect(view.body).toEqual({
        viewUrl: expectedLink(v1, name, !uploadView.body.inline),
        inline: uploadView.body.inline,
        expiresInSeconds: 300,
      });
    }
    // Reference-only: every stored object is one of Bob's uploads.
    expect(await storedKeys(t)).toHaveLength(FIXTURES.length);
    const listed = await api<{ documents: DocumentDto[] }>(t.url, '/api/documents', { token: alice });
    expect(listed.body.documents).toHaveLength(2 * FIXTURES.length);
  });

  it('a deep DAG (1 KiB leaves, 3 links a node) hashes the same as the file', async () => {
    const file = path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf');
    const cid = (await gw.addFile(await readFile(file), 'v1-tiny-chunks')).toString();
    const res = await importRest(t, alice, { cid, fileName: 'deep.pdf', consent: true });
    expect(res.status).toBe(201);
    expect(res.body.sha256Hash).toBe(await sha256sum(file));
  });

  it('share links, public and wallet access of an import answer its public gateway URL, counted and logged', async () => {
    const name = 'shared.txt';
    const cid = (await gw.addFile(Buffer.from(`shared ${randomUUID()}`), 'v1')).toString();
    const imported = await importRest(t, alice, { cid, fileName: name, consent: true });
    expect(imported.status).toBe(201);
    expect(imported.body.mimeType).toBe('text/plain');
    const id = imported.body.id;
    const policy = (body: Record<string, unknown>) =>
      api<{ token?: string }>(t.url, `/api/documents/${id}/access-policies`, {
        method: 'POST',
        token: alice,
        body,
      });
    const answer = (permission: 'download' | 'view') => ({
      documentId: id,
      fileName: name,
      serialNumber: imported.body.serialNumber,
      // Plain text is served inline (spec, Documents: rule 4): a view link asks the gateway for no download.
      accessUrl: expectedLink(cid, name, permission === 'download'),
      permission,
      expiresInSeconds: permission === 'download' ? 3600 : 900,
    });

    const link = await policy({ kind: 'link' });
    expect(link.status).toBe(201);
    const shared = await api(t.url, `/share/${link.body.token}`);
    expect(shared.status).toBe(200);
    expect(shared.body).toEqual(answer('download'));

    expect((await policy({ kind: 'public', permission: 'view' })).status).toBe(201);
    const open = await api(t.url, `/access/public/${id}`);
    expect(open.status).toBe(200);
    expect(open.body).toEqual(answer('view'));

    const wallet = Wallet.createRandom();
    expect((await policy({ kind: 'wallet', addresses: [wallet.address] })).status).toBe(201);
    const message = walletAccessMessage({ serviceUrl: t.url, address: wallet.address, documentId: id });
    const byWallet = await api(t.url, `/access/wallet/${id}`, {
      method: 'POST',
      body: { address: wallet.address, message, signature: await wallet.signMessage(message) },
    });
    expect(byWallet.status).toBe(200);
    expect(byWallet.body).toEqual(answer('download'));

    // Each access counted and logged as for a stored file.
    const log = await api<{ log: { accessorType: string }[] }>(t.url, `/access-log/${id}`, { token: alice });
    expect(log.body.log.map((e) => e.accessorType).sort()).toEqual(['anonymous', 'anonymous', 'wallet']);
  });

  it('through /trpc: documents.importIpfs answers the Document; errors keep their codes', async () => {
    const bytes = Buffer.from(`trpc ${randomUUID()}`);
    const cid = (await gw.addFile(bytes, 'v1')).toString();
    const ok = await importTrpc(t, alice, { cid, fileName: 'note.txt', consent: true });
    expect(ok.status).toBe(200);
    expect(DocumentSchema.parse(ok.data)).toMatchObject({
      sha256Hash: sha256(bytes),
      sourceType: 'ipfs',
      sourceUri: `ipfs://${cid}`,
      mimeType: 'text/plain',
    });
    const bad = await importTrpc(t, alice, { cid: `ipfs://${cid}`, consent: true });
    expect(bad.status).toBe(400);
    expect(bad.error?.data.code).toBe('BAD_REQUEST');
    gw.fault = { status: 500 };
    try {
      const failing = await importTrpc(t, alice, { cid, consent: true });
      expect(failing.status).toBe(502);
      expect(failing.error?.data.code).toBe('BAD_GATEWAY');
    } finally {
      gw.fault = undefined;
    }
    // The OpenAPI document lists the REST path of the same procedure.
    const openapi = await api<{ paths: Record<string, Record<string, unknown>> }>(t.url, '/api/openapi.json');
    expect(Object.keys(openapi.body.paths['/api/documents/import/ipfs'] ?? {})).toEqual(['post']);
  });

  it('an import is anchored on both chains like any document', { timeout: 120_000 }, async () => {
    const doc = imported.get('contrato.txt');
    if (!doc) throw new Error('not imported');
    const deadline = Date.now() + 90_000;
    for (;;) {
      const res = await api<{ document: DocumentDto }>(t.url, `/api/documents/${doc.id}`, { token: alice });
      const d = res.body.document;
      if (d.onchainStatus === 'registered' && d.stacksStatus === 'registered') {
        expect(d.onchainTxHash).toMatch(/^0x[0-9a-f]{64}$/);
        expect(d.stacksTxId).toBeTruthy();
        break;
      }
      if (Date.now() > deadline) throw new Error(`not registered in time: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it('the certificate of an imported PDF stamps it (bytes fetched again); with the gateway failing it is the separate PDF saying why', async () => {
    const name = 'hello_world_rotated.pdf';
    const original = await readFile(path.join(FIXTURES_DIR, 'pdfs', name));
    const doc = imported.get(name);
    if (!doc) throw new Error('not imported');
    const work = await mkdtemp(path.join(os.tmpdir(), 'ipfs-cert-'));
    try {
      const certificate = async () => {
        const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?lang=en`, {
          headers: { authorization: `Bearer ${alice}` },
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/pdf');
        const bytes = Buffer.from(await res.arrayBuffer());
        const file = path.join(work, `${randomUUID()}.pdf`);
        await writeFile(file, bytes);
        await exec('qpdf', ['--check', file]);
        const { stdout } = await exec('pdftotext', ['-layout', file, '-']);
        return { bytes, text: stdout.replace(/\s+/g, ' ') };
      };
      const stamped = await certificate();
      expect(stamped.bytes.subarray(0, original.length).equals(original)).toBe(true);
      expect(stamped.text).not.toContain('was not stamped');

      gw.fault = { status: 500 };
      let separate: Awaited<ReturnType<typeof certificate>>;
      try {
        separate = await certificate();
      } finally {
        gw.fault = undefined;
      }
      expect(separate.bytes.subarray(0, original.length).equals(original)).toBe(false);
      expect(separate.text).toContain('This PDF was not stamped');
      expect(separate.text).toContain('HTTP 500');
      expect(separate.text).toContain(doc.serialNumber);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('LGPD deletion of an import: 200 with a note that the bytes stay on IPFS; then 410; the hash stays verifiable', async () => {
    const bytes = Buffer.from(`lgpd ${randomUUID()}`);
    const cid = (await gw.addFile(bytes, 'v0')).toString();
    const created = await importRest(t, alice, { cid, fileName: 'pessoal.txt', consent: true });
    expect(created.status).toBe(201);
    const del = await api<{ ok: boolean; note: string; sha256Hash: string }>(
      t.url,
      `/api/documents/${created.body.id}`,
      { method: 'DELETE', token: alice },
    );
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ ok: true, sha256Hash: sha256(bytes) });
    expect(del.body.note).toContain(`ipfs://${cid}`);
    expect(del.body.note).toMatch(/stay on IPFS .*, outside this service's control/);
    for (const suffix of ['/download', '/view']) {
      const res = await api<ErrorBody>(t.url, `/api/documents/${created.body.id}${suffix}`, { token: alice });
      expect(res.status, suffix).toBe(410);
    }
    const again = await api(t.url, `/api/documents/${created.body.id}`, { method: 'DELETE', token: alice });
    expect(again.status).toBe(410);
    const verify = await api<{ found: boolean }>(t.url, `/api/public/verify?hash=${sha256(bytes)}`);
    expect(verify.body.found).toBe(true);
  });

  it('a lying gateway (one block altered; another file for the CID): 502 naming the verification failure, no Document, no anchoring job', async () => {
    const freeculture = await readFile(path.join(FIXTURES_DIR, 'pdfs/freeculture.pdf'));
    const tracemonkey = await readFile(path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf'));
    const root = await gw.addFile(freeculture, 'v1');
    const other = await gw.addFile(tracemonkey, 'v1');
    const leaves = dagPb.decode(await gw.block(root)).Links.map((l) => l.Hash);
    expect(leaves.length).toBeGreaterThan(5);
    const leaf = leaves[5] as CID;
    const altered = Buffer.from(await gw.block(leaf));
    altered[1000] = (altered[1000] ?? 0) ^ 0xff;
    const single = await gw.addFile(Buffer.from(`single ${randomUUID()}`), 'v1');

    const lies: [string, CID, CID, Uint8Array][] = [
      ['one block altered', root, leaf, altered],
      ['another file for the CID', root, root, await gw.block(other)],
      ['other bytes for a one-block CID', single, single, Buffer.from('<html>not it</html>')],
    ];
    for (const [what, cid, lyingFor, bytes] of lies) {
      const documents = await documentCount(t);
      const jobs = anchoring.count;
      gw.replaceBlock(lyingFor, bytes);
      try {
        const res = await importRest(t, alice, { cid: cid.toString(), consent: true });
        expect(res.status, what).toBe(502);
        expect(res.body.code).toBe('BAD_GATEWAY');
        expect(res.body.message).toContain('verification failed');
        expect(res.body.message).toContain(lyingFor.toString());
        const trpc = await importTrpc(t, alice, { cid: cid.toString(), consent: true });
        expect(trpc.status, what).toBe(502);
      } finally {
        gw.replaceBlock(lyingFor, undefined);
      }
      expect(await documentCount(t), what).toBe(documents);
      expect(anchoring.count, what).toBe(jobs);
    }
    // Honest again: the same CID imports, anchoring requested with its row.
    const jobs = anchoring.count;
    const res = await importRest(t, alice, { cid: root.toString(), consent: true });
    expect(res.status).toBe(201);
    expect(res.body.sha256Hash).toBe(sha256(freeculture));
    expect(anchoring.count).toBe(jobs + 1);
  });

  it('a gateway answering 500: 502 BAD_GATEWAY naming it, nothing recorded', async () => {
    const cid = (await gw.addFile(Buffer.from(`500 ${randomUUID()}`), 'v1')).toString();
    const documents = await documentCount(t);
    gw.fault = { status: 500 };
    try {
      const res = await importRest(t, alice, { cid, consent: true });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ code: 'BAD_GATEWAY', message: expect.stringContaining('HTTP 500') });
      expect(res.body.message).toContain(gw.url);
    } finally {
      gw.fault = undefined;
    }
    expect(await documentCount(t)).toBe(documents);
  });

  it('251 MB: 413 from the UnixFS root alone (no other block asked for), nothing recorded', async () => {
    const cid = (await gw.addFile(zeros(251 * MiB), 'v1')).toString();
    const documents = await documentCount(t);
    const before = gw.requests.length;
    const res = await importRest(t, alice, { cid, consent: true });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(gw.requests.slice(before)).toEqual([{ cid, format: 'raw' }]);
    expect(await documentCount(t)).toBe(documents);
  });

  it('400 for a directory CID, every CID spelling but bare v0 and base32 v1, and missing consent; 403 for a reader', async () => {
    const dir = await gw.addDirectory([
      { name: 'a.txt', content: Buffer.from('a') },
      { name: 'b.txt', content: Buffer.from('b') },
    ]);
    const dirRes = await importRest(t, alice, { cid: dir.toString(), consent: true });
    expect(dirRes.status).toBe(400);
    expect(dirRes.body.message).toContain('directory');

    const file = await gw.addFile(Buffer.from(`spellings ${randomUUID()}`), 'v0');
    const v1 = file.toV1();
    const dagCbor = CID.create(1, 0x71, file.multihash);
    const refused = [
      `ipfs://${file}`,
      `/ipfs/${file}`,
      `${file}/a.txt`,
      v1.toString(base36),
      v1.toString(base58btc),
      v1.toString(base32upper),
      dagCbor.toString(),
      'QmNotACid',
      'hello',
      '',
    ];
    for (const cid of refused) {
      const res = await importRest(t, alice, { cid, consent: true });
      expect(res.status, cid).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
      expect(res.body.message, cid).toMatch(/CIDv0 \(Qm…, base58btc\) or CIDv1 in base32 \(b…\)/);
    }
    // Both accepted spellings of the same DAG.
    expect((await importRest(t, alice, { cid: v1.toString(), consent: true })).status).toBe(201);
    expect((await importRest(t, alice, { cid: file.toString(), consent: true })).status).toBe(201);

    const requests = gw.requests.length;
    for (const consent of [false, undefined]) {
      const res = await importRest(t, alice, {
        cid: file.toString(),
        ...(consent === undefined ? {} : { consent }),
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
    const org = await makeOrg(t, 'Cartório IPFS', [
      ['owner@ipfs.example', 'owner'],
      ['reader@ipfs.example', 'reader'],
      ['editor@ipfs.example', 'editor'],
    ]);
    const denied = await importRest(t, org.tokens['reader@ipfs.example'] ?? '', {
      cid: file.toString(),
      consent: true,
    });
    expect(denied.status).toBe(403);
    // Nothing was fetched for a refused request.
    expect(gw.requests.length).toBe(requests);
    const editor = await importRest(t, org.tokens['editor@ipfs.example'] ?? '', {
      cid: file.toString(),
      consent: true,
    });
    expect(editor.status).toBe(201);
    expect(editor.body.serialNumber).toMatch(/^CARTORIO/);
  });
});

describe.each(DATABASE_KINDS)('IPFS gateways down or stalling, and the rate limit, on %s', (kind) => {
  const TIMEOUT_MS = 500;
  let stalling: IpfsTestGateway;
  let down: string;
  let t: TestService;

  beforeAll(async () => {
    stalling = await startIpfsGateway();
    stalling.fault = 'stall';
    down = await downGatewayUrl();
    t = await startTestService(kind, {
      IPFS_GATEWAYS: `${stalling.url},${down}`,
      IPFS_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMITS: 'on',
    });
  });
  afterAll(async () => {
    await t?.close();
    await stalling?.close();
  });

  it('a stalling gateway times out and a down one is unreachable: 502 naming both, nothing recorded', async () => {
    const token = await t.token(freshEmail('stalled'));
    const cid = (await stalling.addFile(Buffer.from('never served'), 'v1')).toString();
    const started = performance.now();
    const res = await importRest(t, token, { cid, consent: true });
    const elapsed = performance.now() - started;
    console.log(`[ipfs] ${kind}: stalling + down gateways answered 502 after ${elapsed.toFixed(0)} ms`);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('BAD_GATEWAY');
    expect(res.body.message).toContain(`${stalling.url}: no complete answer within ${TIMEOUT_MS} ms`);
    expect(res.body.message).toContain(`${down}: unreachable`);
    expect(stalling.requests).toEqual([{ cid, format: 'raw' }]);
    expect(await documentCount(t)).toBe(0);
  });

  it(`the rate limit: ${RATE_LIMITS.ipfsImport} imports a minute, the next is 429`, async () => {
    const token = await t.token(freshEmail('importer'));
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMITS.ipfsImport; i++) {
      statuses.push((await importRest(t, token, { cid: 'not-a-cid', consent: true })).status);
    }
    expect(statuses).toEqual([...Array(RATE_LIMITS.ipfsImport).fill(400), 429]);
  });
});

describe('IPFS import budgets: crafted DAGs, a stalling gateway, the concurrency cap, a client that hangs up', () => {
  let gw: IpfsTestGateway;
  /** One import at a time, the default deadline. */
  let t: TestService;
  /** A 1 s deadline for the whole import. */
  let hasty: TestService;
  let token: string;
  let hastyToken: string;

  beforeAll(async () => {
    gw = await startIpfsGateway();
    [t, hasty] = await Promise.all([
      startTestService('pglite', { IPFS_GATEWAYS: gw.url, IPFS_IMPORT_CONCURRENCY: '1' }),
      startTestService('pglite', { IPFS_GATEWAYS: gw.url, IPFS_IMPORT_TIMEOUT_MS: '1000' }),
    ]);
    token = await t.token(freshEmail('budgets'));
    hastyToken = await hasty.token(freshEmail('hasty'));
  });
  afterAll(async () => {
    await t?.close();
    await hasty?.close();
    await gw?.close();
  });

  /** Resolves once the gateway has emitted `n` more `event`s (counted from the call). */
  function gatewayEvents(event: 'request' | 'abandoned', n: number): Promise<void> {
    return new Promise((resolve) => {
      let seen = 0;
      const on = () => {
        if (++seen < n) return;
        gw.events.off(event, on);
        resolve();
      };
      gw.events.on(event, on);
    });
  }
  const requestsFor = (...cids: CID[]) =>
    gw.requests.filter((r) => cids.some((cid) => cid.toString() === r.cid)).length;

  it('a block linked 5000 times is fetched once (201); a 2 MiB node of a tiny file linked 5000 times and links to empty parts are 400 within their budgets; nothing recorded for them', async () => {
    const leaf = await gw.putBlock(Buffer.alloc(1024, 3), 'raw');
    const repeated = await gw.putFileNode({
      links: Array.from({ length: 5000 }, () => ({ cid: leaf, size: 1024 })),
    });
    const ok = await importRest(t, token, { cid: repeated.toString(), fileName: 'same.bin', consent: true });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body).toMatchObject({
      fileSize: 5000 * 1024,
      sha256Hash: sha256(Buffer.alloc(5000 * 1024, 3)),
    });
    expect(requestsFor(leaf)).toBe(1);

    const tiny = await gw.putBlock(Buffer.from('t'), 'raw');
    const huge = await gw.putFileNode({ links: [{ cid: tiny, size: 1, name: 'h'.repeat(2 * MiB - 200) }] });
    const abusive = await gw.putFileNode({
      links: Array.from({ length: 5000 }, () => ({ cid: huge, size: 1 })),
    });
    const empty = await gw.putFileNode({ links: [] });
    const zeros = await gw.putFileNode({
      links: Array.from({ length: 5000 }, () => ({ cid: empty, size: 0 })),
    });
    const documents = await documentCount(t);
    const rest = await importRest(t, token, { cid: abusive.toString(), consent: true });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({
      code: 'BAD_REQUEST',
      message: `cid: ${abusive} names a DAG this service does not read: it takes more than ${Math.ceil(5000 / 256) + 64} blocks for a file of 5000 bytes (blocks linked over and over, or far larger than the file they make)`,
      fields: ['cid'],
    });
    expect(requestsFor(huge)).toBe(1);
    const trpc = await importTrpc(t, token, { cid: abusive.toString(), consent: true });
    expect(trpc.status).toBe(400);
    expect(trpc.error?.data.code).toBe('BAD_REQUEST');
    expect(trpc.error?.message).toContain('names a DAG this service does not read');

    const before = gw.requests.length;
    const empties = await importRest(t, token, { cid: zeros.toString(), consent: true });
    expect(empties.status).toBe(400);
    expect(empties.body.message).toContain(`links a part of 0 bytes (${empty}), which no importer writes`);
    expect(gw.requests.slice(before)).toEqual([{ cid: zeros.toString(), format: 'raw' }]);
    expect(await documentCount(t)).toBe(documents);
  });

  it('a gateway stalling between blocks: 504 naming IPFS_IMPORT_TIMEOUT_MS, its held requests closed, nothing recorded', async () => {
    const a = await gw.putBlock(Buffer.from('deadline a'), 'raw');
    const b = await gw.putBlock(Buffer.from('deadline b'), 'raw');
    const root = await gw.putFileNode({ links: [a, b].map((cid) => ({ cid, size: 10 })) });
    gw.hold = (cid) => cid === a.toString() || cid === b.toString();
    try {
      const abandoned = gatewayEvents('abandoned', 2);
      const res = await importRest(hasty, hastyToken, { cid: root.toString(), consent: true });
      expect(res.status).toBe(504);
      expect(res.body).toEqual({
        code: 'GATEWAY_TIMEOUT',
        message: `Reading ${root} from the IPFS gateways did not finish within 1000 ms (IPFS_IMPORT_TIMEOUT_MS)`,
      });
      await abandoned;
      expect(requestsFor(a, b)).toBe(2);
      expect(await documentCount(hasty)).toBe(0);
    } finally {
      gw.hold = undefined;
    }
  });

  for (const face of ['REST', 'tRPC'] as const) {
    it(`${face}: while an import holds the only slot the service answers, a second import is 429 with Retry-After; the client hanging up stops the fetching and frees the slot`, async () => {
      const a = await gw.putBlock(Buffer.from(`${face} held a`), 'raw');
      const b = await gw.putBlock(Buffer.from(`${face} held b`), 'raw');
      const root = await gw.putFileNode({ links: [a, b].map((cid) => ({ cid, size: 12 })) });
      const other = await gw.addFile(Buffer.from(`${face} ${randomUUID()}`), 'v1');
      const documents = await documentCount(t);
      gw.hold = (cid) => cid === a.toString() || cid === b.toString();
      try {
        const held = gatewayEvents('request', 3);
        const client = new AbortController();
        const body = JSON.stringify({ cid: root.toString(), consent: true });
        const leaving = fetch(
          `${t.url}${face === 'REST' ? '/api/documents/import/ipfs' : '/trpc/documents.importIpfs'}`,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body,
            signal: client.signal,
          },
        ).catch((e: unknown) => e);
        await held;

        // The service answers meanwhile; another import is refused before any request.
        expect((await api(t.url, '/health')).status).toBe(200);
        const before = gw.requests.length;
        const busy = await importRest(t, token, { cid: other.toString(), consent: true });
        expect(busy.status).toBe(429);
        expect(busy.headers.get('retry-after')).toBe('10');
        expect(busy.body).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 10 });
        expect(busy.body.message).toContain('as many IPFS files at once as it allows (1)');
        const busyTrpc = await importTrpc(t, token, { cid: other.toString(), consent: true });
        expect(busyTrpc.status).toBe(429);
        expect(gw.requests.length).toBe(before);

        const abandoned = gatewayEvents('abandoned', 2);
        client.abort();
        expect(await leaving).toBeInstanceOf(Error);
        await abandoned;
        // The slot was freed with the abort, before the gateway saw its requests closed.
        const next = await importRest(t, token, { cid: other.toString(), consent: true });
        expect(next.status, JSON.stringify(next.body)).toBe(201);
        // Nothing more was asked for the abandoned file, and it was not recorded.
        expect(requestsFor(a, b)).toBe(2);
        expect(await documentCount(t)).toBe(documents + 1);
      } finally {
        gw.hold = undefined;
      }
    });
  }
});

describe('the IPFS client (adapter) against loopback gateways', () => {
  let honest: IpfsTestGateway;
  let liar: IpfsTestGateway;
  let failing: IpfsTestGateway;
  let stalling: IpfsTestGateway;

  beforeAll(async () => {
    honest = await startIpfsGateway();
    liar = await startIpfsGateway(honest.blockstore);
    failing = await startIpfsGateway();
    failing.fault = { status: 503 };
    stalling = await startIpfsGateway();
    stalling.fault = 'stall';
  });
  afterAll(async () => {
    for (const g of [honest, liar, failing, stalling]) await g?.close();
  });

  const client = (gateways: string[], timeoutMs = 30_000) =>
    createIpfsGateways({
      gateways,
      publicGateway: PUBLIC_GATEWAY,
      timeoutMs,
      importTimeoutMs: 300_000,
      concurrency: 4,
    });

  /** Reads the whole file through `client`, returning its SHA-256 and size, or the AppError it failed with. */
  async function read(gateways: string[], cid: CID, timeoutMs?: number) {
    const file = await client(gateways, timeoutMs).fetchFile(cid.toString(), {
      signal: new AbortController().signal,
    });
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of file.stream) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { declared: file.size, size, sha256: hash.digest('hex') };
  }

  it('configuration: documented defaults, gateway lists, and what is refused', () => {
    expect(loadConfig({}).ipfs).toEqual({
      gateways: ['https://trustless-gateway.link'],
      publicGateway: 'https://ipfs.io',
      timeoutMs: 30_000,
      importTimeoutMs: 300_000,
      concurrency: 4,
    });
    const custom = loadConfig({
      IPFS_GATEWAYS: ' https://a.example/ , http://127.0.0.1:8080',
      IPFS_PUBLIC_GATEWAY: 'https://dweb.example/',
      IPFS_TIMEOUT_MS: '1500',
      IPFS_IMPORT_TIMEOUT_MS: '60000',
      IPFS_IMPORT_CONCURRENCY: '2',
    });
    expect(custom.ipfs).toEqual({
      gateways: ['https://a.example', 'http://127.0.0.1:8080'],
      publicGateway: 'https://dweb.example',
      timeoutMs: 1500,
      importTimeoutMs: 60_000,
      concurrency: 2,
    });
    for (const env of [
      { IPFS_GATEWAYS: '' },
      { IPFS_GATEWAYS: 'ftp://a.example' },
      { IPFS_GATEWAYS: 'https://a.example/?format=raw' },
      { IPFS_PUBLIC_GATEWAY: 'ipfs.io' },
      { IPFS_TIMEOUT_MS: '0' },
      { IPFS_IMPORT_TIMEOUT_MS: '0' },
      { IPFS_IMPORT_TIMEOUT_MS: 'soon' },
      { IPFS_IMPORT_CONCURRENCY: '0' },
      { IPFS_IMPORT_CONCURRENCY: '1.5' },
    ]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(/IPFS_/);
    }
  });

  it('each failure alone is BAD_GATEWAY naming it: down, 503, stalled past the timeout, block missing', async () => {
    const cid = await honest.addFile(Buffer.from('alone'), 'v1');
    const cases: [string, string[], RegExp][] = [
      ['down', [await downGatewayUrl()], /unreachable \(fetch failed: connect ECONNREFUSED/],
      ['503', [failing.url], /answered HTTP 503/],
      ['stall', [stalling.url], /no complete answer within 300 ms/],
    ];
    for (const [what, gateways, message] of cases) {
      const started = performance.now();
      const error = (await read(gateways, cid, 300).catch((e: unknown) => e)) as AppError;
      console.log(`[ipfs] ${what}: ${error.code} after ${(performance.now() - started).toFixed(0)} ms`);
      expect(error.code, what).toBe('BAD_GATEWAY');
      expect(error.message, what).toMatch(message);
    }
    const absent = await startIpfsGateway();
    try {
      const error = (await read([absent.url], cid).catch((e: unknown) => e)) as AppError;
      expect(error.code).toBe('BAD_GATEWAY');
      expect(error.message).toContain('answered HTTP 404');
    } finally {
      await absent.close();
    }
  });

  it('a lying gateway first, an honest one second: the honest bytes, verified', async () => {
    const bytes = await readFile(path.join(FIXTURES_DIR, 'pdfs/freeculture.pdf'));
    const root = await honest.addFile(bytes, 'v0');
    for (const link of dagPb.decode(await honest.block(root)).Links) {
      liar.replaceBlock(link.Hash, Buffer.alloc(262_144 + 14));
    }
    const got = await read([liar.url, honest.url], root);
    expect(got).toEqual({ declared: bytes.length, size: bytes.length, sha256: sha256(bytes) });
    expect(liar.requests.length).toBeGreaterThan(0);
  });

  it('200 MB streams with flat memory (figures printed)', { timeout: 120_000 }, async () => {
    const total = 200 * MiB;
    const cid = await honest.addFile(zeros(total), 'v1');
    const file = await client([honest.url]).fetchFile(cid.toString(), {
      signal: new AbortController().signal,
    });
    const start = process.memoryUsage();
    let peakHeap = 0;
    let peakBuffers = 0;
    let size = 0;
    const hash = createHash('sha256');
    const started = performance.now();
    for await (const chunk of file.stream) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
      const now = process.memoryUsage();
      peakHeap = Math.max(peakHeap, now.heapUsed - start.heapUsed);
      peakBuffers = Math.max(peakBuffers, now.arrayBuffers - start.arrayBuffers);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `[ipfs] 200 MiB in ${seconds.toFixed(1)} s (${(total / MiB / seconds).toFixed(0)} MiB/s); peak growth: heap ${(peakHeap / MiB).toFixed(1)} MiB, array buffers ${(peakBuffers / MiB).toFixed(1)} MiB`,
    );
    expect(size).toBe(total);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(Buffer.alloc(total)).digest('hex'));
  });

  it('the harness is a trustless gateway: a CAR (v1, dfs) of the whole DAG whose blocks verify', async () => {
    const bytes = await readFile(path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf'));
    const root = await honest.addFile(bytes, 'v1');
    const res = await fetch(`${honest.url}/ipfs/${root}`, {
      headers: { accept: 'application/vnd.ipld.car' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.ipld.car; version=1; order=dfs; dups=n');
    const blocks = await CarBlockIterator.fromBytes(new Uint8Array(await res.arrayBuffer()));
    expect((await blocks.getRoots()).map(String)).toEqual([root.toString()]);
    let count = 0;
    for await (const block of blocks) {
      expect(Buffer.from(block.cid.multihash.digest).toString('hex')).toBe(sha256(block.bytes));
      count++;
    }
    expect(count).toBe(1 + dagPb.decode(await honest.block(root)).Links.length);
    const raw = await fetch(`${honest.url}/ipfs/${root}?format=raw`);
    expect(raw.headers.get('content-type')).toBe('application/vnd.ipld.raw');
    expect(sha256(new Uint8Array(await raw.arrayBuffer()))).toBe(
      Buffer.from(root.multihash.digest).toString('hex'),
    );
  });
});
