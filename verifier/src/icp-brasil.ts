import {
  type IcpBrasilPolicy,
  type IcpBrasilProfile,
  icpBrasilPolicyByOid,
  PBAD_FILTER,
  PBAD_SUBFILTER,
} from '@notary/pdf/icp-brasil';
import { asn1js, pkijs } from '@notary/trust/asn1';
import { digest, equalBytes, toArrayBuffer, toHex } from '@notary/trust/bytes';
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  type PDFObject,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFString,
} from 'pdf-lib';
import { decodeAtMost } from './certificate.ts';
import { errorMessage } from './error-message.ts';
import { data, foreign, type Message, msg, render } from './messages/index.ts';

/**
 * Conformance of a PAdES signature to the ICP-Brasil policy it declares (DOC-ICP-15.03 v9.1, Anexo 1 tables
 * A.14 to A.22 and notes 1 to 11, Anexo 2 sections 11 to 14): every mandatory (O) and forbidden (ND) entry of
 * the tables for the declared policy's column (AD-RB, AD-RT, AD-RC, AD-RA), each reported as one row naming
 * the table, so a failure reads e.g. "Tabela A.18: /SubFilter must be /PBAD.PAdES (found /ETSI.CAdES.detached)".
 * Optional (P) entries are not reported. Runs in browsers (pkijs, pdf-lib, WebCrypto).
 */

/** Entries of a PDF dictionary: key without its slash, value as written for names (`/PBAD_PAdES`), numbers
 * and strings (text); other values (arrays, dictionaries, streams) as `[array]`, `<<dict>>`, `stream`. */
export type PdfEntries = Readonly<Record<string, string>>;

/** What the conformance check reads of one signature; see `readIcpBrasilDictionaries` for the PDF parts. */
export interface IcpBrasilFacts {
  /** The signature dictionary (Tabela A.18). */
  signatureDictionary: PdfEntries;
  /** The signer's SignerInfo from `/Contents` (tables A.14 to A.17). */
  signerInfo: pkijs.SignerInfo;
  /** The newest catalog's `/DSS` (Tabela A.19); null when absent. */
  dss: PdfEntries | null;
  /** This signature's `/VRI` entry (Tabela A.20); null when absent. */
  vri: PdfEntries | null;
  /**
   * Lowercase hex SHA-256 of each decoded stream of the `/DSS` `/PBAD_PolicyArtifacts` array (Tabela A.19),
   * or an `unreadable: ...` text for one that could not be decoded; absent when the array is.
   */
  policyArtifactDigests?: readonly string[];
  /** Every document timestamp's dictionary (Tabela A.21), oldest first. */
  documentTimestamps: readonly PdfEntries[];
  /** When the signature is proven to exist (its signature timestamp's genTime), if known: checked against
   * the policy's signing period (Anexo 2 item 5.1). */
  signedAt?: Date;
}

export interface IcpBrasilRow {
  /** `Tabela A.18`, `Anexo 1 Nota 2`, ... */
  table: string;
  /** The entry or attribute the row is about. */
  row: string;
  ok: boolean;
  detail: string;
  /** `row` as a message (a technical name is data). */
  rowMessage?: Message;
  /** `detail` as a message. */
  detailMessage?: Message;
}

/** A row with its texts rendered in English and kept as messages. */
function icpRow(table: string, row: Message, ok: boolean, detail: Message): IcpBrasilRow {
  return {
    table,
    row: render(row, 'en'),
    ok,
    detail: render(detail, 'en'),
    rowMessage: row,
    detailMessage: detail,
  };
}

export interface IcpBrasilConformance {
  /** The declared policy, e.g. `AD-RB v1.3 (2.16.76.1.7.1.11.1.3)`; the bare OID when it is not an
   * ICP-Brasil PAdES policy; null when the signature declares no policy. */
  policy: string | null;
  /** The rows checked for that policy; empty when `policy` is null. */
  rows: IcpBrasilRow[];
}

const ATTR = {
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  countersignature: '1.2.840.113549.1.9.6',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  sigPolicyId: '1.2.840.113549.1.9.16.2.15',
  signerLocation: '1.2.840.113549.1.9.16.2.17',
  signerAttr: '1.2.840.113549.1.9.16.2.18',
  contentTimeStamp: '1.2.840.113549.1.9.16.2.20',
  certificateRefs: '1.2.840.113549.1.9.16.2.21',
  revocationRefs: '1.2.840.113549.1.9.16.2.22',
  certValues: '1.2.840.113549.1.9.16.2.23',
  revocationValues: '1.2.840.113549.1.9.16.2.24',
  escTimeStamp: '1.2.840.113549.1.9.16.2.25',
  attrCertificateRefs: '1.2.840.113549.1.9.16.2.44',
  attrRevocationRefs: '1.2.840.113549.1.9.16.2.45',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  archiveTimestampV2: '1.2.840.113549.1.9.16.2.48',
  adbeRevocationInfoArchival: '1.2.840.113583.1.1.8',
  spqEtsUri: '1.2.840.113549.1.9.16.5.1',
  sha256: '2.16.840.1.101.3.4.2.1',
} as const;

