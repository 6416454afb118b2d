import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import {
  AppError,
  isoDurationSeconds,
  MONITOR_LIST_MAX,
  type MonitorDto,
  type MonitorInput,
  type MonitorListDto,
  type MonitorRunDto,
} from '@notary/shared';
import { Document, Monitor, type MonitorEntity, MonitorRun, type MonitorRunEntity } from '../../db/entities';
import type { MonitorQueue } from '../../ports/monitor-queue';
import { parseCaptureUrl } from '../documents/capture';
import { assertStorageRoom } from '../documents/quota';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';

/** What creating and cancelling a monitoring use of the service (a subset of `AppDeps`). */
export interface MonitorDeps {
  monitorQueue: MonitorQueue;
  config: {
    tenantStorageQuotaBytes: number;
    capture: { monitor: { minIntervalSeconds: number; maxDays: number } };
  };
}

/** Most runs one monitoring may plan (a period over its interval): a bound on what one request schedules. */
export const MONITOR_MAX_RUNS = 10_000;

/** Active monitorings one workspace may hold at once. */
export const MONITOR_TENANT_ACTIVE_MAX = 20;

/**
 * `POST /api/monitors`: schedules captures of `input.url` every `interval` during `period` (ISO 8601
 * durations), the first at once. The monitoring row and its first run's job are written in one transaction
 * (the schedule lives in the job queue, never in a timer). The creation is the member's consent for every run.
 * @returns the new monitoring, `active`, with no run yet.
 * @throws AppError FORBIDDEN below editor in an organization; BAD_REQUEST for an invalid URL (as captures),
 *   an interval under `MONITOR_MIN_INTERVAL_SECONDS`, a period over `MONITOR_MAX_DAYS` or shorter than the
 *   interval, more than `MONITOR_MAX_RUNS` runs; PAYLOAD_TOO_LARGE when the workspace is already at its storage
 *   quota; RATE_LIMITED past `MONITOR_TENANT_ACTIVE_MAX` active monitorings.
 */
export async function createMonitor(
  em: EntityManager,
  deps: MonitorDeps,
  actor: Actor,
  input: MonitorInput,
  now: Date = new Date(),
): Promise<MonitorDto> {
  requirePermission(actor, 'upload', 'monitor web pages in this organization');
  const url = parseCaptureUrl(input.url);
  const limits = deps.config.capture.monitor;
  const intervalSeconds = isoDurationSeconds(input.interval) ?? 0;
  const periodSeconds = isoDurationSeconds(input.period) ?? 0;
  if (intervalSeconds < limits.minIntervalSeconds) {
    throw new AppError(
      'BAD_REQUEST',
      `The interval ${input.interval} is shorter than this service's minimum of ${limits.minIntervalSeconds} s (MONITOR_MIN_INTERVAL_SECONDS)`,
      { fields: ['interval'] },
    );
  }
  if (periodSeconds > limits.maxDays * 86_400) {
    throw new AppError(
      'BAD_REQUEST',
      `The period ${input.period} is longer than this service's maximum of ${limits.maxDays} days (MONITOR_MAX_DAYS)`,
      { fields: ['period'] },
    );
  }
  if (periodSeconds < intervalSeconds) {
    throw new AppError('BAD_REQUEST', 'The period must be at least one interval long', {
      fields: ['period'],
    });
  }
  const plannedRuns = Math.floor(periodSeconds / intervalSeconds) + 1;
  if (plannedRuns > MONITOR_MAX_RUNS) {
    throw new AppError(
      'BAD_REQUEST',
      `${plannedRuns} runs is more than the ${MONITOR_MAX_RUNS} a monitoring may plan: lengthen the interval`,
      { fields: ['interval', 'period'] },
    );
  }
  // Every run is a capture counted on the workspace's quota: a workspace with no room left is told now.
  await assertStorageRoom(em, actor.tenant.id, deps.config.tenantStorageQuotaBytes, 1);
  const active = await em.count(Monitor, { tenant: actor.tenant.id, state: 'active' });
  if (active >= MONITOR_TENANT_ACTIVE_MAX) {
    throw new AppError(
      'RATE_LIMITED',
      `Your workspace already has ${active} active monitorings, the most it may have: cancel one first`,
    );
  }
  const monitor = await em.transactional(async (tx) => {
    const row = tx.create(Monitor, {
      id: randomUUID(),
      tenant: actor.tenant.id,
      createdBy: actor.userId,
      createdByEmail: actor.email,
      url: url.href,
      interval: input.interval,
      period: input.period,
      intervalSeconds,
      periodSeconds,
      plannedRuns,
      state: 'active',
      failure: null,
      consentAt: now,
      createdAt: now,
      startsAt: now,
      endsAt: new Date(now.getTime() + (plannedRuns - 1) * intervalSeconds * 1000),
      endedAt: null,
      certidao: null,
    });
    await tx.flush();
    await deps.monitorQueue.scheduleRun(tx, row.id, 1, now);
    return row;
  });
  return toMonitorDto(monitor, [], null);
}

