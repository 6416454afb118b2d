/**
 * The desktop main's token signing, run in Node against the real service with a real PKCS#11 token (SoftHSM2,
 * `test/harness/softhsm.ts`) holding an ICP-Brasil-like chain the suite made (the revocation PKI: root,
 * intermediate, signer; its OCSP responder on loopback). The certificate signed through the token is checked
 * by OpenSSL (the tabelião's CMS over its byte range, to the PKI's root, with the policy attribute) and pdfsig
 * (the service's signature still valid); a wrong PIN, a certificate without a key on the token and an expired
 * certificate are refused with their sentences, and leave no completed signature.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pemCertificates } from '@notary/trust/bytes';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NotarySignedRecord, TokenCertificateInfo } from '../../desktop/src/common/bridge';
import type { IpcResult } from '../../desktop/src/common/ipc';
import { MainController } from '../../desktop/src/main/controller';
import { BrowserWindow, ipcMain } from '../../desktop/src/main/electron-stand-in.testing';
import { registerIpcHandlers } from '../../desktop/src/main/ipc';
import { isAppUrl } from '../../desktop/src/main/navigation';
import {
  listSigningCertificates,
  signCertificateWithToken,
  type TokenCertificate,
  TokenError,
  tokenErrorSentence,
} from '../../desktop/src/main/token-signing';
import { NotarySignatureSession } from '../../server/src/db/entities';
import { mailbox, mailedCode } from '../harness/dev-mailbox';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { opensslVerifySignature } from '../harness/pdf-cms';
import { createTestPki, type TestPki } from '../harness/pki';
import { notarySigningEnv, type RevocationPki, startRevocationPki } from '../harness/revocation-pki';
import { startTestService, type TestService } from '../harness/service';
import { createTestToken, SOFTHSM_MODULE, type TestToken } from '../harness/softhsm';

vi.mock('electron', () => import('../../desktop/src/main/electron-stand-in.testing'));

const run = promisify(execFile);
const APP = 'app://notary/index.html';
let pki: TestPki;
let rpki: RevocationPki;
let token: TestToken;
let t: TestService;
let tmp: string;
let alice: string;
let docId: string;

beforeAll(async () => {
  [pki, rpki, token] = await Promise.all([createTestPki(), startRevocationPki(), createTestToken()]);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'token-signing-'));
  const [signer, intermediate, root] = pemCertificates(rpki.signer.chainPem) as [
    Uint8Array,
    Uint8Array,
    Uint8Array,
  ];
  await token.addKey(rpki.signer.keyPem, '01', 'Tabelião de Teste');
  await token.addCertificate(signer, '01', 'Tabelião de Teste');
  await token.addCertificate(intermediate, '02', 'AC Intermediária');
  await token.addCertificate(root, '03', 'AC Raiz');
  // A certificate whose key is not on the token.
  await token.addCertificate(rpki.shortLived.certDer, '04', 'Sem chave');
  t = await startTestService('pglite', {
    ...notarySigningEnv(pki, rpki),
    MAIL_DEV: '1',
  });
  alice = await t.token('tabeliao@example.com');
  const upload = await uploadFile(t.url, alice, path.join(FIXTURES_DIR, 'files/contrato.txt'));
  docId = String(upload.body.id);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await rpki?.stop();
  await pki?.dispose();
  await token?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const pinOf = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

/** The token's certificate whose label is `label`. */
function certificate(label: string): TokenCertificate {
  const found = listSigningCertificates(SOFTHSM_MODULE).find((c) => c.label === label);
  if (!found) throw new Error(`no certificate ${label} on the token`);
  return found;
}

/** Whether any session of the document was completed (a signed certificate written). */
async function anyCompleted(): Promise<boolean> {
  const rows = await t.service.deps.db.fork().find(NotarySignatureSession, { document: docId });
  return rows.some((r) => r.completedAt !== null);
}

/** The error `work` rejects with, as a `TokenError`. */
async function tokenError(work: Promise<unknown>): Promise<TokenError> {
  const e = await work.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(e instanceof TokenError)) throw new Error(`expected a TokenError, got ${String(e)}`);
  return e;
}

const job = (cert: TokenCertificate, pin: Uint8Array) => ({
  serverUrl: t.url,
  bearer: alice,
  documentId: docId,
  policy: 'icp-brasil-ad-rt' as const,
  modulePath: SOFTHSM_MODULE,
  certificate: cert,
  pin,
});

