import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { CertificateLanguage } from '@notary/pdf/model';
import { LRUCache } from 'lru-cache';
import { type DocumentEntity, Tenant } from '../../db/entities';
import { buildReceipt } from '../documents/receipt';
import { newestNotarySigned, type StoredNotarySignedCertificate } from './notary-signature';
import { type CertificateContext, type IssuedCertificate, issueCertificateOf } from './service';
import { documentForValidar } from './validar';

/**
 * The public certificate route (ITI's VALIDAR downloading what a certificate's QR code named) is anonymous: only
 * the access code printed on every certificate stands between a caller and a signing, and at B-LTA each signing
 * costs two TSA tokens (which ICP-Brasil TSAs bill) and a render slot. So the signed certificate is kept per
 * (document, language, state) and signed again only when what it states has changed: its anchors, timestamp,
 * act, name or deletion. Callers asking at once share one signing.
 */

/** Bytes of signed certificates kept by this process (a certificate is tens to hundreds of KB). */
export const PUBLIC_CERTIFICATES_MAX_BYTES = 64 * 1024 * 1024;
/**
 * How long a complete certificate is served before it is signed anew, ms: its validation data (OCSP answers,
 * CRLs) is of the day it was signed.
 */
export const PUBLIC_CERTIFICATE_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long an incomplete one is (signed below the configured level, or without its original's pages), ms: what
 * was missing may be back soon, and a caller still cannot make a signing per request.
 */
export const PUBLIC_CERTIFICATE_INCOMPLETE_TTL_MS = 5 * 60 * 1000;

/** Signed public certificates by state key (see the module comment), with the signings under way. */
export class PublicCertificates {
  private readonly kept = new LRUCache<string, IssuedCertificate>({
    maxSize: PUBLIC_CERTIFICATES_MAX_BYTES,
    sizeCalculation: (issued) => Math.max(1, issued.pdf.byteLength),
    ttl: PUBLIC_CERTIFICATE_TTL_MS,
  });
  private readonly underWay = new Map<string, Promise<IssuedCertificate>>();
  /** Signings started (tests and the operator's view). */
  signings = 0;

  /**
   * The certificate kept under `key`, else the one being signed under it, else `sign()`'s, kept. A failed
   * signing is not kept: the next caller tries again.
   */
  get(key: string, sign: () => Promise<IssuedCertificate>): Promise<IssuedCertificate> {
    const kept = this.kept.get(key);
    if (kept) return Promise.resolve(kept);
    const running = this.underWay.get(key);
    if (running) return running;
    this.signings += 1;
    const signing = sign()
      .then((issued) => {
        const complete = issued.levelShortfall.length === 0 && !issued.fallbackReason;
        this.kept.set(key, issued, complete ? {} : { ttl: PUBLIC_CERTIFICATE_INCOMPLETE_TTL_MS });
        return issued;
      })
      .finally(() => this.underWay.delete(key));
    this.underWay.set(key, signing);
    return signing;
  }
}

/**
 * The state key of `doc`'s public certificate in `lang`: SHA-256 over what the certificate states that can
 * change after the upload (the receipt: anchors, Merkle proof, timestamp, act, file name; the tenant's name; the
 * LGPD deletion). The original's signatures are left out: they are fixed by its bytes and upload time.
 */
export async function publicCertificateKey(
  em: EntityManager,
  ctx: CertificateContext,
  doc: DocumentEntity,
  tenantName: string,
  lang: CertificateLanguage,
): Promise<string> {
  const receipt = await buildReceipt(em, ctx, doc);
  const state = JSON.stringify([doc.id, lang, tenantName, doc.deletedAt?.toISOString() ?? null, receipt]);
  return createHash('sha256').update(state).digest('hex');
}

/**
 * `GET /api/public/documents/:serial/certificate?_secretCode=` (ITI's VALIDAR downloading what the QR code's
 * URL named, `validar.ts`): the certificate of the document of `serialNumber`, issued as its owner would get
 * it, PAdES-signed whenever a signer is configured, for whoever holds the access code printed on it; served
 * from `kept` while its state is unchanged (module comment). `queue` runs a signing (the route's own render
 * queue); a signing is not tied to one caller, so a caller that leaves does not stop it for the others. An IPFS
 * document's bytes are read on the share of `caller` (the client's address) of the certificate read slots.
 * @throws AppError NOT_FOUND unknown serial; UNAUTHENTICATED wrong or missing code; what `queue` throws (a full
 *   queue); as `issueCertificate`.
 */
export async function issuePublicCertificate(
  em: EntityManager,
  ctx: CertificateContext,
  request: { serialNumber: string; code: string | undefined; lang: CertificateLanguage; caller: string },
  kept: PublicCertificates,
  queue: (sign: (signal?: AbortSignal) => Promise<IssuedCertificate>) => Promise<IssuedCertificate>,
): Promise<IssuedCertificate> {
  const doc = await documentForValidar(em, ctx.secret, request.serialNumber, request.code);
  const tenant = await em.findOneOrFail(Tenant, { id: doc.tenant.id });
  const key = await publicCertificateKey(em, ctx, doc, tenant.name, request.lang);
  return kept.get(key, () =>
    queue((signal) =>
      issueCertificateOf(em, ctx, doc, tenant.name, {
        lang: request.lang,
        signed: true,
        ipfsReadKey: `anonymous ${request.caller}`,
        ...(signal ? { signal } : {}),
      }),
    ),
  );
}

/**
 * What VALIDAR downloads for `serialNumber` once a tabelião signed its certificate: that stored file (the act's
 * signature is theirs; a new issue would leave it out); null when no tabelião signed, and the route issues the
 * service's certificate (`issuePublicCertificate`).
 * @throws as `documentForValidar` (404 unknown serial, 401 wrong or missing access code).
 */
export async function publicNotarySignedCertificate(
  em: EntityManager,
  secret: string,
  request: { serialNumber: string; code: string | undefined; lang: CertificateLanguage },
): Promise<StoredNotarySignedCertificate | null> {
  const doc = await documentForValidar(em, secret, request.serialNumber, request.code);
  return newestNotarySigned(em, doc, request.lang);
}