/**
 * The monitoring `id` of the actor's tenant, for any member.
 * @throws AppError NOT_FOUND when it does not exist in the actor's tenant (another tenant's is not told apart).
 */
export async function findMonitor(em: EntityManager, actor: Actor, id: string): Promise<MonitorEntity> {
  const monitor = await em.findOne(Monitor, { id, tenant: actor.tenant.id });
  if (!monitor) throw new AppError('NOT_FOUND', 'Monitoring not found');
  return monitor;
}

/** The runs of `monitor` in run order. */
export function monitorRuns(em: EntityManager, monitor: MonitorEntity): Promise<MonitorRunEntity[]> {
  return em.find(MonitorRun, { monitor: monitor.id }, { orderBy: { run: 'asc' } });
}

/**
 * `GET /api/monitors/{id}`: the monitoring with its state and runs, for any member of its tenant.
 * @throws AppError NOT_FOUND as `findMonitor`.
 */
export async function getMonitor(em: EntityManager, actor: Actor, id: string): Promise<MonitorDto> {
  const monitor = await findMonitor(em, actor, id);
  return toMonitorDto(monitor, await monitorRuns(em, monitor), await certidaoSerial(em, monitor));
}

/**
 * `GET /api/monitors`: the actor's tenant's monitorings, newest first (at most `MONITOR_LIST_MAX`), each with
 * its state, how many runs it recorded and its last run, for any member (the runs themselves: `getMonitor`).
 */
export async function listMonitors(em: EntityManager, actor: Actor): Promise<MonitorListDto> {
  const monitors = await em.find(
    Monitor,
    { tenant: actor.tenant.id },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: MONITOR_LIST_MAX },
  );
  const items = await Promise.all(
    monitors.map(async (m) => {
      // Runs are numbered without gap, so the last one's number is how many were recorded.
      const last = await em.findOne(MonitorRun, { monitor: m.id }, { orderBy: { run: 'desc' } });
      const { runs: _runs, ...dto } = toMonitorDto(m, last ? [last] : [], await certidaoSerial(em, m));
      return { ...dto, runsDone: last?.run ?? 0, lastRun: last ? toMonitorRunDto(last) : null };
    }),
  );
  return { monitors: items };
}

/**
 * `DELETE /api/monitors/{id}`: stops an active monitoring (`cancelled`); its queued run finds it so and does
 * nothing. The runs made stay, and a certidão may still be asked for them. Cancelling again is a no-op.
 * @throws AppError FORBIDDEN below editor; NOT_FOUND as `findMonitor`.
 */
export async function cancelMonitor(em: EntityManager, actor: Actor, id: string): Promise<MonitorDto> {
  requirePermission(actor, 'upload', 'cancel monitorings in this organization');
  const monitor = await findMonitor(em, actor, id);
  if (monitor.state === 'active') {
    monitor.state = 'cancelled';
    monitor.endedAt = new Date();
    await em.flush();
  }
  return toMonitorDto(monitor, await monitorRuns(em, monitor), await certidaoSerial(em, monitor));
}

async function certidaoSerial(em: EntityManager, monitor: MonitorEntity): Promise<string | null> {
  if (!monitor.certidao) return null;
  const doc = await em.findOne(Document, { id: monitor.certidao.id });
  return doc?.serialNumber ?? null;
}

/** When run `run` (1-based) of `monitor` is due: the start plus `run - 1` intervals. */
export function runDueAt(monitor: Pick<MonitorEntity, 'startsAt' | 'intervalSeconds'>, run: number): Date {
  return new Date(monitor.startsAt.getTime() + (run - 1) * monitor.intervalSeconds * 1000);
}

/** A run as the API shows it. */
export function toMonitorRunDto(r: MonitorRunEntity): MonitorRunDto {
  return {
    run: r.run,
    dueAt: r.dueAt.toISOString(),
    observedAt: r.observedAt.toISOString(),
    outcome: r.outcome,
    cause: r.cause ?? null,
    detail: r.detail ?? null,
    httpStatus: r.httpStatus ?? null,
    documentId: r.document?.id ?? null,
    serialNumber: r.serialNumber ?? null,
    waczSha256: r.waczSha256 ?? null,
    previousWaczSha256: r.previousWaczSha256 ?? null,
  };
}

/** A monitoring as the API shows it. */
export function toMonitorDto(
  m: MonitorEntity,
  runs: readonly MonitorRunEntity[],
  certidaoSerialNumber: string | null,
): MonitorDto {
  const last = runs.at(-1)?.run ?? 0;
  return {
    id: m.id,
    url: m.url,
    interval: m.interval,
    period: m.period,
    intervalSeconds: m.intervalSeconds,
    periodSeconds: m.periodSeconds,
    state: m.state,
    failure: m.failure ?? null,
    createdAt: m.createdAt.toISOString(),
    endsAt: m.endsAt.toISOString(),
    nextRunAt: m.state === 'active' && last < m.plannedRuns ? runDueAt(m, last + 1).toISOString() : null,
    plannedRuns: m.plannedRuns,
    certidaoSerialNumber,
    runs: runs.map(toMonitorRunDto),
  };
}
