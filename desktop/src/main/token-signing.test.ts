/**
 * The token's failures as a person meets them. A software token never locks a PIN nor says how many tries are
 * left, so those answers come from a stand-in PKCS#11 session returning what a real token's module returns
 * (CKR_PIN_LOCKED, CKR_PIN_INCORRECT with the CKF_USER_PIN_* flags, CKR_DEVICE_REMOVED); a token removed
 * between listing and signing is a real one (SoftHSM2, deleted with `softhsm2-util --delete-token`), and so is
 * the controller's path from the IPC channels to the token.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pkcs11js from 'pkcs11js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestPki, type TestPki } from '../../../test/harness/pki';
import { createTestToken, SOFTHSM_MODULE, type TestToken } from '../../../test/harness/softhsm';
import type { TokenCertificateInfo } from '../common/bridge';
import type { IpcResult } from '../common/ipc';
import { MainController } from './controller';
import { BrowserWindow, ipcMain } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';
import {
  listSigningCertificates,
  type Pkcs11Factory,
  signOnToken,
  type TokenCertificate,
  TokenError,
  tokenErrorSentence,
} from './token-signing';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const run = promisify(execFile);
const APP = 'app://notary/index.html';
const CKR_PIN_INCORRECT = 0xa0;
const CKR_PIN_LOCKED = 0xa4;
const CKR_DEVICE_REMOVED = 0x32;
const CKF_TOKEN_INITIALIZED = 0x400;
const CKF_USER_PIN_COUNT_LOW = 0x10000;
const CKF_USER_PIN_FINAL_TRY = 0x20000;
const CKF_USER_PIN_LOCKED = 0x40000;

const SLOT = Buffer.from('0100000000000000', 'hex');
const CERTIFICATE = { slot: SLOT.toString('hex'), id: '01', notAfter: '2999-01-01T00:00:00.000Z' };

/**
 * A PKCS#11 module as a token's driver answers: one initialized token in `SLOT`, whose C_Login fails with
 * `login` (if given) and then reports `flagsAfterLogin`, and whose C_Sign fails with `sign` (if given).
 */
function standIn(answers: { login?: number; flagsAfterLogin?: number; sign?: number }): {
  make: Pkcs11Factory;
  logins: string[];
} {
  const logins: string[] = [];
  let flags = CKF_TOKEN_INITIALIZED;
  const fail = (code: number, method: string) => new pkcs11js.Pkcs11Error(`${method} failed`, code, method);
  const session = Buffer.from([7]);
  const stand = {
    load: () => undefined,
    C_Initialize: () => undefined,
    C_Finalize: () => undefined,
    C_GetSlotList: () => [SLOT],
    C_GetTokenInfo: () => ({ flags }),
    C_OpenSession: () => session,
    C_CloseSession: () => undefined,
    C_Login: (_session: Buffer, _type: number, pin: string) => {
      logins.push(pin);
      if (answers.login === undefined) return;
      flags = CKF_TOKEN_INITIALIZED | (answers.flagsAfterLogin ?? 0);
      throw fail(answers.login, 'C_Login');
    },
    C_Logout: () => undefined,
    C_FindObjectsInit: () => undefined,
    C_FindObjects: (() => {
      let given = false;
      return () => {
        given = !given;
        return given ? Buffer.from([9]) : null;
      };
    })(),
    C_FindObjectsFinal: () => undefined,
    C_GetAttributeValue: () => [{ type: pkcs11js.CKA_KEY_TYPE, value: Buffer.from([0, 0, 0, 0]) }],
    C_SignInit: () => undefined,
    C_Sign: () => {
      throw fail(answers.sign ?? CKR_DEVICE_REMOVED, 'C_Sign');
    },
  };
  return { make: () => stand as unknown as pkcs11js.PKCS11, logins };
}

/** The `TokenError` `work` throws. */
function tokenError(work: () => unknown): TokenError {
  try {
    work();
  } catch (e) {
    if (e instanceof TokenError) return e;
    throw e;
  }
  throw new Error('expected a TokenError');
}

