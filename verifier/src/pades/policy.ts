/**
 * A declared ICP-Brasil signature policy (the signature-policy-identifier signed attribute, ETSI EN 319 122-1
 * 5.2.9; DOC-ICP-15.03): its tables' mandatory and forbidden entries and attributes, and its signing period.
 */
import type { ParsedSignedData } from '@notary/trust/cms';
import { type IcpBrasilRow, icpBrasilConformance, icpBrasilSigningPeriodRow } from '../icp-brasil.ts';
import { data, type Message, msg } from '../messages/index.ts';
import type { CheckBuilder } from '../report.ts';

/**
 * ETSI EN 319 122-1 5.2.9 and DOC-ICP-15.03: when the signature (`cms`, parsed as `parsed`) of `certificate`
 * declares an ICP-Brasil policy, each row of the policy's tables holds. Returns the policy's OID and name as
 * noted (null when none is declared).
 */
export async function checkSignaturePolicy(
  c: CheckBuilder,
  certificate: Uint8Array,
  cms: Uint8Array,
  parsed: ParsedSignedData,
): Promise<string | null> {
  const icp = await icpBrasilConformance(certificate, cms, parsed.signerInfo);
  if (icp.policy !== null) {
    c.note(msg('pades.signaturePolicy'), data(icp.policy));
    for (const row of icp.rows) c.expect(row.ok, rowLabel(row), row.detailMessage ?? data(row.detail));
  }
  return icp.policy;
}

/**
 * The declared policy's signing period (DOC-ICP-15.03 Anexo 2 item 5.1): the policy was in force at the
 * proven signing time `provenAt` (a valid signature timestamp's genTime; null: not judged).
 */
export function checkSigningPeriod(c: CheckBuilder, parsed: ParsedSignedData, provenAt: Date | null): void {
  const period = provenAt ? icpBrasilSigningPeriodRow(parsed.signerInfo, provenAt) : null;
  if (period) c.expect(period.ok, rowLabel(period), period.detailMessage ?? data(period.detail));
}

/** A row's evidence label: the table (its name in DOC-ICP-15.03, as is) and the row. */
function rowLabel(row: IcpBrasilRow): Message {
  return msg('pades.policyRow', { table: row.table, row: row.rowMessage ?? data(row.row) });
}
