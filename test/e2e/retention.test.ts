import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { deleteOrganizationNow } from '@notary/server/domain/org/deletion/index';
import type { ObjectStorage } from '@notary/server/ports/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { request, uploadFile } from '../harness/http';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '../harness/smtp';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * Serventia and retention against deletion (docs/sharing.md, LGPD deletion; docs/team.md, Serventia and retention):
 * who may declare a serventia (admin or owner of the active organization; not an editor, a reader, another
 * organization's admin or a personal workspace), CNS and retention validation, the retention that can only be
 * extended; an LGPD deletion and an organization deletion refused with 409 naming the rule and LGPD art. 16 I
 * while a document is held (notarial act, serventia retention), nothing deleted, the refusal audited; the
 * operator's `retention:lift` after which the deletion works; a document getting an act while an organization
 * deletion runs is not deleted.
 */

const PDF = path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf');
const TXT = path.join(FIXTURES_DIR, 'files/contrato.txt');

type Body = Record<string, unknown>;

function codeOf(mail: ReceivedMail): string {
  const match = /^\s+(\d{6})\s*$/m.exec(mail.parsed.text ?? '');
  if (!match?.[1]) throw new Error(`no code in mail: ${mail.parsed.text}`);
  return match[1];
}

async function nextMail(sink: SmtpSink, to: string, before: number): Promise<ReceivedMail> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const mails = sink.to(to);
    if (mails.length > before) return mails[mails.length - 1] as ReceivedMail;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no new mail to ${to}`);
}

describe.each(DATABASE_KINDS)('serventia and retention on %s', (kind) => {
  let t: TestService;
  let sink: SmtpSink;
  const sql = () => t.service.deps.db.fork() as SqlEntityManager;
  const rows = <T = Body>(query: string, params: unknown[] = []): Promise<T[]> =>
    sql().execute(query, params);

  /** Records a notarial act on `documentId` as the act table's contract says (act-table.md). */
  const recordAct = (documentId: string, tenantId: string) =>
    sql().execute(
      `insert into notarial_act (id, document_id, tenant_id, type, recorded_by, recorded_at, updated_at)
       values (?, ?, ?, 'ata_notarial', 'u1', now(), now())`,
      [randomUUID(), documentId, tenantId],
    );

  async function upload(token: string, file = TXT): Promise<{ id: string; serialNumber: string }> {
    const res = await uploadFile(t.url, token, file);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; serialNumber: string };
  }

  /** The document's file is still served: the download URL answers 200. */
  async function stillDownloadable(token: string, id: string): Promise<void> {
    const download = await request<{ downloadUrl: string }>(t, 'GET', `/api/documents/${id}/download`, {
      token,
    });
    expect(download.status).toBe(200);
    expect((await fetch(download.body.downloadUrl)).status).toBe(200);
  }

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestService(kind, { SMTP_URL: sink.url });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  it('PUT /api/org/serventia: admin or owner only, of the active organization; CNS and retention validated; GET for any member', async () => {
    const [owner, admin, editor, reader, stranger] = ['owner', 'admin', 'editor', 'reader', 'stranger'].map(
      freshEmail,
    ) as [string, string, string, string, string];
    const org = await makeOrg(t, 'Serventia', [
      [owner, 'owner'],
      [admin, 'admin'],
      [editor, 'editor'],
      [reader, 'reader'],
    ]);
    const other = await makeOrg(t, 'Outra', [[stranger, 'owner']]);
    const put = (token: string | undefined, body: unknown) =>
      request(t, 'PUT', '/api/org/serventia', { token, body });
    const get = (token: string | undefined) => request(t, 'GET', '/api/org/serventia', { token });

    expect((await get(org.tokens[reader])).status).toBe(404);
    for (const who of [editor, reader]) {
      const refused = await put(org.tokens[who], { cns: '123456', retentionYears: 5 });
      expect(refused.status, who).toBe(403);
    }
    // Another organization's owner declares their own organization, never this one.
    expect((await put(other.tokens[stranger], { cns: '654321', retention: 'permanent' })).status).toBe(200);
    expect((await get(org.tokens[reader])).status).toBe(404);
    // A personal workspace cannot be a serventia.
    const personal = await t.token(freshEmail('solo'));
    expect(await put(personal, { cns: '123456', retentionYears: 5 })).toMatchObject({
      status: 400,
      body: { message: 'No active organization' },
    });
    expect((await get(personal)).status).toBe(400);
    expect((await put(undefined, { cns: '123456', retentionYears: 5 })).status).toBe(401);

    for (const body of [
      { cns: '12345', retentionYears: 5 },
      { cns: '1234567', retentionYears: 5 },
      { cns: '12a456', retentionYears: 5 },
      { cns: '１２３４５６', retentionYears: 5 },
      { cns: 123456, retentionYears: 5 },
      { cns: '123456', retentionYears: 0 },
      { cns: '123456', retentionYears: 101 },
      { cns: '123456', retentionYears: 2.5 },
      { cns: '123456', retention: 'forever' },
      { cns: '123456' },
      { cns: '123456', retentionYears: 5, retention: 'permanent' },
    ]) {
      const res = await put(org.tokens[admin], body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ code: 'BAD_REQUEST' });
    }
    expect((await get(org.tokens[reader])).status).toBe(404);

    const declared = await put(org.tokens[admin], { cns: ' 012345 ', retentionYears: 5 });
    expect(declared.status, JSON.stringify(declared.body)).toBe(200);
    expect(declared.body).toMatchObject({
      cns: '012345',
      retention: { years: 5 },
      declaredBy: org.ids[admin],
    });
    expect((await get(org.tokens[reader])).body).toEqual(declared.body);
    // Extending is the members' to do; shortening is the operator's.
    expect(await put(org.tokens[owner], { cns: '012345', retentionYears: 4 })).toMatchObject({
      status: 409,
      body: { code: 'CONFLICT', details: { current: { years: 5 } } },
    });
    expect((await put(org.tokens[owner], { cns: '012345', retentionYears: 10 })).body).toMatchObject({
      retention: { years: 10 },
    });
    expect((await put(org.tokens[owner], { cns: '012345', retention: 'permanent' })).body).toMatchObject({
      retention: 'permanent',
    });
    expect((await put(org.tokens[admin], { cns: '012345', retentionYears: 100 })).status).toBe(409);
    expect((await get(org.tokens[editor])).body).toMatchObject({ cns: '012345', retention: 'permanent' });
    expect((await get(other.tokens[stranger])).body).toMatchObject({ cns: '654321' });
  });

  it('LGPD deletion of a document under the serventia retention: 409 with the rule, nothing deleted, audited; the operator lifts, then it works', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Retencao', [[owner, 'owner']]);
    const token = org.tokens[owner] as string;
    const doc = await upload(token, PDF);
    expect(
      (await request(t, 'PUT', '/api/org/serventia', { token, body: { cns: '111111', retentionYears: 5 } }))
        .status,
    ).toBe(200);

    const refused = await request(t, 'DELETE', `/api/documents/${doc.id}?reason=pedido`, { token });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/retention_period.*LGPD art\. 16 I/),
      details: { rule: 'retention_period', cns: '111111', legalBasis: 'LGPD art. 16 I' },
    });
    const until = new Date((refused.body.details as { until: string }).until).getTime();
    expect(until).toBeGreaterThan(Date.now() + 4.9 * 365 * 24 * 3600 * 1000);
    // Nothing deleted: the row, the file, no deletion record; the refusal is on record.
    await stillDownloadable(token, doc.id);
    expect((await request(t, 'GET', `/api/documents/${doc.id}`, { token })).status).toBe(200);
    expect(await rows('select 1 from document_deletion where document_id = ?', [doc.id])).toEqual([]);
    expect(
      await rows('select action, rule, user_id, role from retention_refusal where document_id = ?', [doc.id]),
    ).toEqual([
      { action: 'lgpd_deletion', rule: 'retention_period', user_id: org.ids[owner], role: 'owner' },
    ]);

    expect(
      await t.operator({
        command: 'retention:lift',
        document: doc.serialNumber.toLowerCase(),
        reason: 'Autorização da CGJ, processo 42',
        operator: 'ops-maria',
      }),
    ).toBe(`lifted document ${doc.id} ${doc.serialNumber}`);
    expect(
      await rows('select operator, reason, tenant_id from retention_hold_lift where document_id = ?', [
        doc.id,
      ]),
    ).toEqual([
      { operator: 'ops-maria', reason: 'Autorização da CGJ, processo 42', tenant_id: org.tenantId },
    ]);
    const deleted = await request(t, 'DELETE', `/api/documents/${doc.id}`, { token });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await request(t, 'GET', `/api/documents/${doc.id}/download`, { token })).status).toBe(410);
  });

  it('only the operator shortens a retention or removes a serventia (serventia:set), audited; then deletion works', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Encurtar', [[owner, 'owner']]);
    const token = org.tokens[owner] as string;
    const doc = await upload(token);
    const put = (body: unknown) => request(t, 'PUT', '/api/org/serventia', { token, body });
    expect((await put({ cns: '333333', retentionYears: 10 })).status).toBe(200);
    expect((await put({ cns: '333333', retentionYears: 1 })).status).toBe(409);
    const set = (extra: Record<string, unknown>) =>
      t.operator({
        command: 'serventia:set',
        org: org.slug,
        reason: 'Tabela revista',
        operator: 'ops',
        ...extra,
      });
    await expect(set({ years: 2, remove: true })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(set({ years: 0 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(set({ years: 1, reason: ' ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(await set({ years: 1 })).toBe(`serventia ${org.tenantId} retention 1 year`);
    expect((await request(t, 'GET', '/api/org/serventia', { token })).body).toMatchObject({
      cns: '333333',
      retention: { years: 1 },
    });
    // A day-old document is still inside one year.
    expect((await request(t, 'DELETE', `/api/documents/${doc.id}`, { token })).status).toBe(409);
    expect(await set({ remove: true })).toBe(`serventia ${org.tenantId} removed`);
    expect((await request(t, 'GET', '/api/org/serventia', { token })).status).toBe(404);
    expect((await request(t, 'DELETE', `/api/documents/${doc.id}`, { token })).status).toBe(200);
    expect(
      await rows(
        `select action, cns, retention_years_before as before, retention_years_after as after, operator, reason
           from serventia_change where tenant_id = ? order by changed_at`,
        [org.tenantId],
      ),
    ).toEqual([
      { action: 'retention', cns: '333333', before: 10, after: 1, operator: 'ops', reason: 'Tabela revista' },
      { action: 'remove', cns: '333333', before: 1, after: null, operator: 'ops', reason: 'Tabela revista' },
    ]);
    await expect(set({ permanent: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('LGPD deletion of a document with a notarial act: 409 notarial_act even without a serventia', async () => {
    const owner = freshEmail('owner');
    const editor = freshEmail('editor');
    const org = await makeOrg(t, 'Ato', [
      [owner, 'owner'],
      [editor, 'editor'],
    ]);
    const doc = await upload(org.tokens[editor] as string);
    const free = await upload(org.tokens[editor] as string);
    await recordAct(doc.id, org.tenantId);
    for (const who of [editor, owner]) {
      const refused = await request(t, 'DELETE', `/api/documents/${doc.id}`, { token: org.tokens[who] });
      expect(refused.status, who).toBe(409);
      expect(refused.body).toMatchObject({ details: { rule: 'notarial_act', legalBasis: 'LGPD art. 16 I' } });
    }
    await stillDownloadable(org.tokens[owner] as string, doc.id);
    expect(await rows('select 1 from retention_refusal where document_id = ?', [doc.id])).toHaveLength(2);
    // A document without an act outside any retention keeps today's behaviour.
    expect(
      (await request(t, 'DELETE', `/api/documents/${free.id}`, { token: org.tokens[editor] })).status,
    ).toBe(200);
  });

  it('organization deletion: request and confirm refused while a document is held, audited; after the lift it deletes', async () => {
    const owner = freshEmail('owner');
    const org: TestOrg = await makeOrg(t, 'Cartorio Fechando', [[owner, 'owner']]);
    const token = org.tokens[owner] as string;
    const doc = await upload(token, PDF);
    // Nothing held yet: the code is mailed.
    const before = sink.to(owner).length;
    expect((await request(t, 'POST', '/api/org/delete/request', { token })).status).toBe(200);
    const code = codeOf(await nextMail(sink, owner, before));
    // Then an act is recorded: the confirmation is refused, nothing is deleted.
    await recordAct(doc.id, org.tenantId);
    const confirm = () => request(t, 'POST', '/api/org/delete/confirm', { token, body: { code } });
    const refused = await confirm();
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/LGPD art\. 16 I/),
      details: { rule: 'notarial_act', heldDocuments: 1, legalBasis: 'LGPD art. 16 I' },
    });
    await stillDownloadable(token, doc.id);
    // A new request is refused too, and no code is mailed.
    const mails = sink.to(owner).length;
    expect((await request(t, 'POST', '/api/org/delete/request', { token })).status).toBe(409);
    expect(sink.to(owner).length).toBe(mails);
    expect(
      await rows(
        'select action, rule, held_count, user_id from retention_refusal where tenant_id = ? order by refused_at',
        [org.tenantId],
      ),
    ).toEqual([
      { action: 'org_deletion', rule: 'notarial_act', held_count: 1, user_id: org.ids[owner] },
      { action: 'org_deletion', rule: 'notarial_act', held_count: 1, user_id: org.ids[owner] },
    ]);
    expect(await rows('select 1 from tenant where id = ?', [org.tenantId])).toHaveLength(1);

    expect(
      await t.operator({
        command: 'retention:lift',
        org: org.slug,
        reason: 'Serventia extinta, acervo transferido',
        operator: 'ops',
      }),
    ).toBe(`lifted tenant ${org.tenantId}`);
    const done = await confirm();
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(await rows('select 1 from tenant where id = ?', [org.tenantId])).toEqual([]);
    expect(await rows('select 1 from document where id = ?', [doc.id])).toEqual([]);
    // The audit outlives the organization.
    expect(await rows('select 1 from retention_refusal where tenant_id = ?', [org.tenantId])).toHaveLength(2);
    expect(await rows('select 1 from retention_hold_lift where tenant_id = ?', [org.tenantId])).toHaveLength(
      1,
    );
  });

  it('an organization under a serventia retention cannot be deleted by the operator script either', async () => {
    const owner = freshEmail('owner');
    const org = await makeOrg(t, 'Permanente', [[owner, 'owner']]);
    const token = org.tokens[owner] as string;
    const doc = await upload(token);
    await request(t, 'PUT', '/api/org/serventia', { token, body: { cns: '222222', retention: 'permanent' } });
    const ports = {
      storage: t.service.deps.storage,
      mailer: t.service.deps.mailer,
      directory: t.service.identity.directory,
    };
    await expect(deleteOrganizationNow(sql(), ports, org.tenantId)).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { rule: 'retention_period', retention: 'permanent', heldDocuments: 1, cns: '222222' },
    });
    await stillDownloadable(token, doc.id);
    // The run cancelled itself: the resume job will not pick it up.
    expect(await rows('select started_at from org_deletion where tenant_id = ?', [org.tenantId])).toEqual([
      { started_at: null },
    ]);
    expect(
      await rows('select action, held_count from retention_refusal where tenant_id = ?', [org.tenantId]),
    ).toEqual([{ action: 'org_deletion_run', held_count: 1 }]);
  });

  it.runIf(kind === 'postgresql')(
    'a document that gets a notarial act while the organization deletion runs is not deleted',
    async () => {
      const owner = freshEmail('owner');
      const org = await makeOrg(t, 'Em andamento', [[owner, 'owner']]);
      const token = org.tokens[owner] as string;
      const docs = [await upload(token), await upload(token, PDF), await upload(token)].sort((a, b) =>
        a.id.localeCompare(b.id),
      );
      const first = docs[0] as { id: string };
      const second = docs[1] as { id: string };
      // While the first batch (one document) deletes its object, an act is recorded on the second document
      // on another connection, and committed before the second batch starts.
      let acted = false;
      const real = t.service.deps.storage;
      const storage: ObjectStorage = Object.create(real, {
        delete: {
          value: async (key: string) => {
            if (!acted) {
              acted = true;
              await recordAct(second.id, org.tenantId);
            }
            return real.delete(key);
          },
        },
      });
      const ports = {
        storage,
        mailer: t.service.deps.mailer,
        directory: t.service.identity.directory,
        batchSize: 1,
      };
      await expect(deleteOrganizationNow(sql(), ports, org.tenantId)).rejects.toMatchObject({
        code: 'CONFLICT',
        details: { heldDocuments: 1 },
      });
      expect(acted).toBe(true);
      // The first batch went; the held document and everything after it stay, the organization too.
      expect(await rows('select 1 from document where id = ?', [first.id])).toEqual([]);
      await stillDownloadable(token, second.id);
      expect(await rows('select 1 from document where tenant_id = ?', [org.tenantId])).toHaveLength(2);
      expect(await rows('select started_at from org_deletion where tenant_id = ?', [org.tenantId])).toEqual([
        { started_at: null },
      ]);
      expect(
        await rows('select action, rule from retention_refusal where tenant_id = ?', [org.tenantId]),
      ).toEqual([{ action: 'org_deletion_run', rule: 'notarial_act' }]);
    },
  );
});
