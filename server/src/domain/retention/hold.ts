import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, type HoldRule, RETENTION_LEGAL_BASIS } from '@notary/shared';
import { formatBrasiliaAndUtc } from '@notary/shared/time';

/**
 * Retention holds: whether a document may be destroyed, and if not, why (docs/team.md, Serventia and retention;
 * docs/sharing.md, LGPD deletion). The one rule every deletion path asks
 * (LGPD deletion, organization deletion and its batches). A document is held when
 * - a notarial act is recorded on it (a row in `notarial_act`): a serventia keeps its acts (Provimento CNJ
 *   50/2015's table; digitally archived acts are kept permanently), or
 * - its tenant declared a serventia (`serventia`) whose retention still runs for it: permanent, or the
 *   document's `created_at` plus the serventia's years (same calendar date, UTC) is after `now`,
 * unless the operator lifted the hold (`retention_hold_lift`) for that document or for its whole tenant.
 * Keeping a document under a hold is keeping data to meet a legal duty: LGPD art. 16 I.
 * A document already deleted under the LGPD (`deleted_at` set) holds no bytes and is never held.
 */

/** Why a document may not be destroyed (`AppError.details` of a refused deletion carries it). */
export interface DestructionHold {
  rule: HoldRule;
  /**
   * Until when the retention runs (`retention_period`): a date, or `permanent`. Absent for `notarial_act`,
   * which holds as long as the act stays recorded.
   */
  until?: Date | 'permanent';
  /** The serventia's CNS, when the tenant declared one. */
  cns?: string;
  legalBasis: typeof RETENTION_LEGAL_BASIS;
  /** The refusal in a sentence, naming the rule and the legal basis. */
  message: string;
}

/** The document the rule needs: its id, its tenant, when it was notarized and whether it was LGPD-deleted. */
export interface HoldSubject {
  id: string;
  tenant: { id: string };
  createdAt: Date;
  deletedAt?: Date | null | undefined;
}

type Sql = SqlEntityManager;

/** `date` plus `years` calendar years, in UTC (29 February plus one year is 1 March). */
export function addUtcYears(date: Date, years: number): Date {
  const out = new Date(date.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + years);
  return out;
}

/** A tenant's serventia as the rule reads it: its CNS and retention (null years: permanent). */
export interface ServentiaRetention {
  cns: string;
  /** Whole years; null means permanent. */
  years: number | null;
}

/** The tenant's declared serventia, or null. */
export async function serventiaRetentionOf(
  em: EntityManager,
  tenantId: string,
): Promise<ServentiaRetention | null> {
  const rows: { cns: string; retention_years: number | null }[] = await (em as Sql).execute(
    'select cns, retention_years from serventia where tenant_id = ?',
    [tenantId],
  );
  const row = rows[0];
  return row
    ? { cns: row.cns, years: row.retention_years === null ? null : Number(row.retention_years) }
    : null;
}

const ACT_MESSAGE =
  'This document has a notarial act recorded on it: the serventia must keep it, so it cannot be deleted (retention rule notarial_act; LGPD art. 16 I, data kept to meet a legal duty). Only the service operator can lift this hold.';

function retentionMessage(cns: string, until: Date | 'permanent'): string {
  const span = until === 'permanent' ? 'permanently' : `until ${formatBrasiliaAndUtc(until, 'en')}`;
  return `The serventia (CNS ${cns}) must keep this document ${span}, so it cannot be deleted (retention rule retention_period; LGPD art. 16 I, data kept to meet a legal duty). Only the service operator can lift this hold.`;
}

/**
 * May `doc` be destroyed at `now`? The one answer every deletion path asks (see the module comment).
 * @param em an EntityManager (inside the deleting transaction, after the document row is locked, so that an
 *   act recorded concurrently is seen: recording an act takes a key-share lock on the document row).
 * @param now the current time (tests inject it).
 * @returns null when it may be destroyed; else the hold: a notarial act first, else the retention period.
 */
