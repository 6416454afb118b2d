/**
 * `signAtLevel`: the level the page states, the level reached and its shortfall, the second issue at the level
 * reached, and the ICP-Brasil AD-RC/AD-RA refusal, with the test PKI's RSA signer (`test/harness/pki.ts`) and
 * the loopback TSA (`test/harness/tsa.ts`); revocation data comes from stand-in sources that cover, or not,
 * the certificates the test names (the long-term writing itself is checked in the server's PAdES LTV tests).
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tsaClient } from '../../test/harness/icp-brasil';
import { pemCmsSigner } from '../../test/harness/pades-pdfs';
import { createTestPki, type TestPki } from '../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../test/harness/tsa';
import type { CmsSigner, VerifiedTimestamper } from './cades';
import { type GatherValidationData, PADES_SIGNATURE_LENGTH, type SignatureLevel } from './pades';
import { addSignaturePlaceholder } from './placeholder';
import { type PlaceholderShape, type SignAtLevelOptions, signAtLevel } from './sign-at-level';

let pki: TestPki;
let tsaServer: TestTsa;
let signer: CmsSigner;
let tsa: VerifiedTimestamper;

beforeAll(async () => {
  pki = await createTestPki();
  tsaServer = await startTestTsa(pki);
  signer = pemCmsSigner(pki.rsa.keyPem, pki.rsa.chainPem);
  tsa = tsaClient(tsaServer.url);
});

afterAll(async () => {
  await tsaServer?.stop();
  await pki?.dispose();
});

/** What the stand-in renderer returns: the file, and the level its page stated. */
interface Rendered {
  pdf: Uint8Array;
  stated: SignatureLevel;
}

/** A renderer writing a one-page file with the placeholder asked, recording each call. */
function renderer() {
  const calls: { stated: SignatureLevel; placeholder: PlaceholderShape }[] = [];
  const render = async (stated: SignatureLevel, placeholder: PlaceholderShape): Promise<Rendered> => {
    calls.push({ stated, placeholder });
    const doc = await PDFDocument.create();
    const page = doc.addPage([595, 842]);
    const font = await doc.embedFont(StandardFonts.Helvetica);
    page.drawText(`Signature level ${stated}`, { x: 50, y: 780, size: 18, font });
    addSignaturePlaceholder(doc, [page], {
      ...placeholder,
      name: 'Notary',
      reason: 'Notarization certificate',
      location: 'Test',
      contactInfo: 'notary@example.test',
    });
    return { pdf: await doc.save({ useObjectStreams: false }), stated };
  };
  return { render, calls };
}

/** Signs with a fresh renderer; its calls are returned beside the result. */
async function sign(options: Omit<SignAtLevelOptions<Rendered>, 'render' | 'signer'>) {
  const { render, calls } = renderer();
  const result = await signAtLevel({ render, signer, ...options });
  return { result, stated: calls.map((c) => c.stated), placeholders: calls.map((c) => c.placeholder) };
}

/** Finds everything, misses nothing. */
const covered: GatherValidationData = async () => ({
  material: { certs: [], ocsps: [], crls: [] },
  missing: [],
});

/** Misses the certificates of `subject` whenever the chain asked about holds `der`. */
function missing(der: () => Uint8Array, subject: string): GatherValidationData {
  return async (chain) => ({
    material: { certs: [], ocsps: [], crls: [] },
    missing: chain.some((c) => Buffer.from(c).equals(Buffer.from(der())))
      ? [{ subject, reason: 'no OCSP or CRL URL in the certificate' }]
      : [],
  });
}

const signerGap =
  'no revocation data for certificate "Notary Test Signer": no OCSP or CRL URL in the certificate';
const tsaGap = 'no revocation data for certificate "Notary Test TSA": no OCSP or CRL URL in the certificate';

/** The text of a file, for the names its updates write. */
const text = (pdf: Uint8Array) => Buffer.from(pdf).toString('latin1');

