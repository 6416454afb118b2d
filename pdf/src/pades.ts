/**
 * PAdES signing of the notarization certificate PDF (ETSI EN 319 142-1 baseline levels B-B, B-T with a TSA,
 * B-LT with validation data, B-LTA with a document timestamp). `@signpdf/signpdf` fills `/ByteRange` and
 * `/Contents` of the placeholder the renderer added; `cades.ts` builds the CMS; `ltv.ts` appends the
 * validation data and the document timestamp as incremental updates.
 */

import { randomUUID } from 'node:crypto';
import { completeChain, withoutIssuer } from '@notary/trust/cert-path';
import { SignPdf } from '@signpdf/signpdf';
import { findByteRange, Signer } from '@signpdf/utils';
import {
  buildCadesSignature,
  type CadesOptions,
  type CmsSigner,
  type SignaturePolicyReference,
  type SignatureTimestamper,
  type VerifiedTimestamper,
} from './cades';
import {
  appendDocumentTimestamp,
  type IcpBrasilArtifacts,
  inThreadLtvWriter,
  type LtvWriter,
  type ValidationMaterial,
} from './ltv';

/**
 * `signatureLength` to pass to `pdflibAddPlaceholder`: the number of hex digits of the `/Contents <...>`
 * placeholder (that is what @signpdf/placeholder-pdf-lib counts), so the CMS may take half as many bytes,
 * `PADES_MAX_CMS_BYTES` (16 KiB). Measured with the test PKI (RSA-2048, 3-certificate chains): B-B about
 * 3.2 KiB, B-T about 6.4 KiB (the TSA token brings its own chain). 16 KiB leaves room for RSA-4096 chains
 * and the larger tokens of public TSAs.
 */
export const PADES_SIGNATURE_LENGTH = 32768;

/** Largest CMS, in bytes, that fits a placeholder of `PADES_SIGNATURE_LENGTH` hex digits. */
export const PADES_MAX_CMS_BYTES = PADES_SIGNATURE_LENGTH / 2;

/** `@signpdf` signer that produces our CAdES CMS; `signingTime` is ignored (PAdES puts the time in /M). */
class CadesSigner extends Signer {
  // Plain fields, not parameter properties: the verifier (`notary-verify extend`, its tests) loads this file
  // and is checked for syntax Node can strip.
  private readonly signer: CmsSigner;
  private readonly capacity: number;
  private readonly tsa: SignatureTimestamper | undefined;
  private readonly cadesOptions: CadesOptions;

  constructor(
    signer: CmsSigner,
    capacity: number,
    tsa: SignatureTimestamper | undefined,
    cadesOptions: CadesOptions = {},
  ) {
    super();
    this.signer = signer;
    this.capacity = capacity;
    this.tsa = tsa;
    this.cadesOptions = cadesOptions;
  }

  override async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const cms = await buildCadesSignature(
      new Uint8Array(pdfBuffer),
      this.signer,
      this.tsa,
      this.cadesOptions,
    );
    if (cms.byteLength > this.capacity) {
      throw new Error(
        `PAdES: the CMS signature is ${cms.byteLength} bytes but the PDF placeholder holds ${this.capacity}; ` +
          `add the placeholder with signatureLength (hex digits) >= ${cms.byteLength * 2} (PADES_SIGNATURE_LENGTH)`,
      );
    }
    this.cms = cms;
    return Buffer.from(cms);
  }

  /** The CMS of the last `sign` (what /Contents holds, without the padding). */
  cms: Uint8Array | undefined;
}

/**
 * Signs a PDF that already has a signature placeholder (`/ByteRange [0 /********** ...]` and
 * `/Contents <00...>`, e.g. from `pdflibAddPlaceholder` with subFilter `ETSI.CAdES.detached` and
 * `signatureLength: PADES_SIGNATURE_LENGTH`).
 *
 * @param pdfWithPlaceholder the full PDF bytes (a trailing newline is dropped, as `@signpdf` does).
 * @param tsa when given, the signature gets an RFC 3161 signature timestamp (PAdES B-T).
 * @returns the signed PDF: same bytes except `/ByteRange` and `/Contents`.
 * @throws Error when there is no (or more than one) placeholder, or when the CMS does not fit the
 *   placeholder; the signer's errors; the TSA's (the server's TSA adapter: `AppError('BAD_GATEWAY')`).
 */
