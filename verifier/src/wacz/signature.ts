/**
 * Checks 2 and 3, the signature of WACZ Signing and Verification 0.1.0 (section 6, steps 1 to 4):
 * `datapackage-digest.json` holds the SHA-256 of `datapackage.json` and so does `signedData.hash`; `signedData`
 * is one of the spec's two forms (anonymous: `publicKey`; domain: `domain`, `domainCert`, no other property)
 * and `signature` verifies over the ASCII of `hash` with its key.
 */
import { pkijs } from '@notary/trust/asn1';
import { fromBase64, pemCertificates, sha256Hex, toArrayBuffer } from '@notary/trust/bytes';
import { subjectName } from '@notary/trust/cms';
import { z } from 'zod';
import { errorMessage } from '../error-message.ts';
import { data as asIs, msg } from '../messages/index.ts';
import type { CheckBuilder } from '../report.ts';
import { builder, finish } from './check.ts';
import { spkiOf, verifyOver } from './keys.ts';
import type { WaczCheckResult } from './types.ts';
import { json } from './zip.ts';

const anonymousSchema = z.strictObject({
  hash: z.string(),
  created: z.string(),
  software: z.string(),
  version: z.string().optional(),
  signature: z.string(),
  publicKey: z.string(),
});
const domainSchema = z.strictObject({
  hash: z.string(),
  created: z.string(),
  software: z.string(),
  version: z.string().optional(),
  signature: z.string(),
  domain: z.string(),
  domainCert: z.string(),
  timeSignature: z.string().optional(),
  timestampCert: z.string().optional(),
  crossSignedCert: z.string().optional(),
});
const digestSchema = z.object({ path: z.string(), hash: z.string(), signedData: z.unknown().optional() });

/** `signedData` of the domain form: the fields the spec names, PEM certificates, base64 signatures. */
export type DomainSigned = z.infer<typeof domainSchema>;

/** What check 3 read of `signedData`; `form` null when it is absent or of neither form. */
export interface SignedData {
  form: 'anonymous' | 'domain' | null;
  /** Domain form: `domain`; anonymous form: the SHA-256 of the public key (hex), null when it does not decode. */
  signer: string | null;
  created: string | null;
  software: string | null;
  /** The domain form's fields; null for the other forms. */
  domain: DomainSigned | null;
  /** Domain form: the certificates of `domainCert`, leaf first (none when they do not parse). */
  domainCerts: pkijs.Certificate[];
}

/**
 * Check 2: `datapackage-digest.json` names `datapackage.json` with its SHA-256 (`datapackageBytes`), and
 * `signedData.hash` is that hash. Returns the result and `signedData` as found (undefined when absent).
 */
export async function checkDigest(
  files: Map<string, Uint8Array>,
  datapackageBytes: Uint8Array,
): Promise<{ result: WaczCheckResult; signed: unknown }> {
  const c = builder();
  const datapackageHash = `sha256:${await sha256Hex(datapackageBytes)}`;
  let signed: unknown;
  const digestBytes = files.get('datapackage-digest.json');
  if (!digestBytes) {
    c.fail(asIs('datapackage-digest.json'), msg('wacz.notSigned'));
  } else {
    try {
      const d = digestSchema.parse(json(digestBytes, 'datapackage-digest.json'));
      c.expect(d.path === 'datapackage.json', asIs('path'), asIs(d.path));
      c.expect(
        d.hash === datapackageHash,
        asIs('hash'),
        d.hash === datapackageHash
          ? asIs(d.hash)
          : msg('wacz.datapackageIs', { hash: d.hash, expected: datapackageHash }),
      );
      signed = d.signedData;
      const signedHash = (signed as { hash?: unknown } | undefined)?.hash;
      if (signed === undefined) c.fail(asIs('signedData'), msg('wacz.notSigned'));
      else c.expect(signedHash === d.hash, asIs('signedData.hash'), asIs(String(signedHash)));
    } catch (e) {
      c.fail(
        asIs('datapackage-digest.json'),
        e instanceof z.ZodError ? msg('wacz.notADigest') : asIs(errorMessage(e)),
      );
    }
  }
  const summary = msg('wacz.digestSummary', { hash: datapackageHash });
  return { result: finish(2, c, summary), signed };
}

