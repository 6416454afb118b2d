import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalFile } from '../common/bridge';
import { CHANNELS, type Channel, EVENTS, type IpcResult } from '../common/ipc';
import { MainController } from './controller';
import { BrowserWindow, ipcMain } from './electron-stand-in.testing';
import { type IpcHandlers, registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const APP = 'app://notary/index.html';
const FIXTURE = path.resolve(import.meta.dirname, '../../../../shared/fixtures/pdfs/tracemonkey.pdf');
const UUID = '0b6f2c1e-7d5a-4e8b-9c3f-2a1d4e5f6a7b';
const HASH = 'a'.repeat(64);
/** The CIDv1 (raw, sha2-256) of the bytes `hello world`. */
const CID = 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e';

/** Handlers that record their calls and answer `{ok}`: validation is what is tested here. */
function recordingHandlers(): { handlers: IpcHandlers; calls: { channel: string; input: unknown }[] } {
  const calls: { channel: string; input: unknown }[] = [];
  const handlers = Object.fromEntries(
    Object.values(CHANNELS).map((channel) => [
      channel,
      async (input: unknown) => {
        calls.push({ channel, input });
        return null;
      },
    ]),
  ) as unknown as IpcHandlers;
  return { handlers, calls };
}

const trusted = (event: { senderFrame?: { url: string; parent: unknown } | null }) =>
  event.senderFrame !== null && event.senderFrame?.parent === null && isAppUrl(event.senderFrame.url);

/** A valid payload of every channel (undefined: the channel takes none). */
const VALID: Record<Channel, unknown> = {
  'settings:get': undefined,
  'settings:set-server-url': { url: 'https://notary.example.com' },
  'settings:set-language': { language: 'en' },
  'server:check': undefined,
  'auth:request-code': { email: 'ana@cartorio.example' },
  'auth:sign-in': { email: 'ana@cartorio.example', code: '123456' },
  'auth:session': undefined,
  'auth:set-tenant': { orgId: null },
  'auth:sign-out': undefined,
  'files:pick': undefined,
  'files:dropped': { paths: ['/home/ana/contrato.pdf'] },
  'files:hash': { fileId: UUID, jobId: UUID },
  'files:upload': { fileId: UUID, jobId: UUID, consent: true },
  'jobs:cancel': { jobId: UUID },
  'public:verify': { hash: HASH },
  'public:check-certificate': {
    fileId: UUID,
    certificateId: UUID,
    endpoints: { evmRpcUrls: ['http://127.0.0.1:8545'], stacksApiUrls: ['https://api.testnet.hiro.so'] },
    trust: { kind: 'files', fileIds: [UUID] },
    at: '2026-11-26T10:00:00.000Z',
  },
  'public:check-chain': { fileId: UUID },
  'public:document': { serial: 'CARTORIO-7K2M9Q4XTB' },
  'public:onchain-info': undefined,
  'documents:list': undefined,
  'documents:get': { id: UUID },
  'documents:compare': { id: UUID, hash: HASH },
  'documents:import-ipfs': { cid: CID, fileName: 'Contrato.pdf', consent: true },
  'documents:gateway-link': { id: UUID },
  'documents:capture-web': { url: 'https://example.com/page', fileName: 'page.wacz', consent: true },
  'team:accept-invitation': { invitationId: 'abcDEF123' },
  'certificate:save': { id: UUID, language: 'pt' },
  'certificate:open': { id: UUID, language: 'pt' },
  'timestamp:save': { id: UUID },
  'ata:save': { id: UUID, requester: { name: 'Maria', cpf: '529.982.247-25' } },
  'monitors:list': undefined,
  'monitors:get': { id: UUID },
  'monitors:create': { url: 'https://example.com/page', interval: 'PT6H', period: 'P30D' },
  'monitors:cancel': { id: UUID },
  'certidao:save': { id: UUID },
  'shell:open-external': { url: 'https://sepolia.etherscan.io/tx/0x01' },
  'settings:set-token-module': { path: '/usr/lib/libeTPkcs11.so' },
  'token:certificates': { language: 'pt' },
  'token:sign': {
    documentId: UUID,
    slot: '0100000000000000',
    id: '01',
    policy: 'icp-brasil-ad-rt',
    pin: new Uint8Array([49, 50, 51, 52]),
    language: 'pt',
  },
};

/** A valid token signing payload with `patch` over it. */
const tokenSign = (patch: Record<string, unknown>) => ({
  ...(VALID['token:sign'] as Record<string, unknown>),
  ...patch,
});

const huge = 'x'.repeat(1024 * 1024);
const polluted = () => JSON.parse('{"__proto__": {"polluted": "yes"}, "email": "ana@cartorio.example"}');

/** Hostile payloads, each with the channel it is sent to. None may reach a handler. */
const HOSTILE: [string, Channel, unknown[]][] = [
  ['a payload where none is expected', 'settings:get', [{ evil: true }]],
  ['two arguments', 'auth:request-code', [{ email: 'ana@cartorio.example' }, { more: 1 }]],
  ['no payload', 'auth:request-code', []],
  ['a string instead of an object', 'auth:request-code', ['ana@cartorio.example']],
  ['an array instead of an object', 'auth:request-code', [['ana@cartorio.example']]],
  ['null', 'documents:get', [null]],
  ['a number where a string goes', 'documents:get', [{ id: 42 }]],
  ['an object where a string goes', 'documents:get', [{ id: { $ne: '' } }]],
  ['an extra key', 'documents:get', [{ id: UUID, admin: true }]],
  ['__proto__ smuggled in (prototype pollution)', 'auth:request-code', [polluted()]],
  [
    'constructor.prototype smuggled in',
    'auth:request-code',
    [{ email: 'a@b.co', constructor: { prototype: { x: 1 } } }],
  ],
  ['a 1 MB e-mail', 'auth:request-code', [{ email: `${huge}@example.com` }]],
  ['a 1 MB document id', 'documents:get', [{ id: huge }]],
  ['a 1 MB URL', 'settings:set-server-url', [{ url: `https://example.com/${huge}` }]],
  ['a code that is not 6 digits', 'auth:sign-in', [{ email: 'ana@cartorio.example', code: '12345a' }]],
  ['a hash of 65 characters', 'public:verify', [{ hash: `${HASH}a` }]],
  ['a hash that is not hex', 'public:verify', [{ hash: 'z'.repeat(64) }]],
  ['a serial with SQL', 'public:document', [{ serial: "X'; DROP TABLE document; --" }]],
  ['a relative path', 'files:dropped', [{ paths: ['etc/passwd'] }]],
  ['a path climbing out with ..', 'files:dropped', [{ paths: ['/home/ana/../../etc/shadow'] }]],
  ['a path made only of ..', 'files:dropped', [{ paths: ['../../etc/passwd'] }]],
  ['a path with a NUL byte', 'files:dropped', [{ paths: ['/home/ana/a.pdf\0.txt'] }]],
  ['a 5000-character path', 'files:dropped', [{ paths: [`/${'a'.repeat(5000)}`] }]],
  ['101 paths', 'files:dropped', [{ paths: Array.from({ length: 101 }, (_, i) => `/tmp/${i}`) }]],
  ['a file id that is a path', 'files:hash', [{ fileId: '/etc/passwd', jobId: UUID }]],
  ['consent false', 'files:upload', [{ fileId: UUID, jobId: UUID, consent: false }]],
  ['consent as the string "true"', 'files:upload', [{ fileId: UUID, jobId: UUID, consent: 'true' }]],
  ['no consent', 'files:upload', [{ fileId: UUID, jobId: UUID }]],
  ['a javascript: URL to open', 'shell:open-external', [{ url: 'javascript:alert(1)' }]],
  ['a file: URL to open', 'shell:open-external', [{ url: 'file:///etc/passwd' }]],
  ['a URL with credentials', 'settings:set-server-url', [{ url: 'https://user:pass@example.com' }]],
  ['a language that does not exist', 'settings:set-language', [{ language: 'xx' }]],
  ['an org id with a slash', 'auth:set-tenant', [{ orgId: '../admin' }]],
  ['an IPFS import without consent', 'documents:import-ipfs', [{ cid: CID, consent: false }]],
  ['an IPFS path instead of a CID', 'documents:import-ipfs', [{ cid: `/ipfs/${CID}`, consent: true }]],
  ['a CID with white space around', 'documents:import-ipfs', [{ cid: ` ${CID}`, consent: true }]],
  ['a truncated CID', 'documents:import-ipfs', [{ cid: CID.slice(0, -1), consent: true }]],
  ['a 1 MB CID', 'documents:import-ipfs', [{ cid: `b${huge}`, consent: true }]],
  ['an empty document name', 'documents:import-ipfs', [{ cid: CID, fileName: '', consent: true }]],
  ['a name with a newline', 'documents:import-ipfs', [{ cid: CID, fileName: 'a\nb', consent: true }]],
  ['an extra key in an import', 'documents:import-ipfs', [{ cid: CID, consent: true, orgId: 'x' }]],
  [
    'a plain-http chain endpoint beyond loopback (answers could be altered on the way)',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: ['http://rpc.example'], stacksApiUrls: [] },
        trust: { kind: 'none' },
        at: null,
      },
    ],
  ],
  [
    'a chain endpoint with credentials',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: [], stacksApiUrls: ['https://u:p@api.example'] },
        trust: { kind: 'none' },
        at: null,
      },
    ],
  ],
  [
    'nine endpoints for one chain',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: {
          evmRpcUrls: Array.from({ length: 9 }, (_, i) => `https://rpc${i}.example`),
          stacksApiUrls: [],
        },
        trust: { kind: 'none' },
        at: null,
      },
    ],
  ],
  [
    'a certificate named by path',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: '/etc/passwd',
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'none' },
        at: null,
      },
    ],
  ],
  [
    'a certificate check without a trust choice',
    'public:check-certificate',
    [{ fileId: UUID, certificateId: UUID, endpoints: { evmRpcUrls: [], stacksApiUrls: [] }, at: null }],
  ],
  [
    'a trust anchor file named by path',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'files', fileIds: ['/etc/ssl/certs/ca-certificates.crt'] },
        at: null,
      },
    ],
  ],
  [
    'nine trust anchor files',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'files', fileIds: Array.from({ length: 9 }, () => UUID) },
        at: null,
      },
    ],
  ],
  [
    'no trust anchor file with the files choice',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'files', fileIds: [] },
        at: null,
      },
    ],
  ],
  [
    'anchors given as PEM text instead of picked files',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'pem', pem: '-----BEGIN CERTIFICATE-----' },
        at: null,
      },
    ],
  ],
  [
    'a judging date that is not a UTC date-time',
    'public:check-certificate',
    [
      {
        fileId: UUID,
        certificateId: UUID,
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'none' },
        at: 'yesterday',
      },
    ],
  ],
  ['a capture without consent', 'documents:capture-web', [{ url: 'https://example.com', consent: false }]],
  ['a file: URL to capture', 'documents:capture-web', [{ url: 'file:///etc/passwd', consent: true }]],
  ['a javascript: URL to capture', 'documents:capture-web', [{ url: 'javascript:alert(1)', consent: true }]],
  [
    'a capture URL with credentials',
    'documents:capture-web',
    [{ url: 'https://u:p@example.com', consent: true }],
  ],
  ['a capture URL without scheme', 'documents:capture-web', [{ url: 'example.com', consent: true }]],
  ['a 1 MB capture URL', 'documents:capture-web', [{ url: `https://example.com/${huge}`, consent: true }]],
  ['a relative token module path', 'settings:set-token-module', [{ path: 'libeTPkcs11.so' }]],
  ['a token module path with ..', 'settings:set-token-module', [{ path: '/usr/lib/../../tmp/evil.so' }]],
  ['a PIN as a string (it could not be zeroed)', 'token:sign', [tokenSign({ pin: '1234' })]],
  ['a PIN as an array of numbers', 'token:sign', [tokenSign({ pin: [49, 50, 51, 52] })]],
  ['a PIN of 3 bytes', 'token:sign', [tokenSign({ pin: new Uint8Array(3) })]],
  ['a PIN of 65 bytes', 'token:sign', [tokenSign({ pin: new Uint8Array(65) })]],
  ['a slot that is not hex', 'token:sign', [tokenSign({ slot: '../0' })]],
  ['an odd-length key id', 'token:sign', [tokenSign({ id: '123' })]],
  ['a policy that is not ICP-Brasil', 'token:sign', [tokenSign({ policy: 'pades-b-b' })]],
  ['a token signing without a document', 'token:sign', [tokenSign({ documentId: undefined })]],
  ['an extra key in a token signing', 'token:sign', [tokenSign({ modulePath: '/tmp/evil.so' })]],
  [
    'an extra key in a capture',
    'documents:capture-web',
    [{ url: 'https://example.com', consent: true, x: 1 }],
  ],
];

