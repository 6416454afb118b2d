import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { validarAccessCode } from '@notary/server/domain/certificates/validar';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';

/**
 * ITI's VALIDAR reading a certificate's QR code: the QR code's URL (the public record of the serial) answers
 * `_format=application/validador-iti+json&_secretCode=<code>` with the URL of the signed certificate; the code
 * is the one printed on the certificate (read back with poppler's pdftotext), the PDF served is PAdES-signed
 * (poppler's pdfsig finds the signature valid and trusted); a wrong or missing code gets nothing.
 */

const exec = promisify(execFile);
const SECRET = 'validar-e2e-secret-0123456789abcdef0123456789';
const FORMAT = 'application/validador-iti+json';

let pki: TestPki;
let t: TestService;
let work: string;
let token: string;
let doc: DocumentDto;

async function save(name: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, bytes);
  return file;
}

async function get(route: string): Promise<{ status: number; headers: Headers; bytes: Uint8Array }> {
  const res = await fetch(route.startsWith('http') ? route : `${t.url}${route}`);
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const validarQuery = (code: string) =>
  `_format=${encodeURIComponent(FORMAT)}&_secretCode=${encodeURIComponent(code)}`;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-validar-'));
  pki = await createTestPki();
  t = await startTestService('pglite', {
    SECRET,
    SIGNING_CERT: pki.rsa.p12Path,
    SIGNING_CERT_PASSWORD: pki.p12Password,
  });
  token = await t.token('validar@example.com');
  const upload = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'pdfs/hello_world_rotated.pdf'));
  expect(upload.status).toBe(201);
  doc = upload.body as unknown as DocumentDto;
});

