/**
 * ICP-Brasil PAdES signature policies (DOC-ICP-15.03 v9.1, "Requisitos das políticas de assinatura digital
 * na ICP-Brasil", IN ITI nº 34 of 17 July 2025, Anexo 2 sections 11 to 14): their OIDs, the hash a signature
 * must carry in its signature-policy-identifier, and the signature dictionary entries Tabela A.18 mandates.
 *
 * Pure data and types (no node: import), so the verifier can read the same table in a browser.
 *
 * Where the values come from: the official policy files `PA_PAdES_AD_*_v1_*.der` (as published at
 * http://politicas.icpbrasil.gov.br/, copies in github.com/demoiselle/signer
 * policy-engine/src/main/resources/org/demoiselle/signer/policy/engine/artifacts/, commit d40b1736).
 * `hash` is the `signPolicyHash` stored inside each file, because DOC-ICP-15.03 Anexo 1 Nota 2 says the
 * attribute carries "o hash interno que está na própria PA e não o hash da PA que se encontra publicada na
 * LPA"; `fileSha256` is the SHA-256 of the file itself, the value the list of approved policies
 * (LPA_PAdES.der) publishes, kept only to recognise a signature that put the wrong one.
 */
import type { SignaturePolicyReference } from './cades';

/** The four PAdES policy families (DOC-ICP-15.03 Anexo 1, item 1). */
export type IcpBrasilProfile = 'AD-RB' | 'AD-RT' | 'AD-RC' | 'AD-RA';

/** `SIGNING_POLICY` values that select an ICP-Brasil policy. */
export type IcpBrasilPolicyName =
  | 'icp-brasil-ad-rb'
  | 'icp-brasil-ad-rt'
  | 'icp-brasil-ad-rc'
  | 'icp-brasil-ad-ra';

/** One approved PAdES policy version. Dates are the signing period of Anexo 2 item 5.1 (UTC days). */
export interface IcpBrasilPolicy {
  profile: IcpBrasilProfile;
  version: string;
  oid: string;
  /** Digest of the policy hash: SHA-256 (2.16.840.1.101.3.4.2.1) for every PAdES policy. */
  hashAlgorithm: string;
  /** Lowercase hex of the `signPolicyHash` inside the policy file: what `sigPolicyHash` must hold. */
  hashHex: string;
  /** Lowercase hex SHA-256 of the policy file (the LPA entry); never the value to sign. */
  fileSha256Hex: string;
  /** The policy file's URL (the LPA's URL field), used as the `spuri` qualifier (Anexo 1 Nota 1). */
  uri: string;
  signingPeriod: { from: string; until: string };
  /** True for the version a new signature of this profile must declare (v9.1: RB/RT 1.3, RC/RA 1.4). */
  current: boolean;
}

const SHA256 = '2.16.840.1.101.3.4.2.1';
const URL_BASE = 'http://politicas.icpbrasil.gov.br/';

function policy(
  profile: IcpBrasilProfile,
  version: string,
  oid: string,
  hashHex: string,
  fileSha256Hex: string,
  signingPeriod: { from: string; until: string },
  current = false,
): IcpBrasilPolicy {
  const file = `PA_PAdES_${profile.replace('-', '_')}_v${version.replace('.', '_')}.der`;
  return {
    profile,
    version,
    oid,
    hashAlgorithm: SHA256,
    hashHex,
    fileSha256Hex,
    uri: URL_BASE + file,
    signingPeriod,
    current,
  };
}

const OLD = { from: '2015-08-25', until: '2029-03-02' };
const V2016 = { from: '2016-07-15', until: '2029-03-02' };
const V2018 = { from: '2018-05-14', until: '2029-03-02' };
const V2025A = { from: '2025-06-12', until: '2037-10-22' };
const V2025B = { from: '2025-07-23', until: '2037-10-22' };

/**
 * Every PAdES policy version DOC-ICP-15.03 v9.1 lists (Anexo 2 sections 11-14), superseded ones included so
 * a verifier can name the policy of an older signature. Hashes computed from the official files (see the
 * module comment); file hashes equal the LPA_PAdES.der entries.
 */
