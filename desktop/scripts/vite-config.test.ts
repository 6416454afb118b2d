/**
 * The built main process and the token's native addon: `pkcs11js` stays outside the bundle (a `.node` binary
 * cannot be bundled), main starts without it (an install where the optional addon was skipped), and the
 * token's signing module, built with the same configuration, loads the real addon at run time and lists a
 * real token's certificates (SoftHSM2).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../test/harness/pki';
import { createTestToken, SOFTHSM_MODULE, type TestToken } from '../../test/harness/softhsm';
import type * as TokenSigning from '../src/main/token-signing';
import { electronConfig } from './vite-config';

let dir: string;
let pki: TestPki;
let token: TestToken;

/** An `electron` module for a plain Node process: every property a function answering false. */
const ELECTRON_STAND_IN = `const fn = () => false;
const member = new Proxy(fn, { get: () => fn });
module.exports = new Proxy({}, { get: () => member });
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'notary-main-build-'));
  [pki, token] = await Promise.all([createTestPki(), createTestToken('build-check')]);
  await token.addKey(pki.ec.keyPem, 'e1', 'Tabeliã EC');
  await token.addCertificate(pki.ec.certDer, 'e1', 'Tabeliã EC');
  await build(electronConfig('src/main/index.ts', path.join(dir, 'main')));
  await build(electronConfig('src/main/token-signing.ts', path.join(dir, 'token'), 'token-signing.cjs'));
  // Beside the bundles: a stand-in `electron`, and no `pkcs11js` for main (it must start without it).
  await mkdir(path.join(dir, 'node_modules', 'electron'), { recursive: true });
  await writeFile(path.join(dir, 'node_modules', 'electron', 'index.js'), ELECTRON_STAND_IN);
}, 240_000);

afterAll(async () => {
  await token?.dispose();
  await pki?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the built main process and pkcs11js', () => {
  it('keeps pkcs11js out of the bundle and out of main start-up', async () => {
    const files = await readdir(path.join(dir, 'main'));
    expect(files.filter((f) => f.endsWith('.node'))).toEqual([]);
    const index = await readFile(path.join(dir, 'main', 'index.cjs'), 'utf8');
    expect(index).not.toContain('require("pkcs11js")');
    // The addon's own JavaScript (its error class) is not copied in either.
    expect(index).not.toContain('class Pkcs11Error');
    const chunk = files.find((f) => /^token-signing-.*\.cjs$/.test(f));
    expect(chunk).toBeDefined();
    const chunkText = await readFile(path.join(dir, 'main', chunk as string), 'utf8');
    expect(chunkText).toContain('require("pkcs11js")');
    expect(chunkText).not.toContain('class Pkcs11Error');
  });

  it('main loads where pkcs11js is not installed', () => {
    const requireHere = createRequire(path.join(dir, 'main', 'index.cjs'));
    expect(() => requireHere.resolve('pkcs11js')).toThrow();
    expect(() => requireHere(path.join(dir, 'main', 'index.cjs'))).not.toThrow();
  });

  it('the built token module requires the installed addon and lists a real token', async () => {
    // As in the packaged app: the addon under node_modules beside the bundle.
    const installed = path.dirname(createRequire(import.meta.url).resolve('pkcs11js/package.json'));
    await symlink(installed, path.join(dir, 'node_modules', 'pkcs11js'), 'dir');
    const built = createRequire(path.join(dir, 'token', 'token-signing.cjs'))(
      path.join(dir, 'token', 'token-signing.cjs'),
    ) as typeof TokenSigning;
    const listed = built.listSigningCertificates(SOFTHSM_MODULE);
    expect(listed.map((c) => c.label)).toEqual(['Tabeliã EC']);
  });
});
