import { createHash } from 'node:crypto';
import path from 'node:path';
import { validarAccessCode } from '@notary/server/domain/certificates/validar';
import { certificateRenders, publicCertificates } from '@notary/server/http/certificates';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';

/**
 * The anonymous public certificate route (what VALIDAR downloads) tried as an abuser would: the access code is
 * printed on every certificate, and each signing costs TSA tokens and a render. Many calls for one serial make
 * one signing (one TSA token at B-T); a call after the document's state changed signs once more; the owners'
 * render queue is never touched.
 */

const SECRET = 'validar-shares-secret-0123456789abcdef012345';

describe('public certificate route: one signing per document state, whoever calls', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let t: TestService;
  let doc: DocumentDto;
  let url: string;

  const fetchPdf = async (query = ''): Promise<{ status: number; sha256: string }> => {
    const res = await fetch(`${url}${query}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, sha256: createHash('sha256').update(bytes).digest('hex') };
  };

  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    t = await startTestService('pglite', { SECRET, ...signingEnv(pki, tsa), SIGNING_LEVEL: 'B-T' });
    const token = await t.token('shares@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    doc = up.body as unknown as DocumentDto;
    const code = validarAccessCode(SECRET, doc.serialNumber);
    url = `${t.url}/api/public/documents/${doc.serialNumber}/certificate?_secretCode=${code}`;
  });
  afterAll(async () => {
    await t?.close();
    await tsa?.stop();
    await pki?.dispose();
  });

  it('50 calls at once and 10 after them: one signing, one TSA token, the same file; the owners’ queue untouched', async () => {
    const tokensBefore = tsa.requests;
    const signingsBefore = publicCertificates.signings;
    let ownersQueueMoved = 0;
    const off = certificateRenders.onChange(() => {
      ownersQueueMoved += 1;
    });
    try {
      const burst = await Promise.all(Array.from({ length: 50 }, () => fetchPdf()));
      const after = [];
      for (let i = 0; i < 10; i++) after.push(await fetchPdf());
      const all = [...burst, ...after];
      expect(all.map((r) => r.status)).toEqual(all.map(() => 200));
      expect(new Set(all.map((r) => r.sha256)).size).toBe(1);
    } finally {
      off();
    }
    expect(publicCertificates.signings - signingsBefore).toBe(1);
    expect(tsa.requests - tokensBefore).toBe(1);
    expect(ownersQueueMoved).toBe(0);
  });

  it('signs again once what the certificate states has changed, and per language', async () => {
    const before = await fetchPdf();
    const tokensBefore = tsa.requests;
    // What an owner's rename would change: the file name the certificate and its receipt state.
    await t.service.deps.db
      .fork()
      .getConnection()
      .execute('update document set file_name = ? where id = ?', ['contrato-renomeado.txt', doc.id]);
    const changed = await Promise.all(Array.from({ length: 10 }, () => fetchPdf()));
    expect(new Set(changed.map((r) => r.sha256)).size).toBe(1);
    expect(changed[0]?.sha256).not.toBe(before.sha256);
    expect(tsa.requests - tokensBefore).toBe(1);
    const english = await Promise.all(Array.from({ length: 5 }, () => fetchPdf('&lang=en')));
    expect(new Set(english.map((r) => r.sha256)).size).toBe(1);
    expect(english[0]?.sha256).not.toBe(changed[0]?.sha256);
    expect(tsa.requests - tokensBefore).toBe(2);
  });

  it('a wrong code still gets 401 and no signing, however many times', async () => {
    const signingsBefore = publicCertificates.signings;
    const wrong = url.replace(/_secretCode=.*/, '_secretCode=0000000000');
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(wrong).then((r) => r.status)));
    expect(answers).toEqual(answers.map(() => 401));
    expect(publicCertificates.signings).toBe(signingsBefore);
  });
});
