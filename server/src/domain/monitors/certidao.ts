import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { EntityManager } from '@mikro-orm/core';
import type { CertidaoChange, CertidaoWindow } from '@notary/pdf/certidao';
import {
  AppError,
  checkMonitorChain,
  MONITOR_CHAIN_FORMAT,
  type MonitorChain,
  type RunCause,
} from '@notary/shared';
import { Document, type DocumentEntity, type MonitorEntity, type MonitorRunEntity } from '../../db/entities';
import type { CaptureRecordReader } from '../../ports/capture';
import { type NotarizeDeps, notarize } from '../documents/notarize';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { pixelChange, textChange } from './changes';
import { findMonitor, monitorRuns } from './service';

/** What issuing a certidão uses of the service (a subset of `AppDeps`). */
export interface CertidaoDeps extends NotarizeDeps {
  captureRecords: CaptureRecordReader;
  config: NotarizeDeps['config'] & { serviceName: string };
}

/** A cause as the certidão states it (Portuguese). */
const CAUSE_WORDS: Record<RunCause, string> = {
  dns: 'o nome do servidor não foi resolvido (DNS)',
  tls: 'falha na conexão segura (TLS)',
  'http-status': 'o servidor respondeu com erro HTTP',
  timeout: 'o servidor não respondeu no tempo limite',
  unreachable: 'o servidor não pôde ser alcançado',
  refused: 'a captura não foi feita pelo serviço (limite ou cota do espaço de trabalho)',
  error: 'erro na captura',
};

const STATE_WORDS: Record<MonitorEntity['state'], string> = {
  active: 'em andamento',
  finished: 'concluído',
  cancelled: 'cancelado',
  failed: 'interrompido por falha',
};

/** A run's cause in words, with its detail (the HTTP status) when it helps. */
function causeWords(r: MonitorRunEntity): string {
  const words = r.cause ? CAUSE_WORDS[r.cause] : 'causa não registrada';
  return r.cause === 'http-status' && r.httpStatus ? `${words} ${r.httpStatus}` : words;
}

/** The runs grouped into stretches of the same observation (and, for a gap, the same cause). */
export function windowsOf(runs: readonly MonitorRunEntity[]): CertidaoWindow[] {
  const windows: CertidaoWindow[] = [];
  for (const r of runs) {
    const kind = r.outcome === 'seen' ? 'available' : r.cause === 'refused' ? 'not-observed' : 'unavailable';
    const cause = kind === 'available' ? undefined : causeWords(r);
    const open = windows.at(-1);
    if (open && open.kind === kind && open.cause === cause && open.lastRun === r.run - 1) {
      open.lastRun = r.run;
      open.to = r.observedAt;
      continue;
    }
    windows.push({
      kind,
      firstRun: r.run,
      lastRun: r.run,
      from: r.observedAt,
      to: r.observedAt,
      ...(cause ? { cause } : {}),
    });
  }
  return windows;
}

/** The chain the certidão carries (`monitor-chain.json`). */
export function chainOf(
  monitor: MonitorEntity,
  runs: readonly MonitorRunEntity[],
  issuedAt: Date,
): MonitorChain {
  return {
    format: MONITOR_CHAIN_FORMAT,
    monitorId: monitor.id,
    url: monitor.url,
    issuedAt: issuedAt.toISOString(),
    runs: runs.map((r) => ({
      run: r.run,
      observedAt: r.observedAt.toISOString(),
      outcome: r.outcome,
      cause: r.cause ?? null,
      serialNumber: r.serialNumber ?? null,
      waczSha256: r.waczSha256 ?? null,
      previousWaczSha256: r.previousWaczSha256 ?? null,
    })),
  };
}

/** A seen run's screenshot and visible text, read back from storage (the record its screenshot carries). */
async function runPage(
  em: EntityManager,
  deps: CertidaoDeps,
  run: MonitorRunEntity,
): Promise<{ screenshot: Buffer; text: string } | undefined> {
  if (!run.document) return undefined;
  const doc = await em.findOne(Document, { id: run.document.id });
  if (!doc?.screenshotKey || doc.deletedAt) return undefined;
  const screenshot = await buffer(await deps.storage.get(doc.screenshotKey));
  const record = deps.captureRecords.readRecord(screenshot);
  return { screenshot, text: record?.visibleText ?? record?.title ?? '' };
}