type Presence = 'O' | 'ND' | 'P';
/** One table line: its four columns RB, RT, RC, RA. */
type Columns = readonly [Presence, Presence, Presence, Presence];
const COLUMN: Readonly<Record<IcpBrasilProfile, number>> = { 'AD-RB': 0, 'AD-RT': 1, 'AD-RC': 2, 'AD-RA': 3 };
const ALL_O: Columns = ['O', 'O', 'O', 'O'];
const ALL_ND: Columns = ['ND', 'ND', 'ND', 'ND'];

/** Tabela A.14: signed attributes of the signer's SignerInfo (P rows left out). */
const A14: readonly [string, string, Columns][] = [
  ['id-contentType', ATTR.contentType, ALL_O],
  ['id-messageDigest', ATTR.messageDigest, ALL_O],
  ['id-aa-signingCertificate', ATTR.signingCertificate, ALL_ND],
  ['id-aa-signingCertificateV2', ATTR.signingCertificateV2, ALL_O],
  ['id-aa-ets-sigPolicyId', ATTR.sigPolicyId, ALL_O],
  ['id-signingTime', ATTR.signingTime, ALL_ND],
  ['id-aa-ets-signerLocation', ATTR.signerLocation, ALL_ND],
  ['adbe-revocationInfoArchival', ATTR.adbeRevocationInfoArchival, ALL_ND],
];

/** Tabela A.15: unsigned attributes of the signer's SignerInfo. */
const A15: readonly [string, string, Columns][] = [
  ['id-countersignature', ATTR.countersignature, ALL_ND],
  ['id-aa-signatureTimeStampToken', ATTR.signatureTimeStampToken, ['P', 'O', 'O', 'O']],
  ['id-aa-ets-certificateRefs', ATTR.certificateRefs, ALL_ND],
  ['id-aa-ets-revocationRefs', ATTR.revocationRefs, ALL_ND],
  ['id-aa-ets-attrCertificateRefs', ATTR.attrCertificateRefs, ALL_ND],
  ['id-aa-ets-attrRevocationRefs', ATTR.attrRevocationRefs, ALL_ND],
  ['id-aa-ets-escTimeStamp', ATTR.escTimeStamp, ALL_ND],
  ['id-aa-ets-certValues', ATTR.certValues, ALL_ND],
  ['id-aa-ets-revocationValues', ATTR.revocationValues, ALL_ND],
  ['id-aa-ets-archiveTimestampV2', ATTR.archiveTimestampV2, ALL_ND],
];

/** Tabela A.16: signed attributes of the signature timestamp token's SignerInfo. */
const A16: readonly [string, string, Columns][] = [
  ['id-contentType', ATTR.contentType, ALL_O],
  ['id-messageDigest', ATTR.messageDigest, ALL_O],
  ['id-aa-signingCertificate', ATTR.signingCertificate, ALL_ND],
  ['id-aa-signingCertificateV2', ATTR.signingCertificateV2, ALL_O],
  ['id-aa-ets-sigPolicyId', ATTR.sigPolicyId, ALL_ND],
  ['id-aa-ets-signerAttr', ATTR.signerAttr, ALL_ND],
  ['id-signingTime', ATTR.signingTime, ALL_ND],
  ['id-aa-ets-signerLocation', ATTR.signerLocation, ALL_ND],
  ['id-aa-ets-contentTimeStamp', ATTR.contentTimeStamp, ALL_ND],
];

/** Tabela A.18: signature dictionary entries; a value means the entry must have it (a name). */
const A18: readonly [string, string | null, Columns][] = [
  ['Type', '/Sig', ALL_O],
  ['Filter', `/${PBAD_FILTER}`, ALL_O],
  ['SubFilter', `/${PBAD_SUBFILTER}`, ALL_O],
  ['Contents', null, ALL_O],
  ['Cert', null, ALL_ND],
  ['ByteRange', null, ALL_O],
  ['R', null, ALL_ND],
  ['Prop_AuthType', null, ALL_ND],
];

