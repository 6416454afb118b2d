import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '../../test/harness/pki.ts';
import { startTestTsa, type TestTsa } from '../../test/harness/tsa.ts';
import { toHex } from './bytes.ts';
import { chainsTo, completeChain, parseCertificate, signerPath, withoutIssuer } from './cert-path.ts';
import { certificateDer } from './cms.ts';
import { TsaClient } from './tsa-client.ts';

let pki: TestPki;
let tsa: TestTsa;

beforeAll(async () => {
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
});

afterAll(async () => {
  await tsa?.stop();
  await pki?.dispose();
});

/** Hex of each DER, to compare lists of certificates readably. */
const hex = (ders: readonly Uint8Array[]) => ders.map(toHex);
const cert = (der: Uint8Array) => {
  const parsed = parseCertificate(der);
  if (!parsed) throw new Error('test certificate does not parse');
  return parsed;
};

describe('the one certification-path builder', () => {
  it('completeChain adds the issuers a list holds, up to the root, each once, and nothing without a list', async () => {
    const leaf = pki.rsa.certDer;
    const issuers = [pki.otherRoot.certDer, pki.root.certDer, pki.intermediate.certDer];
    const completed = await completeChain([leaf], issuers);
    expect(hex(completed)).toEqual(hex([leaf, pki.intermediate.certDer, pki.root.certDer]));
    // Already complete: nothing added; no list: the chain as given.
    expect(hex(await completeChain(completed, issuers))).toEqual(hex(completed));
    expect(hex(await completeChain([leaf], []))).toEqual(hex([leaf]));
    // A root of another name is never taken for the issuer.
    expect(hex(await completeChain([leaf], [pki.otherRoot.certDer]))).toEqual(hex([leaf]));
  });

  it('withoutIssuer names the certificates whose issuer the chain lacks (a root needs none)', async () => {
    const gaps = await withoutIssuer([pki.rsa.certDer, pki.root.certDer]);
    expect(gaps.map((g) => toHex(g.der))).toEqual([toHex(pki.rsa.certDer)]);
    expect(gaps[0]?.commonName).toMatch(/\S/);
    expect(await withoutIssuer([pki.rsa.certDer, pki.intermediate.certDer, pki.root.certDer])).toEqual([]);
    await expect(withoutIssuer([new Uint8Array([1, 2, 3])])).rejects.toThrow(/does not parse/);
  });

  it('chainsTo finds the path to the anchor (leaf first, anchor last) and names why there is none', async () => {
    const found = await chainsTo(
      cert(pki.rsa.certDer),
      [cert(pki.intermediate.certDer)],
      [pki.root.certDer],
      new Date(),
    );
    expect(found.ok).toBe(true);
    expect(hex((found.path ?? []).map(certificateDer))).toEqual(
      hex([pki.rsa.certDer, pki.intermediate.certDer, pki.root.certDer]),
    );
    const refused = await chainsTo(
      cert(pki.rsa.certDer),
      [cert(pki.intermediate.certDer)],
      [pki.otherRoot.certDer],
      new Date(),
    );
    expect(refused.ok).toBe(false);
    expect(refused.message).not.toBe('');
    expect(refused.path).toBeUndefined();
    const broken = await chainsTo(cert(pki.rsa.certDer), [], [new Uint8Array([1, 2, 3])], new Date());
    expect(broken).toMatchObject({
      ok: false,
      message: expect.stringMatching(/trust anchor does not parse/),
    });
  });

  it("signerPath: a token's signing certificate first, then its issuers among the token's and the anchors", async () => {
    tsa.setMode('ok');
    const digest = new Uint8Array(createHash('sha256').update('cert-path').digest());
    const { token } = await new TsaClient({ url: tsa.url, tsaCa: [pki.root.certDer] }).timestamp(digest);
    const path = await signerPath(token, [pki.root.certDer]);
    expect(toHex(path[0] ?? new Uint8Array())).toBe(toHex(pki.tsa.certDer));
    expect(toHex(path.at(-1) ?? new Uint8Array())).toBe(toHex(pki.root.certDer));
    await expect(signerPath(new Uint8Array([0x30, 0x00]), [])).rejects.toThrow();
  });
});
