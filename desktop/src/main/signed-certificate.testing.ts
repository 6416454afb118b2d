/**
 * Test support: certificate PDFs as the verify screen meets them, made with the real writers. A one-page PDF
 * carrying `receipt.json` as an associated file (catalog `/Names /EmbeddedFiles` and `/AF`,
 * `/AFRelationship /Supplement`), optionally PAdES-signed by the test PKI's RSA signer (`@notary/pdf`'s
 * `signPdf`, SubFilter ETSI.CAdES.detached) with a signature timestamp from a loopback TSA, and a receipt
 * whose RFC 3161 token that TSA issued over the file's SHA-256.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { signPdf } from '@notary/pdf/pades';
import { TsaClient } from '@notary/trust/tsa-client';
import { PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString } from 'pdf-lib';
import { addPlaceholder, pemCmsSigner } from '../../../test/harness/pades-pdfs';
import type { TestPki } from '../../../test/harness/pki';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest();

/** A one-page PDF document carrying `receipt.json` whose embedded file stream is `stream` (raw, with `filter`). */
async function documentWithReceiptStream(stream: Uint8Array, filter?: 'FlateDecode'): Promise<PDFDocument> {
  const doc = await PDFDocument.create();
  doc.addPage([595, 842]);
  const ctx = doc.context;
  const embedded = PDFRawStream.of(
    ctx.obj({ Type: 'EmbeddedFile', ...(filter ? { Filter: filter } : {}) }),
    stream,
  );
  const spec = ctx.register(
    ctx.obj({
      Type: 'Filespec',
      F: PDFString.of('receipt.json'),
      UF: PDFHexString.fromText('receipt.json'),
      EF: { F: ctx.register(embedded) },
      AFRelationship: 'Supplement',
    }),
  );
  doc.catalog.set(
    PDFName.of('Names'),
    ctx.obj({ EmbeddedFiles: ctx.obj({ Names: [PDFHexString.fromText('receipt.json'), spec] }) }),
  );
  doc.catalog.set(PDFName.of('AF'), ctx.obj([spec]));
  return doc;
}

/** A one-page PDF carrying `receipt.json` whose embedded file stream is `stream` (raw, with `filter`). */
export async function pdfWithReceiptStream(stream: Uint8Array, filter?: 'FlateDecode'): Promise<Uint8Array> {
  return (await documentWithReceiptStream(stream, filter)).save({ useObjectStreams: false });
}

/**
 * A receipt of `file` anchored (as it claims) on both chains, in a batch of one, with `timestamp` as its
 * RFC 3161 leg (null: none issued).
 */
export function receiptOf(
  file: Uint8Array,
  timestamp: { token: string; genTime: string } | null = null,
): Record<string, unknown> {
  const hash = sha256(file).toString('hex');
  const hex32 = (c: string) => `0x${c.repeat(64)}`;
  return {
    format: 'notary-receipt',
    version: 1,
    service: { name: 'Notary', url: 'http://localhost:3000' },
    document: {
      id: '6f1c1d2e-0000-4000-8000-000000000001',
      serialNumber: 'ACME-7K2M9Q4XTB',
      sha256: hash,
      fileName: 'contrato.txt',
      fileSize: file.length,
      mimeType: 'text/plain',
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
    merkle: { hashing: 'sha256-rfc6962', leafIndex: 0, leafCount: 1, siblings: [], root: hash },
    evm: {
      status: 'registered',
      network: 'hardhat',
      chainId: 31337,
      schema: 'bytes32 merkleRoot',
      schemaUid: hex32('c'),
      easAddress: `0x${'1'.repeat(40)}`,
      schemaRegistryAddress: null,
      attestationUid: hex32('a'),
      attester: `0x${'2'.repeat(40)}`,
      txHash: hex32('b'),
      blockNumber: 7,
      anchoredAt: '2026-01-01T00:00:05.000Z',
    },
    stacks: {
      status: 'registered',
      network: 'devnet',
      contractId: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
      txId: hex32('d'),
      blockHeight: 9,
      anchoredAt: '2026-01-01T00:00:06.000Z',
    },
    timestamp,
  };
}

/**
 * A certificate of `file` as the service issues it when signing with a TSA (PAdES B-T): the receipt (with an
 * RFC 3161 token of `tsaUrl` over the file's SHA-256) attached, signed by the test PKI's RSA signer with its
 * chain (signer, intermediate, root) in the CMS and a signature timestamp of `tsaUrl`.
 */
export async function signedCertificate(pki: TestPki, tsaUrl: string, file: Uint8Array): Promise<Uint8Array> {
  const tsa = new TsaClient({ url: tsaUrl });
  const stamped = await tsa.timestamp(new Uint8Array(sha256(file)));
  const receipt = receiptOf(file, {
    token: Buffer.from(stamped.token).toString('base64'),
    genTime: stamped.genTime.toISOString(),
  });
  const doc = await documentWithReceiptStream(
    deflateSync(new TextEncoder().encode(JSON.stringify(receipt))),
    'FlateDecode',
  );
  addPlaceholder(doc);
  return signPdf(
    await doc.save({ useObjectStreams: false }),
    pemCmsSigner(pki.rsa.keyPem, pki.rsa.chainPem),
    tsa,
  );
}
