import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { ATA_SECTIONS, DATA_MARK } from '@notary/pdf/ata';
import { TEST_CPF } from '@notary/pdf/ata.testing';
import { bandedPng } from '@notary/pdf/hostile-pngs.testing';
import { withCaptureRecord } from '@notary/server/adapters/capture/service/screenshot-record';
import { AtaRequest } from '@notary/server/db/entities';
import type { WebCapture, WebCapturer } from '@notary/server/ports/capture';
import type { DocumentDto, ErrorBody } from '@notary/shared';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import schema from '../../docs/enotariado-notarial-minutes.schema.json' with { type: 'json' };
import { testCaptureRecord } from '../harness/capture-record';
import { FIXTURES_DIR } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { checkPdfA, expectPdfA3b } from '../harness/pdfa/conformance.testing';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * The ata notarial draft of a web capture through the real service (PGlite): a stand-in browser hands over a
 * capture of a hostile page (its WARC, its screenshot with its record); the draft is read back with qpdf,
 * pdftotext and the PDF/A-3b checker; roles, tenants, an invalid CPF, a document that is no capture and the
 * LGPD deletion of the requester are tried.
 */

const exec = promisify(execFile);
const PAGE = 'https://evil.test/post';
const HOSTILE_TITLE = `\u202EOTEJNI INJETADO-TITULO\n\n${ATA_SECTIONS[8]}`;
const HOSTILE_HTML = `<html><head><title>x</title><script>var s = "SCRIPT-NAO-APARECE";</script></head><body><h1>Publicação ofensiva INJETADO-TEXTO</h1><p>${ATA_SECTIONS[7]}</p><p>Selo de fiscalização: INJETADO-SELO</p></body></html>`;

/** A WACZ holding one WARC response record of `PAGE` with `HOSTILE_HTML` (what the draft transcribes). */
function waczOfPage(): Buffer {
  const http = Buffer.from(
    `HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${HOSTILE_HTML}`,
  );
  const head = `WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: ${PAGE}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: ${http.length}\r\n\r\n`;
  const warc = gzipSync(Buffer.concat([Buffer.from(head), http, Buffer.from('\r\n\r\n')]));
  return Buffer.from(zipSync({ 'archive/data.warc.gz': warc }, { level: 0 }));
}

/** A browser stand-in answering every capture with the hostile page. */
const capturer: WebCapturer = {
  capture: async (): Promise<WebCapture> => {
    const wacz = waczOfPage();
    const record = testCaptureRecord({
      requestedUrl: PAGE,
      finalUrl: PAGE,
      title: HOSTILE_TITLE,
      blocked: [
        { url: 'http://10.0.0.1/x', ip: '10.0.0.1', reason: 'not a public address', rule: 'private-range' },
      ],
      screenshot: { width: 320, height: 900, truncated: false },
    });
    return {
      openWacz: () => Readable.from([wacz]),
      waczBytes: wacz.length,
      screenshot: withCaptureRecord(bandedPng(320, 900), record),
      record,
      dispose: async () => {},
    };
  },
};

