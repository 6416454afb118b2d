import type { CheckResult } from '@notary/verify';

/**
 * Test support: a check of a verification report (`@notary/verify`'s `CheckResult`) named `check <id>`, with
 * `status` and, when given, `reason`; no summary, no evidence.
 */
export function testCheck(
  id: CheckResult['id'],
  status: CheckResult['status'],
  reason?: CheckResult['reason'],
): CheckResult {
  return { id, name: `check ${id}`, status, ...(reason ? { reason } : {}), summary: '', evidence: [] };
}