/**
 * Check 3: `signed` (`signedData`) is of the anonymous or the domain form, and its `signature` verifies over
 * the ASCII of `hash` with `publicKey` or the first certificate of `domainCert`. Returns the result and what
 * it read.
 */
export async function checkSignature(
  signed: unknown,
): Promise<{ result: WaczCheckResult; data: SignedData }> {
  const c = builder();
  const anonymous = anonymousSchema.safeParse(signed);
  const domain = anonymous.success ? undefined : domainSchema.safeParse(signed);
  let data: SignedData = {
    form: null,
    signer: null,
    created: null,
    software: null,
    domain: null,
    domainCerts: [],
  };
  if (signed === undefined) {
    c.fail(asIs('signedData'), msg('word.absent'));
  } else if (anonymous.success) {
    data = await anonymousSignature(c, anonymous.data);
  } else if (domain?.success) {
    data = await domainSignature(c, domain.data);
  } else {
    const keys = signed && typeof signed === 'object' ? Object.keys(signed).join(', ') : typeof signed;
    c.fail(asIs('signedData'), msg('wacz.neitherForm', { keys }));
  }
  const form =
    data.form === 'anonymous'
      ? msg('wacz.formAnonymous')
      : data.form === 'domain'
        ? msg('wacz.formDomain')
        : '?';
  return { result: finish(3, c, msg('wacz.signatureSummary', { form })), data };
}

/** The anonymous form: the signature over `hash` with `publicKey` (DER SubjectPublicKeyInfo, base64). */
async function anonymousSignature(
  c: CheckBuilder,
  data: z.infer<typeof anonymousSchema>,
): Promise<SignedData> {
  let signer: string | null = null;
  try {
    const spki = fromBase64(data.publicKey);
    signer = await sha256Hex(spki);
    c.note(msg('wacz.form'), msg('wacz.formAnonymousKey'));
    c.note(msg('wacz.publicKeySha256'), asIs(signer));
    const ok = await verifyOver(data.hash, data.signature, spki);
    c.expect(ok, msg('wacz.signatureOverHash'), msg(ok ? 'wacz.validEcdsa' : 'word.invalid'));
  } catch (e) {
    c.fail(asIs('publicKey'), asIs(errorMessage(e)));
  }
  return {
    form: 'anonymous',
    signer,
    created: data.created,
    software: data.software,
    domain: null,
    domainCerts: [],
  };
}

/** The domain form: the signature over `hash` with the first certificate of `domainCert` (PEM). */
async function domainSignature(c: CheckBuilder, data: DomainSigned): Promise<SignedData> {
  c.note(msg('wacz.form'), msg('wacz.formDomainCert'));
  let domainCerts: pkijs.Certificate[] = [];
  try {
    domainCerts = pemCertificates(data.domainCert).map((der) =>
      pkijs.Certificate.fromBER(toArrayBuffer(der)),
    );
    const leaf = domainCerts[0] as pkijs.Certificate;
    c.note(msg('source.certificate'), asIs(subjectName(leaf)));
    const ok = await verifyOver(data.hash, data.signature, spkiOf(leaf));
    c.expect(ok, msg('wacz.signatureOverHash'), msg(ok ? 'wacz.validWithDomainCert' : 'word.invalid'));
  } catch (e) {
    c.fail(asIs('domainCert'), asIs(errorMessage(e)));
  }
  return {
    form: 'domain',
    signer: data.domain,
    created: data.created,
    software: data.software,
    domain: data,
    domainCerts,
  };
}