const sign = (make: Pkcs11Factory, pin = new Uint8Array(Buffer.from('1234'))) =>
  signOnToken({
    modulePath: '/stand-in.so',
    certificate: CERTIFICATE,
    pin,
    data: new Uint8Array(8),
    pkcs11: make,
  });

describe('a token that answers what SoftHSM2 never does (stand-in PKCS#11 session)', () => {
  it('maps CKR_PIN_LOCKED to "PIN locked" and zeroes the PIN', () => {
    const { make, logins } = standIn({ login: CKR_PIN_LOCKED });
    const pin = new Uint8Array(Buffer.from('4321'));
    const error = tokenError(() => sign(make, pin));
    expect(error.failure).toBe('pin-locked');
    expect(tokenErrorSentence(error, 'pt')).toBe(
      'O PIN está bloqueado: desbloqueie-o com o PUK na ferramenta do fabricante do token.',
    );
    expect(tokenErrorSentence(error, 'en')).toBe(
      "The PIN is locked: unlock it with the PUK in the token maker's tool.",
    );
    expect(logins).toEqual(['4321']);
    expect(pin.every((b) => b === 0)).toBe(true);
  });

  it('a wrong PIN that locked the token (CKF_USER_PIN_LOCKED after the failure) is "PIN locked"', () => {
    const { make } = standIn({ login: CKR_PIN_INCORRECT, flagsAfterLogin: CKF_USER_PIN_LOCKED });
    expect(tokenError(() => sign(make)).failure).toBe('pin-locked');
  });

  it('says one try is left on CKF_USER_PIN_FINAL_TRY, few on CKF_USER_PIN_COUNT_LOW, nothing otherwise', () => {
    const final = tokenError(() =>
      sign(standIn({ login: CKR_PIN_INCORRECT, flagsAfterLogin: CKF_USER_PIN_FINAL_TRY }).make),
    );
    expect(final).toMatchObject({ failure: 'wrong-pin', triesLeft: 'one' });
    expect(tokenErrorSentence(final, 'pt')).toBe('PIN incorreto. Resta uma tentativa antes do bloqueio.');
    expect(tokenErrorSentence(final, 'en')).toBe('Wrong PIN. One try is left before it locks.');
    const low = tokenError(() =>
      sign(standIn({ login: CKR_PIN_INCORRECT, flagsAfterLogin: CKF_USER_PIN_COUNT_LOW }).make),
    );
    expect(low).toMatchObject({ failure: 'wrong-pin', triesLeft: 'few' });
    expect(tokenErrorSentence(low, 'pt')).toBe('PIN incorreto. Restam poucas tentativas.');
    const plain = tokenError(() => sign(standIn({ login: CKR_PIN_INCORRECT }).make));
    expect(plain).toMatchObject({ failure: 'wrong-pin', triesLeft: undefined });
    expect(tokenErrorSentence(plain, 'en')).toBe('Wrong PIN.');
  });

  it('a token pulled out while signing (CKR_DEVICE_REMOVED from C_Sign) is "token removed"', () => {
    const error = tokenError(() => sign(standIn({ sign: CKR_DEVICE_REMOVED }).make));
    expect(error.failure).toBe('token-removed');
    expect(tokenErrorSentence(error, 'en')).toBe(
      'The token was removed while signing: plug it in and sign again.',
    );
  });

  it('an expired certificate is refused before the PIN reaches the token', () => {
    const { make, logins } = standIn({});
    const pin = new Uint8Array(Buffer.from('1234'));
    const error = tokenError(() =>
      signOnToken({
        modulePath: '/stand-in.so',
        certificate: { ...CERTIFICATE, notAfter: '2020-01-01T00:00:00.000Z' },
        pin,
        data: new Uint8Array(8),
        pkcs11: make,
      }),
    );
    expect(error.failure).toBe('certificate-expired');
    expect(logins).toEqual([]);
    expect(pin.every((b) => b === 0)).toBe(true);
  });
});

