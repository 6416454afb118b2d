import type { AtaDraftData } from './ata';
import { bandedPng } from './hostile-pngs.testing';

/** A valid CPF (its check digits are right) used by the ata tests. */
export const TEST_CPF = '52998224725';

/** The draft data of an ordinary capture (every field set), with `over` applied. */
export function sampleAtaData(over: Partial<AtaDraftData> = {}): AtaDraftData {
  return {
    serviceName: 'Notary Test',
    serventia: { name: '1º Tabelionato de Notas de Exemplo', cns: '123456', place: 'Florianópolis, SC' },
    requestedAt: new Date('2026-03-04T15:06:07Z'),
    requester: {
      name: 'Maria da Silva',
      cpf: TEST_CPF,
      qualification: 'brasileira, solteira, engenheira, residente em Florianópolis',
      email: 'maria@example.test',
    },
    capture: {
      requestedUrl: 'https://example.test/post',
      finalUrl: 'https://www.example.test/post/1',
      status: 200,
      title: 'Uma publicação',
      startedAt: new Date('2026-03-04T12:00:00Z'),
      finishedAt: new Date('2026-03-04T12:00:09Z'),
      redirects: [{ url: 'https://example.test/post', status: 301 }],
      serverIp: '203.0.113.7',
      egressIp: '198.51.100.2',
      browser: 'Chromium 140.0',
      screenshot: { width: 400, height: 1500, truncated: false },
    },
    visibleText: { text: 'Texto visível da publicação, com acentuação.' },
    missing: {
      blocked: [{ url: 'http://10.0.0.1/tracker.js', reason: 'private address' }],
      failed: [{ url: 'https://cdn.example.test/a.css', reason: 'net::ERR_CONNECTION_RESET' }],
      unfinished: ['https://slow.example.test/feed'],
      bodies: [
        { url: 'https://www.example.test/video', kind: 'incomplete', reason: 'cut at the time bound' },
      ],
    },
    tls: [
      {
        origin: 'https://www.example.test',
        protocol: 'TLS 1.3',
        subject: 'CN=www.example.test',
        issuer: 'CN=Test CA',
        validTo: '2027-01-01T00:00:00Z',
        sha256: 'ab'.repeat(32),
        chainLength: 2,
      },
    ],
    dns: [{ host: 'www.example.test', outcome: 'resolved', addresses: ['203.0.113.7'] }],
    wacz: {
      fileName: 'www.example.test-20260304T120000Z.wacz',
      serialNumber: 'NOT-2026-000042',
      sha256: 'cd'.repeat(32),
      bytes: 12,
      attached: true,
      attachMaxBytes: 20 * 1024 * 1024,
    },
    anchors: [{ label: 'Carimbo do tempo (RFC 3161)', value: '04/03/2026 09:00:10 · TSA de teste' }],
    screenshot: bandedPng(400, 1500),
    waczBytes: new TextEncoder().encode('PK fake wacz'),
    ...over,
  };
}