export const ICP_BRASIL_PADES_POLICIES: readonly IcpBrasilPolicy[] = [
  // Anexo 2 section 11, AD-RB (2.16.76.1.7.1.11.1[.n]).
  policy(
    'AD-RB',
    '1.0',
    '2.16.76.1.7.1.11.1',
    '501d69b4b71fc6e57323c2c74131a9c8c62409be378ba788dc288555611b9e58',
    '739a8249a24b681e4b2280e16055d254b26b684a7ac7bc0e5aca234cc0506bbd',
    OLD,
  ),
  policy(
    'AD-RB',
    '1.1',
    '2.16.76.1.7.1.11.1.1',
    '44fc5816eb2d705d8c8f022a7f93b3fb49edfae1a7b9149ef6fab833e9bb63f8',
    '95752d26ca974d46675ae7fb787b606a71ea941f26b59f6b6a321f97d63b9cb1',
    V2018,
  ),
  policy(
    'AD-RB',
    '1.2',
    '2.16.76.1.7.1.11.1.2',
    'bf22358c963b52971f18c822d8529c5163fe55fa8eed1068d327adc6bc082ee2',
    '84ed4620c6531e4a4853adecc9e2496926c823418dd3141963ed9c4f9704a03d',
    V2025A,
  ),
  policy(
    'AD-RB',
    '1.3',
    '2.16.76.1.7.1.11.1.3',
    '23e4be4b9b362172e4ebb0e72b86a133ece5aad843d8651c6e38a0ba3f08fc60',
    '23da544aef71f7a75dc85fa6e17a83875741e4baef41ec178258a5c86ace54dd',
    V2025B,
    true,
  ),
  // Anexo 2 section 12, AD-RT (2.16.76.1.7.1.12.1[.n]).
  policy(
    'AD-RT',
    '1.0',
    '2.16.76.1.7.1.12.1',
    'cefbba0147077bd216eb04d2b25c56c3d4ac60dbbe08cdd697d2dcd0029b56e8',
    '92d4f1c9cf16ae43a7e6461470b9474cc97dc9f9ff03ade6eeaf3f1ff8c11380',
    OLD,
  ),
  policy(
    'AD-RT',
    '1.1',
    '2.16.76.1.7.1.12.1.1',
    'fa1d44e76ad91e2f6cd471b6987e9c0f1c70d4b70da0956e7becf4dc792c0c1f',
    '953f7a202391c912216b9e84cf5dae75fe3e10e7f725fc77b60fca32fbac6426',
    V2018,
  ),
  policy(
    'AD-RT',
    '1.2',
    '2.16.76.1.7.1.12.1.2',
    '19e0be31d91a6ffa694bbe0e9b35e4bc2f877f62dc6ac7a7833ada6345e15af8',
    'da6e12c17e9be0343abbdb494723effcb53fe95f5f0b9bbee1b35bcef3a01eef',
    V2025A,
  ),
  policy(
    'AD-RT',
    '1.3',
    '2.16.76.1.7.1.12.1.3',
    '21d6e8d9f85e5626dc71307337a7cabd6ffef8d085038746775cf0ce6ba4d3b5',
    '92a972e7c292bb884e98e650773d9e9876994effb43eb36199b06bf2864a677c',
    V2025B,
    true,
  ),
  // Anexo 2 section 13, AD-RC (2.16.76.1.7.1.13.1[.n]).
  policy(
    'AD-RC',
    '1.0',
    '2.16.76.1.7.1.13.1',
    'b3d8a9ef6b475a8cd62f07b3edb8b0bd974dd15a165eeb197bd987d7591e0fee',
    'a1cda04a15c7b79f4cb8653647b81c869f51818e7524bc18290fc99b8a7bd4ce',
    OLD,
  ),
  policy(
    'AD-RC',
    '1.1',
    '2.16.76.1.7.1.13.1.1',
    '3fe5e1eeea9f6723568dc9e2c313c0e19c817faa923ab29b52ea76d1fb53027c',
    'e30d4aff9c88a1cf33ece0fe84859869c5e77802b2a23265aec9338171a48de6',
    V2016,
  ),
  policy(
    'AD-RC',
    '1.2',
    '2.16.76.1.7.1.13.1.2',
    '9f743696b821e535252c17df754cd9379fd2d3b6870179248c64a5c80604399d',
    '012ad1cbe9629a53d8c310dc9e0733d3b77d6bb5877bdcd07627bb0f98771a8b',
    V2018,
  ),
  policy(
    'AD-RC',
    '1.3',
    '2.16.76.1.7.1.13.1.3',
    '235488859f7ada5d4984c364cc1c8eee4673fb7c70ff8b19dd236a86f3d87cc2',
    '8fbcd072bb60e9776a520a53218a31fb1b0535b12ea3f6599abeef44d2cb8ba7',
    V2025A,
  ),
  policy(
    'AD-RC',
    '1.4',
    '2.16.76.1.7.1.13.1.4',
    '712f18a9f0163c1e90da6ff0b7165543378a18a0f06d3cb21668067cac229bd2',
    'defe0ce4a45be8d7bf0a62bfe7baba5329b7665e5585568de00b9f3e56c0ce83',
    V2025B,
    true,
  ),
  // Anexo 2 section 14, AD-RA (2.16.76.1.7.1.14.1[.n]).
  policy(
    'AD-RA',
    '1.0',
    '2.16.76.1.7.1.14.1',
    '6d1dd552117d1de402f515f9f77ef9d30b2162995f93a2290c134c9c24387bdf',
    '7b80c1ff81c53c55e2845039acd821790eabb1191bb311a5a352e4e384bf97b2',
    OLD,
  ),
  policy(
    'AD-RA',
    '1.1',
    '2.16.76.1.7.1.14.1.1',
    '2ac50c5be4ccdde5c240a4a304f7021642841642aa0ed8b403e6c518dd9d81b6',
    '8e7ce798e62840acefb7180020f9a904ddc3ea6d74b3004052334bc6aafdd040',
    V2016,
  ),
  policy(
    'AD-RA',
    '1.2',
    '2.16.76.1.7.1.14.1.2',
    '1f1b8e74be9626bc1702d40ce1c126eb1c9caf7bade6b1fd779c8f60e733dd7c',
    '8e7689b5533dca9ff7a56655d6ceeb5e9409c6c4aea41bb1cd4bddde8b608ff2',
    V2018,
  ),
  policy(
    'AD-RA',
    '1.3',
    '2.16.76.1.7.1.14.1.3',
    '542600efaa7cac8e1db8cee572ef275f6157de27cf5e2fd75466ae2dcf8fab04',
    '6102b07606a2704aa5ae4d04e6583725c840ba53c56f095699a3fe24f1f2834d',
    V2025A,
  ),
  policy(
    'AD-RA',
    '1.4',
    '2.16.76.1.7.1.14.1.4',
    'ffa9fd474812f6ce63d625679c9ef235a6547b017be941b2c094aa868e67e123',
    'b77680a623ba7b9757c38404d4759d966791338665ff5cf152c1c0917f97c548',
    V2025B,
    true,
  ),
];

