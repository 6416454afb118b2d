/**
 * The PAdES signature of a certificate at the level asked (ETSI EN 319 142-1 baseline levels), as far as the
 * TSA and the revocation data allow: which level the page may state before signing, the level the file
 * reached and why it is lower, and the ICP-Brasil rule that AD-RC and AD-RA files carry the long-term data
 * their policy declares (DOC-ICP-15.03 Tabela A.22). `pades.ts` signs; this decides what is asked of it.
 */
import type { CmsSigner, VerifiedTimestamper } from './cades';
import { type IcpBrasilPolicyName, icpBrasilSignaturePolicy } from './icp-brasil';
import type { IcpBrasilArtifacts, LtvWriter } from './ltv';
import { boundedLtvWriter } from './ltv-bounded';
import {
  expectedLevel,
  type GatherValidationData,
  type LevelledSignature,
  PADES_SIGNATURE_LENGTH,
  type SignatureLevel,
  signPdfAtLevel,
} from './pades';
import type { SignaturePlaceholderOptions } from './placeholder';

/** `SIGNING_POLICY`: a plain ETSI signature, or one under an ICP-Brasil policy (`icp-brasil.ts`). */
export type SigningPolicy = 'etsi' | IcpBrasilPolicyName;

/** What the signature placeholder of the rendered file must be: its room and its dictionary flavour. */
export type PlaceholderShape = Pick<SignaturePlaceholderOptions, 'signatureLength' | 'dictionary'>;

/** What `signAtLevel` needs: the rendering of the file to sign, the key, and what the level may use. */
export interface SignAtLevelOptions<R extends { pdf: Uint8Array }> {
  /**
   * Renders the file to sign, its page stating `stated`, with a signature placeholder of `placeholder` (the
   * caller adds its name, reason, location and contact). Called once, or again when the level reached is
   * lower than the one stated, so that the page states the level the file has.
   */
  render: (stated: SignatureLevel, placeholder: PlaceholderShape) => Promise<R>;
  signer: CmsSigner;
  /** The level asked (`SIGNING_LEVEL`); none: B-T with a TSA, else B-B. */
  level?: SignatureLevel | undefined;
  /** Default `etsi`. An ICP-Brasil policy is declared in the CMS and selects the PBAD dictionary. */
  policy?: SigningPolicy | undefined;
  /** AD-RA only (ignored under any other policy): the policy artifacts written into the /DSS (Tabela A.19). */
  artifacts?: IcpBrasilArtifacts | undefined;
  /** The signature timestamp (B-T up) and the document timestamp (B-LTA); needed from B-T up. */
  tsa?: VerifiedTimestamper | undefined;
  /** CA certificates (DER) that may complete a chain from B-LT up, e.g. the TSA's trust anchors. */
  issuers?: readonly Uint8Array[] | undefined;
  /** Revocation data for B-LT and B-LTA; none: every chain is reported uncovered, the level stops at B-T. */
  gather?: GatherValidationData | undefined;
  /** Where the long-term updates parse the PDF; default `boundedLtvWriter` (it may hold an uploaded original). */
  writer?: LtvWriter | undefined;
  /** Stops the work between rendering and signing, and between tries; its reason is thrown. */
  signal?: AbortSignal | undefined;
}

/** A signed file: the bytes, what `render` returned for them, and the level reached. */
export interface SignedAtLevel<R> {
  kind: 'signed';
  pdf: Uint8Array;
  rendered: R;
  /** The level the file reached, the one its page states: the one asked, or lower. */
  level: SignatureLevel;
  /** Why the first signature fell below the level asked (one English sentence per gap); empty when it did not. */
  shortfall: string[];
}

/** Nothing handed out: an AD-RC or AD-RA file without its long-term data would declare a policy it breaks. */
export interface PolicyRefusal {
  kind: 'refused';
  profile: 'AD-RC' | 'AD-RA';
  /** What was missing, as `SignedAtLevel.shortfall`. */
  shortfall: string[];
  /** One English sentence naming the profile and the gaps. */
  reason: string;
}

export type SignAtLevelResult<R> = SignedAtLevel<R> | PolicyRefusal;

/** Tries at a lower level after the first: B-T never falls short, so two suffice; three bound the loop anyway. */
const MAX_RETRIES = 3;

