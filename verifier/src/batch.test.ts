import { describe, expect, it } from 'vitest';
import { type BatchResult, batchCsv, batchOutcome, looksStamped, planBatch, verifyBatch } from './batch.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('which file goes with which proof, by name', () => {
  it('pairs <name>.certificate.pdf and <name>.receipt.json with <name>, the certificate first', () => {
    const plan = planBatch([
      'a.pdf',
      'a.pdf.certificate.pdf',
      'a.pdf.receipt.json',
      'b.bin',
      'b.bin.receipt.json',
      'c.txt',
      'lone.bin.certificate.pdf',
      'gone.bin.receipt.json',
      'certificado-X.pdf',
    ]);
    expect(plan.pairs).toEqual([
      { file: 'a.pdf', proof: 'a.pdf.certificate.pdf', kind: 'certificate' },
      { file: 'b.bin', proof: 'b.bin.receipt.json', kind: 'receipt' },
    ]);
    expect(plan.skipped).toEqual([{ name: 'a.pdf.receipt.json', why: 'proof-unused' }]);
    // Certificates without their file, and other PDFs, are read for the receipt they may carry.
    expect(plan.candidates).toEqual([
      { name: 'lone.bin.certificate.pdf', named: true },
      { name: 'certificado-X.pdf', named: false },
    ]);
    expect(plan.orphanReceipts).toEqual(['gone.bin.receipt.json']);
    expect(plan.leftovers).toEqual(['c.txt']);
  });

  it('a file named only by its suffix is not a pair', () => {
    expect(planBatch(['.certificate.pdf', '.receipt.json']).pairs).toEqual([]);
  });
});

describe('a stamped certificate', () => {
  it('is longer than the original, whose bytes end as a PDF revision does', () => {
    const original = bytes('%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n');
    const stamped = new Uint8Array([...original, ...bytes('1 0 obj\n<<>>\nendobj\n%%EOF\n')]);
    expect(looksStamped(stamped, original.length)).toBe(true);
    expect(looksStamped(stamped, original.length - 10)).toBe(false);
    expect(looksStamped(original, original.length)).toBe(false);
  });
});

describe('the batch outcome and its CSV', () => {
  it('failed beats unusable beats incomplete beats passed; nothing to check is unusable', () => {
    expect(batchOutcome([{ outcome: 'passed' }, { outcome: 'incomplete' }])).toMatchObject({
      outcome: 'incomplete',
      exitCode: 3,
    });
    expect(batchOutcome([{ outcome: 'unusable' }, { outcome: 'incomplete' }]).exitCode).toBe(2);
    expect(batchOutcome([{ outcome: 'unusable' }, { outcome: 'failed' }]).exitCode).toBe(1);
    expect(batchOutcome([{ outcome: 'passed' }])).toMatchObject({ outcome: 'passed', exitCode: 0 });
    expect(batchOutcome([])).toMatchObject({ outcome: 'unusable', exitCode: 2 });
  });

  it('quotes what needs quoting and defuses what a spreadsheet would run', () => {
    const result: BatchResult = {
      items: [
        {
          file: '=HYPERLINK("http://x")',
          proof: 'a,b.receipt.json',
          proofKind: 'receipt',
          outcome: 'unusable',
          exitCode: 2,
          report: null,
          problemKind: 'file-missing',
          problem: 'line one\nline "two"',
        },
      ],
      skipped: [{ name: '@notes.txt', why: 'no-proof' }],
      ...batchOutcome([{ outcome: 'unusable' }]),
    };
    const rows = batchCsv(result).split('\r\n');
    expect(rows[1]).toBe(
      `"'=HYPERLINK(""http://x"")","a,b.receipt.json",receipt,unusable,2,,,,,,,,,,"line one\nline ""two"""`,
    );
    expect(rows[2]).toBe(`'@notes.txt,,,skipped:no-proof,,,,,,,,,,,`);
    expect(rows[3]).toBe('');
  });
});

describe('verifyBatch without a proof that reads', () => {
  it('reports each unusable proof with why, and skips files without proof', async () => {
    const files: Record<string, Uint8Array> = {
      'a.bin': bytes('a'),
      'a.bin.receipt.json': bytes('{"not": "a receipt"}'),
      'b.bin.certificate.pdf': bytes('not a pdf'),
      'plain.pdf': bytes('%PDF-1.4 not really'),
      'notes.txt': bytes('hello'),
    };
    const result = await verifyBatch(
      {
        entries: Object.entries(files).map(([name, b]) => ({ name, size: b.length })),
        read: async (name) => files[name] ?? new Uint8Array(),
      },
      {},
    );
    expect(result.items.map((i) => [i.file, i.proof, i.outcome, i.problemKind])).toEqual([
      ['a.bin', 'a.bin.receipt.json', 'unusable', 'bad-receipt'],
      ['b.bin.certificate.pdf', 'b.bin.certificate.pdf', 'unusable', 'no-receipt'],
    ]);
    expect(result.skipped).toEqual([
      { name: 'notes.txt', why: 'no-proof' },
      { name: 'plain.pdf', why: 'no-proof' },
    ]);
    expect(result).toMatchObject({ outcome: 'unusable', exitCode: 2 });
  });

  it('refuses a file past the size bound without reading it', async () => {
    let read = 0;
    const result = await verifyBatch(
      {
        entries: [
          { name: 'big.bin', size: 300 * 1024 * 1024 },
          { name: 'big.bin.receipt.json', size: 10 },
        ],
        read: async () => {
          read += 1;
          return new Uint8Array();
        },
      },
      {},
    );
    expect(result.items[0]).toMatchObject({ outcome: 'unusable', problemKind: 'too-large' });
    expect(read).toBe(0);
  });
});
