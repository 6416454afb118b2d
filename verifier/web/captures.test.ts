import { describe, expect, it } from 'vitest';
import { handWacz, tamperedWacz } from '../../test/harness/hand-wacz.ts';
import { batchOutcome } from '../src/batch.ts';
import { untranslatedTexts } from '../src/messages/messages.testing.ts';
import { MAX_WACZ_BYTES } from '../src/wacz/index.ts';
import { isWacz, PAGE_CSV_COLUMNS, pageCsv, pageResult, verifyCaptures } from './captures.ts';

describe('web captures on the verify page', () => {
  it('checks each .wacz on its own, refuses one too large before reading it, and downloads all as CSV', async () => {
    const good = handWacz();
    const files = new Map<string, Uint8Array>([
      ['captura.wacz', good],
      ['copia.WACZ', tamperedWacz(good)],
      ['notas.wacz', new TextEncoder().encode('not a zip')],
    ]);
    const read: string[] = [];
    const entries = [
      ...[...files].map(([name, bytes]) => ({ name, size: bytes.length })),
      { name: 'enorme.wacz', size: MAX_WACZ_BYTES + 1 },
    ];
    expect(entries.every((e) => isWacz(e.name))).toBe(true);
    expect(isWacz('captura.wacz.receipt.json')).toBe(false);
    const captures = await verifyCaptures(
      entries,
      async (name) => {
        read.push(name);
        return files.get(name) as Uint8Array;
      },
      {},
    );
    expect(read.sort()).toEqual(['captura.wacz', 'copia.WACZ', 'notas.wacz']);
    expect(captures.map((c) => [c.file, c.outcome, c.exitCode, c.report?.failedAt ?? c.problemKind])).toEqual(
      [
        ['captura.wacz', 'passed', 0, null],
        ['copia.WACZ', 'failed', 1, 1],
        ['enorme.wacz', 'unusable', 2, 'too-large'],
        ['notas.wacz', 'unusable', 2, 'not-wacz'],
      ],
    );
    const passed = captures[0]?.report;
    expect(passed?.capture).toMatchObject({
      requestedUrl: 'https://example.test/page',
      tls: { subject: 'CN=example.test' },
    });
    expect(passed?.checks.map((c) => c.status)).toEqual([
      'passed',
      'passed',
      'passed',
      'not-run',
      'not-run',
      'passed',
      'passed',
    ]);

    const result = pageResult(null, captures);
    expect(result).toMatchObject({ items: [], skipped: [], ...batchOutcome(captures) });
    expect(result.outcome).toBe('failed');
    const csv = pageCsv(result).split('\r\n');
    expect(csv[0]).toBe(PAGE_CSV_COLUMNS.join(','));
    expect(PAGE_CSV_COLUMNS.slice(-3)).toEqual(['check_6', 'check_7', 'problem']);
    expect(csv[1]).toBe(
      `captura.wacz,captura.wacz,wacz,passed,0,,,${passed?.archive.sha256},passed,passed,passed,not-run:not-applicable,not-run:not-applicable,passed,passed,`,
    );
    expect(csv[2]).toMatch(/^copia\.WACZ,copia\.WACZ,wacz,failed,1,1,,[0-9a-f]{64},failed,/);
  });

  it('has every text of a capture report in Portuguese, whatever is wrong with the archive', async () => {
    const good = handWacz();
    const archives = [
      good,
      tamperedWacz(good),
      handWacz({ unsigned: true }),
      handWacz({ noRecord: true }),
      handWacz({ unlisted: { 'extra/added.html': new TextEncoder().encode('<p>later</p>') } }),
      handWacz({ signedData: (s) => ({ ...s, comment: 'x' }) }),
      handWacz({ signedData: (s) => ({ ...s, hash: `${s.hash}0` }) }),
      handWacz({ index: (l) => l.map((x) => ({ ...x, recordDigest: `sha256:${'0'.repeat(64)}` })) }),
      handWacz({ index: (l) => l.map((x) => ({ ...x, offset: '10', recordDigest: undefined })) }),
      handWacz({ index: (l) => l.map((x) => ({ ...x, url: 'https://example.test/other' })) }),
      handWacz({ index: () => [] }),
    ];
    const byName = new Map(archives.map((bytes, i) => [`${String(i).padStart(2, '0')}.wacz`, bytes]));
    const captures = await verifyCaptures(
      [...byName].map(([name, bytes]) => ({ name, size: bytes.length })),
      async (name) => byName.get(name) as Uint8Array,
      {},
    );
    expect(captures.map((c) => c.report?.failedAt ?? null)).toEqual([null, 1, 2, null, 1, 3, 2, 6, 6, 6, 6]);
    expect(untranslatedTexts(captures.flatMap((c) => (c.report ? [c.report] : [])))).toEqual([]);
  });
});