export async function signPdf(
  pdfWithPlaceholder: Uint8Array,
  signer: CmsSigner,
  tsa?: SignatureTimestamper,
): Promise<Uint8Array> {
  return (await signWithCms(pdfWithPlaceholder, signer, tsa)).pdf;
}

/**
 * Signs `pdfWithPlaceholder` as `signPdf`, with `cadesOptions`, returning the CMS written into /Contents too.
 * @throws as `signPdf`.
 */
export async function signWithCms(
  pdfWithPlaceholder: Uint8Array,
  signer: CmsSigner,
  tsa: SignatureTimestamper | undefined,
  cadesOptions: CadesOptions = {},
): Promise<{ pdf: Uint8Array; cms: Uint8Array }> {
  const pdf = Buffer.from(pdfWithPlaceholder);
  const cades = new CadesSigner(signer, placeholderCapacity(pdf), tsa, cadesOptions);
  const signed = await new SignPdf().sign(pdf, cades);
  if (!cades.cms) throw new Error('PAdES: the signer produced no CMS');
  return { pdf: new Uint8Array(signed), cms: cades.cms };
}

/** Bytes the `/Contents <...>` placeholder after the `/ByteRange` placeholder can hold (same scan as @signpdf). */
function placeholderCapacity(pdf: Buffer): number {
  const { byteRangePlaceholder, byteRangePlaceholderPosition } = findByteRange(pdf);
  if (byteRangePlaceholder === undefined || byteRangePlaceholderPosition === undefined) {
    throw new Error('PAdES: the PDF has no signature placeholder (/ByteRange [0 /********** ...])');
  }
  const contents = pdf.indexOf('/Contents ', byteRangePlaceholderPosition + byteRangePlaceholder.length);
  const open = contents === -1 ? -1 : pdf.indexOf('<', contents);
  const close = open === -1 ? -1 : pdf.indexOf('>', open);
  if (close === -1)
    throw new Error('PAdES: the signature placeholder has no /Contents <...> after /ByteRange');
  return Math.floor((close - open - 1) / 2);
}

/**
 * PAdES baseline levels (ETSI EN 319 142-1 clause 6): B-B a CAdES signature; B-T plus a signature timestamp;
 * B-LT plus the validation data of every certificate (DSS); B-LTA plus a document timestamp.
 */
export type SignatureLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

/** The levels from lowest to highest. */
export const SIGNATURE_LEVELS: readonly SignatureLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];

/**
 * Gathers the revocation data of `chain` (DER certificates, any order): OCSP responses and CRLs for every
 * certificate whose issuer is in `chain`, and certificates they need; `missing` names each certificate for
 * which none could be had and why. The server's revocation port has this shape.
 */
export type GatherValidationData = (chain: readonly Uint8Array[]) => Promise<{
  material: ValidationMaterial;
  missing: { subject: string; reason: string }[];
}>;

export interface LevelOptions {
  level: SignatureLevel;
  /** Needed from B-T up: the signature timestamp, and the document timestamp of B-LTA. */
  tsa?: VerifiedTimestamper;
  /** Needed from B-LT up. */
  gather?: GatherValidationData;
  /**
   * CA certificates (DER) that may complete a chain from B-LT up, e.g. the TSA's trust anchors when its token
   * carries only the TSA's own certificate: one is added to a chain only when it names the issuer of one of
   * its certificates (revocation data is checked against the issuer's key, so it must be there).
   */
  issuers?: readonly Uint8Array[];
  /**
   * Where the B-LT and B-LTA updates parse the PDF: this thread by default; `boundedLtvWriter`
   * (`ltv-bounded.ts`) for a certificate holding an uploaded original.
   */
  writer?: LtvWriter;
  /** A signature policy to declare (signature-policy-identifier, e.g. an ICP-Brasil one from `icp-brasil.ts`). */
  policy?: SignaturePolicyReference;
  /**
   * ICP-Brasil AD-RA artifacts (DOC-ICP-15.03 Tabelas A.19/A.20) written into the /DSS at B-LT and B-LTA and
   * referenced from each /VRI entry (`appendValidationData`).
   */
  artifacts?: IcpBrasilArtifacts;
}