/** Tabela A.19: DSS dictionary entries (OCSPs/CRLs: at least one, its note). */
const A19: readonly [string, string | null, Columns][] = [
  ['Type', '/DSS', ALL_O],
  ['VRI', null, ALL_O],
  ['Certs', null, ALL_O],
  ['PBAD_PolicyArtifacts', null, ['P', 'P', 'P', 'O']],
  ['PBAD_LpaArtifacts', null, ['P', 'P', 'P', 'O']],
  ['PBAD_LpaSignatures', null, ['P', 'P', 'P', 'O']],
];

/** Tabela A.20: VRI dictionary entries (OCSP/CRL: at least one, note 1; TU/TS: not both, note 2). */
const A20: readonly [string, string | null, Columns][] = [
  ['Type', '/VRI', ALL_O],
  ['Cert', null, ALL_O],
  ['PBAD_PolicyArtifact', null, ['P', 'P', 'P', 'O']],
  ['PBAD_LpaArtifact', null, ['P', 'P', 'P', 'O']],
  ['PBAD_LpaSignature', null, ['P', 'P', 'P', 'O']],
];

/** Tabela A.21: document timestamp dictionary entries. */
const A21: readonly [string, string | null, Columns][] = [
  ['Type', '/DocTimeStamp', ALL_O],
  ['SubFilter', '/ETSI.RFC3161', ALL_O],
  ['Contents', null, ALL_O],
];

/** Tabela A.22: dictionaries (the VRI row for RB/RT is "P*": mandatory once there is a DSS, its note). */
const A22_DSS: Columns = ['P', 'P', 'O', 'O'];
const A22_DOC_TS: Columns = ['P', 'P', 'O', 'O'];

/**
 * Checks `facts` against the policy its signature-policy-identifier names.
 *
 * @returns `policy` null and no rows when the SignerInfo has no id-aa-ets-sigPolicyId (not an ICP-Brasil
 *   signature); the bare OID and one failing row when the OID is not a PAdES policy of DOC-ICP-15.03 v9.1;
 *   otherwise the policy's name and one row per O/ND entry of tables A.14 to A.22 for its column, plus:
 *   Anexo 1 Nota 1 (at most one qualifier, an spuri), Nota 2 (sigPolicyHash = the policy's internal hash),
 *   Nota 3 (hash AlgorithmIdentifier without parameters), Nota 11 (no other unsigned attribute), and Anexo 2
 *   item 5.2.1.1.4 (signingCertificateV2 references only the signer's certificate).
 *   A malformed attribute makes its row fail with the reason; this function never throws.
 */
