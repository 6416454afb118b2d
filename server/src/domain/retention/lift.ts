import type { EntityManager } from '@mikro-orm/core';
import { AppError, SERIAL_PATTERN, UUID_PATTERN } from '@notary/shared';
import { Document, RetentionHoldLift, Tenant } from '../../db/entities';
import { lgpdDeletionReason } from '../documents/lgpd-deletion';

/** What an operator lifts: one document (by id or serial number) or every document of a tenant. */
export type LiftTarget = { document: string } | { tenantId: string };

/** Longest operator name kept, in characters (`retention_hold_lift.operator`). */
const OPERATOR_MAX_CHARS = 128;

/**
 * The operator's name and reason as an audit record keeps them (lifts, serventia changes).
 * @throws AppError BAD_REQUEST without a reason (1 to 500 characters, no control characters) or with an
 *   operator name outside 1 to 128 printable characters.
 */
export function operatorRecord(operator: string, reason: string): { by: string; why: string } {
  const why = lgpdDeletionReason(reason);
  if (why === null) throw new AppError('BAD_REQUEST', '--reason is required: say why');
  const by = operator.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here.
  if (by === '' || by.length > OPERATOR_MAX_CHARS || /[\u0000-\u001f\u007f]/.test(by)) {
    throw new AppError(
      'BAD_REQUEST',
      `The operator name must be 1 to ${OPERATOR_MAX_CHARS} printable characters`,
    );
  }
  return { by, why };
}

/**
 * `retention:lift`: the service operator lifts the retention hold of one document, or of every document of an
 * organization (before deleting it), recording who, why and when in `retention_hold_lift`. Afterwards the
 * LGPD deletion of the document, or the organization's deletion, is no longer refused for a notarial act or
 * the serventia's retention (`destructionHold`). A lift is an audit record and is never undone; lifting the
 * same target again records a second entry.
 * @param operator who lifts it (1 to 128 characters; the CLI defaults to the OS user running it).
 * @param reason why (1 to 500 characters, no control characters): mandatory, the lift is a legal act.
 * @returns the line the CLI prints: `lifted document <id> <serial>` or `lifted tenant <id>`.
 * @throws AppError BAD_REQUEST (no reason, bad operator name), NOT_FOUND (no such document or tenant).
 */
export async function liftRetentionHold(
  em: EntityManager,
  target: LiftTarget,
  operator: string,
  reason: string,
  now: Date = new Date(),
): Promise<string> {
  const { by, why } = operatorRecord(operator, reason);
  if ('document' in target) {
    const text = target.document.trim();
    const doc = UUID_PATTERN.test(text)
      ? await em.findOne(Document, { id: text.toLowerCase() }, { disableIdentityMap: true })
      : SERIAL_PATTERN.test(text.toUpperCase())
        ? await em.findOne(Document, { serialNumber: text.toUpperCase() }, { disableIdentityMap: true })
        : null;
    if (!doc) throw new AppError('NOT_FOUND', `No document with id or serial number ${target.document}`);
    em.create(RetentionHoldLift, {
      id: crypto.randomUUID(),
      tenantId: doc.tenant.id,
      documentId: doc.id,
      documentSerial: doc.serialNumber,
      operator: by,
      reason: why,
      liftedAt: now,
    });
    await em.flush();
    return `lifted document ${doc.id} ${doc.serialNumber}`;
  }
  const tenant = await em.findOne(Tenant, { id: target.tenantId }, { disableIdentityMap: true });
  if (!tenant) throw new AppError('NOT_FOUND', `No tenant ${target.tenantId}`);
  em.create(RetentionHoldLift, {
    id: crypto.randomUUID(),
    tenantId: tenant.id,
    documentId: null,
    documentSerial: null,
    operator: by,
    reason: why,
    liftedAt: now,
  });
  await em.flush();
  return `lifted tenant ${tenant.id}`;
}
