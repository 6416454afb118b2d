import { createHash } from 'node:crypto';
import { TRUST_CODES, TRUST_EN, trustMsg, trustText } from '@notary/trust/messages';
import { describe, expect, it } from 'vitest';
import { handWacz, tamperedWacz } from '../../../test/harness/hand-wacz.ts';
import { parseReceipt, type Receipt } from '../receipt.ts';
import { verify } from '../verify.ts';
import { verifyWacz } from '../wacz/index.ts';
import {
  commaList,
  data,
  en,
  foreign,
  type MessageCode,
  msg,
  pt,
  render,
  renderSource,
  textOf,
} from './index.ts';
import { codesAlike, untranslatedTexts } from './messages.testing.ts';

/** The `{name}` parameters of a template. */
const paramsOf = (template: string) => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('the message tables', () => {
  it('has every code in English and in Portuguese, with the same parameters', () => {
    expect(Object.keys(pt).sort()).toEqual(Object.keys(en).sort());
    for (const code of Object.keys(en) as MessageCode[]) {
      expect([code, paramsOf(pt[code])]).toEqual([code, paramsOf(en[code])]);
    }
  });

  it('uses no brace but for its parameters', () => {
    for (const template of [...Object.values(en), ...Object.values(pt)]) {
      expect(template.replace(/\{\w+\}/g, '')).not.toMatch(/[{}]/);
    }
  });

  it('has a Portuguese text of its own for every sentence (the same only for data and identifiers)', () => {
    expect(codesAlike(pt).sort()).toEqual(
      [
        'data',
        'foreign',
        'list.comma',
        'report.atSource',
        'report.partUnavailable',
        'report.whatReason',
        'report.sourceReason',
        'evm.methodError',
        'evm.http',
        'evm.chainId',
        'evm.attestedValue',
        'pades.original',
        'pades.rangeProblem',
        'pades.nameWhy',
        'pades.nameSha256',
        'pades.policyRow',
        'stacks.endpoint',
        'stacks.call',
        'tst.token',
        'tst.imprintValue',
        'icp.entryIs',
        'wacz.hashAndSize',
        'wacz.formValue',
        // The trust library's: data, a library's text, a route or URL and what it answered.
        'trust.foreign',
        'trust.problems',
        'trust.at',
        'trust.http',
        'trust.httpThen',
        'trust.httpAnswer',
        'trust.rpcHttp',
        'trust.ocspAt',
        'trust.caIssuersAt',
      ].sort(),
    );
  });

  it('renders data as it is and messages in the language asked, lists joined', () => {
    const failed = msg('report.failed', {
      problems: [
        msg('report.atSource', { label: data('SHA-256'), source: { code: 'source.file' } }),
        msg('report.atSource', { label: msg('file.size'), source: { code: 'source.file' } }),
      ],
    });
    expect(render(failed, 'en')).toBe('failed: SHA-256 (file); size (file)');
    expect(render(failed, 'pt')).toBe('falhou: SHA-256 (arquivo); tamanho (arquivo)');
    const list = commaList([data('CN=A'), data('CN=B'), msg('pades.everyCertificate')]);
    expect(render(list, 'pt')).toBe('CN=A, CN=B, todos os certificados');
    expect(render(foreign('fetch failed'), 'pt')).toBe('fetch failed');
    expect(renderSource('file', 'pt')).toBe('arquivo');
    expect(renderSource('constructor', 'pt')).toBe('constructor');
    expect(renderSource('http://127.0.0.1:8545', 'pt')).toBe('http://127.0.0.1:8545');
  });

  it('has every trust code, in English as the trust library writes it, with the parameters it declares', () => {
    for (const code of TRUST_CODES) {
      expect([code, en[code]]).toEqual([code, TRUST_EN[code]]);
      expect([code, paramsOf(pt[code])]).toEqual([code, paramsOf(TRUST_EN[code])]);
    }
    const problem = trustMsg('trust.ocspAt', {
      url: 'http://127.0.0.1:1/ocsp',
      problem: trustMsg('trust.unreachable', { problem: trustMsg('trust.timedOut') }),
    });
    const both = trustMsg('trust.problems', {
      problems: [problem, trustMsg('trust.crlAt', { url: 'u', problem: trustMsg('trust.deltaCrl') })],
    });
    expect(render(both, 'en')).toBe(trustText(both));
    expect(render(both, 'en')).toBe(
      'OCSP http://127.0.0.1:1/ocsp: unreachable: timed out; CRL u: a delta CRL (not complete)',
    );
    expect(render(both, 'pt')).toBe(
      'OCSP http://127.0.0.1:1/ocsp: inalcançável: tempo esgotado; LCR u: uma LCR delta (incompleta)',
    );
  });

  it('shows a report written before messages as it was written, and an unknown code as data', () => {
    expect(textOf(undefined, 'the file is the notarized one', 'pt')).toBe('the file is the notarized one');
    const later = JSON.parse('{"code":"later.code","params":{"n":1}}');
    expect(textOf(later, 'x', 'pt')).toBe('later.code {"n":1}');
  });
});

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const HEX32 = `0x${'ab'.repeat(32)}`;