describe('a real token (SoftHSM2)', () => {
  let pki: TestPki;
  let token: TestToken;
  let userData: string;
  let unregister: () => void;

  beforeAll(async () => {
    [pki, token] = await Promise.all([createTestPki(), createTestToken('removable')]);
    await token.addKey(pki.rsa.keyPem, 'a1', 'Escrevente');
    await token.addCertificate(pki.rsa.certDer, 'a1', 'Escrevente');
    await token.addCertificate(pki.intermediate.certDer, 'a2', 'AC Intermediária');
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-token-'));
    const win = new BrowserWindow({});
    const controller = new MainController({
      userDataDir: userData,
      tempDir: userData,
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(
      controller.handlers(),
      (event) =>
        event.senderFrame !== null && event.senderFrame?.parent === null && isAppUrl(event.senderFrame.url),
    );
  }, 120_000);

  afterAll(async () => {
    unregister?.();
    await token?.dispose();
    await pki?.dispose();
    if (userData) await rm(userData, { recursive: true, force: true });
  });

  it('through IPC: no module chosen is a sentence; once chosen, the certificate is listed, no CA', async () => {
    expect(await ipcMain.invoke('token:certificates', APP, { language: 'pt' })).toEqual({
      ok: false,
      error: {
        kind: 'signing',
        message:
          'O módulo PKCS#11 do token não pôde ser carregado: confira o caminho do driver nas configurações.',
      },
    });
    const saved = await ipcMain.invoke('settings:set-token-module', APP, { path: SOFTHSM_MODULE });
    expect(saved).toMatchObject({ ok: true, value: { tokenModulePath: SOFTHSM_MODULE } });
    const listed = (await ipcMain.invoke('token:certificates', APP, { language: 'en' })) as IpcResult<
      TokenCertificateInfo[]
    >;
    if (!listed.ok) throw new Error(listed.error.message);
    expect(listed.value).toEqual([
      expect.objectContaining({ id: 'a1', label: 'Escrevente', chainLength: 2 }),
    ]);
  });

  it('through IPC: a certificate never listed is refused with a sentence, and the PIN bytes are zeroed', async () => {
    const pin = new Uint8Array(Buffer.from(token.pin));
    const result = await ipcMain.invoke('token:sign', APP, {
      documentId: '0b6f2c1e-7d5a-4e8b-9c3f-2a1d4e5f6a7b',
      slot: 'ffffffffffffffff',
      id: 'a1',
      policy: 'icp-brasil-ad-rb',
      pin,
      language: 'pt',
    });
    expect(result).toMatchObject({
      ok: false,
      error: {
        kind: 'signing',
        message: 'O token foi removido durante a assinatura: conecte-o e assine de novo.',
      },
    });
    expect(pin.every((b) => b === 0)).toBe(true);
  });

  it('a token deleted between listing and signing is "token removed", never a PIN prompt again', async () => {
    const [listed] = listSigningCertificates(SOFTHSM_MODULE);
    expect(listed?.label).toBe('Escrevente');
    await run('softhsm2-util', ['--delete-token', '--token', 'removable'], {
      env: { ...process.env, SOFTHSM2_CONF: path.join(token.dir, 'softhsm2.conf') },
    });
    const pin = new Uint8Array(Buffer.from(token.pin));
    const error = tokenError(() =>
      signOnToken({
        modulePath: SOFTHSM_MODULE,
        certificate: listed as TokenCertificate,
        pin,
        data: new Uint8Array(32),
      }),
    );
    expect(error.failure).toBe('token-removed');
    expect(pin.every((b) => b === 0)).toBe(true);
    // Listing again finds no token at all: a sentence too.
    const none = tokenError(() => listSigningCertificates(SOFTHSM_MODULE));
    expect(tokenErrorSentence(none, 'en')).toBe(
      'No token or smart card was found: plug it in and try again.',
    );
  });
});