export function checkIcpBrasilProfile(facts: IcpBrasilFacts): IcpBrasilConformance {
  const signed = facts.signerInfo.signedAttrs?.attributes ?? [];
  const unsigned = facts.signerInfo.unsignedAttrs?.attributes ?? [];
  const policyAttr = signed.find((a) => a.type === ATTR.sigPolicyId);
  if (!policyAttr) return { policy: null, rows: [] };
  const declared = readPolicyId(policyAttr);
  if ('problem' in declared) {
    return {
      policy: null,
      rows: [icpRow('Tabela A.14', data('id-aa-ets-sigPolicyId'), false, declared.problem)],
    };
  }
  const policy = icpBrasilPolicyByOid(declared.oid);
  if (!policy) {
    return {
      policy: declared.oid,
      rows: [
        icpRow('Anexo 2', msg('icp.rowPolicyOid'), false, msg('icp.notIcpPolicy', { oid: declared.oid })),
      ],
    };
  }
  const col = COLUMN[policy.profile];
  const rows: IcpBrasilRow[] = [];
  const add: Add = (table, row, ok, detail) => rows.push(icpRow(table, row, ok, detail));
  const pv = { profile: policy.profile, version: policy.version };

  attributeRows(add, 'Tabela A.14', msg('icp.kindSigned'), A14, col, signed);
  policyRows(add, declared, policy);
  const essV2 = signed.find((a) => a.type === ATTR.signingCertificateV2);
  if (essV2) {
    const count = essCertIdCount(essV2);
    add(
      'Anexo 2 item 5.2.1.1.4',
      data('id-aa-signingCertificateV2'),
      count === 1,
      count === 1
        ? msg('icp.essOnlySigner')
        : msg('icp.essMustOnlySigner', {
            found: count < 0 ? msg('icp.malformedValue') : msg('icp.references', { count }),
          }),
    );
  }
  algorithmRows(add, facts.signerInfo, policy);
  if (facts.signedAt) rows.push(periodRow(policy, facts.signedAt));
  attributeRows(add, 'Tabela A.15', msg('icp.kindUnsigned'), A15, col, unsigned);
  const others = unsigned.filter((a) => a.type !== ATTR.signatureTimeStampToken).map((a) => a.type);
  add(
    'Anexo 1 Nota 11',
    msg('icp.rowUnsignedAttributes'),
    others.length === 0,
    others.length === 0
      ? msg('icp.onlyTimestampAttr')
      : msg('icp.onlyTimestampAllowed', { found: others.join(', ') }),
  );
  const token = unsigned.find((a) => a.type === ATTR.signatureTimeStampToken);
  if (token) timestampRows(add, token, col);

  entryRows(add, 'Tabela A.18', msg('icp.signatureDictionary'), A18, col, facts.signatureDictionary);

  const mustBeFor = msg('icp.mustBePresentFor', { profile: policy.profile });
  const optional = msg('icp.absentOptional');
  const needDss = A22_DSS[col] === 'O';
  add(
    'Tabela A.22',
    msg('icp.rowDss'),
    !needDss || facts.dss !== null,
    facts.dss !== null ? msg('word.present') : needDss ? mustBeFor : optional,
  );
  const needVri = needDss || facts.dss !== null;
  add(
    'Tabela A.22',
    msg('icp.rowVri'),
    !needVri || facts.vri !== null,
    facts.vri !== null
      ? msg('icp.presentForSignature')
      : needDss
        ? mustBeFor
        : facts.dss !== null
          ? msg('icp.mustBePresentWithDss')
          : optional,
  );
  const needDocTs = A22_DOC_TS[col] === 'O';
  add(
    'Tabela A.22',
    msg('icp.rowDocTs'),
    !needDocTs || facts.documentTimestamps.length > 0,
    facts.documentTimestamps.length > 0
      ? msg('icp.countPresent', { count: facts.documentTimestamps.length })
      : needDocTs
        ? mustBeFor
        : optional,
  );
  if (facts.dss) {
    entryRows(add, 'Tabela A.19', data('DSS'), A19, col, facts.dss);
    const has = 'OCSPs' in facts.dss || 'CRLs' in facts.dss;
    add('Tabela A.19', msg('icp.rowOcspsOrCrls'), has, msg(has ? 'word.present' : 'icp.ocspsOrCrlsMust'));
    // The policy artifact must be the declared policy's file: its SHA-256 is the LPA entry's file hash.
    if (facts.policyArtifactDigests !== undefined) {
      const found = facts.policyArtifactDigests.includes(policy.fileSha256Hex);
      const sha256 = policy.fileSha256Hex;
      add(
        'Tabela A.19',
        data('PBAD_PolicyArtifacts digest'),
        found,
        found
          ? msg('icp.holdsPolicyFile', { ...pv, sha256 })
          : msg('icp.mustHoldPolicyFile', {
              ...pv,
              sha256,
              found: facts.policyArtifactDigests.join(', ') || msg('icp.noStream'),
            }),
      );
    }
  }
  if (facts.vri) {
    entryRows(add, 'Tabela A.20', data('VRI'), A20, col, facts.vri);
    const has = 'OCSP' in facts.vri || 'CRL' in facts.vri;
    add('Tabela A.20', msg('icp.rowOcspOrCrl'), has, msg(has ? 'word.present' : 'icp.ocspOrCrlMust'));
    const both = 'TU' in facts.vri && 'TS' in facts.vri;
    add('Tabela A.20', data('TU / TS'), !both, msg(both ? 'icp.tuTsBoth' : 'icp.notBoth'));
  }
  facts.documentTimestamps.forEach((entries, i) => {
    entryRows(add, 'Tabela A.21', msg('icp.documentTimestampN', { n: i + 1 }), A21, col, entries);
  });
  return { policy: `${policy.profile} v${policy.version} (${policy.oid})`, rows };
}

type Add = (table: string, row: Message, ok: boolean, detail: Message) => void;

function periodRow(policy: IcpBrasilPolicy, signedAt: Date): IcpBrasilRow {
  const day = signedAt.toISOString().slice(0, 10);
  const inside = day >= policy.signingPeriod.from && day <= policy.signingPeriod.until;
  const period = {
    at: signedAt.toISOString(),
    profile: policy.profile,
    version: policy.version,
    from: policy.signingPeriod.from,
    until: policy.signingPeriod.until,
  };
  return icpRow(
    'Anexo 2 item 5.1',
    msg('icp.rowSigningPeriod'),
    inside,
    msg(inside ? 'icp.period' : 'icp.periodOutside', period),
  );
}

/**
 * The signing-period row (Anexo 2 item 5.1) of a signature proven to exist at `signedAt` (its valid
 * signature timestamp's time), for the ICP-Brasil policy its SignerInfo declares; null when it declares
 * none or one that is not an ICP-Brasil PAdES policy.
 */
