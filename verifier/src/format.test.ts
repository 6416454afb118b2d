import { describe, expect, it } from 'vitest';
import { formatReport } from './format.ts';
import { msg, render } from './messages/index.ts';
import type { VerifyReport } from './report.ts';
import { withBrasiliaTimes } from './time.ts';

/** A report whose timestamp check read a token of 2018-01-15 (daylight saving) and one of 2026-07-01. */
function report(): VerifyReport {
  return {
    outcome: 'passed',
    exitCode: 0,
    ok: true,
    failedAt: null,
    document: { serialNumber: '2018-000001', sha256: 'ab'.repeat(32), fileName: 'escritura.pdf' },
    service: { name: 'Notary', url: 'https://notary.example.com' },
    checks: [
      {
        id: 5,
        name: 'RFC 3161 timestamp',
        status: 'passed',
        summary: "the document's SHA-256 existed at 2018-01-15T12:00:00.000Z (RFC 3161)",
        evidence: [
          { label: 'genTime', value: '2026-07-01T12:00:00.000Z', source: 'receipt', ok: true },
          {
            label: 'signer',
            value: 'trusted at 2018-01-15T12:00:00.000Z',
            source: 'https://tsa.example/2018-01-15T12:00:00Z',
          },
        ],
      },
    ],
  };
}

describe('report texts print times in Brasília time and UTC', () => {
  it('notary-verify prints each time of a check with its Brasília offset that day, and UTC', () => {
    const text = formatReport(report());
    expect(text).toContain(
      "the document's SHA-256 existed at 2018-01-15 10:00:00 Brasília time (UTC\u221202:00) · 2018-01-15 12:00:00 UTC (RFC 3161)",
    );
    expect(text).toContain(
      'genTime: 2026-07-01 09:00:00 Brasília time (UTC\u221203:00) · 2026-07-01 12:00:00 UTC',
    );
    // A URL keeps what it says.
    expect(text).toContain('[https://tsa.example/2018-01-15T12:00:00Z]');
    expect(text).not.toMatch(/\d{2}:\d{2}:\d{2}\.000Z/);
  });

  it('the page and the desktop client show a translated text with the Portuguese form', () => {
    const summary = msg('tst.summary', { at: '2018-01-15T12:00:00.000Z' });
    expect(render(summary, 'en')).toBe(report().checks[0]?.summary);
    expect(withBrasiliaTimes(render(summary, 'pt'), 'pt')).toBe(
      'o SHA-256 do documento existia em 15/01/2018 10:00:00 (horário de Brasília, UTC\u221202:00) · ' +
        '2018-01-15 12:00:00 UTC (RFC 3161)',
    );
  });
});