describe('the tabelião signs on a PKCS#11 token (SoftHSM2)', () => {
  it('lists the end-entity certificates with their chains, no CA', () => {
    const listed = listSigningCertificates(SOFTHSM_MODULE);
    expect(listed.map((c) => c.label).sort()).toEqual(['Sem chave', 'Tabelião de Teste']);
    expect(certificate('Tabelião de Teste').chain).toHaveLength(3);
  });

  it('refuses a wrong PIN, a certificate without a key, an expired certificate; nothing is signed', async () => {
    const wrong = await tokenError(
      signCertificateWithToken(job(certificate('Tabelião de Teste'), pinOf('9999'))),
    );
    expect(wrong.failure).toBe('wrong-pin');
    expect(tokenErrorSentence(wrong, 'pt')).toMatch(/^PIN incorreto\./);
    const keyless = await tokenError(
      signCertificateWithToken(job(certificate('Sem chave'), pinOf(token.pin))),
    );
    expect(keyless.failure).toBe('no-signing-key');
    let calls = 0;
    const counting: typeof fetch = (...args) => {
      calls += 1;
      return fetch(...args);
    };
    const expired = await tokenError(
      signCertificateWithToken({
        ...job(certificate('Tabelião de Teste'), pinOf(token.pin)),
        fetch: counting,
        now: new Date(Date.now() + 20 * 365 * 86_400_000),
      }),
    );
    expect(expired.failure).toBe('certificate-expired');
    expect(tokenErrorSentence(expired, 'en')).toBe('The certificate has expired: it can no longer sign.');
    expect(calls).toBe(0);
    expect(await anyCompleted()).toBe(false);
  }, 60_000);

  it('signs the certificate through the token: OpenSSL verifies the CMS, the PIN bytes are zeroed', async () => {
    const pin = pinOf(token.pin);
    const record = await signCertificateWithToken(job(certificate('Tabelião de Teste'), pin));
    expect(pin.every((b) => b === 0)).toBe(true);
    expect(record.signers.map((s) => s.role)).toEqual(['service', 'notary']);
    const row = await t.service.deps.db
      .fork()
      .findOneOrFail(NotarySignatureSession, { id: record.sessionId });
    const pdf = Buffer.from(row.signedPdf as Buffer);

    // The service's signature first, then the tabelião's.
    const printed = await opensslVerifySignature(pdf, 1, rpki.caChainPath, tmp);
    expect(printed).toContain('2.16.76.1.7.1.12.1');

    await writeFile(path.join(tmp, 'both.pdf'), pdf);
    const sig = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, path.join(tmp, 'both.pdf')]).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    expect(sig.stdout.split('Signature #2')[0]).toContain('Signature Validation: Signature is Valid.');
    expect(sig.stdout).toContain('Signature Field Name: NotarySignature');
  }, 60_000);
});

describe("the desktop app's screens through IPC: main lists the token, takes the PIN as bytes, signs", () => {
  let userData: string;
  let unregister: (() => void) | undefined;
  let controller: MainController;
  let otherDoc: string;

  /** `ipcRenderer.invoke` from the app's page: the envelope as the renderer gets it. */
  const invoke = <T>(channel: string, payload?: unknown) =>
    (payload === undefined ? ipcMain.invoke(channel, APP) : ipcMain.invoke(channel, APP, payload)) as Promise<
      IpcResult<T>
    >;

  beforeAll(async () => {
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-desktop-token-'));
    const win = new BrowserWindow({});
    controller = new MainController({
      userDataDir: userData,
      tempDir: userData,
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
    const upload = await uploadFile(t.url, alice, path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf'));
    otherDoc = String(upload.body.id);
    await invoke('settings:set-server-url', { url: t.url });
    const known = await mailbox(t.dataDir);
    await invoke('auth:request-code', { email: 'tabeliao@example.com' });
    const code = await mailedCode(t.dataDir, 'tabeliao@example.com', known);
    expect(await invoke('auth:sign-in', { email: 'tabeliao@example.com', code })).toMatchObject({ ok: true });
  }, 60_000);

  afterAll(async () => {
    unregister?.();
    controller?.close();
    if (userData) await rm(userData, { recursive: true, force: true });
  });

  it('refuses a wrong PIN with its sentence, then signs with the right one; both PINs are zeroed', async () => {
    await invoke('settings:set-token-module', { path: SOFTHSM_MODULE });
    const listed = await invoke<TokenCertificateInfo[]>('token:certificates', { language: 'pt' });
    if (!listed.ok) throw new Error(listed.error.message);
    const chosen = listed.value.find((c) => c.label === 'Tabelião de Teste');
    expect(chosen?.chainLength).toBe(3);
    const request = (pin: Uint8Array) => ({
      documentId: otherDoc,
      slot: chosen?.slot,
      id: chosen?.id,
      policy: 'icp-brasil-ad-rb',
      pin,
      language: 'pt',
    });
    const wrongPin = pinOf('9999');
    const wrong = await invoke('token:sign', request(wrongPin));
    expect(wrong).toMatchObject({ ok: false, error: { kind: 'signing' } });
    expect(!wrong.ok && wrong.error.message).toMatch(/^PIN incorreto\./);
    expect(wrongPin.every((b) => b === 0)).toBe(true);

    const pin = pinOf(token.pin);
    const signed = await invoke<NotarySignedRecord>('token:sign', request(pin));
    if (!signed.ok) throw new Error(signed.error.message);
    expect(pin.every((b) => b === 0)).toBe(true);
    expect(signed.value.documentId).toBe(otherDoc);
    expect(signed.value.signers).toEqual([
      expect.objectContaining({ role: 'service' }),
      expect.objectContaining({ role: 'notary', name: expect.stringContaining('Notary LTV Signer') }),
    ]);
  }, 60_000);
});