export function icpBrasilSigningPeriodRow(signerInfo: pkijs.SignerInfo, signedAt: Date): IcpBrasilRow | null {
  const attribute = signerInfo.signedAttrs?.attributes.find((a) => a.type === ATTR.sigPolicyId);
  const declared = attribute ? readPolicyId(attribute) : null;
  const policy = declared && !('problem' in declared) ? icpBrasilPolicyByOid(declared.oid) : undefined;
  return policy ? periodRow(policy, signedAt) : null;
}

const ALGORITHM = {
  sha256: '2.16.840.1.101.3.4.2.1',
  sha512: '2.16.840.1.101.3.4.2.3',
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  sha512WithRSAEncryption: '1.2.840.113549.1.1.13',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  ecdsaWithSHA512: '1.2.840.10045.4.3.4',
  ed25519: '1.3.101.112',
  ed448: '1.3.101.113',
} as const;

/** Versions from which ECDSA and EdDSA are allowed (AD-RB/RT 1.2, AD-RC/RA 1.3; Anexo 2 5.2.3.1.1.1). */
const ECDSA_FROM: Readonly<Record<IcpBrasilProfile, number>> = {
  'AD-RB': 1.2,
  'AD-RT': 1.2,
  'AD-RC': 1.3,
  'AD-RA': 1.3,
};

/**
 * Anexo 2 item 5.2.3.1.1.1 (5.2.4.1.1.1 for RT/RC/RA): SHA-256 or SHA-512 with RSA for every version; from
 * AD-RB/RT 1.2 and AD-RC/RA 1.3 also ECDSA, Ed25519 and Ed448 (the 'ph' variants are not used in CMS). A
 * SignerInfo may name plain rsaEncryption with the digest beside it (RFC 3370 3.2), read as RSA with it.
 */
function algorithmRows(add: Add, info: pkijs.SignerInfo, policy: IcpBrasilPolicy): void {
  const digestOid = info.digestAlgorithm.algorithmId;
  const signatureOid = info.signatureAlgorithm.algorithmId;
  const digestOk = digestOid === ALGORITHM.sha256 || digestOid === ALGORITHM.sha512;
  const rsa: string[] = [
    ALGORITHM.rsaEncryption,
    ALGORITHM.sha256WithRSAEncryption,
    ALGORITHM.sha512WithRSAEncryption,
  ];
  const modern: string[] = [
    ALGORITHM.ecdsaWithSHA256,
    ALGORITHM.ecdsaWithSHA512,
    ALGORITHM.ed25519,
    ALGORITHM.ed448,
  ];
  const allowed = Number(policy.version) >= ECDSA_FROM[policy.profile] ? [...rsa, ...modern] : rsa;
  const ok = digestOk && allowed.includes(signatureOid);
  const found = { signature: signatureOid, digest: digestOid };
  add(
    'Anexo 2 item 5.2.3.1.1.1',
    msg('icp.rowSignatureAlgorithm'),
    ok,
    ok
      ? msg('icp.algorithmOk', found)
      : msg(allowed.length > rsa.length ? 'icp.algorithmAllowsModern' : 'icp.algorithmAllowsRsa', {
          profile: policy.profile,
          version: policy.version,
          ...found,
        }),
  );
}

function attributeRows(
  add: Add,
  table: string,
  kind: Message,
  lines: readonly [string, string, Columns][],
  col: number,
  attributes: readonly pkijs.Attribute[],
): void {
  for (const [name, oid, columns] of lines) {
    const need = columns[col];
    if (need === 'P' || need === undefined) continue;
    const present = attributes.some((a) => a.type === oid);
    const ok = need === 'O' ? present : !present;
    const attr = { kind, name };
    add(
      table,
      data(name),
      ok,
      msg(
        ok
          ? present
            ? 'icp.attrPresent'
            : 'icp.attrAbsent'
          : need === 'O'
            ? 'icp.attrMustBePresent'
            : 'icp.attrMustNotBePresent',
        attr,
      ),
    );
  }
}

function entryRows(
  add: Add,
  table: string,
  where: Message,
  lines: readonly [string, string | null, Columns][],
  col: number,
  entries: PdfEntries,
): void {
  for (const [key, value, columns] of lines) {
    const need = columns[col];
    if (need === 'P' || need === undefined) continue;
    const found = entries[key];
    const row = data(`/${key}`);
    const entry = { where, key };
    if (need === 'ND') {
      add(
        table,
        row,
        found === undefined,
        msg(found === undefined ? 'icp.entryAbsent' : 'icp.entryMustNotBePresent', entry),
      );
      continue;
    }
    if (found === undefined) {
      add(
        table,
        row,
        false,
        value
          ? msg('icp.entryMustBePresentAndBe', { ...entry, value })
          : msg('icp.entryMustBePresent', entry),
      );
    } else if (value !== null && found !== value) {
      add(table, row, false, msg('icp.entryMustBe', { ...entry, value, found }));
    } else {
      add(
        table,
        row,
        true,
        value === null ? msg('icp.entryPresent', entry) : msg('icp.entryIs', { ...entry, value }),
      );
    }
  }
}