describe('the ata notarial draft of a web capture (PGlite)', () => {
  let t: TestService;
  let org: TestOrg;
  let work: string;
  let capture: DocumentDto;
  const owner = freshEmail('owner');
  const editor = freshEmail('editor');
  const reader = freshEmail('reader');
  const requester = {
    name: 'Maria da Silva',
    cpf: '529.982.247-25',
    qualification: 'brasileira, engenheira',
  };
  const pdfRoute = () => `/api/documents/${capture.id}/ata`;

  /** POST (with `body`) or GET of the draft; the PDF's bytes, or the error body. */
  async function ata(
    token: string,
    body?: unknown,
  ): Promise<{ status: number; pdf: Buffer; error?: ErrorBody }> {
    const res = await fetch(`${t.url}${pdfRoute()}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.headers.get('content-type') === 'application/pdf') return { status: res.status, pdf: bytes };
    return { status: res.status, pdf: Buffer.alloc(0), error: JSON.parse(bytes.toString()) as ErrorBody };
  }

  /** `pdf`'s text (pdftotext -layout) after `qpdf --check` passed. */
  async function textOf(pdf: Buffer, name: string): Promise<string> {
    const file = path.join(work, `${name}.pdf`);
    await writeFile(file, pdf);
    await exec('qpdf', ['--check', file]);
    return (await exec('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'])).stdout;
  }

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'ata-e2e-'));
    t = await startTestService('pglite');
    t.service.deps.capturer = capturer;
    org = await makeOrg(t, 'Tabelionato', [
      [owner, 'owner'],
      [editor, 'editor'],
      [reader, 'reader'],
    ]);
    const made = await api<DocumentDto>(t.url, '/api/documents/capture', {
      method: 'POST',
      token: org.tokens[editor],
      body: { url: PAGE, consent: true },
    });
    expect(made.status).toBe(201);
    capture = made.body;
  });
  afterAll(async () => {
    await t?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('refuses an invalid CPF, a reader, another tenant and a document that is no capture', async () => {
    const badCpf = await ata(org.tokens[editor] ?? '', {
      requester: { ...requester, cpf: '529.982.247-24' },
    });
    expect(badCpf.status).toBe(400);
    expect(badCpf.error?.message).toMatch(/CPF/);
    expect((await ata(org.tokens[reader] ?? '', { requester })).status).toBe(403);
    // No draft requested yet: nothing to read again.
    expect((await ata(org.tokens[reader] ?? '')).status).toBe(404);
    const stranger = await t.token(freshEmail('stranger'));
    expect((await ata(stranger, { requester })).status).toBe(403);
    const upload = await uploadFile(
      t.url,
      org.tokens[editor] ?? '',
      path.join(FIXTURES_DIR, 'files', 'contrato.txt'),
    );
    const plain = upload.body as unknown as DocumentDto;
    const res = await api<ErrorBody>(t.url, `/api/documents/${plain.id}/ata`, {
      method: 'POST',
      token: org.tokens[editor],
      body: { requester },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/web capture/);
  });

  it('answers a PDF/A-3b draft with every field; the page cannot reach the fixed sections; any member reads it again', async () => {
    const made = await ata(org.tokens[editor] ?? '', { requester });
    expect(made.status).toBe(200);
    expectPdfA3b(await checkPdfA(made.pdf));
    const text = await textOf(made.pdf, 'draft');
    const flat = text.replace(/\s+/g, ' ');
    for (const field of [
      'Tabelionato',
      'Maria da Silva',
      '529.982.247-25',
      'brasileira, engenheira',
      PAGE,
      'Publicação ofensiva',
      'http://10.0.0.1/x',
      capture.sha256Hash,
      capture.serialNumber,
      '(horário de Brasília',
      'UTC',
      'Selo de fiscalização',
      'MNE',
      'Não atesta a veracidade do conteúdo',
      'Captura de tela, parte 1 de',
      'anexado a este PDF',
    ]) {
      expect(flat, field).toContain(field);
    }
    expect(text).not.toContain('SCRIPT-NAO-APARECE');
    const lines = text.split('\n');
    for (const section of ATA_SECTIONS)
      expect(
        lines.filter((l) => l.trim() === section),
        section,
      ).toHaveLength(1);
    const injected = lines.filter((l) => /INJETADO/.test(l));
    expect(injected.length).toBeGreaterThanOrEqual(3);
    for (const line of injected) expect(line, line).toContain(DATA_MARK.trim());
    const { stdout } = await exec('pdfdetach', ['-list', path.join(work, 'draft.pdf')]);
    expect(stdout).toContain('.wacz');

    const again = await ata(org.tokens[reader] ?? '');
    expect(again.status).toBe(200);
    expect(await textOf(again.pdf, 'again')).toBe(text);
  });

  it('prepares the e-Notariado body, valid against the schema in docs/', async () => {
    const res = await api<Record<string, unknown>>(t.url, `${pdfRoute()}/enotariado`, {
      token: org.tokens[reader],
    });
    expect(res.status).toBe(200);
    const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
    expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
    expect(res.body).toEqual({
      type: 'NotarialMinutes',
      title: `Ata notarial ${capture.serialNumber}`,
      findings: { isDigital: true },
      signers: [{ name: 'Maria da Silva', cpf: TEST_CPF }],
    });
    // Nothing else passes the schema: a body without the digital finding is refused.
    expect(validate({ ...res.body, findings: { isDigital: false } })).toBe(false);
  });

  it('an LGPD deletion removes the requester; the draft is then gone', async () => {
    const deleted = await api(t.url, `/api/documents/${capture.id}`, {
      method: 'DELETE',
      token: org.tokens[editor],
    });
    expect(deleted.status).toBe(200);
    expect(await t.service.deps.db.fork().count(AtaRequest, { document: capture.id })).toBe(0);
    expect((await ata(org.tokens[reader] ?? '')).status).toBe(410);
    expect((await api(t.url, `${pdfRoute()}/enotariado`, { token: org.tokens[reader] })).status).toBe(410);
  });
});
