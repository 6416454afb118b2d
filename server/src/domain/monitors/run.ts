import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { silentLog } from '@notary/platform/log';
import { AppError, errorMessage, type RunCause } from '@notary/shared';
import { Monitor, type MonitorEntity, MonitorRun, TenantMember } from '../../db/entities';
import type { MonitorQueue } from '../../ports/monitor-queue';
import type { RateLimiter } from '../../ports/rate-limit';
import { type CaptureDeps, captureAndNotarize } from '../documents/capture';
import type { Actor } from '../tenancy/actor';
import { type CertidaoDeps, issueCertidao } from './certidao';
import { runDueAt } from './service';

/** What a monitoring's run uses of the service (a subset of `AppDeps`). */
export interface MonitorRunDeps extends Omit<CaptureDeps, 'config'>, CertidaoDeps {
  monitorQueue: MonitorQueue;
  /** The spec's per-minute limits: each run counts as one web capture of the member who created the monitoring. */
  rateLimiter: RateLimiter;
}

/** What one run observed. */
interface Observation {
  outcome: 'seen' | 'unavailable';
  cause: RunCause | null;
  detail: string | null;
  httpStatus: number | null;
  doc: { id: string; serialNumber: string; sha256Hash: string } | null;
  /** The workspace is past its storage quota: the monitoring cannot go on. */
  fatal?: string;
}

/**
 * Runs run `run` of monitoring `monitorId` (the job `jobs/monitor-runs.ts` delivers once due): an ordinary
 * capture (`captureAndNotarize`, as the member who created the monitoring, whose role is read again now) whose
 * signed record names the monitoring, the run and the WACZ SHA-256 of the previous run that made an archive; a
 * capture that fails (DNS, TLS, unreachable, timeout) or a page answered with an HTTP error status is recorded
 * as an observation of unavailability with its cause, never dropped. The run's row and the next run's job are
 * written in one transaction; after the last run the monitoring is `finished` and its certidão issued.
 * Idempotent by run number: a run already recorded (a job delivered again) only makes sure the next is
 * scheduled; a monitoring no longer active does nothing.
 * @throws what the database throws (the job is retried); capture errors are observations, not throws.
 */
export async function runMonitor(
  em: EntityManager,
  deps: MonitorRunDeps,
  job: { monitorId: string; run: number },
  options: { signal?: AbortSignal; now?: () => Date } = {},
): Promise<void> {
  const now = options.now ?? (() => new Date());
  const signal = options.signal;
  const monitor = await em.findOne(Monitor, { id: job.monitorId }, { populate: ['tenant'] });
  if (monitor?.state !== 'active') return;
  const recorded = await em.findOne(MonitorRun, { monitor: monitor.id, run: job.run });
  if (recorded) {
    if (job.run < monitor.plannedRuns) await scheduleNext(em, deps, monitor, job.run);
    return;
  }
  const previous = await em.findOne(
    MonitorRun,
    { monitor: monitor.id, run: { $lt: job.run }, waczSha256: { $ne: null } },
    { orderBy: { run: 'desc' } },
  );
  const previousWaczSha256 = previous?.waczSha256 ?? null;
  const actor = await runActor(em, monitor);
  const observation = actor
    ? await observe(em, deps, { monitor, actor, run: job.run, previousWaczSha256, signal })
    : refusedObservation(
        'the member who created the monitoring may no longer capture in this workspace',
        true,
      );
  // A run the stopping service cut short is no observation: its job fails and is tried again.
  signal?.throwIfAborted();
  const last = job.run >= monitor.plannedRuns || observation.fatal !== undefined;
  await em.transactional(async (tx) => {
    tx.create(MonitorRun, {
      id: randomUUID(),
      monitor: monitor.id,
      run: job.run,
      dueAt: runDueAt(monitor, job.run),
      observedAt: now(),
      outcome: observation.outcome,
      cause: observation.cause,
      detail: observation.detail,
      httpStatus: observation.httpStatus,
      document: observation.doc?.id ?? null,
      serialNumber: observation.doc?.serialNumber ?? null,
      waczSha256: observation.doc?.sha256Hash ?? null,
      previousWaczSha256,
    });
    await tx.flush();
    if (!last) {
      await deps.monitorQueue.scheduleRun(tx, monitor.id, job.run + 1, runDueAt(monitor, job.run + 1));
      return;
    }
    await tx.nativeUpdate(
      Monitor,
      { id: monitor.id, state: 'active' },
      {
        state: observation.fatal ? 'failed' : 'finished',
        failure: observation.fatal ?? null,
        endedAt: now(),
      },
    );
  });
  if (!last) return;
  await em.refresh(monitor);
  try {
    if (actor) await issueCertidao(em, deps, monitor, actor);
  } catch (e) {
    // The runs are recorded: the certidão can be asked for again (GET /api/monitors/{id}/certidao).
    (deps.log ?? silentLog).error({ err: e, monitor: monitor.id }, 'certidão de permanência not issued');
  }
}

