/**
 * One measured case of the certificate benchmark (`certificates.ts`), run as its own process so that its
 * peak RSS (`process.resourceUsage().maxRSS`) belongs to this case alone.
 *
 * Usage: `node --import tsx certificate-case.ts <baseline|unsigned|signed> <file.pdf> <runs>`; signing reads
 * `BENCH_P12` (PKCS#12 path) and `BENCH_P12_PASSWORD`. One warm-up run (module JIT, font loading), then
 * `runs` timed runs; prints one JSON line `{bestMs, medianMs, maxRssMB, outputBytes, layout}`.
 * - baseline: `PDFDocument.load` + `save` of the file with pdf-lib (what any pdf-lib based stamping pays).
 * - unsigned / signed: `renderCertificate` (+ `signPdf`, PAdES B-B, no TSA) on the same bytes.
 */
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { CertificateData } from '@notary/pdf/model';
import { PADES_SIGNATURE_LENGTH, signPdf } from '@notary/pdf/pades';
import { renderCertificate } from '@notary/pdf/render';
import { loadFileSigner } from '@notary/server/adapters/signer/file';
import { PDFDocument } from 'pdf-lib';

const [mode, file, runsArg] = process.argv.slice(2);
if (!mode || !file) throw new Error('usage: certificate-case.ts <baseline|unsigned|signed> <file> [runs]');
const runs = Number(runsArg ?? '3');
const source = new Uint8Array(await readFile(file));

const data: CertificateData = {
  serviceName: 'Notary',
  serviceUrl: 'https://notary.example',
  verifyUrl: 'https://notary.example/api/public/documents/BENCH-0000000001',
  document: {
    id: '00000000-0000-4000-8000-000000000001',
    serialNumber: 'BENCH-0000000001',
    fileName: file.split('/').pop() ?? 'bench.pdf',
    fileSize: source.byteLength,
    mimeType: 'application/pdf',
    sha256Hash: 'ab'.repeat(32),
    createdAt: new Date('2026-11-21T09:00:00Z'),
    tenantName: 'Bench',
  },
  consent: { given: true, timestamp: new Date('2026-11-21T09:00:00Z') },
  merkle: {
    root: 'cd'.repeat(32),
    batchSize: 1000,
    leafIndex: 17,
    siblings: Array.from({ length: 10 }, (_, i) => ({
      position: i % 2 ? ('left' as const) : ('right' as const),
      hash: i.toString(16).padStart(2, '0').repeat(32),
    })),
  },
  evm: {
    status: 'registered',
    network: 'base-sepolia',
    chainId: 84532,
    easContract: '0x4200000000000000000000000000000000000021',
    schemaUid: `0x${'12'.repeat(32)}`,
    schema: 'bytes32 merkleRoot',
    attestationUid: `0x${'34'.repeat(32)}`,
    txHash: `0x${'56'.repeat(32)}`,
    anchoredAt: new Date('2026-11-21T09:01:00Z'),
    explorerTxUrl: `https://sepolia.basescan.org/tx/0x${'56'.repeat(32)}`,
    attestationUrl: `https://base-sepolia.easscan.org/attestation/view/0x${'34'.repeat(32)}`,
  },
  stacks: {
    status: 'registered',
    network: 'testnet',
    contract: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
    txId: `0x${'78'.repeat(32)}`,
    anchoredAt: new Date('2026-11-21T09:02:00Z'),
    explorerTxUrl: `https://explorer.hiro.so/txid/0x${'78'.repeat(32)}?chain=testnet`,
  },
  issuedAt: new Date('2026-11-21T09:03:00Z'),
  signed: mode === 'signed',
};

const signer =
  mode === 'signed'
    ? await loadFileSigner({
        pkcs12: new Uint8Array(await readFile(process.env.BENCH_P12 ?? '')),
        password: process.env.BENCH_P12_PASSWORD ?? '',
      })
    : undefined;

let outputBytes = 0;
let layout = 'n/a';
async function once(): Promise<void> {
  if (mode === 'baseline') {
    const doc = await PDFDocument.load(source, { updateMetadata: false });
    outputBytes = (await doc.save()).byteLength;
    return;
  }
  const rendered = await renderCertificate(data, source, {
    lang: 'pt',
    ...(signer
      ? {
          signaturePlaceholder: {
            signatureLength: PADES_SIGNATURE_LENGTH,
            name: 'Notary',
            reason: 'Bench',
            location: '',
            contactInfo: 'https://notary.example',
          },
        }
      : {}),
  });
  layout = rendered.layout;
  const pdf = signer ? await signPdf(rendered.pdf, signer) : rendered.pdf;
  outputBytes = pdf.byteLength;
}

await once();
const times: number[] = [];
for (let i = 0; i < runs; i += 1) {
  const started = performance.now();
  await once();
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
const maxRssMB = process.resourceUsage().maxRSS / 1024;
console.log(
  JSON.stringify({
    bestMs: times[0],
    medianMs: times[Math.floor(times.length / 2)],
    maxRssMB,
    outputBytes,
    layout,
  }),
);