interface DeclaredPolicy {
  oid: string;
  hashAlgorithm: string;
  hashAlgorithmHasParameters: boolean;
  hash: Uint8Array;
  qualifiers: { id: string; uri: string | null }[];
}

/** SignaturePolicyIdentifier (RFC 5126 5.8.1), explicit choice; `problem` says why it does not read. */
function readPolicyId(attribute: pkijs.Attribute): DeclaredPolicy | { problem: Message } {
  const value: unknown = attribute.values[0];
  if (attribute.values.length !== 1 || !(value instanceof asn1js.Sequence)) {
    return { problem: msg('icp.policyIdNotSequence') };
  }
  const notA = (field: Message, shape: Message) => ({ problem: msg('icp.policyIdField', { field, shape }) });
  const anOid = msg('icp.shapeOid');
  const aSequence = msg('icp.shapeSequence');
  const [oid, hash, qualifiers] = value.valueBlock.value;
  if (!(oid instanceof asn1js.ObjectIdentifier)) return notA(data('sigPolicyId'), anOid);
  if (!(hash instanceof asn1js.Sequence)) return notA(data('sigPolicyHash'), aSequence);
  const [alg, hashValue] = hash.valueBlock.value;
  if (!(alg instanceof asn1js.Sequence) || !(hashValue instanceof asn1js.OctetString)) {
    return notA(data('sigPolicyHash'), data('{ AlgorithmIdentifier, OCTET STRING }'));
  }
  const [algOid, ...params] = alg.valueBlock.value;
  if (!(algOid instanceof asn1js.ObjectIdentifier)) return notA(msg('icp.hashAlgorithm'), anOid);
  const read: DeclaredPolicy = {
    oid: oid.valueBlock.toString(),
    hashAlgorithm: algOid.valueBlock.toString(),
    hashAlgorithmHasParameters: params.length > 0,
    hash: new Uint8Array(hashValue.valueBlock.valueHexView),
    qualifiers: [],
  };
  if (qualifiers !== undefined) {
    if (!(qualifiers instanceof asn1js.Sequence)) return notA(data('sigPolicyQualifiers'), aSequence);
    for (const q of qualifiers.valueBlock.value.slice(0, 16)) {
      const [id, qualifier] = q instanceof asn1js.Sequence ? q.valueBlock.value : [];
      if (!(id instanceof asn1js.ObjectIdentifier)) return { problem: msg('icp.qualifierNoOid') };
      read.qualifiers.push({
        id: id.valueBlock.toString(),
        uri: qualifier instanceof asn1js.IA5String ? qualifier.valueBlock.value : null,
      });
    }
  }
  return read;
}

function policyRows(add: Add, declared: DeclaredPolicy, policy: IcpBrasilPolicy): void {
  const hashHex = toHex(declared.hash);
  const ok = declared.hashAlgorithm === policy.hashAlgorithm && hashHex === policy.hashHex;
  add(
    'Anexo 1 Nota 2',
    data('sigPolicyHash'),
    ok,
    ok
      ? msg('icp.policyHashOk', { hash: hashHex })
      : hashHex === policy.fileSha256Hex
        ? msg('icp.policyHashIsFileHash', { expected: policy.hashHex, hash: hashHex })
        : msg('icp.policyHashWrong', {
            expected: policy.hashHex,
            alg: declared.hashAlgorithm,
            hash: hashHex,
          }),
  );
  add(
    'Anexo 1 Nota 3',
    data('sigPolicyHash.hashAlgorithm'),
    !declared.hashAlgorithmHasParameters,
    msg(declared.hashAlgorithmHasParameters ? 'icp.paramsShouldBeAbsent' : 'icp.noParameters'),
  );
  const q = declared.qualifiers;
  const qualifiersOk = q.length === 0 || (q.length === 1 && q[0]?.id === ATTR.spqEtsUri && q[0].uri !== null);
  add(
    'Anexo 1 Nota 1',
    data('sigPolicyQualifiers'),
    qualifiersOk,
    q.length === 0
      ? msg('icp.qualifiersAbsent')
      : qualifiersOk
        ? msg('icp.oneSpuri', { uri: q[0]?.uri ?? '' })
        : msg('icp.qualifiersWrong', { found: q.map((x) => x.id).join(', ') }),
  );
}

