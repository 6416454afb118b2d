import type { EntityManager } from '@mikro-orm/core';
import type { CertificateLanguage } from '@notary/pdf/model';
import { sha256HexSync } from '@notary/platform/sha256';
import { AppError, errorMessage, type NotarySignedCertificate } from '@notary/shared';
import { fromBase64 } from '@notary/trust/bytes';
import { allowsSignatures, parseCertificate, withoutIssuer } from '@notary/trust/cert-path';
import { commonName } from '@notary/trust/cms';
import { firstRevoked, MAX_FETCHED_ISSUERS } from '@notary/trust/revocation';
import type * as pkijs from 'pkijs';
import {
  type DocumentEntity,
  NotarySignatureSession,
  type NotarySignatureSessionEntity,
} from '../../db/entities';
import { findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { certificateText } from './messages';
import { type CertificateContext, issueCertificateOf } from './service';

/** The ICP-Brasil policies a tabelião may sign under here: AD-RB, or AD-RT (the service adds the timestamp). */
export type NotaryPolicy = NotarySignatureSessionEntity['policy'];

/** How long a prepared session waits for the token's signature: long enough to find the token and type a PIN. */
export const NOTARY_SESSION_MINUTES = 10;

/** Most certificates a client may announce (leaf, intermediates, root: ICP-Brasil paths have 3 or 4). */
export const NOTARY_MAX_CERTIFICATES = 8;

/** What preparing answers (`POST /api/documents/{id}/notary-signature`). */
export interface PreparedNotarySignature {
  sessionId: string;
  /** Base64 DER of the CAdES signed attributes to sign (RFC 5652 5.4). */
  signedAttributes: string;
  digestAlgorithm: 'SHA-256';
  /** ISO 8601. */
  expiresAt: string;
}

/** The record of a certificate signed by the tabelião (`NotarySignedCertificateSchema` in `@notary/shared`). */
export type { NotarySignedCertificate };

/** The `pdf` modules, loaded at the first signing (as `service.ts` loads its own). */
async function pdfSigning() {
  const [deferred, icp] = await Promise.all([
    import('@notary/pdf/deferred-signature'),
    import('@notary/pdf/icp-brasil'),
  ]);
  return { ...deferred, ...icp };
}

/**
 * Prepares the tabelião's signature of a document's certificate (docs/certificates.md, The tabelião's own
 * signature): completes the announced chain with the issuers it lacks from their AIA caIssuers URLs (with a
 * revocation source: `RevocationSource.withIssuers`, the same address policy and bounds), checks it
 * (`checkSignerChain`), issues the certificate as the owner's route does
 * (signed by the service when a signing key is configured, its page naming both signers), adds the tabelião's
 * field as an incremental update and keeps the session (`NotarySignatureSession`) for `NOTARY_SESSION_MINUTES`.
 * Editor or higher.
 * @throws AppError FORBIDDEN (role, other tenant), NOT_FOUND, BAD_REQUEST naming what is wrong with the chain,
 *   SERVICE_UNAVAILABLE for AD-RT without a TSA; what issuing a certificate throws.
 */
export async function prepareNotarySignature(
  em: EntityManager,
  ctx: CertificateContext,
  actor: Actor,
  input: { id: string; certificates: string[]; policy: NotaryPolicy; lang: CertificateLanguage },
): Promise<PreparedNotarySignature> {
  requirePermission(actor, 'upload', 'sign certificates with your own certificate');
  const doc = await findDocumentInTenant(em, actor, input.id);
  if (input.policy === 'icp-brasil-ad-rt' && !ctx.tsa) {
    throw new AppError('SERVICE_UNAVAILABLE', 'AD-RT needs a Time-Stamping Authority (TSA_URL): use AD-RB');
  }
  const now = ctx.now?.() ?? new Date();
  // A client may send the signer alone: its missing issuers come from the certificates' AIA caIssuers URLs.
  const announced = decodeChain(input.certificates, NOTARY_MAX_CERTIFICATES);
  const chain = ctx.revocation ? await ctx.revocation.withIssuers(announced) : announced;
  const leaf = await checkSignerChain(chain, now);
  const { prepareDeferredSignature, icpBrasilSignaturePolicy } = await pdfSigning();
  const notary = commonName(leaf);
  const issued = await issueCertificateOf(em, ctx, doc, actor.tenant.name, {
    signed: true,
    lang: input.lang,
    notes: [
      certificateText(input.lang, 'notarySigners', {
        service: ctx.config.serviceName,
        notary,
        issuer: issuerName(leaf),
        profile: input.policy === 'icp-brasil-ad-rt' ? 'AD-RT' : 'AD-RB',
      }),
    ],
  });
  const prepared = await prepareDeferredSignature(issued.pdf, {
    dictionary: 'icp-brasil',
    name: notary,
    reason: certificateText(input.lang, 'notaryReason', { serial: doc.serialNumber }),
    signingTime: now,
    signerCertificate: chain[0] as Uint8Array,
    policy: icpBrasilSignaturePolicy(input.policy),
  });
  const expiresAt = new Date(now.getTime() + NOTARY_SESSION_MINUTES * 60_000);
  const session = em.create(NotarySignatureSession, {
    id: crypto.randomUUID(),
    document: doc.id,
    userId: actor.userId,
    policy: input.policy,
    certificates: chain.map((der) => Buffer.from(der).toString('base64')),
    signedAttributes: Buffer.from(prepared.signedAttributes),
    preparedPdf: Buffer.from(prepared.pdf),
    expiresAt,
  });
  await em.flush();
  return {
    sessionId: session.id,
    signedAttributes: Buffer.from(prepared.signedAttributes).toString('base64'),
    digestAlgorithm: 'SHA-256',
    expiresAt: expiresAt.toISOString(),
  };
}

/**
 * Completes a prepared session with the token's signature value: the session must be this member's, of this
 * document, unexpired and not completed; the value must verify over the attributes answered with the announced
 * certificate; the chain must still be valid now and, with a revocation source, not revoked. Then the CMS is
 * embedded, the service's long-term work follows (signature timestamp for AD-RT; with a TSA and a revocation
 * source, the /DSS with every chain's data and a document timestamp), and the session is completed by one
 * conditional UPDATE: a refusal, or a completion racing another, writes nothing.
 * @throws AppError NOT_FOUND (no such session for this document), FORBIDDEN (another member's session, other
 *   tenant), GONE (expired), CONFLICT (already completed), BAD_REQUEST (a value that does not verify, a chain no
 *   longer valid, a revoked certificate); BAD_GATEWAY when the TSA fails.
 */
export async function completeNotarySignature(
  em: EntityManager,
  ctx: CertificateContext,
  actor: Actor,
  input: { id: string; sessionId: string; signature: string },
): Promise<NotarySignedCertificate> {
  const doc = await findDocumentInTenant(em, actor, input.id);
  const session = await em.findOne(NotarySignatureSession, { id: input.sessionId, document: doc.id });
  if (!session) throw new AppError('NOT_FOUND', 'No such signing session for this document');
  if (session.userId !== actor.userId) {
    throw new AppError('FORBIDDEN', 'This signing session was prepared by another member');
  }
  if (session.completedAt) throw new AppError('CONFLICT', 'This signing session was already completed');
  const now = ctx.now?.() ?? new Date();
  if (session.expiresAt.getTime() <= now.getTime()) {
    throw new AppError('GONE', 'This signing session expired: prepare the signature again');
  }
  const chain = decodeChain(session.certificates, NOTARY_MAX_CERTIFICATES + MAX_FETCHED_ISSUERS);
  const leaf = await checkSignerChain(chain, now);
  const signature = decodeBase64(input.signature, 'signature');
  const { completeDeferredSignature, extendToLta, signatureVerifies, icpBrasilSignaturePolicy } =
    await pdfSigning();
  const signedAttributes = new Uint8Array(session.signedAttributes);
  if (!signatureVerifies(signedAttributes, signature, chain[0] as Uint8Array)) {
    throw new AppError(
      'BAD_REQUEST',
      'The signature does not verify over the attributes prepared with the announced certificate: another key signed, or other bytes were signed',
    );
  }
  await refuseRevoked(ctx, chain, now);
  const done = await completeDeferredSignature(new Uint8Array(session.preparedPdf), {
    certificates: chain,
    signature,
    signedAttributes,
    policy: icpBrasilSignaturePolicy(session.policy),
    tsa: session.policy === 'icp-brasil-ad-rt' ? ctx.tsa : undefined,
  }).catch((e: unknown) => {
    if (e instanceof AppError) throw e;
    throw new AppError('INTERNAL', `The tabelião's signature could not be embedded: ${errorMessage(e)}`);
  });
  let pdf = done.pdf;
  let level = session.policy === 'icp-brasil-ad-rt' ? 'B-T' : 'B-B';
  const { tsa, revocation } = ctx;
  if (tsa && revocation) {
    // The service's own signature has its /VRI from its own issuing (at SIGNING_LEVEL): its chain's data only.
    const extended = await extendToLta(
      pdf,
      [{ cms: done.cms, chain }, { chain: ctx.signer?.certificateChain ?? [] }],
      { tsa, gather: (c) => revocation.gather(c), issuers: tsa.trustAnchors ?? [] },
    );
    pdf = extended.pdf;
    if (extended.level === 'B-LTA') level = 'B-LTA';
  }
  const sha256 = sha256HexSync(pdf);
  const completedAt = ctx.now?.() ?? new Date();
  const updated = await em.nativeUpdate(
    NotarySignatureSession,
    { id: session.id, completedAt: null },
    { completedAt, signedPdf: Buffer.from(pdf), signedPdfSha256: sha256, level },
  );
  if (updated !== 1) throw new AppError('CONFLICT', 'This signing session was already completed');
  const signers: NotarySignedCertificate['signers'] = [];
  if (ctx.signer) signers.push({ role: 'service', name: ctx.config.serviceName });
  signers.push({ role: 'notary', name: commonName(leaf), policy: session.policy });
  return {
    sessionId: session.id,
    documentId: doc.id,
    completedAt: completedAt.toISOString(),
    level,
    sha256,
    size: pdf.length,
    signers,
  };
}

/** A certificate the tabelião signed, as stored when its session completed. */
export interface StoredNotarySignedCertificate {
  pdf: Uint8Array;
  /** The PAdES level the file reached (`B-B` to `B-LTA`). */
  level: string;
  completedAt: Date;
  /** Attachment name, as the certificate route names it. */
  fileName: string;
}

/**
 * The newest certificate of the document (of the caller's tenant) that a tabelião signed, null when none was:
 * the certificate route serves it for `signed=1`, since issuing again would leave the tabelião's signature out.
 * Any member of the tenant may read it, as the certificate route allows.
 * @throws AppError NOT_FOUND / FORBIDDEN as `findDocumentInTenant`.
 */
export async function notarySignedCertificate(
  em: EntityManager,
  actor: Actor,
  input: { id: string; lang: CertificateLanguage },
): Promise<StoredNotarySignedCertificate | null> {
  return newestNotarySigned(em, await findDocumentInTenant(em, actor, input.id), input.lang);
}

/**
 * The newest certificate of `doc` a tabelião signed, null when none was; no access check (callers check: the
 * tenant's members, or VALIDAR's access code on the public route). `lang` names the file only: the stored bytes
 * are in the language the session prepared.
 */
export async function newestNotarySigned(
  em: EntityManager,
  doc: Pick<DocumentEntity, 'id' | 'serialNumber'>,
  lang: CertificateLanguage,
): Promise<StoredNotarySignedCertificate | null> {
  const session = await em.findOne(
    NotarySignatureSession,
    { document: doc.id, completedAt: { $ne: null }, signedPdf: { $ne: null } },
    { orderBy: { completedAt: 'desc' } },
  );
  if (!session?.signedPdf || !session.completedAt) return null;
  return {
    pdf: new Uint8Array(session.signedPdf),
    level: session.level ?? 'B-B',
    completedAt: session.completedAt,
    fileName: certificateText(lang, 'fileName', { serial: doc.serialNumber }),
  };
}

/** The certificates as DER. @throws AppError BAD_REQUEST when empty, more than `max` or not base64. */
function decodeChain(certificates: readonly string[], max: number): Uint8Array[] {
  if (certificates.length === 0)
    throw new AppError('BAD_REQUEST', 'certificates: the signer certificate first');
  if (certificates.length > max) {
    throw new AppError('BAD_REQUEST', `certificates: at most ${max}`);
  }
  return certificates.map((c, i) => decodeBase64(c, `certificates[${i}]`));
}

/** `value` decoded. @throws AppError BAD_REQUEST naming `what` when it is not standard base64. */
function decodeBase64(value: string, what: string): Uint8Array {
  try {
    return fromBase64(value);
  } catch {
    throw new AppError('BAD_REQUEST', `${what}: not base64`);
  }
}

/**
 * The signer certificate (the first of `chain`), once the chain holds: every certificate parses and is valid at
 * `now`; every one but a self-signed root has its issuer (by name, proven by signature) in `chain`; the signer's
 * key usage allows digitalSignature or nonRepudiation (RFC 5280 4.2.1.3); its key is RSA or EC P-256.
 * @throws AppError BAD_REQUEST with a sentence naming the certificate and what is wrong.
 */
export async function checkSignerChain(chain: readonly Uint8Array[], now: Date): Promise<pkijs.Certificate> {
  const certs = chain.map((der, i) => {
    const cert = parseCertificate(der);
    if (!cert) throw new AppError('BAD_REQUEST', `certificates[${i}] is not a DER X.509 certificate`);
    return cert;
  });
  const leaf = certs[0] as pkijs.Certificate;
  for (const cert of certs) {
    const name = commonName(cert);
    if (cert.notAfter.value.getTime() < now.getTime()) {
      throw new AppError(
        'BAD_REQUEST',
        `The certificate "${name}" expired on ${cert.notAfter.value.toISOString()}`,
      );
    }
    if (cert.notBefore.value.getTime() > now.getTime()) {
      throw new AppError(
        'BAD_REQUEST',
        `The certificate "${name}" is not valid before ${cert.notBefore.value.toISOString()}`,
      );
    }
  }
  const incomplete = await withoutIssuer(chain);
  if (incomplete.length > 0) {
    const names = incomplete.map((c) => `"${c.commonName}"`).join(', ');
    throw new AppError(
      'BAD_REQUEST',
      `The chain is incomplete: send the signer certificate and every issuer up to the root (no issuer for ${names}, and none could be fetched from its AIA caIssuers URL)`,
    );
  }
  if (!allowsSignatures(leaf)) {
    throw new AppError(
      'BAD_REQUEST',
      `The certificate "${commonName(leaf)}" has no key usage for signatures`,
    );
  }
  const { signatureAlgorithmOf } = await pdfSigning();
  if (!signatureAlgorithmOf(chain[0] as Uint8Array)) {
    throw new AppError('BAD_REQUEST', `The key of "${commonName(leaf)}" is neither RSA nor EC P-256`);
  }
  return leaf;
}

/** The issuer's common name, for the page's line naming the signers. */
function issuerName(cert: pkijs.Certificate): string {
  const value: unknown = cert.issuer.typesAndValues.find((t) => t.type === '2.5.4.3')?.value.valueBlock.value;
  return typeof value === 'string' ? value : '(unnamed issuer)';
}

/**
 * With a revocation source: the chain's OCSP answers or CRLs, and a refusal when one says a certificate is
 * revoked now (a relying party would reject the signature).
 * @throws AppError BAD_REQUEST naming the certificate, the time and reason of revocation.
 */
async function refuseRevoked(
  ctx: CertificateContext,
  chain: readonly Uint8Array[],
  now: Date,
): Promise<void> {
  if (!ctx.revocation) return;
  const { material } = await ctx.revocation.gather(chain);
  const revoked = await firstRevoked(chain, material, now);
  if (!revoked) return;
  throw new AppError(
    'BAD_REQUEST',
    `The certificate "${revoked.subject}" was revoked on ${revoked.revokedAt.toISOString()}${revoked.reason ? ` (${revoked.reason})` : ''}: it cannot sign`,
  );
}
