import { describe, expect, it } from 'vitest';
import { toPortuguese } from './report-text.ts';

/** Texts as the checking core writes them (summaries, labels, values), with what the page shows in Portuguese. */
const CASES: [string, string][] = [
  ['recomputed root', 'raiz recalculada'],
  ['failed: SHA-256 (file); size (file)', 'falhou: SHA-256 (arquivo); tamanho (arquivo)'],
  [
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of 2345 bytes (receipt 0fb0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)',
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 de 2345 bytes (recibo 0fb0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)',
  ],
  ['1 (at least 1 required; tip 4)', '1 (exigidas ao menos 1; topo da cadeia 4)'],
  [
    'attestation 0x5e9c46f9… holds the root, by 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, at 2026-11-26T13:49:13.000Z (1 endpoint read)',
    'a atestação 0x5e9c46f9… guarda a raiz, por 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, em 2026-11-26T13:49:13.000Z (1 endpoint lido)',
  ],
  ['a Hiro API (hiro-v3), tip 25', 'uma API Hiro (hiro-v3), topo da cadeia 25'],
  ['document timestamp 44 0 R: message imprint', 'carimbo do documento 44 0 R: imprint da mensagem'],
  [
    'O=Notary Test, CN=Notary Test TSA: unknown (none of the 0 OCSP answers and 0 CRLs is about this certificate)',
    'O=Notary Test, CN=Notary Test TSA: desconhecido (nenhuma das 0 respostas OCSP e 0 LCRs trata deste certificado)',
  ],
  [
    'no endpoint answered: http://127.0.0.1:9 (eth_chainId: unreachable: fetch failed)',
    'nenhum endpoint respondeu: http://127.0.0.1:9 (eth_chainId: inalcançável: falha no pedido)',
  ],
  [
    'signed by O=Notary Test, CN=Notary Test Signer at 2026-11-26T13:49:15.000Z, covering its revision (SHA-256 0e01fd4d27453… of the signed ranges), B-T level at 2026-11-26T13:49:30.000Z; not checked: the signer certificate chain (no --trust-ca given)',
    'assinado por O=Notary Test, CN=Notary Test Signer em 2026-11-26T13:49:15.000Z, cobrindo a sua revisão (SHA-256 0e01fd4d27453… dos intervalos assinados), nível B-T em 2026-11-26T13:49:30.000Z; não conferido: a cadeia do certificado (assinante): nenhuma âncora --trust-ca escolhida',
  ],
  ['/OCSPs or /CRLs must be present (its note)', '/OCSPs ou /CRLs deve estar presente (sua nota)'],
  ['Tabela A.19 OCSPs or CRLs', 'Tabela A.19 OCSPs ou CRLs'],
  // A web capture's report, domain form (wacz/).
  [
    'signed by 127.0.0.1; not checked: the domain certificate chain (no --trust-ca given)',
    'assinado por 127.0.0.1; não conferido: a cadeia do certificado de domínio: nenhuma âncora --trust-ca escolhida',
  ],
  [
    'the signature existed at 2026-01-02T03:04:07.000Z (RFC 3161), created 2026-01-02T03:04:06Z',
    'a assinatura existia em 2026-01-02T03:04:07.000Z (RFC 3161), created 2026-01-02T03:04:06Z',
  ],
  [
    'created 2026-01-02T03:04:06Z, genTime 2026-01-02T03:04:07.000Z (1 s)',
    'created 2026-01-02T03:04:06Z, genTime 2026-01-02T03:04:07.000Z (1 s)',
  ],
  ['127.0.0.1 (certificate: 127.0.0.1, localhost)', '127.0.0.1 (certificado: 127.0.0.1, localhost)'],
  [
    '2026-01-02T03:04:07.000Z (valid 2026-01-01T00:00:00.000Z to 2027-01-01T00:00:00.000Z)',
    '2026-01-02T03:04:07.000Z (válido de 2026-01-01T00:00:00.000Z a 2027-01-01T00:00:00.000Z)',
  ],
  [
    'issued by the next (O=Notary Test, CN=Notary Test CA)',
    'emitido pelo seguinte (O=Notary Test, CN=Notary Test CA)',
  ],
  ['included (datapackage-digest.json has one)', 'incluído (datapackage-digest.json tem um)'],
  [
    'the archive is signed without time signature: the TSA was unavailable at capture time (2026-01-02T03:04:06.000Z: connection refused), as capture.json says; its signing time rests on created (2026-01-02T03:04:06Z) alone',
    'o WACZ é assinado sem carimbo do tempo: a TSA estava indisponível na hora da captura (2026-01-02T03:04:06.000Z: conexão recusada), como diz capture.json; sua hora de assinatura depende só de created (2026-01-02T03:04:06Z)',
  ],
];

describe('the report in Portuguese', () => {
  it.each(CASES)('%s', (en, pt) => {
    expect(toPortuguese(en)).toEqual({ text: pt, translated: true });
  });

  it('keeps data as it is: hashes, names of certificates, addresses, Clarity values, identifiers', () => {
    for (const data of [
      '0x1c498b49c76868fabe912c93f5fe25fcebea89f5d8e3e50890ca88eca730d4a5',
      'O=Notary Test, CN=Notary Test Signer (SHA-256 6e784755e72faf3c519b5b9d20549e1d0c723689f548fb774ef26a969df3bff2)',
      '(some { height: u8, sender: ST1692BV1VG0ZVRTWCD4JARTGWX1WH3DZ80M2E8JH })',
      'ETSI.CAdES.detached',
      'attestation.data (bytes32 merkleRoot)',
      'http://127.0.0.1:8545',
    ]) {
      expect(toPortuguese(data)).toEqual({ text: data, translated: true });
    }
  });

  it('shows a text it does not know as it is, and says so', () => {
    expect(toPortuguese('the moon is made of cheese')).toEqual({
      text: 'the moon is made of cheese',
      translated: false,
    });
  });
});