/** A receipt of `file` with the legs given (none: the service does not anchor). */
function receipt(file: Uint8Array, legs: Partial<Pick<Receipt, 'merkle' | 'evm' | 'stacks'>> = {}): Receipt {
  return parseReceipt({
    format: 'notary-receipt',
    version: 1,
    service: { name: 'Notary', url: 'http://localhost:3000' },
    document: {
      id: '6f1c1d2e-0000-4000-8000-000000000001',
      serialNumber: 'ABC-1',
      sha256: sha(file),
      fileName: 'f.bin',
      fileSize: file.length,
      mimeType: 'application/octet-stream',
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
    merkle: null,
    evm: null,
    stacks: null,
    timestamp: null,
    ...legs,
  });
}

describe('every report, rendered in Portuguese, has no English left', () => {
  it('receipts: passed, failed, pending, without endpoint, with endpoints that do not answer', async () => {
    const file = new Uint8Array([1, 2, 3]);
    const merkle = {
      hashing: 'sha256-rfc6962' as const,
      leafIndex: 0,
      leafCount: 1,
      siblings: [],
      root: sha(file),
    };
    const evm = {
      status: 'registered' as const,
      network: 'hardhat',
      chainId: 31337,
      schema: 'bytes32 merkleRoot',
      schemaUid: HEX32,
      easAddress: `0x${'11'.repeat(20)}`,
      schemaRegistryAddress: null,
      attestationUid: HEX32,
      attester: `0x${'22'.repeat(20)}`,
      txHash: HEX32,
      blockNumber: 5,
      anchoredAt: '2026-01-01T00:00:00.000Z',
    };
    const stacks = {
      status: 'registered' as const,
      network: 'devnet' as const,
      contractId: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
      txId: HEX32,
      blockHeight: 5,
      anchoredAt: '2026-01-01T00:00:00.000Z',
    };
    const closed = 'http://127.0.0.1:9';
    const reports = [
      await verify({ file, receipt: receipt(file) }),
      await verify({ file: new Uint8Array([1, 2, 4]), receipt: receipt(file) }),
      await verify({ file, receipt: receipt(file, { merkle: { ...merkle, root: 'cd'.repeat(32) } }) }),
      await verify({
        file,
        receipt: receipt(file, {
          evm: {
            status: 'pending',
            network: evm.network,
            chainId: evm.chainId,
            schema: evm.schema,
            schemaUid: evm.schemaUid,
            easAddress: null,
            schemaRegistryAddress: null,
          },
          stacks: { status: 'pending', network: 'devnet', contractId: null },
        }),
      }),
      await verify({ file, receipt: receipt(file, { merkle, evm, stacks }) }),
      await verify({
        file,
        receipt: receipt(file, { merkle, evm, stacks }),
        evmRpcUrls: [closed],
        stacksApiUrls: [closed],
        timeoutMs: 2000,
      }),
      await verify({
        file,
        receipt: receipt(file, { evm, stacks }),
        evmRpcUrls: [closed],
        stacksApiUrls: [closed],
      }),
      await verify({ file, receipt: receipt(file), checks: [1] }),
    ];
    expect(reports.map((r) => r.outcome)).toEqual([
      'passed',
      'failed',
      'failed',
      'incomplete',
      'incomplete',
      'incomplete',
      'failed',
      'passed',
    ]);
    expect(untranslatedTexts(reports)).toEqual([]);
    // The English strings are the English table's rendering of the messages.
    for (const c of reports.flatMap((r) => r.checks)) {
      expect(c.summary).toBe(textOf(c.summaryMessage, '', 'en'));
      for (const e of c.evidence)
        expect(`${e.label}: ${e.value}`).toBe(
          `${textOf(e.labelMessage, '', 'en')}: ${textOf(e.valueMessage, '', 'en')}`,
        );
    }
  });

  it('receipts whose endpoints are rate-limited or unreachable: the trust library speaks Portuguese too', async () => {
    const file = new Uint8Array([5, 6, 7]);
    const merkle = {
      hashing: 'sha256-rfc6962' as const,
      leafIndex: 0,
      leafCount: 1,
      siblings: [],
      root: sha(file),
    };
    const evm = {
      status: 'registered' as const,
      network: 'hardhat',
      chainId: 31337,
      schema: 'bytes32 merkleRoot',
      schemaUid: HEX32,
      easAddress: `0x${'11'.repeat(20)}`,
      schemaRegistryAddress: null,
      attestationUid: HEX32,
      attester: `0x${'22'.repeat(20)}`,
      txHash: HEX32,
      blockNumber: 5,
      anchoredAt: '2026-01-01T00:00:00.000Z',
    };
    const stacks = {
      status: 'registered' as const,
      network: 'devnet' as const,
      contractId: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
      txId: HEX32,
      blockHeight: 5,
      anchoredAt: '2026-01-01T00:00:00.000Z',
    };
    const endpoint = 'http://127.0.0.1:9';
    const limited = (async () =>
      new Response('', { status: 429, headers: { 'retry-after': '60' } })) as typeof fetch;
    const down = (async () => {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    }) as typeof fetch;
    const reports = await Promise.all(
      [limited, down].map((fetch) =>
        verify({
          file,
          receipt: receipt(file, { merkle, evm, stacks }),
          evmRpcUrls: [endpoint],
          stacksApiUrls: [endpoint],
          fetch,
        }),
      ),
    );
    const summaries = (lang: 'en' | 'pt') =>
      reports.map((r) => r.checks.map((c) => textOf(c.summaryMessage, c.summary, lang)).join('\n'));
    const [limitedEn, downEn] = summaries('en');
    expect(limitedEn).toContain('(GET /extended: HTTP 429 (rate-limited; Retry-After 60 s))');
    expect(downEn).toContain('(eth_chainId: unreachable: ECONNREFUSED)');
    expect(downEn).toContain('(GET /extended: unreachable: ECONNREFUSED)');
    const [limitedPt, downPt] = summaries('pt');
    expect(limitedPt).toContain('(GET /extended: HTTP 429 (limite de pedidos atingido; Retry-After 60 s))');
    expect(downPt).toContain('(eth_chainId: inalcançável: ECONNREFUSED)');
    expect(downPt).toContain('(GET /extended: inalcançável: ECONNREFUSED)');
    expect(untranslatedTexts(reports)).toEqual([]);
  });

  it('web captures: signed, tampered, unsigned, without record, with a bad index', async () => {
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
    const reports = await Promise.all(archives.map((bytes) => verifyWacz(bytes)));
    expect(untranslatedTexts(reports)).toEqual([]);
  });
});
