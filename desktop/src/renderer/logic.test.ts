import { createHash, randomBytes } from 'node:crypto';
import type { DocumentDto, PublicDocumentDto } from '@notary/shared';
import type { CheckResult, VerifyReport } from '@notary/verify';
import { outcomeOf } from '@notary/verify/report';
import { describe, expect, it } from 'vitest';
import type { Bridge, LocalFile } from '../common/bridge';
import { testCheck } from '../common/check-result.testing';
import { ClientError } from '../common/errors';
import { hashBlob } from './bridge/hash';
import { serverUrlFor } from './bridge/web';
import { explorerLinks, overallStatus } from './format';
import { initialLanguage, translator } from './i18n';
import { checkBadge, localDateTimeToIso, reportHead } from './screens/CertificateCheck';
import { matchesSearch, mergeFirstPage, serverQuery } from './screens/Documents';
import { UploadQueue } from './upload-queue';

describe('browser hashing (WebCrypto, or @noble/hashes streaming for large files)', () => {
  it.each([
    ['empty', 0],
    ['small (WebCrypto, one shot)', 1_000_000],
    ['large (streamed in 4 MiB slices)', 40 * 1024 * 1024 + 123],
  ])('%s blob: equals node:crypto, progress ends at the size', async (_what, size) => {
    const bytes = randomBytes(size);
    const events: number[] = [];
    const hash = await hashBlob(new Blob([bytes]), ({ loaded }) => events.push(loaded));
    expect(hash).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(events.at(-1)).toBe(size);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const run = hashBlob(
      new Blob([randomBytes(40 * 1024 * 1024)]),
      () => controller.abort(),
      controller.signal,
    );
    await expect(run).rejects.toMatchObject({ kind: 'cancelled' });
  });
});

describe('renderer logic', () => {
  it('finds the service next to /app/', () => {
    expect(serverUrlFor({ href: 'http://localhost:3000/app/#/documents' })).toBe('http://localhost:3000');
    expect(serverUrlFor({ href: 'https://example.com/notary/app/index.html' })).toBe(
      'https://example.com/notary',
    );
  });

  it('builds explorer links as the spec says, and none without prefixes (devnet)', () => {
    const doc = { onchainTxHash: '0xab', onchainAttestationUid: '0xcd', stacksTxId: 'ef' };
    expect(
      explorerLinks(doc, {
        explorerTxPrefix: 'https://sepolia.etherscan.io/tx/',
        attestationScanPrefix: 'https://sepolia.easscan.org/attestation/view',
        stacksExplorerTxPrefix: 'https://explorer.hiro.so/txid',
        stacksNetwork: 'testnet',
      }),
    ).toEqual({
      evmTx: 'https://sepolia.etherscan.io/tx/0xab',
      attestation: 'https://sepolia.easscan.org/attestation/view/0xcd',
      stacksTx: 'https://explorer.hiro.so/txid/0xef?chain=testnet',
    });
    expect(
      explorerLinks(doc, {
        explorerTxPrefix: '',
        attestationScanPrefix: '',
        stacksExplorerTxPrefix: '',
        stacksNetwork: 'devnet',
      }),
    ).toEqual({ evmTx: null, attestation: null, stacksTx: null });
  });

  it('searches by name, serial or any part of the hash, ignoring case', () => {
    const doc = {
      fileName: 'Contrato Social.pdf',
      serialNumber: 'ACME-7K2M9Q4XTB',
      sha256Hash: 'ab'.repeat(32),
    };
    for (const q of ['contrato', 'acme-7k2', 'BABA', '', '  social '])
      expect(matchesSearch(doc, q)).toBe(true);
    expect(matchesSearch(doc, 'zzz')).toBe(false);
  });

  it('sends a search of 3 characters or more to the server, trimmed; shorter ones stay on the loaded rows', () => {
    expect(serverQuery('  ab ')).toBeUndefined();
    expect(serverQuery('')).toBeUndefined();
    expect(serverQuery(' abc ')).toBe('abc');
  });

  it('a refresh of the first page keeps the pages loaded below it, without duplicates', () => {
    const row = (id: string, createdAt: string) => ({ id, createdAt });
    const loaded = [
      row('e', '2026-01-05T00:00:00.000Z'),
      row('d', '2026-01-04T00:00:00.000Z'),
      row('c', '2026-01-03T00:00:00.000Z'),
      row('b', '2026-01-03T00:00:00.000Z'),
      row('a', '2026-01-01T00:00:00.000Z'),
    ];
    // A new document on top: the fresh page of 3 ends at c; b and a come from the rows loaded before.
    const fresh = [row('f', '2026-01-06T00:00:00.000Z'), ...loaded.slice(0, 2)];
    expect(mergeFirstPage(fresh, loaded, false).map((d) => d.id)).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    // Ties on createdAt are ordered by id, as the server orders them.
    const tie = [row('c', '2026-01-03T00:00:00.000Z')];
    expect(mergeFirstPage(tie, loaded, false).map((d) => d.id)).toEqual(['c', 'b', 'a']);
    // The fresh page is the whole list: nothing else survives (a deleted row disappears).
    expect(mergeFirstPage(fresh, loaded, true).map((d) => d.id)).toEqual(['f', 'e', 'd']);
  });

  it('reads the status of both chains', () => {
    expect(overallStatus({ onchainStatus: 'registered', stacksStatus: 'registered' })).toBe('registered');
    expect(overallStatus({ onchainStatus: 'registered', stacksStatus: 'pending' })).toBe('partial');
    expect(overallStatus({ onchainStatus: 'pending', stacksStatus: 'pending' })).toBe('pending');
  });

  it('speaks Portuguese unless told or the system prefers English, and has every text in both', () => {
    expect(initialLanguage(null, ['pt-BR'])).toBe('pt');
    expect(initialLanguage(null, ['de-DE'])).toBe('pt');
    expect(initialLanguage(null, ['en-GB', 'pt'])).toBe('en');
    expect(initialLanguage('pt', ['en-US'])).toBe('pt');
    expect(translator('en')('notarize.submit.other', { n: 3 })).toBe('Notarize 3 files');
    expect(translator('pt')('err.rateLimited', { seconds: 30 })).toBe(
      'Muitas solicitações; tente novamente em 30 s.',
    );
  });
});