export async function destructionHold(
  em: EntityManager,
  doc: HoldSubject,
  now: Date,
): Promise<DestructionHold | null> {
  if (doc.deletedAt) return null;
  const rows: { act: boolean; lifted: boolean; cns: string | null; retention_years: number | null }[] =
    await (em as Sql).execute(
      `select exists (select 1 from notarial_act a where a.document_id = ?::uuid) as act,
            exists (select 1 from retention_hold_lift l
                     where l.document_id = ?::uuid or (l.tenant_id = ?::uuid and l.document_id is null)) as lifted,
            s.cns, s.retention_years
       from (select 1) as one left join serventia s on s.tenant_id = ?::uuid`,
      [doc.id, doc.id, doc.tenant.id, doc.tenant.id],
    );
  const row = rows[0];
  if (!row || row.lifted) return null;
  const cns = row.cns ?? undefined;
  if (row.act) {
    return {
      rule: 'notarial_act',
      ...(cns === undefined ? {} : { cns }),
      legalBasis: RETENTION_LEGAL_BASIS,
      message: ACT_MESSAGE,
    };
  }
  if (cns === undefined) return null;
  const until: Date | 'permanent' =
    row.retention_years === null ? 'permanent' : addUtcYears(doc.createdAt, Number(row.retention_years));
  if (until !== 'permanent' && until.getTime() <= now.getTime()) return null;
  return {
    rule: 'retention_period',
    until,
    cns,
    legalBasis: RETENTION_LEGAL_BASIS,
    message: retentionMessage(cns, until),
  };
}

/**
 * The refusal of a held document's deletion: CONFLICT (409) with the hold's sentence, and the hold as data
 * (`details`: `rule`, `until` as ISO 8601 or `permanent`, `cns`, `legalBasis`).
 */
export function holdRefusal(hold: DestructionHold): AppError {
  return new AppError('CONFLICT', hold.message, { details: holdDetails(hold) });
}

/** A hold as JSON data (dates as ISO 8601). */
export function holdDetails(hold: DestructionHold | TenantHold): Record<string, unknown> {
  const until = 'until' in hold ? hold.until : undefined;
  return {
    rule: hold.rule,
    ...(until === undefined ? {} : { until: until === 'permanent' ? until : until.toISOString() }),
    ...(hold.cns === undefined ? {} : { cns: hold.cns }),
    ...('held' in hold ? { heldDocuments: hold.held } : {}),
    ...('retention' in hold && hold.retention !== undefined ? { retention: hold.retention } : {}),
    legalBasis: hold.legalBasis,
  };
}

/**
 * The documents among `ids` of one tenant held at `now` (see the module comment), as a SQL fragment selecting
 * their ids (`held(id)`). Each branch probes by id: the retention branch `document (tenant_id, id)`, the act
 * branch `notarial_act (document_id)`; the lifts `retention_hold_lift (document_id)`.
 */
function heldAmongSql(
  tenantId: string,
  serventia: ServentiaRetention | null,
  now: Date,
  ids: readonly string[],
): { sql: string; params: unknown[] } {
  const idArray = `{${ids.join(',')}}`;
  const parts: string[] = [];
  const params: unknown[] = [];
  if (serventia !== null) {
    const cutoff = serventia.years === null ? '' : ' and d.created_at > ?';
    parts.push(
      `select d.id from document d
        where d.tenant_id = ?::uuid and d.id = any(?::uuid[]) and d.deleted_at is null${cutoff}`,
    );
    params.push(tenantId, idArray);
    if (serventia.years !== null) params.push(addUtcYears(now, -serventia.years));
  }
  parts.push(
    `select d.id from notarial_act a join document d on d.id = a.document_id
      where a.document_id = any(?::uuid[]) and d.tenant_id = ?::uuid and d.deleted_at is null`,
  );
  params.push(idArray, tenantId);
  const sql = `held as (
      select h.id from (${parts.join(' union ')}) as h
       where not exists (select 1 from retention_hold_lift l where l.tenant_id = ?::uuid and l.document_id is null)
         and not exists (select 1 from retention_hold_lift l where l.document_id = h.id)
    )`;
  params.push(tenantId);
  return { sql, params };
}

/** What holds a tenant's documents: how many are held and the leading rule (an act first). */
export interface TenantHold {
  rule: HoldRule;
  /** Documents held. */
  held: number;
  cns?: string;
  /** The serventia's retention, when the tenant declared one. */
  retention?: { years: number } | 'permanent';
  legalBasis: typeof RETENTION_LEGAL_BASIS;
  message: string;
}

/**
 * Counted held documents stop at this many per rule: a refusal needs "some", and a count that stops keeps the
 * check's cost bounded on a large archive under a long or permanent retention.
 */