/** Tables A.16 and A.17 on the signature timestamp token's SignerInfo. */
function timestampRows(add: Add, token: pkijs.Attribute, col: number): void {
  let tokenInfo: pkijs.SignerInfo | undefined;
  try {
    const value: unknown = token.values[0];
    if (!(value instanceof asn1js.Sequence)) throw new Error('not a SEQUENCE');
    const contentInfo = new pkijs.ContentInfo({ schema: value });
    tokenInfo = new pkijs.SignedData({ schema: contentInfo.content }).signerInfos[0];
    if (!tokenInfo) throw new Error('no SignerInfo');
  } catch (e) {
    add(
      'Tabela A.16',
      msg('icp.rowTimestampToken'),
      false,
      msg('icp.tokenDoesNotRead', { error: errorMessage(e) }),
    );
    return;
  }
  attributeRows(
    add,
    'Tabela A.16',
    msg('icp.kindTimestampSigned'),
    A16,
    col,
    tokenInfo.signedAttrs?.attributes ?? [],
  );
  const tokenUnsigned = tokenInfo.unsignedAttrs?.attributes ?? [];
  add(
    'Tabela A.17',
    msg('icp.rowTimestampUnsigned'),
    tokenUnsigned.length === 0,
    tokenUnsigned.length === 0
      ? msg('word.none')
      : msg('icp.tokenUnsignedAttrs', { found: tokenUnsigned.map((a) => a.type).join(', ') }),
  );
}

/** Number of ESSCertIDv2 in a signingCertificateV2 value; -1 when malformed. */
function essCertIdCount(attribute: pkijs.Attribute): number {
  const value: unknown = attribute.values[0];
  const certs = value instanceof asn1js.Sequence ? value.valueBlock.value[0] : undefined;
  return certs instanceof asn1js.Sequence ? certs.valueBlock.value.length : -1;
}

/** At most this many entries of one dictionary are recorded (the tables name fewer than 20). */
const MAX_ENTRIES = 256;
/** At most this many AcroForm fields are visited looking for signatures. */
const MAX_FIELDS = 4096;

/**
 * Reads what `checkIcpBrasilProfile` needs of the PDF for the signature whose `/Contents` holds `cms` (its
 * DER, with or without the placeholder's zero padding): its signature dictionary, the newest catalog's
 * `/DSS`, its `/VRI` entry (key: uppercase hex SHA-1 of the /Contents bytes, with or without the padding,
 * ETSI EN 319 142-1 5.4.2.3), and the dictionaries of the document timestamps (`/Type /DocTimeStamp` or
 * `/SubFilter /ETSI.RFC3161`).
 * @throws Error when the PDF does not load or no signature dictionary holds `cms`.
 */
export async function readIcpBrasilDictionaries(
  pdf: Uint8Array,
  cms: Uint8Array,
): Promise<Omit<IcpBrasilFacts, 'signerInfo'>> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(pdf, { updateMetadata: false, throwOnInvalidObject: false });
  } catch (e) {
    throw new Error(`the PDF does not load: ${errorMessage(e)}`);
  }
  let signature: { dict: PDFDict; contents: Uint8Array } | undefined;
  const documentTimestamps: PdfEntries[] = [];
  let visited = 0;
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict) || !object.has(PDFName.of('ByteRange'))) continue;
    visited += 1;
    if (visited > MAX_FIELDS) throw new Error(`more than ${MAX_FIELDS} signature dictionaries`);
    const contents = object.lookup(PDFName.of('Contents'));
    const bytes =
      contents instanceof PDFHexString || contents instanceof PDFString ? contents.asBytes() : undefined;
    const type = object.get(PDFName.of('Type'));
    const subFilter = object.get(PDFName.of('SubFilter'));
    if (
      (type instanceof PDFName && type.asString() === '/DocTimeStamp') ||
      (subFilter instanceof PDFName && subFilter.asString() === '/ETSI.RFC3161')
    ) {
      documentTimestamps.push(entriesOf(doc, object));
      continue;
    }
    if (bytes && bytes.length >= cms.length && equalBytes(bytes.subarray(0, cms.length), cms)) {
      signature = { dict: object, contents: bytes };
    }
  }
  if (!signature) throw new Error('no signature dictionary holds this signature');
  const dssObject = doc.catalog.lookup(PDFName.of('DSS'));
  const dss = dssObject instanceof PDFDict ? entriesOf(doc, dssObject) : null;
  let vri: PdfEntries | null = null;
  const vriDict = dssObject instanceof PDFDict ? dssObject.lookup(PDFName.of('VRI')) : undefined;
  if (vriDict instanceof PDFDict) {
    for (const bytes of [signature.contents, cms]) {
      const key = toHex(await digest(bytes, 'SHA-1')).toUpperCase();
      const entry = vriDict.lookup(PDFName.of(key));
      if (entry instanceof PDFDict) {
        vri = entriesOf(doc, entry);
        break;
      }
    }
  }
  const artifacts =
    dssObject instanceof PDFDict ? dssObject.lookup(PDFName.of('PBAD_PolicyArtifacts')) : undefined;
  const policyArtifactDigests =
    artifacts instanceof PDFArray ? await streamDigests(doc, artifacts) : undefined;
  return {
    signatureDictionary: entriesOf(doc, signature.dict),
    dss,
    vri,
    documentTimestamps,
    ...(policyArtifactDigests ? { policyArtifactDigests } : {}),
  };
}