const PROFILE_BY_NAME: Readonly<Record<IcpBrasilPolicyName, IcpBrasilProfile>> = {
  'icp-brasil-ad-rb': 'AD-RB',
  'icp-brasil-ad-rt': 'AD-RT',
  'icp-brasil-ad-rc': 'AD-RC',
  'icp-brasil-ad-ra': 'AD-RA',
};

/** The current version of a policy family (DOC-ICP-15.03 v9.1: AD-RB 1.3, AD-RT 1.3, AD-RC 1.4, AD-RA 1.4). */
export function currentIcpBrasilPolicy(name: IcpBrasilPolicyName): IcpBrasilPolicy {
  const profile = PROFILE_BY_NAME[name];
  const found = ICP_BRASIL_PADES_POLICIES.find((p) => p.profile === profile && p.current);
  if (!found) throw new Error(`ICP-Brasil: no current ${profile} policy`);
  return found;
}

/** The policy version a signature-policy-identifier OID names, or undefined when it is not a PAdES policy. */
export function icpBrasilPolicyByOid(oid: string): IcpBrasilPolicy | undefined {
  return ICP_BRASIL_PADES_POLICIES.find((p) => p.oid === oid);
}

/**
 * The signature-policy-identifier to give `buildCadesSignature` for `name` (the current version): policy
 * OID, SHA-256 and the internal hash (Anexo 1 Nota 2), and the policy URL as the single `spuri` qualifier
 * (Anexo 1 Nota 1).
 */
export function icpBrasilSignaturePolicy(name: IcpBrasilPolicyName): SignaturePolicyReference {
  const p = currentIcpBrasilPolicy(name);
  return { oid: p.oid, hashAlgorithm: p.hashAlgorithm, hash: hexBytes(p.hashHex), uri: p.uri };
}

/**
 * Signature dictionary values DOC-ICP-15.03 Tabela A.18 mandates for every PAdES policy: `/Filter /PBAD_PAdES`
 * and `/SubFilter /PBAD.PAdES` (instead of ETSI EN 319 142-1's Adobe.PPKLite / ETSI.CAdES.detached).
 */
export const PBAD_FILTER = 'PBAD_PAdES';
export const PBAD_SUBFILTER = 'PBAD.PAdES';

/**
 * The least PAdES baseline level each profile needs, from DOC-ICP-15.03: AD-RT mandates the signature
 * timestamp (Anexo 2 12.5.2.1.1.3); AD-RC and AD-RA mandate the DSS, VRI and a document timestamp
 * (Tabela A.22, and their br_ext_mandatedDocTSEntries extension, Anexo 2 13/14.5.2.1.1.6.3).
 */
export const ICP_BRASIL_MIN_LEVEL: Readonly<Record<IcpBrasilProfile, 'B-B' | 'B-T' | 'B-LTA'>> = {
  'AD-RB': 'B-B',
  'AD-RT': 'B-T',
  'AD-RC': 'B-LTA',
  'AD-RA': 'B-LTA',
};

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