describe('upload queue', () => {
  /** A bridge for the queue's own logic: hashes are given, the public record is known or not, uploads succeed. */
  function fakeBridge(existing: Record<string, PublicDocumentDto>): Bridge & { uploads: string[] } {
    const uploads: string[] = [];
    const partial = {
      uploads,
      hashFile: async (fileId: string) => fileId.padEnd(64, '0'),
      publicVerify: async (hash: string) =>
        existing[hash] ? { found: true, document: existing[hash] } : { found: false },
      upload: async (fileId: string, _jobId: string, consent: true) => {
        if (consent !== true) throw new ClientError({ kind: 'bad-request', message: 'consent' });
        uploads.push(fileId);
        return { id: fileId, serialNumber: `U12345-${fileId.slice(0, 10).toUpperCase()}` } as DocumentDto;
      },
      cancel: async () => undefined,
    };
    return partial as unknown as Bridge & { uploads: string[] };
  }
  const file = (id: string, size = 10): LocalFile => ({ id, name: `${id}.pdf`, size });
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('sends only consented files, skips notarized ones and files over 250 MB', async () => {
    const known = 'b'.padEnd(64, '0');
    const bridge = fakeBridge({ [known]: { serialNumber: 'U12345-0000000000' } as PublicDocumentDto });
    const queue = new UploadQueue(bridge);
    queue.add([file('a'), file('b'), file('c'), file('d', 250 * 1024 * 1024 + 1)]);
    await settle();
    const stages = () => Object.fromEntries(queue.snapshot().map((i) => [i.file.id, i.stage]));
    expect(stages()).toEqual({ a: 'ready', b: 'existing', c: 'ready', d: 'ready' });
    queue.submit();
    await settle();
    expect(bridge.uploads).toEqual([]);
    queue.setConsent(queue.snapshot()[0]?.key ?? '', true);
    queue.submit();
    await settle();
    expect(bridge.uploads).toEqual(['a']);
    queue.setConsentAll(true);
    queue.submit();
    await settle();
    expect(bridge.uploads).toEqual(['a', 'c']);
    expect(stages()).toEqual({ a: 'done', b: 'existing', c: 'done', d: 'ready' });
  });
});