export const HELD_COUNT_CAP = 10_000;

/**
 * Whether any document of tenant `tenantId` is held at `now`, and how many (the organization deletion's
 * check, before its request, its confirmation and its run). One statement, two capped counts, each on an
 * index: the tenant's acts (`notarial_act (tenant_id)`; an act is never recorded on an LGPD-deleted document,
 * and one whose document was deleted after a lift is excluded by that lift), and the live documents inside
 * the retention without an act (`document (tenant_id, created_at, id)` after the cutoff, each probed in
 * `notarial_act (document_id)`); lifts are probed per document (`retention_hold_lift (document_id)`).
 * @returns null when none is held; else the hold, `held` the count (at most `2 * HELD_COUNT_CAP`: at or
 *   above the cap, "at least").
 */
export async function tenantHold(em: EntityManager, tenantId: string, now: Date): Promise<TenantHold | null> {
  const sql = em as Sql;
  const orgLift: unknown[] = await sql.execute(
    'select 1 from retention_hold_lift where tenant_id = ?::uuid and document_id is null limit 1',
    [tenantId],
  );
  if (orgLift.length > 0) return null;
  const serventia = await serventiaRetentionOf(em, tenantId);
  const notLifted = (column: string) =>
    `not exists (select 1 from retention_hold_lift l where l.document_id = ${column})`;
  const cutoff = serventia?.years == null ? '' : ' and d.created_at > ?';
  const retention =
    serventia === null
      ? '0'
      : `(select count(*) from (select 1 from document d
            where d.tenant_id = ?::uuid and d.deleted_at is null${cutoff}
              and not exists (select 1 from notarial_act a where a.document_id = d.id)
              and ${notLifted('d.id')}
            limit ${HELD_COUNT_CAP}) as r)`;
  const params: unknown[] = [tenantId];
  if (serventia !== null) {
    params.push(tenantId);
    if (serventia.years !== null) params.push(addUtcYears(now, -serventia.years));
  }
  const rows: { acts: string | number; retention: string | number }[] = await sql.execute(
    `select (select count(*) from (select 1 from notarial_act a
               where a.tenant_id = ?::uuid and ${notLifted('a.document_id')}
               limit ${HELD_COUNT_CAP}) as x) as acts,
            ${retention} as retention`,
    params,
  );
  const acts = Number(rows[0]?.acts ?? 0);
  const n = acts + Number(rows[0]?.retention ?? 0);
  if (n === 0) return null;
  const rule: HoldRule = acts > 0 ? 'notarial_act' : 'retention_period';
  const why =
    rule === 'notarial_act'
      ? 'notarial acts are recorded on its documents'
      : `the serventia (CNS ${serventia?.cns ?? '?'}) must keep its documents ${serventia?.years === null ? 'permanently' : `${serventia?.years} years`}`;
  const count = n >= HELD_COUNT_CAP ? `at least ${n}` : String(n);
  return {
    rule,
    held: n,
    ...(serventia
      ? { cns: serventia.cns, retention: serventia.years === null ? 'permanent' : { years: serventia.years } }
      : {}),
    legalBasis: RETENTION_LEGAL_BASIS,
    message: `This organization cannot be deleted: ${count} of its documents must be kept (${why}; retention rule ${rule}; LGPD art. 16 I, data kept to meet a legal duty). Only the service operator can lift the hold (retention:lift).`,
  };
}

/**
 * The documents among `ids` (of tenant `tenantId`) held at `now`, each with its leading rule: the
 * organization deletion's batch asks it after locking the batch's rows, just before deleting them.
 */
export async function heldAmong(
  em: EntityManager,
  tenantId: string,
  ids: readonly string[],
  now: Date,
): Promise<{ id: string; rule: HoldRule }[]> {
  if (ids.length === 0) return [];
  const serventia = await serventiaRetentionOf(em, tenantId);
  const held = heldAmongSql(tenantId, serventia, now, ids);
  const rows: { id: string; act: boolean }[] = await (em as Sql).execute(
    `with ${held.sql}
     select id, exists (select 1 from notarial_act a where a.document_id = held.id) as act from held order by id`,
    held.params,
  );
  return rows.map((r) => ({ id: r.id, rule: r.act ? 'notarial_act' : 'retention_period' }));
}
