import type { EntityManager } from '@mikro-orm/core';
import type { AtaDraftData } from '@notary/pdf/ata';
import { AppError, type AtaRequest as AtaRequestInput } from '@notary/shared';
import {
  AtaRequest,
  type AtaRequestEntity,
  type DocumentEntity,
  DocumentTimestamp,
  Serventia,
} from '../../db/entities';
import type { CaptureRecord } from '../../ports/capture';
import { readAtMost } from '../documents/original-signatures';
import { assertNotDeleted, findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { visibleTextOfWacz } from './ata-text';
import { type CertificateContext, certificateData } from './service';

/**
 * The ata notarial draft (minuta) of a web capture, and the body of e-Notariado's signing-flow request for it
 * (docs/cartorios.md, Ata notarial of a web capture). The requester's form is kept with the document
 * (`AtaRequest`), so the draft can be rendered again, the same, from the capture and the form.
 */

/** What the draft needs of the composition root. */
export interface AtaContext
  extends Pick<CertificateContext, 'config' | 'publicUrl' | 'secret' | 'storage' | 'captureRecords'> {
  /** `ATA_ATTACH_MAX_BYTES`: the largest WACZ attached to the draft. */
  attachMaxBytes: number;
}

/** A rendered draft: the PDF and its attachment name. */
export interface AtaDraft {
  pdf: Uint8Array;
  fileName: string;
}

/** Largest WACZ read to transcribe the page's text (the same bound as a stamped PDF's), bytes. */
const WACZ_READ_MAX = 64 * 1024 * 1024;
/** Largest screenshot read (the certificate's bound), bytes. */
const SCREENSHOT_READ_MAX = 64 * 1024 * 1024;

/**
 * `POST /api/documents/:id/ata`: records `input.requester` for the web capture `id` (replacing an earlier form)
 * and renders its draft (`renderAtaDraft`, PDF/A-3b). Editors and up.
 * @throws AppError NOT_FOUND / FORBIDDEN as `findDocumentInTenant`; FORBIDDEN below editor; GONE after an LGPD
 *   deletion; BAD_REQUEST for a document that is not a web capture or whose capture record cannot be read.
 */
export async function requestAtaDraft(
  em: EntityManager,
  ctx: AtaContext,
  actor: Actor,
  id: string,
  input: AtaRequestInput,
): Promise<AtaDraft> {
  const doc = await findDocumentInTenant(em, actor, id);
  requirePermission(actor, 'upload', 'request an ata notarial draft');
  const record = await captureOf(ctx, doc);
  const r = input.requester;
  const fields = {
    name: r.name,
    cpf: r.cpf,
    qualification: r.qualification || null,
    email: r.email ?? null,
    requestedBy: actor.userId,
    requestedAt: new Date(),
  };
  const existing = await em.findOne(AtaRequest, { document: doc.id });
  const request = existing
    ? em.assign(existing, fields)
    : em.create(AtaRequest, { document: doc.id, ...fields });
  await em.flush();
  return renderDraft(em, ctx, actor, doc, record, request);
}

/**
 * `GET /api/documents/:id/ata`: the draft of the last `POST`, rendered again from the kept form. Any member.
 * @throws AppError as `requestAtaDraft` (no role check); NOT_FOUND when no draft was requested.
 */
export async function readAtaDraft(
  em: EntityManager,
  ctx: AtaContext,
  actor: Actor,
  id: string,
): Promise<AtaDraft> {
  const doc = await findDocumentInTenant(em, actor, id);
  const record = await captureOf(ctx, doc);
  return renderDraft(em, ctx, actor, doc, record, await requestOf(em, doc));
}

/** The body of e-Notariado's `POST /api/documents` (docs/enotariado-notarial-minutes.schema.json). */
export interface EnotariadoBody {
  type: 'NotarialMinutes';
  title: string;
  findings: { isDigital: true };
  signers: Array<{ name: string; cpf: string; email?: string }>;
}

/**
 * `GET /api/documents/:id/ata/enotariado`: the body a cartório's integration sends to e-Notariado's signing flow
 * for this ata (`type` NotarialMinutes, `findings.isDigital` true, the requester as signer). Any member. Never
 * sent from here.
 * @throws AppError as `readAtaDraft`.
 */
export async function enotariadoBody(
  em: EntityManager,
  ctx: AtaContext,
  actor: Actor,
  id: string,
): Promise<EnotariadoBody> {
  const doc = await findDocumentInTenant(em, actor, id);
  await captureOf(ctx, doc);
  const request = await requestOf(em, doc);
  return {
    type: 'NotarialMinutes',
    title: `Ata notarial ${doc.serialNumber}`,
    findings: { isDigital: true },
    signers: [{ name: request.name, cpf: request.cpf, ...(request.email ? { email: request.email } : {}) }],
  };
}

/** The kept form of `doc`. @throws AppError NOT_FOUND when none. */
async function requestOf(em: EntityManager, doc: DocumentEntity): Promise<AtaRequestEntity> {
  const request = await em.findOne(AtaRequest, { document: doc.id });
  if (!request) {
    throw new AppError(
      'NOT_FOUND',
      'No ata notarial draft was requested for this document: POST /api/documents/{id}/ata with the requester first',
    );
  }
  return request;
}

/**
 * The capture record of web capture `doc`, from its stored screenshot.
 * @throws AppError GONE after an LGPD deletion; BAD_REQUEST when `doc` is not a web capture or carries no record.
 */
async function captureOf(
  ctx: Pick<AtaContext, 'storage' | 'captureRecords'>,
  doc: DocumentEntity,
): Promise<CaptureRecord> {
  assertNotDeleted(doc);
  if (doc.sourceType !== 'web-capture' || !doc.screenshotKey) {
    throw new AppError(
      'BAD_REQUEST',
      'An ata notarial draft is made of a web capture only: this document is not one',
    );
  }
  const png = await readAtMost(await ctx.storage.get(doc.screenshotKey), SCREENSHOT_READ_MAX);
  const record = png ? ctx.captureRecords.readRecord(png) : undefined;
  if (!png || !record)
    throw new AppError('BAD_REQUEST', "This web capture's record cannot be read: no draft can be made of it");
  return record;
}

/** Renders the draft of `doc` for `request`. */
async function renderDraft(
  em: EntityManager,
  ctx: AtaContext,
  actor: Actor,
  doc: DocumentEntity,
  record: CaptureRecord,
  request: AtaRequestEntity,
): Promise<AtaDraft> {
  const { renderAtaDraft } = await import('@notary/pdf/ata');
  const screenshot = doc.screenshotKey
    ? await readAtMost(await ctx.storage.get(doc.screenshotKey), SCREENSHOT_READ_MAX)
    : undefined;
  const wacz =
    doc.storageKey && doc.fileSize <= WACZ_READ_MAX
      ? await readAtMost(await ctx.storage.get(doc.storageKey), WACZ_READ_MAX)
      : undefined;
  const serventia = await em.findOne(Serventia, { tenant: actor.tenant.id });
  const attached = wacz !== undefined && doc.fileSize <= ctx.attachMaxBytes;
  const data: AtaDraftData = {
    serviceName: ctx.config.serviceName,
    serventia: {
      name: actor.tenant.name,
      cns: serventia?.cns ?? null,
      place: ctx.config.signing?.location || null,
    },
    requestedAt: request.requestedAt,
    requester: {
      name: request.name,
      cpf: request.cpf,
      qualification: request.qualification ?? null,
      email: request.email ?? null,
    },
    capture: captureFacts(record),
    visibleText: wacz
      ? visibleTextOfWacz(wacz, record.finalUrl)
      : { unavailable: `o arquivo WACZ tem mais de ${WACZ_READ_MAX} bytes: o texto está nele` },
    missing: {
      blocked: record.blocked.map((b) => ({
        url: b.url,
        reason: b.rule ? `${b.rule}: ${b.reason}` : b.reason,
      })),
      failed: record.failed,
      unfinished: record.unfinished,
      bodies: (record.missingBodies ?? []).map((m) => ({ url: m.url, kind: m.kind, reason: m.reason })),
    },
    tls: (record.tlsOrigins ?? []).map((t) => ({
      origin: t.origin,
      protocol: t.protocol,
      subject: t.subject,
      issuer: t.issuer,
      validTo: t.validTo,
      sha256: t.sha256Fingerprint,
      chainLength: t.chainLength,
    })),
    dns: (record.dns ?? []).map((d) => ({ host: d.host, outcome: d.outcome, addresses: d.addresses })),
    wacz: {
      fileName: doc.fileName,
      serialNumber: doc.serialNumber,
      sha256: doc.sha256Hash,
      bytes: doc.fileSize,
      attached,
      attachMaxBytes: ctx.attachMaxBytes,
    },
    anchors: await anchorsOf(em, ctx, doc, actor.tenant.name),
    ...(screenshot ? { screenshot } : {}),
    ...(attached && wacz ? { waczBytes: wacz } : {}),
  };
  const { pdf } = await renderAtaDraft(data);
  return { pdf, fileName: `minuta-ata-${doc.serialNumber}.pdf` };
}

/** The capture's facts as the draft states them; a recorded time that is no time stays the capture's start. */
function captureFacts(record: CaptureRecord): AtaDraftData['capture'] {
  const started = new Date(record.startedAt);
  const finished = new Date(record.finishedAt);
  return {
    requestedUrl: record.requestedUrl,
    finalUrl: record.finalUrl,
    status: record.status,
    title: record.title,
    startedAt: started,
    finishedAt: Number.isNaN(finished.getTime()) ? started : finished,
    redirects: record.redirects.map((r) => ({ url: r.url, status: r.status })),
    serverIp: record.serverIp,
    egressIp: record.egressIp ?? null,
    browser: `${record.browser.name} ${record.browser.version}`,
    screenshot: record.screenshot,
  };
}

/** The WACZ hash's anchors (EAS, Stacks, the Merkle batch) and RFC 3161 timestamps, as label and value. */
async function anchorsOf(
  em: EntityManager,
  ctx: AtaContext,
  doc: DocumentEntity,
  tenantName: string,
): Promise<AtaDraftData['anchors']> {
  const facts = await certificateData(em, ctx, doc, { signed: false, issuedAt: new Date(), tenantName });
  const out: AtaDraftData['anchors'] = [];
  if (facts.merkle)
    out.push({
      label: 'Lote Merkle',
      value: `raiz ${facts.merkle.root}, folha ${facts.merkle.leafIndex} de ${facts.merkle.batchSize}`,
    });
  if (facts.evm) {
    out.push({
      label: `EAS (${facts.evm.network})`,
      value: facts.evm.txHash
        ? `transação ${facts.evm.txHash}, atestação ${facts.evm.attestationUid ?? '—'}`
        : 'pendente',
    });
  }
  if (facts.stacks) {
    out.push({
      label: `Stacks (${facts.stacks.network})`,
      value: facts.stacks.txId ? `transação ${facts.stacks.txId}` : 'pendente',
    });
  }
  const stamps = await em.find(DocumentTimestamp, { document: doc.id }, { orderBy: { genTime: 'asc' } });
  for (const s of stamps) {
    out.push({
      label: 'Carimbo do tempo RFC 3161',
      value: `${s.genTime.toISOString()}, número de série ${s.serialNumber}`,
    });
  }
  return out;
}