describe('IPC: every payload is validated in main before anything runs', () => {
  let calls: { channel: string; input: unknown }[];
  let unregister: () => void;

  beforeEach(() => {
    const recorded = recordingHandlers();
    calls = recorded.calls;
    unregister?.();
    unregister = registerIpcHandlers(recorded.handlers, trusted);
  });
  afterAll(() => unregister?.());

  it('registers exactly the named channels', () => {
    expect([...ipcMain.handlers.keys()].sort()).toEqual(Object.values(CHANNELS).sort());
  });

  it.each(Object.entries(VALID))('accepts a valid %s payload', async (channel, payload) => {
    const args = payload === undefined ? [] : [payload];
    const result = (await ipcMain.invoke(channel, APP, ...args)) as IpcResult<unknown>;
    expect(result).toEqual({ ok: true, value: null });
    expect(calls).toEqual([{ channel, input: payload }]);
  });

  it.each(HOSTILE)('rejects %s', async (_what, channel, args) => {
    const result = (await ipcMain.invoke(channel, APP, ...args)) as IpcResult<unknown>;
    expect(result.ok).toBe(false);
    expect(result.ok === false && result.error.kind).toBe('invalid-input');
    expect(calls).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The message names the channel and stays short (no echo of a megabyte of input).
    expect(result.ok === false && result.error.message.length).toBeLessThan(300);
  });

  it.each([
    'https://evil.example/index.html',
    'file:///home/ana/index.html',
    'app://evil/index.html',
    'http://localhost:3000/app/',
  ])('refuses calls from a frame at %s', async (url) => {
    const result = (await ipcMain.invoke('documents:list', url)) as IpcResult<unknown>;
    expect(result).toMatchObject({ ok: false, error: { kind: 'forbidden' } });
    expect(calls).toEqual([]);
  });

  it('refuses calls from a subframe of the app', async () => {
    const handler = ipcMain.handlers.get('documents:list');
    const result = (await handler?.({ senderFrame: { url: APP, parent: {} } })) as IpcResult<unknown>;
    expect(result).toMatchObject({ ok: false, error: { kind: 'forbidden' } });
  });
});