afterAll(async () => {
  await t?.close();
  await pki?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("VALIDAR on the certificate's QR code URL", () => {
  let code: string;

  it('prints the access code beside a QR code of the public record on the owner certificate', async () => {
    const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?lang=pt`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const file = await save('owner.pdf', new Uint8Array(await res.arrayBuffer()));
    const { stdout } = await exec('pdftotext', ['-layout', file, '-']);
    const printed = /Código de acesso \(VALIDAR\)\s+([0-9A-Z]{10})/.exec(stdout)?.[1];
    expect(printed).toBeDefined();
    code = printed ?? '';
    // The code is the service's HMAC of the serial, nothing stored.
    expect(code).toBe(validarAccessCode(SECRET, doc.serialNumber));
    expect(stdout).toContain('validar.iti.gov.br');
    expect(stdout).toContain(`/api/public/documents/${doc.serialNumber}`);
  });

  it('answers the public projection as before without the VALIDAR parameters', async () => {
    const res = await api<Record<string, unknown>>(t.url, `/api/public/documents/${doc.serialNumber}`);
    expect(res.status).toBe(200);
    expect(res.body.serialNumber).toBe(doc.serialNumber);
    expect(res.body.sha256Hash).toBe(doc.sha256Hash);
    expect(res.body).not.toHaveProperty('version');
    // The code alone, without VALIDAR's _format, changes nothing either.
    const withCode = await api(t.url, `/api/public/documents/${doc.serialNumber}?_secretCode=${code}`);
    expect(withCode.body).toEqual(res.body);
  });

  it("answers VALIDAR's JSON naming a URL that serves the PAdES-signed certificate", async () => {
    const res = await api<{ version: string; prescription: { signatureFiles: { url: string }[] } }>(
      t.url,
      `/api/public/documents/${doc.serialNumber}?${validarQuery(code)}`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['prescription', 'version']);
    expect(res.body.version).toBe('1.0.0');
    expect(res.body.prescription.signatureFiles).toHaveLength(1);
    const url = res.body.prescription.signatureFiles[0]?.url ?? '';
    expect(url).toBe(
      `${t.service.deps.publicUrl}/api/public/documents/${doc.serialNumber}/certificate?_secretCode=${code}`,
    );

    const pdf = await get(url.replace(t.service.deps.publicUrl, t.url));
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/^inline;/);
    expect(pdf.headers.get('x-service-signed')).toBe('pades');
    const file = await save('validar.pdf', pdf.bytes);
    const { stdout } = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]);
    expect(stdout).toContain('Signature Validation: Signature is Valid.');
    expect(stdout).toContain('Certificate Validation: Certificate is Trusted.');
    expect(stdout).toContain('Total document signed');
    // It is this document's certificate, with its code on it.
    const text = (await exec('pdftotext', ['-layout', file, '-'])).stdout;
    expect(text).toContain(doc.sha256Hash);
    expect(text).toContain(code);
  });

  it("lets VALIDAR's web origin read both answers (CORS), and no other foreign origin", async () => {
    const validar = { origin: 'https://validar.iti.gov.br' };
    const json = await fetch(`${t.url}/api/public/documents/${doc.serialNumber}?${validarQuery(code)}`, {
      headers: validar,
    });
    expect(json.status).toBe(200);
    expect(json.headers.get('access-control-allow-origin')).toBe(validar.origin);
    const pdf = await fetch(
      `${t.url}/api/public/documents/${doc.serialNumber}/certificate?_secretCode=${code}`,
      {
        headers: validar,
      },
    );
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('access-control-allow-origin')).toBe(validar.origin);
    await pdf.arrayBuffer();
    const other = await fetch(`${t.url}/api/public/documents/${doc.serialNumber}?${validarQuery(code)}`, {
      headers: { origin: 'https://elsewhere.example' },
    });
    expect(other.status).toBe(403);
    // The public record without VALIDAR's parameters keeps the service's own policy.
    const record = await fetch(`${t.url}/api/public/documents/${doc.serialNumber}`, { headers: validar });
    expect(record.status).toBe(403);
  });

  it('reads a code as typed (lower case, hyphen, O for 0) and `+` decoded as a space', async () => {
    const typed = `${code.slice(0, 5)}-${code.slice(5)}`.toLowerCase().replace(/0/g, 'o');
    const res = await api(
      t.url,
      `/api/public/documents/${doc.serialNumber}?_format=application/validador-iti+json&_secretCode=${typed}`,
    );
    expect(res.status).toBe(200);
  });

  it('refuses a wrong or missing code with 401 on both routes, and hands out no PDF', async () => {
    const wrong = code.startsWith('A') ? `B${code.slice(1)}` : `A${code.slice(1)}`;
    for (const route of [
      `/api/public/documents/${doc.serialNumber}?${validarQuery(wrong)}`,
      `/api/public/documents/${doc.serialNumber}?_format=${encodeURIComponent(FORMAT)}`,
      `/api/public/documents/${doc.serialNumber}/certificate?_secretCode=${wrong}`,
      `/api/public/documents/${doc.serialNumber}/certificate`,
      `/api/public/documents/${doc.serialNumber}/certificate?_secretCode=${code}${code}`,
    ]) {
      const res = await get(route);
      expect(res.status, route).toBe(401);
      expect(res.headers.get('content-type'), route).toMatch(/^application\/json/);
      expect(JSON.parse(new TextDecoder().decode(res.bytes))).toMatchObject({ code: 'UNAUTHENTICATED' });
    }
  });

  it("refuses another serial's code, an unknown serial (404) and a malformed one (400)", async () => {
    const other = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files/contrato.txt'));
    const otherSerial = String(other.body.serialNumber);
    expect((await get(`/api/public/documents/${otherSerial}?${validarQuery(code)}`)).status).toBe(401);
    expect((await get(`/api/public/documents/${otherSerial}/certificate?_secretCode=${code}`)).status).toBe(
      401,
    );
    const unknown = `${doc.serialNumber.split('-')[0]}-0000000000`;
    expect((await get(`/api/public/documents/${unknown}?${validarQuery(code)}`)).status).toBe(404);
    expect((await get(`/api/public/documents/${unknown}/certificate?_secretCode=${code}`)).status).toBe(404);
    expect((await get(`/api/public/documents/not-a-serial?${validarQuery(code)}`)).status).toBe(400);
    expect((await get(`/api/public/documents/not-a-serial/certificate?_secretCode=${code}`)).status).toBe(
      400,
    );
  });
});