describe('signAtLevel: the level asked and the level reached', () => {
  it('no level asked: B-T with a TSA, B-B without', async () => {
    const withTsa = await sign({ tsa });
    expect(withTsa.result).toMatchObject({ kind: 'signed', level: 'B-T', shortfall: [] });
    expect(withTsa.stated).toEqual(['B-T']);
    const without = await sign({});
    expect(without.result).toMatchObject({ kind: 'signed', level: 'B-B', shortfall: [] });
    expect(without.stated).toEqual(['B-B']);
    // An ETSI signature: the placeholder has the room of the CMS and no dictionary of its own.
    expect(without.placeholders).toEqual([{ signatureLength: PADES_SIGNATURE_LENGTH }]);
  });

  it('B-LTA reached when every certificate is covered: rendered once, its page stating B-LTA', async () => {
    const { result, stated } = await sign({ level: 'B-LTA', tsa, gather: covered });
    expect(result).toMatchObject({ kind: 'signed', level: 'B-LTA', shortfall: [] });
    expect(stated).toEqual(['B-LTA']);
    if (result.kind !== 'signed') throw new Error('not signed');
    expect(result.rendered.stated).toBe('B-LTA');
    expect(text(result.pdf)).toContain('/Type /DocTimeStamp');
    expect(text(result.pdf)).toContain('/DSS');
  });

  it("B-LT with the signer's own chain uncovered: the page states B-T from the start, the /DSS is still added", async () => {
    const { result, stated } = await sign({
      level: 'B-LT',
      tsa,
      gather: missing(() => pki.rsa.certDer, 'Notary Test Signer'),
    });
    expect(result).toMatchObject({ kind: 'signed', level: 'B-T', shortfall: [signerGap] });
    expect(stated).toEqual(['B-T']);
    expect(text(result.kind === 'signed' ? result.pdf : new Uint8Array())).toContain('/DSS');
  });

  it('without a revocation source: B-LTA stops at B-T, saying so once', async () => {
    const { result, stated } = await sign({ level: 'B-LTA', tsa });
    expect(result).toMatchObject({
      kind: 'signed',
      level: 'B-T',
      shortfall: [
        'no revocation data for certificate "every certificate": this service has no revocation source',
      ],
    });
    expect(stated).toEqual(['B-T']);
  });

  it("a gap known only after signing (the TSA's chain): issued again at the level reached", async () => {
    const { result, stated } = await sign({
      level: 'B-LTA',
      tsa,
      gather: missing(() => pki.tsa.certDer, 'Notary Test TSA'),
    });
    // The shortfall is the first signature's: why the level is below the one asked.
    expect(result).toMatchObject({ kind: 'signed', level: 'B-T', shortfall: [tsaGap] });
    expect(stated).toEqual(['B-LTA', 'B-T']);
    if (result.kind !== 'signed') throw new Error('not signed');
    expect(result.rendered.stated).toBe('B-T');
    // The second file is a plain B-T signature: no long-term update.
    expect(text(result.pdf)).not.toContain('/DocTimeStamp');
  });

  it('a TSA failure is never a shortfall, and B-T without a TSA is an error', async () => {
    const failing: VerifiedTimestamper = {
      timestamp: async () => {
        throw new Error('TSA unreachable');
      },
    };
    await expect(sign({ level: 'B-LTA', tsa: failing, gather: covered })).rejects.toThrow('TSA unreachable');
    await expect(sign({ level: 'B-T' })).rejects.toThrow(/TSA/);
  });

  it('an aborted signal stops the work between rendering and signing: no TSA request', async () => {
    const controller = new AbortController();
    const { render } = renderer();
    const requests = tsaServer.requests;
    const aborting = async (stated: SignatureLevel, placeholder: PlaceholderShape) => {
      const rendered = await render(stated, placeholder);
      controller.abort(new Error('the client left'));
      return rendered;
    };
    await expect(
      signAtLevel({ render: aborting, signer, level: 'B-T', tsa, signal: controller.signal }),
    ).rejects.toThrow('the client left');
    expect(tsaServer.requests).toBe(requests);
  });
});

describe('signAtLevel under ICP-Brasil policies', () => {
  /** Stand-in bytes: the writer stores the artifacts, it does not judge them. */
  const artifacts = {
    policy: new Uint8Array([0x30, 0x01, 0x01]),
    lpa: new Uint8Array([0x30, 0x01, 0x02]),
    lpaSignature: new Uint8Array([0x30, 0x01, 0x03]),
  };

  it('AD-RC below B-LTA is refused, naming what is missing, before any second issue', async () => {
    const { result, stated, placeholders } = await sign({
      level: 'B-LTA',
      policy: 'icp-brasil-ad-rc',
      tsa,
      gather: missing(() => pki.tsa.certDer, 'Notary Test TSA'),
    });
    expect(result).toEqual({
      kind: 'refused',
      profile: 'AD-RC',
      shortfall: [tsaGap],
      reason: `ICP-Brasil AD-RC needs revocation data for every certificate, which could not all be had: ${tsaGap}`,
    });
    expect(stated).toEqual(['B-LTA']);
    expect(placeholders).toEqual([{ signatureLength: PADES_SIGNATURE_LENGTH, dictionary: 'icp-brasil' }]);
  });

  it("AD-RA below B-LTA is refused too (the signer's chain uncovered)", async () => {
    const { result } = await sign({
      level: 'B-LTA',
      policy: 'icp-brasil-ad-ra',
      artifacts,
      tsa,
      gather: missing(() => pki.rsa.certDer, 'Notary Test Signer'),
    });
    expect(result).toMatchObject({
      kind: 'refused',
      profile: 'AD-RA',
      shortfall: [signerGap],
      reason: `ICP-Brasil AD-RA needs revocation data for every certificate, which could not all be had: ${signerGap}`,
    });
  });

  it('AD-RA at B-LTA: the PBAD dictionary and the policy artifacts in the /DSS; AD-RC leaves the artifacts out', async () => {
    const ra = await sign({ level: 'B-LTA', policy: 'icp-brasil-ad-ra', artifacts, tsa, gather: covered });
    expect(ra.result).toMatchObject({ kind: 'signed', level: 'B-LTA', shortfall: [] });
    const raText = text(ra.result.kind === 'signed' ? ra.result.pdf : new Uint8Array());
    expect(raText).toContain('/SubFilter /PBAD.PAdES');
    expect(raText).toContain('/PBAD_PolicyArtifacts');
    const rc = await sign({ level: 'B-LTA', policy: 'icp-brasil-ad-rc', artifacts, tsa, gather: covered });
    expect(rc.result).toMatchObject({ kind: 'signed', level: 'B-LTA', shortfall: [] });
    const rcText = text(rc.result.kind === 'signed' ? rc.result.pdf : new Uint8Array());
    expect(rcText).toContain('/SubFilter /PBAD.PAdES');
    expect(rcText).not.toContain('/PBAD_PolicyArtifacts');
  });

  it('AD-RT and AD-RB sign at the level reached, as ETSI does', async () => {
    const rt = await sign({ level: 'B-LTA', policy: 'icp-brasil-ad-rt', tsa });
    expect(rt.result).toMatchObject({ kind: 'signed', level: 'B-T' });
    expect(rt.placeholders).toEqual([{ signatureLength: PADES_SIGNATURE_LENGTH, dictionary: 'icp-brasil' }]);
    const rb = await sign({ level: 'B-B', policy: 'icp-brasil-ad-rb' });
    expect(rb.result).toMatchObject({ kind: 'signed', level: 'B-B', shortfall: [] });
  });
});
