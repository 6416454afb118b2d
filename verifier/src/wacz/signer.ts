/**
 * Check 4, the signer's identity of the domain form (WACZ Signing and Verification 0.1.0, section 6, step 5):
 * `domain` is the certificate's subject (common name or a DNS name), the chain of `domainCert` is linked,
 * the signing time is within the certificate's validity, the chain reaches `--trust-ca`; and checks 4 and 5
 * for each form of `signedData`.
 */
import { pkijs } from '@notary/trust/asn1';
import { digest, equalBytes, pemCertificates, toArrayBuffer, toHex } from '@notary/trust/bytes';
import { chainsTo } from '@notary/trust/cert-path';
import { subjectName } from '@notary/trust/cms';
import { errorMessage } from '../error-message.ts';
import { data as asIs, msg } from '../messages/index.ts';
import { type CheckBuilder, evidenceOf } from '../report.ts';
import type { CaptureRecord } from './capture.ts';
import { builder, finish, notRunWacz } from './check.ts';
import { spkiOf } from './keys.ts';
import type { DomainSigned, SignedData } from './signature.ts';
import { checkTime } from './time-signature.ts';
import type { WaczCheckResult } from './types.ts';

/**
 * Checks 4 and 5 for `signed` (check 3's reading): for the domain form, the time signature (5) first, since
 * its genTime is the time the chain of 4 is judged at; for the anonymous form, or no valid `signedData`,
 * neither applies. Returns both results (4 then 5) and the genTime of a time signature that verified.
 */
export async function checkSignerAndTime(
  signed: SignedData,
  rec: CaptureRecord,
  trustCa: Uint8Array[] | undefined,
  tsaCa: Uint8Array[] | undefined,
): Promise<{ results: WaczCheckResult[]; timeSignature: Date | null }> {
  if (signed.form === 'anonymous') {
    const four = notRunWacz(
      4,
      'not-applicable',
      msg('wacz.anonymousSigner', { sha256: String(signed.signer) }),
      [evidenceOf(msg('wacz.publicKeySha256'), asIs(signed.signer ?? ''), undefined)],
    );
    const five = notRunWacz(5, 'not-applicable', msg('wacz.anonymousNoTime'));
    return { results: [four, five], timeSignature: null };
  }
  if (signed.form === 'domain' && signed.domain) {
    const time = await checkTime(signed.domain, rec.signature, tsaCa);
    const createdAt = signed.created ? new Date(signed.created) : null;
    const four = await checkSigner(signed.domain, signed.domainCerts, time.verifiedAt ?? createdAt, trustCa);
    return { results: [four, time.result], timeSignature: time.verifiedAt };
  }
  return {
    results: [
      notRunWacz(4, 'not-applicable', msg('wacz.noSignedDataSigner')),
      notRunWacz(5, 'not-applicable', msg('wacz.noSignedDataTime')),
    ],
    timeSignature: null,
  };
}

/**
 * Check 4: the signer `data.domain` against `certs` (`domainCert`, leaf first), judged at `at` (the verified
 * time signature's genTime, else `created`; null when `created` is no date).
 */
async function checkSigner(
  data: DomainSigned,
  certs: pkijs.Certificate[],
  at: Date | null,
  trustCa: Uint8Array[] | undefined,
): Promise<WaczCheckResult> {
  const c = builder();
  const leaf = certs[0];
  if (!leaf) {
    c.fail(asIs('domainCert'), msg('wacz.noCertificate'));
    return finish(4, c, msg('wacz.signedBy', { signer: data.domain }));
  }
  const names = certificateNames(leaf);
  c.expect(
    names.includes(data.domain),
    msg('wacz.domain'),
    msg('wacz.domainValue', { domain: data.domain, names: names.join(', ') || msg('wacz.noName') }),
  );
  for (let i = 0; i + 1 < certs.length; i++) {
    const linked = await certs[i]?.verify(certs[i + 1]).catch(() => false);
    c.expect(
      linked === true,
      asIs(`domainCert ${i + 1}`),
      linked
        ? msg('wacz.issuedByNext', { name: subjectName(certs[i + 1] as pkijs.Certificate) })
        : msg('wacz.notSignedByNext'),
    );
  }
  if (!at || Number.isNaN(at.getTime())) {
    c.fail(asIs('created'), msg('wacz.notADate', { value: String(data.created) }));
  } else {
    await checkValidity(c, leaf, certs, at, trustCa);
  }
  c.note(
    msg('wacz.certificateSha256'),
    asIs(toHex(await digest(new Uint8Array(leaf.toSchema().toBER(false))))),
  );
  if (data.crossSignedCert) checkCrossSigned(c, data.crossSignedCert, leaf);
  return finish(4, c, msg('wacz.signedBy', { signer: data.domain }));
}

/** The leaf valid at `at`, and its chain to `--trust-ca` at `at` (skipped without anchors). */
async function checkValidity(
  c: CheckBuilder,
  leaf: pkijs.Certificate,
  certs: pkijs.Certificate[],
  at: Date,
  trustCa: Uint8Array[] | undefined,
): Promise<void> {
  const within = leaf.notBefore.value <= at && at <= leaf.notAfter.value;
  c.expect(
    within,
    msg('wacz.validAtSigning'),
    msg('wacz.validityValue', {
      at: at.toISOString(),
      from: leaf.notBefore.value.toISOString(),
      to: leaf.notAfter.value.toISOString(),
    }),
  );
  if (trustCa && trustCa.length > 0) {
    const trusted = await chainsTo(leaf, certs.slice(1), trustCa, at);
    c.expect(
      trusted.ok,
      msg('pades.chainToTrustCa'),
      trusted.ok ? msg('chain.trustedAt', { at: at.toISOString() }) : trusted.detail,
    );
  } else {
    c.skip(msg('wacz.domainChainNotChecked'));
  }
}

/** `crossSignedCert` (PEM) carries the same public key as the leaf of `domainCert`. */
function checkCrossSigned(c: CheckBuilder, pem: string, leaf: pkijs.Certificate): void {
  try {
    const cross = pkijs.Certificate.fromBER(toArrayBuffer(pemCertificates(pem)[0] as Uint8Array));
    c.expect(
      equalBytes(spkiOf(cross), spkiOf(leaf)),
      asIs('crossSignedCert'),
      msg('wacz.samePublicKey', { name: subjectName(cross) }),
    );
  } catch (e) {
    c.fail(asIs('crossSignedCert'), asIs(errorMessage(e)));
  }
}

/** The common names and DNS names of a certificate's subject. */
function certificateNames(cert: pkijs.Certificate): string[] {
  const names = cert.subject.typesAndValues
    .filter((tv) => tv.type === '2.5.4.3')
    .map((tv) => String(tv.value.valueBlock.value));
  const san = cert.extensions?.find((x) => x.extnID === '2.5.29.17')?.parsedValue;
  const list =
    san instanceof pkijs.AltName ? san.altNames : san instanceof pkijs.GeneralNames ? san.names : [];
  for (const n of list) if (n.type === 2) names.push(String(n.value));
  return names;
}
