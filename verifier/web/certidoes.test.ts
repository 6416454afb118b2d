import { MONITOR_CHAIN_FORMAT, type MonitorChain } from '@notary/shared/monitor';
import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { render } from '../src/messages/index.ts';
import { chainMessages } from '../src/monitor-chain.ts';
import { pageResult } from './captures.ts';
import { isPdf, verifyCertidoes } from './certidoes.ts';

const hash = (c: string) => c.repeat(64);

/** A monitoring of three runs (the second a 404 page, archived), chained as the service records them. */
function chain(): MonitorChain {
  return {
    format: MONITOR_CHAIN_FORMAT,
    monitorId: '5f0c3c1e-0000-4000-8000-000000000001',
    url: 'https://example.com/oferta',
    issuedAt: '2026-11-29T12:00:00.000Z',
    runs: [
      {
        run: 1,
        observedAt: '2026-11-29T09:00:00.000Z',
        outcome: 'seen',
        cause: null,
        serialNumber: 'CARTORIO-7K2M9Q4XTB',
        waczSha256: hash('a'),
        previousWaczSha256: null,
      },
      {
        run: 2,
        observedAt: '2026-11-29T10:00:00.000Z',
        outcome: 'unavailable',
        cause: 'http-status',
        serialNumber: 'CARTORIO-8K2M9Q4XTB',
        waczSha256: hash('b'),
        previousWaczSha256: hash('a'),
      },
      {
        run: 3,
        observedAt: '2026-11-29T11:00:00.000Z',
        outcome: 'seen',
        cause: null,
        serialNumber: 'CARTORIO-9K2M9Q4XTB',
        waczSha256: hash('c'),
        previousWaczSha256: hash('b'),
      },
    ],
  };
}

/**
 * A PDF carrying `c` as `monitor-chain.json`, attached as the service's certidão carries it (an embedded file of
 * the document's name tree; the certidão's own pages do not matter to the chain check).
 */
async function certidao(c: MonitorChain): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage();
  await doc.attach(new TextEncoder().encode(JSON.stringify(c)), 'monitor-chain.json', {
    mimeType: 'application/json',
  });
  return doc.save();
}

describe('certidões de permanência on the verify page (as notary-verify chain)', () => {
  it('passes a whole chain, fails one with a run removed or two swapped, and leaves other PDFs to the batch', async () => {
    const whole = chain();
    const removed = { ...whole, runs: whole.runs.filter((r) => r.run !== 2) };
    const [r1, r2, r3] = whole.runs;
    const swapped = { ...whole, runs: [r1, { ...r3, run: 2 }, { ...r2, run: 3 }] } as MonitorChain;
    const files = new Map<string, Uint8Array>([
      ['certidao.pdf', await certidao(whole)],
      ['removida.PDF', await certidao(removed)],
      ['trocada.pdf', await certidao(swapped)],
      ['contrato.pdf', new TextEncoder().encode('%PDF-1.7\n%%EOF\n')],
      ['captura.wacz', new Uint8Array([1, 2, 3])],
    ]);
    const entries = [...files].map(([name, bytes]) => ({ name, size: bytes.length }));
    expect(isPdf('removida.PDF')).toBe(true);
    const items = await verifyCertidoes(entries, async (name) => files.get(name) as Uint8Array);
    expect(items.map((i) => [i.file, i.outcome, i.exitCode])).toEqual([
      ['certidao.pdf', 'passed', 0],
      ['removida.PDF', 'failed', 1],
      ['trocada.pdf', 'failed', 1],
    ]);
    // A broken chain fails the page as it fails the command line.
    expect(pageResult(null, [], items).exitCode).toBe(1);
    expect(pageResult(null, [], items.slice(0, 1))).toMatchObject({ outcome: 'passed', exitCode: 0 });

    const [ok, gone, moved] = items.map((i) => chainMessages(i.report));
    expect(render(ok?.verdict ?? { code: 'chain.none' }, 'en')).toBe(
      'every run names the archive of the one before it',
    );
    expect(ok?.runs.map((r) => r.holds)).toEqual([true, true, true]);
    expect(render(ok?.runs[1]?.line ?? { code: 'chain.none' }, 'pt')).toBe(
      `captura 2, 2026-11-29T10:00:00.000Z: indisponível (http-status); CARTORIO-8K2M9Q4XTB, arquivo ${hash('b')}`,
    );
    expect(gone?.breaks.map((b) => render(b, 'en'))).toEqual([
      'run 3 stands at place 2',
      `run 3 names previous archive ${hash('b')}, the chain has ${hash('a')}`,
    ]);
    expect(render(gone?.verdict ?? { code: 'chain.none' }, 'pt')).toBe(
      'uma captura foi removida, acrescentada ou reordenada',
    );
    expect(moved?.runs.map((r) => r.holds)).toEqual([true, false, false]);
    expect(moved?.breaks.map((b) => render(b, 'pt'))).toContain(
      `a captura 2 indica o arquivo anterior ${hash('b')}, a cadeia tem ${hash('a')}`,
    );
  });
});