export interface LevelledSignature {
  pdf: Uint8Array;
  /** The level the file reached: the one asked, or lower when validation data could not all be had. */
  level: SignatureLevel;
  /** Why the level reached is below the one asked (one English sentence per gap); empty when it is not. */
  shortfall: string[];
}

/**
 * Signs `pdfWithPlaceholder` (as `signPdf`) and extends it to `options.level`:
 * - B-B: `signPdf` without TSA; B-T: with `tsa` (a signature timestamp);
 * - B-LT: then an incremental update with the /DSS (`appendValidationData`): the signer's chain and the
 *   signature timestamp's TSA chain as `tsa` verified it (the token's other certificates are left out: they
 *   are outside its signature), with what `gather` found for them, and a /VRI entry for the
 *   signature. Reached only when every certificate of those chains that is not self-issued (a root) had its
 *   issuer among them and got an OCSP response or a CRL; else the file stays at B-T with the shortfall;
 * - B-LTA: then a document timestamp (`appendDocumentTimestamp`) and one more /DSS update with its TSA's
 *   verified chain and revocation data (and a /VRI entry for it). Reached only when B-LT was and that chain is fully covered
 *   too; the document timestamp is added either way (it protects the data gathered).
 * @throws Error when `tsa` (B-T and up) or `gather` (B-LT and up) is missing; what `signPdf`,
 *   `appendValidationData`, `appendDocumentTimestamp` and `gather` throw (a TSA failure is never a shortfall:
 *   the signature is not silently downgraded).
 */
export async function signPdfAtLevel(
  pdfWithPlaceholder: Uint8Array,
  signer: CmsSigner,
  options: LevelOptions,
): Promise<LevelledSignature> {
  const { level, tsa, gather, writer = inThreadLtvWriter, issuers = [] } = options;
  const cadesOptions: CadesOptions = options.policy ? { policy: options.policy } : {};
  if (level === 'B-B') {
    const { pdf } = await signWithCms(pdfWithPlaceholder, signer, undefined, cadesOptions);
    return { pdf, level, shortfall: [] };
  }
  if (!tsa) throw new Error(`PAdES ${level}: a TSA is needed for the signature timestamp`);
  if (level !== 'B-T' && !gather) throw new Error(`PAdES ${level}: a source of revocation data is needed`);
  // The writer parses the file for the long-term updates while it is signed and its revocation data gathered.
  const signing = level !== 'B-T' && writer.preload ? randomUUID() : undefined;
  const preloading = signing ? writer.preload?.(pdfWithPlaceholder, signing) : undefined;
  const signatureTsa = recordingChain(tsa);
  const signed = await signWithCms(pdfWithPlaceholder, signer, signatureTsa, cadesOptions);
  if (level === 'B-T' || !gather) return { pdf: signed.pdf, level: 'B-T', shortfall: [] };
  const tsaChain = signatureTsa.chain();
  if (!tsaChain) throw new Error('PAdES: the signature timestamp token was not kept');

  // The TSA's chain as the timestamper verified it, never the token's other certificates (unsigned).
  const signatureChain = await completeChain(uniqueDer([...signer.certificateChain, ...tsaChain]), issuers);
  const first = await validationData(signatureChain, gather);
  const { artifacts } = options;
  const vri = [{ signatureContents: signed.cms, ...first.material }];
  // Its job done first, so that the worker it ran on (idle again) takes the updates.
  await preloading;
  const shortfall = [...first.shortfall];
  let reached: SignatureLevel = shortfall.length === 0 ? 'B-LT' : 'B-T';
  if (level === 'B-LT') {
    const pdf = await writer.appendValidationData(signed.pdf, first.material, vri, artifacts, signing);
    return { pdf, level: reached, shortfall };
  }
  // B-LTA: the /DSS and the document timestamp's field in one pass over the file (two updates, one parse).
  const { validated, prepared } = await writer.appendValidationDataWithTimestampField(
    signed.pdf,
    first.material,
    vri,
    artifacts,
    signing,
  );
  const documentTsa = recordingChain(tsa);
  const stamped = await appendDocumentTimestamp(validated, documentTsa, writer, prepared);
  const second = await validationData(
    await completeChain(uniqueDer(documentTsa.chain() ?? []), issuers),
    gather,
  );
  const pdf = await writer.appendValidationData(
    stamped.pdf,
    second.material,
    [{ signatureContents: stamped.token, ...second.material }],
    artifacts,
    signing,
  );
  for (const gap of second.shortfall) if (!shortfall.includes(gap)) shortfall.push(gap);
  if (reached === 'B-LT' && second.shortfall.length === 0) reached = 'B-LTA';
  return { pdf, level: reached, shortfall };
}