describe("the verify screen's judging date (datetime-local, this computer's time zone)", () => {
  it('becomes the UTC date-time toISOString writes; empty or malformed is now (null)', () => {
    expect(localDateTimeToIso('2026-11-26T10:05')).toBe(new Date(2026, 10, 26, 10, 5).toISOString());
    expect(localDateTimeToIso('2001-06-01T12:00:30')).toBe(new Date(2001, 5, 1, 12, 0, 30).toISOString());
    for (const value of ['', 'now', '2026-11-26', '2026-13-01T10:00', '2026-11-26T10:05Z']) {
      expect(localDateTimeToIso(value), value).toBeNull();
    }
  });
});

describe("the verify screen's report: passed, failed or incomplete, as notary-verify's exit status 0, 1, 3", () => {
  const check = testCheck;
  const report = (checks: CheckResult[]): VerifyReport => ({
    ...outcomeOf(checks),
    document: { serialNumber: 'A-1', sha256: '00', fileName: 'f' },
    service: { name: 'Notary', url: 'http://localhost' },
    checks,
  });
  const en = translator('en');
  const pt = translator('pt');

  it('says the proof holds only when every applicable check passed', () => {
    const head = reportHead(report([check(1, 'passed'), check(5, 'not-run', 'not-applicable')]));
    expect(head).toMatchObject({ outcome: 'passed', icon: 'check' });
    expect(en(head.title, head.params)).toBe('The proof holds');
    expect(head.help && en(head.help)).toBe('Every applicable check passed.');
  });

  it('says which checks could not run in full when none failed, and that unavailability is no evidence', () => {
    const head = reportHead(
      report([
        check(1, 'passed'),
        check(3, 'not-run', 'unavailable'),
        check(4, 'partial', 'unavailable'),
        check(6, 'not-run', 'not-applicable'),
      ]),
    );
    expect(head).toMatchObject({ outcome: 'incomplete', icon: 'alert' });
    expect(en(head.title, head.params)).toBe('The proof could not be checked in full (check 3, 4)');
    expect(pt(head.title, head.params)).toBe('A prova não pôde ser conferida por inteiro (verificação 3, 4)');
    expect(head.help && en(head.help)).toMatch(/An unavailable endpoint is no evidence against the proof/);
  });

  it('names the first failed check', () => {
    const head = reportHead(
      report([check(1, 'passed'), check(3, 'not-run', 'unavailable'), check(4, 'failed')]),
    );
    expect(head).toMatchObject({ outcome: 'failed', icon: 'x', help: null });
    expect(pt(head.title, head.params)).toBe('A prova não confere (verificação 4)');
  });

  it('badges a check that does not apply apart from one that could not run, with the reason', () => {
    expect(checkBadge(check(5, 'not-run', 'not-applicable'))).toEqual({
      label: 'verify.cert.status.not-applicable',
      className: 'badge badge-check-not-applicable',
      reason: null,
    });
    const unavailable = checkBadge(check(3, 'not-run', 'unavailable'));
    expect(unavailable).toMatchObject({ className: 'badge badge-check-not-run' });
    expect(pt(unavailable.label)).toBe('não feita');
    expect(unavailable.reason && en(unavailable.reason)).toMatch(/^Endpoint unavailable/);
    expect(checkBadge(check(3, 'not-run', 'no-endpoint')).reason).toBe('verify.cert.reason.no-endpoint');
    expect(checkBadge(check(3, 'not-run', 'pending')).reason).toBe('verify.cert.reason.pending');
    expect(checkBadge(check(4, 'partial', 'unavailable'))).toMatchObject({
      label: 'verify.cert.status.partial',
      reason: 'verify.cert.reason.unavailable',
    });
    expect(checkBadge(check(1, 'passed'))).toEqual({
      label: 'verify.cert.status.passed',
      className: 'badge badge-check-passed',
      reason: null,
    });
  });
});