describe('IPC through the real controller (files)', () => {
  let userData: string;
  let unregister: () => void;
  const win = new BrowserWindow({});

  beforeAll(async () => {
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-ipc-'));
    const controller = new MainController({
      userDataDir: userData,
      tempDir: userData,
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister?.();
    unregister = registerIpcHandlers(controller.handlers(), trusted);
  });
  afterAll(async () => {
    unregister?.();
    await rm(userData, { recursive: true, force: true });
  });

  it('hashes a dropped file by its id, with progress events to the window, equal to sha256sum', async () => {
    const dropped = (await ipcMain.invoke('files:dropped', APP, { paths: [FIXTURE] })) as IpcResult<
      LocalFile[]
    >;
    if (!dropped.ok) throw new Error(dropped.error.message);
    const [file] = dropped.value;
    expect(file).toMatchObject({ name: 'tracemonkey.pdf', size: 1016315 });
    const jobId = crypto.randomUUID();
    const hashed = await ipcMain.invoke('files:hash', APP, { fileId: file?.id, jobId });
    const { stdout } = await promisify(execFile)('sha256sum', [FIXTURE]);
    expect(hashed).toEqual({ ok: true, value: stdout.slice(0, 64) });
    const progress = win.webContents.sent.filter((s) => s.channel === EVENTS.progress);
    expect(progress.at(-1)?.payload).toEqual({ jobId, loaded: 1016315, total: 1016315 });
  });

  it('knows only ids it handed out: an unknown file id is refused', async () => {
    const result = await ipcMain.invoke('files:hash', APP, { fileId: UUID, jobId: crypto.randomUUID() });
    expect(result).toMatchObject({ ok: false, error: { kind: 'not-found' } });
  });

  it('refuses to register a directory or a missing file', async () => {
    expect(await ipcMain.invoke('files:dropped', APP, { paths: [os.tmpdir()] })).toMatchObject({
      ok: false,
      error: { kind: 'file' },
    });
    expect(await ipcMain.invoke('files:dropped', APP, { paths: ['/nonexistent/file.pdf'] })).toMatchObject({
      ok: false,
      error: { kind: 'file' },
    });
  });

  it('refuses to open a link outside the allowlist', async () => {
    const result = await ipcMain.invoke('shell:open-external', APP, { url: 'https://evil.example/phish' });
    expect(result).toMatchObject({ ok: false, error: { kind: 'forbidden' } });
  });
});