/** Schedules the run after `run` again (a no-op when its job exists: one job per run number). */
async function scheduleNext(em: EntityManager, deps: MonitorRunDeps, monitor: MonitorEntity, run: number) {
  await em.transactional((tx) =>
    deps.monitorQueue.scheduleRun(tx, monitor.id, run + 1, runDueAt(monitor, run + 1)),
  );
}

/**
 * The member who created `monitor`, acting in its tenant with the role the service's table gives now (the owner
 * of a personal workspace); undefined when they may no longer notarize there.
 */
async function runActor(em: EntityManager, monitor: MonitorEntity): Promise<Actor | undefined> {
  const tenant = monitor.tenant;
  const base = { userId: monitor.createdBy, email: monitor.createdByEmail ?? null, ip: null };
  if (tenant.kind === 'personal') {
    return tenant.externalId === monitor.createdBy ? { ...base, tenant, role: 'owner' } : undefined;
  }
  const member = await em.findOne(TenantMember, { tenant: tenant.id, userId: monitor.createdBy });
  if (!member || member.role === 'reader') return undefined;
  return { ...base, tenant, role: member.role };
}

/** One capture of the run, classified. */
async function observe(
  em: EntityManager,
  deps: MonitorRunDeps,
  at: {
    monitor: MonitorEntity;
    actor: Actor;
    run: number;
    previousWaczSha256: string | null;
    signal: AbortSignal | undefined;
  },
): Promise<Observation> {
  const { monitor, actor, run, previousWaczSha256, signal } = at;
  if (deps.rateLimiter.enabled) {
    const decision = await deps.rateLimiter.consume(['webCapture'], { userId: monitor.createdBy, ip: null });
    if (!decision.allowed) {
      return refusedObservation(
        `web capture limit spent (${decision.exceeded}); retry in ${decision.retryAfterSeconds} s`,
      );
    }
  }
  try {
    const { doc, record } = await captureAndNotarize(em.fork(), deps, actor, new URL(monitor.url), {
      consentAt: monitor.consentAt,
      monitoring: { monitorId: monitor.id, run, previousWaczSha256 },
      ...(signal ? { signal } : {}),
    });
    const ref = { id: doc.id, serialNumber: doc.serialNumber, sha256Hash: doc.sha256Hash };
    if (record.status >= 400) {
      return {
        outcome: 'unavailable',
        cause: 'http-status',
        detail: `HTTP ${record.status}`,
        httpStatus: record.status,
        doc: ref,
      };
    }
    return { outcome: 'seen', cause: null, detail: null, httpStatus: record.status, doc: ref };
  } catch (e) {
    signal?.throwIfAborted();
    return failedObservation(e);
  }
}

function refusedObservation(detail: string, fatal = false): Observation {
  return {
    outcome: 'unavailable',
    cause: 'refused',
    detail,
    httpStatus: null,
    doc: null,
    ...(fatal ? { fatal: detail } : {}),
  };
}

/**
 * A capture that failed, as an observation: the site's failures (DNS, TLS, unreachable, timeout) are the page's
 * unavailability; the service's refusals (quota, limits, a destination not allowed, no disk) are `refused`, the
 * storage quota ending the monitoring.
 */
export function failedObservation(e: unknown): Observation {
  const detail = errorMessage(e).slice(0, 500);
  const unavailable = (cause: RunCause): Observation => ({
    outcome: 'unavailable',
    cause,
    detail,
    httpStatus: null,
    doc: null,
  });
  if (!(e instanceof AppError)) return unavailable('error');
  switch (e.code) {
    case 'GATEWAY_TIMEOUT':
      return unavailable('timeout');
    case 'BAD_GATEWAY':
      if (/NAME_NOT_RESOLVED|does not resolve|ENOTFOUND|DNS/i.test(detail)) return unavailable('dns');
      if (/CERT|SSL|TLS/i.test(detail)) return unavailable('tls');
      return unavailable('unreachable');
    case 'PAYLOAD_TOO_LARGE':
      return refusedObservation(detail, true);
    case 'BAD_REQUEST':
    case 'RATE_LIMITED':
    case 'INSUFFICIENT_STORAGE':
    case 'FORBIDDEN':
      return refusedObservation(detail);
    default:
      return unavailable('error');
  }
}
