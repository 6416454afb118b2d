/**
 * One measured case of the certificate benchmark (`certificates.ts`), run as its own process so that its
 * peak RSS (`process.resourceUsage().maxRSS`) belongs to this case alone.
 *
 * Usage: `node --import tsx certificate-case.ts <mode> <file.pdf> <runs>`; signing reads `BENCH_P12`
 * (PKCS#12 path) and `BENCH_P12_PASSWORD`; the B-LTA modes also `BENCH_TSA_URL` (RFC 3161 endpoint) and
 * `BENCH_TSA_ROOT` (PEM of its trust anchor) and `BENCH_REVOCATION_ALLOW_HOSTS`, the signer's certificates carrying the OCSP URLs of the loopback
 * responder. One warm-up run (module JIT, font loading, first TSA and OCSP round trips), then `runs` timed
 * runs; prints one JSON line `{bestMs, medianMs, timesMs, cpuMedianMs, maxRssMB, outputBytes, layout}` (CPU: the
 * process's, all threads, per run).
 * - baseline: `PDFDocument.load` + `save` of the file with pdf-lib (what any pdf-lib based stamping pays).
 * - unsigned / signed: `renderCertificate` (+ `signPdf`, PAdES B-B, no TSA) on the same bytes.
 * - lta-sign: the service's signing stage alone (`signAtLevel` at B-LTA with the service's TSA client and
 *   revocation source, a fresh cache per certificate: signature timestamp, /DSS with the OCSP answers,
 *   document timestamp; the bounded LTV writer), the certificate rendered once beforehand.
 * - lta-whole: the whole certificate, render + `signAtLevel` at B-LTA, as the service makes it.
 * - libpdf-lta: `@libpdf/core` `PDF.load` + `sign({ level: 'B-LTA' })` (its own TSA client, its default OCSP
 *   provider through the certificates' AIA) of the same certificate rendered without a placeholder.
 */
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { HttpTimestampAuthority as LibpdfTsa, P12Signer, PDF } from '@libpdf/core';
import type { CertificateData } from '@notary/pdf/model';
import { PADES_SIGNATURE_LENGTH, signPdf } from '@notary/pdf/pades';
import type { SignaturePlaceholderOptions } from '@notary/pdf/placeholder';
import { renderCertificate } from '@notary/pdf/render';
import { type PlaceholderShape, signAtLevel } from '@notary/pdf/sign-at-level';
import { parseAllowList } from '@notary/platform/net/address-policy';
import { CachedRevocationSource } from '@notary/server/adapters/revocation/cached';
import { loadFileSigner } from '@notary/server/adapters/signer/file';
import { HttpTimestampAuthority, trustedCertificatesFromPem } from '@notary/server/adapters/tsa/http';
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
  signed: mode !== 'baseline' && mode !== 'unsigned',
};

const LTA_MODES = ['lta-sign', 'lta-whole', 'libpdf-lta'];
const lta = LTA_MODES.includes(mode);
const p12 =
  mode === 'baseline' || mode === 'unsigned' ? undefined : await readFile(process.env.BENCH_P12 ?? '');
const password = process.env.BENCH_P12_PASSWORD ?? '';
const signer = p12 ? await loadFileSigner({ pkcs12: new Uint8Array(p12), password }) : undefined;
const tsaUrl = process.env.BENCH_TSA_URL ?? '';
const tsa = lta
  ? new HttpTimestampAuthority({
      url: tsaUrl,
      trustedCertificates: trustedCertificatesFromPem(
        await readFile(process.env.BENCH_TSA_ROOT ?? '', 'utf8'),
      ),
    })
  : undefined;
const libpdfSigner =
  mode === 'libpdf-lta' && p12 ? await P12Signer.create(new Uint8Array(p12), password) : undefined;

const placeholderOf = (shape: PlaceholderShape): SignaturePlaceholderOptions => ({
  ...shape,
  name: 'Notary',
  reason: 'Bench',
  location: '',
  contactInfo: 'https://notary.example',
});