/** Without a revocation source every certificate is uncovered: B-LT and B-LTA stop at B-T and say why. */
const noRevocationSource: GatherValidationData = async () => ({
  material: { certs: [], ocsps: [], crls: [] },
  missing: [{ subject: 'every certificate', reason: 'this service has no revocation source' }],
});

/**
 * Renders and signs a certificate at `options.level`:
 * - the level the page states is known before signing (`expectedLevel`): B-T when the signer's own chain has
 *   no revocation data, the long-term extras (/DSS, document timestamp) still added as asked;
 * - the file is signed at the level asked (`signPdfAtLevel`); when it reaches less (the TSA's chain without
 *   revocation data, a responder failing in between) it is rendered and signed again at the level reached, so
 *   that its page states the level it has;
 * - under ICP-Brasil AD-RC or AD-RA a file below B-LTA is refused (`PolicyRefusal`), never returned.
 * @returns the signed file, the level reached and the first signature's shortfall; or the refusal.
 * @throws what `render`, `gather` and `signPdfAtLevel` throw (a TSA failure is never a shortfall: the
 *   signature is not silently downgraded); Error when a TSA is needed and missing; `signal`'s reason.
 */
export async function signAtLevel<R extends { pdf: Uint8Array }>(
  options: SignAtLevelOptions<R>,
): Promise<SignAtLevelResult<R>> {
  const { signer, signal } = options;
  const asked = options.level ?? (options.tsa ? 'B-T' : 'B-B');
  const policy = options.policy ?? 'etsi';
  const gather = options.gather ?? noRevocationSource;
  const issuers = options.issuers ?? [];
  const placeholder: PlaceholderShape = {
    signatureLength: PADES_SIGNATURE_LENGTH,
    ...(policy === 'etsi' ? {} : { dictionary: 'icp-brasil' as const }),
  };
  const signedAt = async (stated: SignatureLevel, level: SignatureLevel) => {
    const rendered = await options.render(stated, placeholder);
    signal?.throwIfAborted();
    const signature: LevelledSignature = await signPdfAtLevel(rendered.pdf, signer, {
      level,
      ...(options.tsa ? { tsa: options.tsa } : {}),
      ...(level === 'B-LT' || level === 'B-LTA' ? { gather, issuers } : {}),
      ...(policy === 'etsi' ? {} : { policy: icpBrasilSignaturePolicy(policy) }),
      // AD-RA: the policy, the list of approved policies and its signature in the DSS (Tabela A.19).
      ...(policy === 'icp-brasil-ad-ra' && options.artifacts ? { artifacts: options.artifacts } : {}),
      writer: options.writer ?? boundedLtvWriter,
    });
    return { rendered, signature };
  };
  let stated = await expectedLevel(asked, signer, { gather, issuers });
  let { rendered, signature } = await signedAt(stated, asked);
  const { shortfall } = signature;
  const refusal = policyRefusal(policy, signature.level, shortfall);
  if (refusal) return refusal;
  for (let tries = 0; signature.level !== stated && tries < MAX_RETRIES; tries += 1) {
    signal?.throwIfAborted();
    stated = signature.level;
    ({ rendered, signature } = await signedAt(stated, stated));
  }
  return { kind: 'signed', pdf: signature.pdf, rendered, level: signature.level, shortfall };
}

/**
 * AD-RC and AD-RA mandate the /DSS, /VRI and document timestamp (DOC-ICP-15.03 Tabela A.22), which only B-LTA
 * has: below it, the refusal naming what is missing; undefined otherwise.
 */
function policyRefusal(
  policy: SigningPolicy,
  reached: SignatureLevel,
  shortfall: string[],
): PolicyRefusal | undefined {
  if ((policy !== 'icp-brasil-ad-rc' && policy !== 'icp-brasil-ad-ra') || reached === 'B-LTA')
    return undefined;
  const profile = policy === 'icp-brasil-ad-ra' ? 'AD-RA' : 'AD-RC';
  return {
    kind: 'refused',
    profile,
    shortfall,
    reason: `ICP-Brasil ${profile} needs revocation data for every certificate, which could not all be had: ${shortfall.join('; ')}`,
  };
}
