import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NotarialActHistory } from '@notary/server/db/entities';
import { verify } from '@notary/verify';
import { parseReceipt } from '@notary/verify/receipt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { jsonRequest, uploadFile } from '../harness/http';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * A document's notarial act through the REST API (`/api/documents/{id}/act`, `/api/public/acts/{mne}`) on PGlite
 * and PostgreSQL: who may record it (editor or higher, in the document's tenant only), what a wrong MNE is told,
 * the history of every change, the uniqueness of an MNE, the public lookup, the list search, the receipt and the
 * certificate that carry it, and a document deleted under the LGPD.
 */

const TXT = path.join(FIXTURES_DIR, 'files/contrato.txt');
const REAL_MNE = '104067.2025.10.13.00006024-37';

/** A valid MNE of CNS 104067 dated 2024-02-29 with sequence `n`, its check digits computed with BigInt. */
function mneOf(n: number): string {
  const base = `10406720240229${String(n).padStart(8, '0')}`;
  const dd = String(98n - ((BigInt(base) * 100n) % 97n)).padStart(2, '0');
  return `104067.2024.02.29.${base.slice(14)}-${dd}`;
}

type Body = Record<string, unknown>;

describe.each(DATABASE_KINDS)('notarial acts on %s', (kind) => {
  let t: TestService;
  let org: TestOrg;
  let other: TestOrg;
  const [owner, editor, reader, stranger] = ['owner', 'editor', 'reader', 'stranger'].map(freshEmail) as [
    string,
    string,
    string,
    string,
  ];
  const tok = (who: string) => (org.tokens[who] ?? other.tokens[who]) as string;
  const req = <T = Body>(method: string, route: string, init: Parameters<typeof jsonRequest>[3] = {}) =>
    jsonRequest<T>(t.url, method, route, init);
  const upload = async (token: string) => {
    const up = await uploadFile(t.url, token, TXT);
    expect(up.status).toBe(201);
    return up.body as { id: string; serialNumber: string; sha256Hash: string };
  };
  let doc: { id: string; serialNumber: string; sha256Hash: string };

  beforeAll(async () => {
    t = await startTestService(kind);
    org = await makeOrg(t, 'Cartório Acts', [
      [owner, 'owner'],
      [editor, 'editor'],
      [reader, 'reader'],
    ]);
    other = await makeOrg(t, 'Other Acts', [[stranger, 'owner']]);
    doc = await upload(tok(editor));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const act = (mne: string | undefined, extra: Body = {}) => ({
    type: 'ata_notarial',
    ...(mne === undefined ? {} : { mne }),
    selo: { state: 'SP', code: 'ABC12345-X' },
    book: 'Livro 12',
    page: 'fls. 34v',
    ...extra,
  });

  it('refuses below editor, another tenant, no session; a missing document is 404', async () => {
    const route = `/api/documents/${doc.id}/act`;
    const body = act(REAL_MNE);
    expect((await req('PUT', route, { body })).status).toBe(401);
    const byReader = await req('PUT', route, { token: tok(reader), body });
    expect(byReader.status).toBe(403);
    expect(byReader.body.message).toBe(
      "Your role (reader) cannot record this organization's notarial acts: it takes editor or higher.",
    );
    expect((await req('DELETE', route, { token: tok(reader) })).status).toBe(403);
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const res = await req(method, route, { token: tok(stranger), ...(method === 'PUT' ? { body } : {}) });
      expect(res.status, method).toBe(403);
    }
    expect(
      (await req('PUT', `/api/documents/${randomUUID()}/act`, { token: tok(editor), body })).status,
    ).toBe(404);
    expect((await req('GET', route, { token: tok(reader) })).status).toBe(404);
  });

  it('answers a wrong MNE with 400 naming what is wrong, and a bad selo, book or type too', async () => {
    const route = `/api/documents/${doc.id}/act`;
    const put = (body: Body) => req('PUT', route, { token: tok(editor), body });
    const wrongDigits = await put(act('104067.2025.10.13.00006024-38'));
    expect(wrongDigits).toEqual({
      status: 400,
      body: expect.objectContaining({
        code: 'BAD_REQUEST',
        message: "mne: the MNE's check digits are 38, expected 37 (ISO 7064 MOD 97-10)",
      }),
    });
    const base = '1040672025023000000001';
    const dd = String(98n - ((BigInt(base) * 100n) % 97n)).padStart(2, '0');
    const wrongDate = await put(act(`${base}${dd}`));
    expect(wrongDate.status).toBe(400);
    expect(wrongDate.body.message).toBe("mne: the MNE's date 2025-02-30 does not exist");
    const wrongFormat = await put(act('104067.2025.10.13'));
    expect(wrongFormat.status).toBe(400);
    expect(String(wrongFormat.body.message)).toMatch(/^mne: an MNE is 24 digits/);
    expect((await put(act(REAL_MNE, { selo: { state: 'XX', code: 'A' } }))).status).toBe(400);
    expect((await put(act(REAL_MNE, { selo: { state: 'SP', code: 'A;B' } }))).status).toBe(400);
    expect((await put(act(REAL_MNE, { book: 'x'.repeat(33) }))).status).toBe(400);
    expect((await put(act(REAL_MNE, { type: 'certidao' }))).status).toBe(400);
    expect((await req('GET', route, { token: tok(editor) })).status).toBe(404);
  });

  it('records the act (bare digits read as the dotted MNE), replaces it, keeps every change in the history', async () => {
    const route = `/api/documents/${doc.id}/act`;
    const recorded = await req('PUT', route, { token: tok(editor), body: act(REAL_MNE.replace(/\D/g, '')) });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
    expect(recorded.body).toMatchObject({
      documentId: doc.id,
      type: 'ata_notarial',
      mne: REAL_MNE,
      selo: { state: 'SP', code: 'ABC12345-X' },
      book: 'Livro 12',
      page: 'fls. 34v',
      recordedBy: org.ids[editor],
    });
    expect((await req('GET', route, { token: tok(reader) })).body).toEqual(recorded.body);
    // The same act again changes nothing and writes no history.
    expect((await req('PUT', route, { token: tok(editor), body: act(REAL_MNE) })).status).toBe(200);
    const changed = await req('PUT', route, {
      token: tok(owner),
      body: act(REAL_MNE, { type: 'escritura', selo: { state: 'MG', code: 'XYZ-9' }, page: null }),
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      type: 'escritura',
      selo: { state: 'MG', code: 'XYZ-9' },
      page: null,
    });
    expect(changed.body.recordedAt).toBe(recorded.body.recordedAt);
    const history = await t.service.deps.db
      .fork()
      .find(NotarialActHistory, { document: doc.id }, { orderBy: { at: 'asc' } });
    expect(history.map((h) => [h.action, h.actorUserId, h.actorEmail, h.role])).toEqual([
      ['recorded', org.ids[editor], editor, 'editor'],
      ['changed', org.ids[owner], owner, 'owner'],
    ]);
    expect(history[0]?.before).toBeNull();
    expect(history[1]?.before).toMatchObject({ type: 'ata_notarial', page: 'fls. 34v' });
    expect(history[1]?.after).toMatchObject({
      type: 'escritura',
      selo: { state: 'MG', code: 'XYZ-9' },
      page: null,
    });
    for (const h of history) expect(h.ip).toMatch(/127\.0\.0\.1/);
  });

  it('refuses an MNE another document holds, in any tenant, with 409', async () => {
    const second = await upload(tok(editor));
    const taken = await req('PUT', `/api/documents/${second.id}/act`, {
      token: tok(editor),
      body: act(REAL_MNE),
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('CONFLICT');
    const theirs = await upload(tok(stranger));
    expect(
      (await req('PUT', `/api/documents/${theirs.id}/act`, { token: tok(stranger), body: act(REAL_MNE) }))
        .status,
    ).toBe(409);
    // Without an MNE an act is still recorded (an act without one, e.g. before e-Notariado issued it).
    expect(
      (await req('PUT', `/api/documents/${second.id}/act`, { token: tok(editor), body: act(undefined) }))
        .body,
    ).toMatchObject({ mne: null });
  });

  it('finds the document by its MNE (dotted, bare, from the CNS on) and by selo code in the list, in its tenant only', async () => {
    const find = async (q: string, token = tok(reader)) => {
      const res = await req<{ documents: { id: string }[] }>(
        'GET',
        `/api/documents?q=${encodeURIComponent(q)}`,
        { token },
      );
      expect(res.status, q).toBe(200);
      return res.body.documents.map((d) => d.id);
    };
    for (const q of [
      REAL_MNE,
      REAL_MNE.replace(/\D/g, ''),
      '104067',
      '104067.2025.10',
      '10406720251013',
      'XYZ-9',
      'xyz',
    ]) {
      expect(await find(q), q).toContain(doc.id);
    }
    expect(await find('104068')).not.toContain(doc.id);
    expect(await find(REAL_MNE, tok(stranger))).toEqual([]);
  });

  it('looks the document up publicly by MNE: the same projection as by serial; 400 wrong, 404 unknown', async () => {
    const bySerial = await req('GET', `/api/public/documents/${doc.serialNumber}`);
    expect(bySerial.status).toBe(200);
    const byMne = await req('GET', `/api/public/acts/${REAL_MNE}`);
    expect(byMne).toEqual(bySerial);
    expect((await req('GET', `/api/public/acts/${REAL_MNE.replace(/\D/g, '')}`)).body).toEqual(bySerial.body);
    const wrong = await req('GET', '/api/public/acts/104067.2025.10.13.00006024-73');
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe("mne: the MNE's check digits are 73, expected 37 (ISO 7064 MOD 97-10)");
    expect((await req('GET', '/api/public/acts/not-an-mne')).status).toBe(400);
    expect((await req('GET', `/api/public/acts/${mneOf(424242)}`)).status).toBe(404);
  });

  it('puts the act in the receipt (version 2 on, today 3 with the transparency log), which notary-verify reads and whose MNE it checks', async () => {
    const res = await req('GET', `/api/documents/${doc.id}/receipt`, { token: tok(reader) });
    expect(res.status).toBe(200);
    const receipt = parseReceipt(res.body);
    expect(receipt.version).toBe(3);
    expect(receipt.act).toMatchObject({
      type: 'escritura',
      mne: REAL_MNE,
      selo: { state: 'MG', code: 'XYZ-9' },
      book: 'Livro 12',
      page: null,
    });
    const report = await verify({ file: await readFile(TXT), receipt, checks: [1] });
    expect(report.checks[0]?.status).toBe('passed');
    expect(report.act?.mneCheck).toEqual({ valid: true, date: '2025-10-13' });
  });

  it('prints the act on a certificate issued after it was recorded', async () => {
    const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?lang=pt`, {
      headers: { authorization: `Bearer ${tok(reader)}` },
    });
    expect(res.status).toBe(200);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'act-cert-'));
    try {
      const file = path.join(dir, 'c.pdf');
      await writeFile(file, Buffer.from(await res.arrayBuffer()));
      const { stdout } = await promisify(execFile)('pdftotext', ['-layout', file, '-']);
      expect(stdout).toMatch(/ATO NOTARIAL/i);
      expect(stdout).toMatch(/MNE \(e-Notariado\) +104067\.2025\.10\.13\.00006024-37/);
      expect(stdout).toContain(REAL_MNE);
      expect(stdout).toContain('MG XYZ-9');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('removes the act: the history keeps it, the lookups forget it; a deleted document answers 410', async () => {
    const route = `/api/documents/${doc.id}/act`;
    expect((await req('DELETE', route, { token: tok(editor) })).body).toEqual({ ok: true });
    expect((await req('GET', route, { token: tok(editor) })).status).toBe(404);
    expect((await req('DELETE', route, { token: tok(editor) })).status).toBe(404);
    expect((await req('GET', `/api/public/acts/${REAL_MNE}`)).status).toBe(404);
    const history = await t.service.deps.db
      .fork()
      .find(NotarialActHistory, { document: doc.id }, { orderBy: { at: 'asc' } });
    expect(history.map((h) => h.action)).toEqual(['recorded', 'changed', 'removed']);
    expect(history[2]?.after).toBeNull();
    expect(history[2]?.before).toMatchObject({ mne: REAL_MNE });
    const receipt = parseReceipt(
      (await req('GET', `/api/documents/${doc.id}/receipt`, { token: tok(editor) })).body,
    );
    expect(receipt.act).toBeUndefined();

    const gone = await upload(tok(editor));
    expect((await req('DELETE', `/api/documents/${gone.id}`, { token: tok(owner) })).status).toBe(200);
    const late = await req('PUT', `/api/documents/${gone.id}/act`, {
      token: tok(editor),
      body: act(mneOf(1)),
    });
    expect(late.status).toBe(410);
    expect((await req('DELETE', `/api/documents/${gone.id}/act`, { token: tok(editor) })).status).toBe(410);
  });
});
