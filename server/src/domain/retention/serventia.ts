import { type EntityManager, LockMode } from '@mikro-orm/core';
import {
  AppError,
  type Retention,
  retentionCovers,
  retentionOf,
  type ServentiaDto,
  type ServentiaInput,
  ServentiaInputSchema,
} from '@notary/shared';
import { Serventia, ServentiaChange, type ServentiaEntity } from '../../db/entities';
import { requireOrganizationManager } from '../org/guard';
import { type Actor, requireOrganization } from '../tenancy/actor';
import { operatorRecord } from './lift';

/** The retention of a stored row (null years: permanent). */
function retentionOfRow(row: Pick<ServentiaEntity, 'retentionYears'>): Retention {
  return row.retentionYears === null || row.retentionYears === undefined
    ? 'permanent'
    : { years: row.retentionYears };
}

function toDto(row: ServentiaEntity): ServentiaDto {
  return {
    cns: row.cns,
    retention: retentionOfRow(row),
    declaredAt: row.declaredAt.toISOString(),
    ...(row.declaredBy ? { declaredBy: row.declaredBy } : {}),
  };
}

/**
 * `GET /api/org/serventia`: the active organization's serventia. Any member may read it.
 * @returns `{cns, retention: {years} | "permanent", declaredAt, declaredBy?}`.
 * @throws AppError BAD_REQUEST `No active organization` (a personal workspace is never a serventia),
 *   NOT_FOUND when the organization declared none.
 */
export async function readServentia(em: EntityManager, actor: Actor): Promise<ServentiaDto> {
  const org = requireOrganization(actor);
  const row = await em.findOne(Serventia, { tenant: org.tenant.id }, { disableIdentityMap: true });
  if (!row) throw new AppError('NOT_FOUND', 'This organization has not declared a serventia');
  return toDto(row);
}

/**
 * `PUT /api/org/serventia`: declares the active organization a serventia, with its CNS (6 digits, CNJ Justiça
 * Aberta) and the minimum retention of its documents (Provimento CNJ 50/2015's table), or changes it.
 * Admin or owner. A retention may be declared, kept or extended here (more years, or permanent); shortening
 * it would release documents held today, so it is refused: only the service operator may lower a retention
 * or remove a serventia (docs/operations.md, Retention holds). The CNS may be corrected.
 * @param now the declaration's time (tests inject it).
 * @returns the serventia as stored.
 * @throws AppError BAD_REQUEST (`No active organization`: a personal workspace cannot be a serventia; an
 *   invalid CNS or retention), FORBIDDEN (below admin), CONFLICT (the new retention is shorter than the
 *   declared one), with `details.current` the retention in force.
 */
export async function declareServentia(
  em: EntityManager,
  actor: Actor,
  input: ServentiaInput,
  now: Date = new Date(),
): Promise<ServentiaDto> {
  const org = requireOrganizationManager(actor, 'declare the serventia');
  // The router validates already; parsing again keeps the rule here for every other caller.
  const parsed = ServentiaInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError('BAD_REQUEST', `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  const next = retentionOf(parsed.data);
  return em.transactional(async (tx) => {
    const current = await tx.findOne(
      Serventia,
      { tenant: org.tenant.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (current) {
      const held = retentionOfRow(current);
      if (!retentionCovers(next, held)) {
        throw new AppError(
          'CONFLICT',
          `The retention can only be extended here (declared: ${held === 'permanent' ? 'permanent' : `${held.years} years`}): shortening it would release documents the serventia must keep; ask the service operator`,
          { details: { current: held } },
        );
      }
      current.cns = parsed.data.cns;
      current.retentionYears = next === 'permanent' ? null : next.years;
      current.declaredAt = now;
      current.declaredBy = org.userId;
      await tx.flush();
      return toDto(current);
    }
    const row = tx.create(Serventia, {
      tenant: org.tenant.id,
      cns: parsed.data.cns,
      retentionYears: next === 'permanent' ? null : next.years,
      declaredAt: now,
      declaredBy: org.userId,
    });
    await tx.flush();
    return toDto(row);
  });
}

/** What the operator sets: a retention (any, shorter included) or the serventia's removal. */
export type ServentiaOperatorChange = Retention | 'remove';

/**
 * `serventia:set`: the service operator changes the declared serventia of tenant `tenantId`: sets its
 * retention to any value (shorter included, which the members cannot do) or removes it, recording the change
 * with who, why and when in `serventia_change`. Documents whose retention then ends may be deleted; notarial
 * acts still hold.
 * @returns the line the CLI prints: `serventia <tenant id> retention <n> years|permanent` or
 *   `serventia <tenant id> removed`.
 * @throws AppError NOT_FOUND (the tenant declared no serventia), BAD_REQUEST (years outside 1 to 100, no
 *   reason, bad operator name).
 */
export async function changeServentiaByOperator(
  em: EntityManager,
  tenantId: string,
  change: ServentiaOperatorChange,
  operator: string,
  reason: string,
  now: Date = new Date(),
): Promise<string> {
  const { by, why } = operatorRecord(operator, reason);
  if (change !== 'remove' && change !== 'permanent') {
    if (!Number.isInteger(change.years) || change.years < 1 || change.years > 100) {
      throw new AppError('BAD_REQUEST', '--years must be an integer from 1 to 100');
    }
  }
  return em.transactional(async (tx) => {
    const row = await tx.findOne(
      Serventia,
      { tenant: tenantId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!row) throw new AppError('NOT_FOUND', `Tenant ${tenantId} declared no serventia`);
    const before = row.retentionYears ?? null;
    const after = change === 'remove' || change === 'permanent' ? null : change.years;
    tx.create(ServentiaChange, {
      id: crypto.randomUUID(),
      tenantId,
      action: change === 'remove' ? 'remove' : 'retention',
      cns: row.cns,
      retentionYearsBefore: before,
      retentionYearsAfter: after,
      operator: by,
      reason: why,
      changedAt: now,
    });
    if (change === 'remove') {
      tx.remove(row);
      await tx.flush();
      return `serventia ${tenantId} removed`;
    }
    row.retentionYears = after;
    row.declaredAt = now;
    row.declaredBy = null;
    await tx.flush();
    return `serventia ${tenantId} retention ${after === null ? 'permanent' : `${after} year${after === 1 ? '' : 's'}`}`;
  });
}