/** What changed between consecutive runs that saw the page (each compared with the seen run before it). */
async function changesOf(
  em: EntityManager,
  deps: CertidaoDeps,
  runs: readonly MonitorRunEntity[],
): Promise<CertidaoChange[]> {
  const changes: CertidaoChange[] = [];
  let before: { run: number; page: { screenshot: Buffer; text: string } } | undefined;
  for (const r of runs) {
    if (r.outcome !== 'seen') continue;
    const page = await runPage(em, deps, r);
    if (!page) continue;
    if (before) {
      const text = textChange(before.page.text, page.text);
      const pixels = pixelChange(before.page.screenshot, page.screenshot);
      if (text || (pixels && pixels.changedPixels > 0)) {
        changes.push({
          fromRun: before.run,
          toRun: r.run,
          text,
          pixels: pixels ? { share: pixels.share, marked: pixels.marked } : null,
        });
      }
    }
    before = { run: r.run, page };
  }
  return changes;
}

/**
 * Issues the certidão de permanência of `monitor` as it stands (`renderCertidao`: PDF/A-3b, Portuguese, the run
 * chain attached) and notarizes it as an ordinary document of the tenant through the one notarization path
 * (anchored like any file); the monitoring names it as its certidão.
 * @returns the certidão's document.
 * @throws AppError as `notarize` (FORBIDDEN below editor, PAYLOAD_TOO_LARGE over the quota, 507 below the disk floor).
 */
export async function issueCertidao(
  em: EntityManager,
  deps: CertidaoDeps,
  monitor: MonitorEntity,
  actor: Actor,
  now: Date = new Date(),
): Promise<DocumentEntity> {
  const runs = await monitorRuns(em, monitor);
  const seen = runs.filter((r) => r.outcome === 'seen');
  const chain = chainOf(monitor, runs, now);
  // Loaded at the first certidão: the PDF writing code (pdf-lib, fontkit) is no part of an idle service.
  const { renderCertidao } = await import('@notary/pdf/certidao');
  const bytes = await renderCertidao({
    serviceName: deps.config.serviceName,
    issuedAt: now,
    monitorId: monitor.id,
    url: monitor.url,
    interval: monitor.interval,
    period: monitor.period,
    state: STATE_WORDS[monitor.state],
    startedAt: monitor.startsAt,
    firstSeen: seen[0]?.observedAt ?? null,
    lastSeen: seen.at(-1)?.observedAt ?? null,
    windows: windowsOf(runs),
    changes: await changesOf(em, deps, runs),
    runs: runs.map((r) => ({
      run: r.run,
      observedAt: r.observedAt,
      outcome: r.outcome,
      cause: r.outcome === 'seen' ? null : causeWords(r),
      serialNumber: r.serialNumber ?? null,
      waczSha256: r.waczSha256 ?? null,
      previousWaczSha256: r.previousWaczSha256 ?? null,
    })),
    chainHolds: checkMonitorChain(chain.runs).length === 0,
    chainJson: new TextEncoder().encode(JSON.stringify(chain, null, 2)),
  });
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const doc = await notarize(em, deps, actor, {
    kind: 'stored',
    origin: { sourceType: 'upload' },
    source: {
      announce: () => bytes.length,
      read: async (onFile) => {
        onFile({
          stream: Readable.from([Buffer.from(bytes)]),
          fileName: `certidao-permanencia-${monitor.id.slice(0, 8)}-${stamp}.pdf`,
          declaredType: 'application/pdf',
        });
        return { consentAt: now };
      },
    },
  });
  monitor.certidao = doc;
  await em.flush();
  return doc;
}

/**
 * `GET /api/monitors/{id}/certidao`: the certidão's PDF. One issued after the last run is served again (any
 * member); otherwise (runs since, or none yet) a new one is issued now, which needs the right to notarize.
 * @returns the PDF's bytes and its document.
 * @throws AppError NOT_FOUND as `findMonitor`; FORBIDDEN for a reader when a new one must be issued; those of
 *   `issueCertidao`.
 */
export async function certidaoOf(
  em: EntityManager,
  deps: CertidaoDeps,
  actor: Actor,
  id: string,
): Promise<{ bytes: Buffer; doc: DocumentEntity }> {
  const monitor = await findMonitor(em, actor, id);
  const runs = await monitorRuns(em, monitor);
  const lastRunAt = runs.at(-1)?.observedAt;
  let doc = monitor.certidao ? await em.findOne(Document, { id: monitor.certidao.id }) : null;
  const current = doc && !doc.deletedAt && doc.storageKey && (!lastRunAt || doc.createdAt >= lastRunAt);
  if (!current) {
    requirePermission(actor, 'upload', 'issue a certidão de permanência in this organization');
    doc = await issueCertidao(em, deps, monitor, actor);
  }
  if (!doc?.storageKey) throw new AppError('NOT_FOUND', 'The certidão is not available');
  return { bytes: await buffer(await deps.storage.get(doc.storageKey)), doc };
}