/** At most this many policy artifacts are hashed (ITI publishes one file per policy). */
const MAX_ARTIFACTS = 16;
/** Largest decoded policy artifact hashed (the published files are about 10 kB). */
const MAX_ARTIFACT_BYTES = 1024 * 1024;

/** SHA-256 (lowercase hex) of each stream of `array`, bounded; a stream that cannot be read says why. */
async function streamDigests(doc: PDFDocument, array: PDFArray): Promise<string[]> {
  const out: string[] = [];
  for (const item of array.asArray().slice(0, MAX_ARTIFACTS)) {
    const stream = item instanceof PDFRef ? doc.context.lookup(item) : item;
    if (!(stream instanceof PDFRawStream)) {
      out.push('unreadable: not a stream');
      continue;
    }
    try {
      out.push(toHex(await digest(decodeAtMost(stream, MAX_ARTIFACT_BYTES), 'SHA-256')));
    } catch (e) {
      out.push(`unreadable: ${errorMessage(e)}`);
    }
  }
  return out;
}

function entriesOf(doc: PDFDocument, dict: PDFDict): PdfEntries {
  const out: Record<string, string> = {};
  for (const [key, raw] of dict.entries().slice(0, MAX_ENTRIES)) {
    const value: PDFObject | undefined = raw instanceof PDFRef ? doc.context.lookup(raw) : raw;
    out[key.decodeText()] = describe(value);
  }
  return out;
}

function describe(value: PDFObject | undefined): string {
  if (value instanceof PDFName) return value.asString();
  if (value instanceof PDFString || value instanceof PDFHexString) return value.decodeText().slice(0, 200);
  if (value instanceof PDFStream) return 'stream';
  if (value instanceof PDFArray) return '[array]';
  if (value instanceof PDFDict) return '<<dict>>';
  if (value === undefined) return 'null';
  // Numbers, booleans, null: short by nature.
  return value.toString().slice(0, 200);
}

/** Copies the SignerInfo of a CMS DER into pkijs (a convenience for callers holding only the bytes). */
export function signerInfoOf(cms: Uint8Array): pkijs.SignerInfo {
  const asn = asn1js.fromBER(toArrayBuffer(cms));
  if (asn.offset === -1) throw new Error(`CMS: not DER (${asn.result.error})`);
  const info = new pkijs.SignedData({ schema: new pkijs.ContentInfo({ schema: asn.result }).content })
    .signerInfos[0];
  if (!info) throw new Error('CMS: no SignerInfo');
  return info;
}

/**
 * Check 6's entry point: the conformance of the signature whose `/Contents` holds `cms` (DER) in `pdf` to
 * the ICP-Brasil policy its SignerInfo declares (`checkIcpBrasilProfile` on `readIcpBrasilDictionaries`);
 * `signedAt`, the signature timestamp's time when there is a valid one, adds the signing-period row.
 * @returns `{ policy: null, rows: [] }` when it declares none; when the PDF dictionaries cannot be read, the
 *   policy and one failing row saying why. Never throws.
 */
export async function icpBrasilConformance(
  pdf: Uint8Array,
  cms: Uint8Array,
  signerInfo: pkijs.SignerInfo,
  signedAt?: Date,
): Promise<IcpBrasilConformance> {
  const empty = { signatureDictionary: {}, dss: null, vri: null, documentTimestamps: [], signerInfo };
  const declared = checkIcpBrasilProfile(empty);
  if (declared.policy === null && declared.rows.length === 0) return declared;
  try {
    return checkIcpBrasilProfile({
      ...(await readIcpBrasilDictionaries(pdf, cms)),
      signerInfo,
      ...(signedAt ? { signedAt } : {}),
    });
  } catch (e) {
    return {
      policy: declared.policy,
      rows: [icpRow('Tabela A.18', msg('icp.signatureDictionary'), false, foreign(errorMessage(e)))],
    };
  }
}
