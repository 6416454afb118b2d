/**
 * The WACZ checks' results: `CheckBuilder` (of `report.ts`) judges each check's status from its evidence,
 * these give the result the WACZ check's id and name.
 */
import { type Message, render } from '../messages/index.ts';
import { CheckBuilder, type CheckResult, type NotRunReason } from '../report.ts';
import { WACZ_CHECK_NAMES, type WaczCheckId, type WaczCheckResult } from './types.ts';

/** The checks' builder with the WACZ check's id and name (`CheckBuilder` judges the status). */
export function builder(): CheckBuilder {
  return new CheckBuilder(1);
}

/** `c`'s result (`CheckBuilder.result`) as WACZ check `id`, `summary` the sentence when it passes. */
export function finish(id: WaczCheckId, c: CheckBuilder, summary: Message): WaczCheckResult {
  const { id: _id, name: _name, pades: _pades, ...rest } = c.result(summary);
  return { id, name: WACZ_CHECK_NAMES[id], ...rest };
}

/** WACZ check `id` that did not run: `reason` its kind (`NotRunReason`), `why` the sentence shown. */
export function notRunWacz(
  id: WaczCheckId,
  reason: NotRunReason,
  why: Message,
  evidence: CheckResult['evidence'] = [],
) {
  return {
    id,
    name: WACZ_CHECK_NAMES[id],
    status: 'not-run',
    reason,
    summary: render(why, 'en'),
    summaryMessage: why,
    evidence,
  } as WaczCheckResult;
}