/** The certificate page stating `stated`, with a placeholder of `shape` or none. */
const render = (stated: CertificateData['signatureLevel'], shape?: PlaceholderShape) =>
  renderCertificate({ ...data, signatureLevel: stated }, source, {
    lang: 'pt',
    ...(shape ? { signaturePlaceholder: placeholderOf(shape) } : {}),
  });

/** The certificate rendered once, for the modes that time the signing alone. */
let prerendered: Awaited<ReturnType<typeof render>> | undefined;

/** Our B-LTA signature (`signAtLevel`, as the certificate service calls it); throws below B-LTA. */
async function signLta(renderOnce: boolean): Promise<Uint8Array> {
  if (!signer || !tsa) throw new Error('B-LTA modes need BENCH_P12 and BENCH_TSA_URL');
  let revocation: CachedRevocationSource | undefined;
  const result = await signAtLevel({
    render: async (stated, shape) => {
      if (!renderOnce) return render(stated, shape);
      prerendered ??= await render(stated, shape);
      return prerendered;
    },
    signer,
    level: 'B-LTA',
    tsa,
    issuers: tsa.trustAnchors,
    // The service's revocation source, fresh per certificate: answers repeated within one signing come from
    // its cache, as in the service on a cold start (later certificates would reuse them until nextUpdate).
    gather: (chain) => {
      revocation ??= new CachedRevocationSource({
        timeoutMs: 10_000,
        maxBytes: 1024 * 1024,
        allowHosts: parseAllowList(process.env.BENCH_REVOCATION_ALLOW_HOSTS),
      });
      return revocation.gather(chain);
    },
  });
  if (result.kind !== 'signed' || result.level !== 'B-LTA') {
    throw new Error(`our signature did not reach B-LTA: ${JSON.stringify(result)}`);
  }
  layout = result.rendered.layout;
  return result.pdf;
}

/** `@libpdf/core` at B-LTA on the certificate rendered without a placeholder; throws on any warning. */
async function libpdfLta(): Promise<Uint8Array> {
  if (!libpdfSigner) throw new Error('libpdf-lta needs BENCH_P12');
  prerendered ??= await render('B-LTA');
  layout = prerendered.layout;
  const pdf = await PDF.load(prerendered.pdf);
  const result = await pdf.sign({
    signer: libpdfSigner,
    level: 'B-LTA',
    timestampAuthority: new LibpdfTsa(tsaUrl),
    reason: 'Bench',
  });
  if (result.warnings.length > 0) {
    throw new Error(`@libpdf/core signed with warnings: ${JSON.stringify(result.warnings)}`);
  }
  return result.bytes;
}

let outputBytes = 0;
let lastOutput: Uint8Array = new Uint8Array();
let layout = 'n/a';
async function once(): Promise<void> {
  if (mode === 'lta-sign' || mode === 'lta-whole') {
    lastOutput = await signLta(mode === 'lta-sign');
    outputBytes = lastOutput.byteLength;
    return;
  }
  if (mode === 'libpdf-lta') {
    lastOutput = await libpdfLta();
    outputBytes = lastOutput.byteLength;
    return;
  }
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
if (lta) {
  // Both sides must have written what B-LTA means: revocation answers in a /DSS and a document timestamp.
  const text = Buffer.from(lastOutput).toString('latin1');
  for (const marker of ['/DSS', '/OCSPs', '/DocTimeStamp']) {
    if (!text.includes(marker)) throw new Error(`${mode}: no ${marker} in the output`);
  }
}
const times: number[] = [];
// CPU time of the process (every thread: the LTV worker's too), which a loaded machine changes far less than
// the wall clock; what the loopback responders spend is theirs, not counted.
const cpus: number[] = [];
for (let i = 0; i < runs; i += 1) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await once();
  const used = process.cpuUsage(cpu);
  cpus.push((used.user + used.system) / 1000);
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
cpus.sort((a, b) => a - b);
const maxRssMB = process.resourceUsage().maxRSS / 1024;
console.log(
  JSON.stringify({
    bestMs: times[0],
    medianMs: times[Math.floor(times.length / 2)],
    timesMs: times,
    cpuMedianMs: cpus[Math.floor(cpus.length / 2)],
    maxRssMB,
    outputBytes,
    layout,
  }),
);