/**
 * The level a signature by `signer` can be expected to reach when `asked`, known before anything is signed:
 * B-LT and B-LTA need revocation data for every certificate of the signer's chain (completed from
 * `issuers`), which `gather` is asked for now (a caching source answers the signing's own request later from
 * its cache). Below B-LT, and when the signer's chain is covered, `asked`; else B-T. The TSA's chain is only
 * known from its token, so the level reached may still be lower (`signPdfAtLevel` says so).
 */
export async function expectedLevel(
  asked: SignatureLevel,
  signer: Pick<CmsSigner, 'certificateChain'>,
  options: { gather: GatherValidationData; issuers?: readonly Uint8Array[] },
): Promise<SignatureLevel> {
  if (asked !== 'B-LT' && asked !== 'B-LTA') return asked;
  const chain = await completeChain(uniqueDer(signer.certificateChain), options.issuers ?? []);
  const { shortfall } = await validationData(chain, options.gather);
  return shortfall.length === 0 ? asked : 'B-T';
}

/** What `gather` found for `chain`, the chain's certificates added, and the gaps as sentences. */
export async function validationData(
  chain: Uint8Array[],
  gather: GatherValidationData,
): Promise<{ material: ValidationMaterial; shortfall: string[] }> {
  const { material, missing } = await gather(chain);
  const shortfall = [
    ...(await withoutIssuer(chain)).map(
      (c) =>
        `no issuer certificate for "${c.commonName}" in its chain: its revocation data cannot be gathered`,
    ),
    ...missing.map((m) => `no revocation data for certificate "${m.subject}": ${m.reason}`),
  ];
  return {
    material: {
      certs: uniqueDer([...chain, ...material.certs]),
      ocsps: uniqueDer(material.ocsps),
      crls: uniqueDer(material.crls),
    },
    shortfall,
  };
}

/**
 * `tsa` as a `SignatureTimestamper`, keeping the verified chain of its last answer (`chain()`, undefined before
 * any answer): the writer asks for the token only, the long-term data needs the chain too.
 */
export function recordingChain(tsa: VerifiedTimestamper): SignatureTimestamper & {
  chain(): readonly Uint8Array[] | undefined;
} {
  let last: readonly Uint8Array[] | undefined;
  return {
    timestamp: async (digest) => {
      const result = await tsa.timestamp(digest);
      last = result.chain;
      return result;
    },
    chain: () => last,
  };
}

/** `blobs` without repeats (byte-equal), first occurrence kept. */
export function uniqueDer(blobs: readonly Uint8Array[]): Uint8Array[] {
  const seen = new Set<string>();
  return blobs.filter((b) => {
    const key = Buffer.from(b).toString('base64');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
