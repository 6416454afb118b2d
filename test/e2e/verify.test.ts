import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type StacksDevnet, startStacksDevnet } from '@notary/server/adapters/chains/devnets/stacks-devnet';
import { easArtifacts } from '@notary/server/adapters/chains/eas-abi';
import type { DocumentDto } from '@notary/shared';
import {
  EAS_ABI,
  extractReceipt,
  pemCertificates,
  type Receipt,
  SCHEMA_REGISTRY_ABI,
  type VerifyInput,
  type VerifyReport,
  verify,
} from '@notary/verify';
import { runCli } from '@notary/verify/cli';
import { readPdfSignatures } from '@notary/verify/pdf-signatures';
import { AbiCoder, Contract, Interface, JsonRpcProvider, keccak256, Network, toUtf8Bytes } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stampDocument, uploadBytes, waitRegistered } from '../harness/anchored';
import { FIXTURES_DIR } from '../harness/fixtures';
import { api } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { createTestDatabase } from '../harness/postgres';
import { startTestService, type TestService } from '../harness/service';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';

/**
 * `notary-verify` against the devnets: receipts of the real service, checked through the devnets' own JSON-RPC and
 * Stacks API, then the same receipts tampered with one field at a time, a second Stacks node that never saw the anchor,
 * and an EVM RPC that lies.
 *
 * A batch of many is made deterministic: documents are uploaded while anchoring is off, then a service with
 * `ANCHORING=devnet` on the same database batches everything pending at start in one tree.
 */

const exec = promisify(execFile);
const EMAIL = 'verifier@example.com';
const MANY = 5;
/** Both services share the database, so they share the secret its identity keys are encrypted with. */
const SECRET = 'verify-e2e-secret-0123456789abcdef0123456789';

let work: string;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pki: TestPki;
let tsa: TestTsa;
let t: TestService;
let token: string;
let evmRpc: string;
let stacksApi: string;
const bytesOf = new Map<string, Uint8Array>();
let many: DocumentDto[] = [];
let single: DocumentDto;
/** A PDF whose own (earlier) signature the stamped certificate keeps. */
let pdfDoc: DocumentDto;

async function receiptOf(id: string): Promise<Receipt> {
  const res = await api<Receipt>(t.url, `/api/documents/${id}/receipt`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

function fileOf(doc: DocumentDto): Uint8Array {
  const bytes = bytesOf.get(doc.id);
  if (!bytes) throw new Error(`no bytes for ${doc.id}`);
  return bytes;
}

/** Verifies through the devnets' endpoints (and the test PKI as the TSA's trust anchor). */
function check(file: Uint8Array, input: Omit<VerifyInput, 'file'>): Promise<VerifyReport> {
  return verify({
    file,
    evmRpcUrls: [evmRpc],
    stacksApiUrls: [stacksApi],
    tsaCa: pemCertificates(pki.caChainPem),
    ...input,
  });
}

const statuses = (r: VerifyReport) => r.checks.map((c) => c.status);
const failedEvidence = (r: VerifyReport, id: number) =>
  r.checks.find((c) => c.id === id)?.evidence.filter((e) => e.ok === false) ?? [];

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-verify-'));
  db = await createTestDatabase();
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  // Anchoring off: the documents stay pending...
  const first = await startTestService('postgresql', { DATABASE_URL: db.url, SECRET });
  try {
    const firstToken = await first.token(EMAIL);
    for (let i = 0; i < MANY; i++) {
      const bytes = randomBytes(300 + i);
      const doc = await uploadBytes(first, firstToken, bytes, `many-${i}.bin`);
      bytesOf.set(doc.id, bytes);
      many.push(doc);
    }
  } finally {
    await first.close();
  }
  // ...until this start batches all of them in one tree.
  t = await startTestService('postgresql', {
    DATABASE_URL: db.url,
    SECRET,
    ANCHORING: 'devnet',
    ...signingEnv(pki, tsa),
  });
  token = await t.token(EMAIL);
  const devnets = t.service.anchoring?.devnets;
  if (!devnets) throw new Error('no devnets');
  evmRpc = devnets.evm.rpcUrl;
  stacksApi = devnets.stacks.url;
  many = await Promise.all(many.map((d) => waitRegistered(t, token, d.id)));
  // Uploaded once the others are anchored: a batch of one document (and the log's checkpoint).
  const bytes = randomBytes(1234);
  const uploaded = await uploadBytes(t, token, bytes, 'single.bin');
  bytesOf.set(uploaded.id, bytes);
  single = await waitRegistered(t, token, uploaded.id);
  await stampDocument(t, token, single.id);
  const pdf = new Uint8Array(await readFile(path.join(FIXTURES_DIR, 'pdfs/signed_verified.pdf')));
  const pdfUpload = await uploadBytes(t, token, pdf, 'signed_verified.pdf');
  bytesOf.set(pdfUpload.id, pdf);
  pdfDoc = await waitRegistered(t, token, pdfUpload.id);
}, 240_000);

afterAll(async () => {
  await t?.close();
  await db?.drop();
  await tsa?.stop();
  await pki?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('notary-verify from the receipt, on the devnets', () => {
  it('a batch of many: every document passes checks 1 to 4 (no token, no certificate: 5 and 6 not run)', async () => {
    const roots = new Set<string>();
    for (const doc of many) {
      const receipt = await receiptOf(doc.id);
      // The documents alone: this service's log key is not the first one's (its own data directory), and the
      // log's latest checkpoint, signed by the first, is not anchored under another key.
      expect(receipt.merkle?.leafCount).toBe(MANY);
      expect(receipt.transparencyLog?.anchored).toBeUndefined();
      expect(receipt.merkle?.siblings.length).toBeGreaterThan(0);
      roots.add(receipt.merkle?.root ?? '');
      const report = await check(fileOf(doc), { receipt });
      expect(statuses(report), JSON.stringify(report, null, 2)).toEqual([
        'passed',
        'passed',
        'passed',
        'passed',
        'not-run',
        'not-run',
      ]);
      // No token and no certificate: 5 and 6 do not apply, so the file is verified.
      expect(report.checks.slice(4).map((c) => c.reason)).toEqual(['not-applicable', 'not-applicable']);
      expect(report).toMatchObject({ ok: true, outcome: 'passed', exitCode: 0 });
    }
    expect(roots.size).toBe(1);
  });

  it('a batch of one document with its RFC 3161 token: checks 1 to 5 pass, through the real CLI under plain Node', async () => {
    const receipt = await receiptOf(single.id);
    expect(receipt.merkle).toMatchObject({ leafIndex: 0, leafCount: 2, siblings: [{ position: 'right' }] });
    const report = await check(fileOf(single), { receipt });
    expect(statuses(report), JSON.stringify(report, null, 2)).toEqual([
      'passed',
      'passed',
      'passed',
      'passed',
      'passed',
      'not-run',
    ]);
    const evidence = report.checks[2]?.evidence.map((e) => e.label) ?? [];
    expect(evidence).toEqual(
      expect.arrayContaining(['attestation.attester', 'not revoked', 'confirmations', 'Attested event']),
    );

    // The bin, as `npx notary-verify` runs it: Node itself, no tsx, no vitest.
    const file = path.join(work, 'single.bin');
    const receiptPath = path.join(work, 'single.receipt.json');
    await writeFile(file, fileOf(single));
    await writeFile(receiptPath, JSON.stringify(receipt));
    const caPath = path.join(work, 'tsa-ca.pem');
    await writeFile(caPath, pki.caChainPem);
    const bin = path.resolve(import.meta.dirname, '../../verifier/bin/notary-verify.js');
    const args = [bin, file, '--receipt', receiptPath, '--evm-rpc', evmRpc, '--stacks-api', stacksApi];
    const out = await exec(process.execPath, [...args, '--tsa-ca', caPath]);
    expect(out.stdout).toMatch(/VERIFIED: every applicable check passed \(.*\); exit status 0\n$/);
    // Without --tsa-ca the token's chain cannot be checked: partial, not passed, and the process exits 3.
    const incomplete = await exec(process.execPath, [...args, '--json']).then(
      () => {
        throw new Error('exit status 0 without --tsa-ca');
      },
      (e: { code?: number; stdout?: string }) => e,
    );
    expect(incomplete.code).toBe(3);
    const json = JSON.parse(incomplete.stdout ?? '') as VerifyReport;
    expect(statuses(json)).toEqual(['passed', 'passed', 'passed', 'passed', 'partial', 'not-run']);
    expect(json.checks[4]?.reason).toBe('not-checked');
    expect(json).toMatchObject({ ok: true, outcome: 'incomplete', exitCode: 3 });
  });

  it('without endpoints, checks 3 and 4 are reported as not run, never as passed, and the exit status is 3', async () => {
    const receipt = await receiptOf(single.id);
    const file = path.join(work, 'single.bin');
    const receiptPath = path.join(work, 'single.receipt.json');
    await writeFile(file, fileOf(single));
    await writeFile(receiptPath, JSON.stringify(receipt));
    const result = await runCli([file, '--receipt', receiptPath]);
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(
      /\[3\] EVM attestation \(EAS\): NOT RUN \(no endpoint given\)\n {4}no --evm-rpc endpoint given/,
    );
    expect(result.stdout).toMatch(
      /\[4\] Stacks anchor: NOT RUN \(no endpoint given\)\n {4}no --stacks-api endpoint given/,
    );
    expect(result.stdout).toMatch(
      /INCOMPLETE: no check failed, but checks 3, 4, 5 could not run in full \(.*\); exit status 3: give an endpoint for each anchored chain/,
    );
  });

  it('an EVM endpoint that cannot be reached is unavailability, not a failure: check 3 not run, exit 3', async () => {
    const receipt = await receiptOf(single.id);
    const file = path.join(work, 'single.bin');
    const receiptPath = path.join(work, 'single.receipt.json');
    const caPath = path.join(work, 'tsa-ca.pem');
    await writeFile(file, fileOf(single));
    await writeFile(receiptPath, JSON.stringify(receipt));
    await writeFile(caPath, pki.caChainPem);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const base = [file, '--receipt', receiptPath, '--stacks-api', stacksApi, '--tsa-ca', caPath];
    const alone = await runCli([...base, '--evm-rpc', down, '--json']);
    expect(alone.code, alone.stdout).toBe(3);
    const report = JSON.parse(alone.stdout) as VerifyReport;
    expect(statuses(report)).toEqual(['passed', 'passed', 'not-run', 'passed', 'passed', 'not-run']);
    expect(report.checks[2]).toMatchObject({ reason: 'unavailable' });
    expect(report.checks[2]?.summary).toMatch(/no endpoint answered: .*ECONNREFUSED/);
    expect(report).toMatchObject({ outcome: 'incomplete', exitCode: 3, failedAt: null });
    // Beside the devnet's own RPC: what it read passes, the check is partial.
    const beside = await runCli([...base, '--evm-rpc', evmRpc, '--evm-rpc', down]);
    expect(beside.code).toBe(3);
    expect(beside.stdout).toMatch(/\[3\] EVM attestation \(EAS\): PARTIAL \(endpoint unavailable\)/);
  });
});

describe('notary-verify refuses what was tampered with, at the right check', () => {
  it('a file with one byte changed fails at 1', async () => {
    const file = new Uint8Array(fileOf(single));
    file[100] = (file[100] ?? 0) ^ 0x01;
    const report = await check(file, { receipt: await receiptOf(single.id) });
    expect(report.failedAt).toBe(1);
    expect(report.ok).toBe(false);
    expect(statuses(report).slice(1, 5)).toEqual(['passed', 'passed', 'passed', 'passed']);
  });

  it('a receipt with one sibling changed fails at 2', async () => {
    const doc = many[0] as DocumentDto;
    const receipt = await receiptOf(doc.id);
    const sibling = receipt.merkle?.siblings[0];
    if (!sibling) throw new Error('no sibling');
    sibling.hash = `${sibling.hash.slice(0, 63)}${sibling.hash.endsWith('0') ? '1' : '0'}`;
    const report = await check(fileOf(doc), { receipt });
    expect(report.failedAt).toBe(2);
    expect(failedEvidence(report, 2).map((e) => e.label)).toEqual(['recomputed root']);
  });

  it.each([
    [
      'another attestation UID',
      (_r: Receipt, other: Receipt) => ({ attestationUid: otherEvm(other).attestationUid }),
    ],
    ['an unknown attestation UID', () => ({ attestationUid: `0x${'ab'.repeat(32)}` })],
    ['another schema', () => ({ schemaUid: keccak256(toUtf8Bytes('another schema')) })],
    ['another attester', () => ({ attester: '0x000000000000000000000000000000000000dEaD' })],
  ] as const)('a receipt naming %s fails at 3', async (_name, change) => {
    const receipt = await receiptOf(single.id);
    const other = await receiptOf((many[1] as DocumentDto).id);
    if (receipt.evm?.status !== 'registered') throw new Error('not registered');
    Object.assign(receipt.evm, change(receipt, other));
    const report = await check(fileOf(single), { receipt });
    expect(report.failedAt, JSON.stringify(report.checks[2], null, 2)).toBe(3);
    expect(statuses(report).slice(0, 2)).toEqual(['passed', 'passed']);
  });

  it('a Stacks node that has no record of the root fails at 4; asked with the real one, they disagree', async () => {
    const devnets = t.service.anchoring?.devnets;
    if (!devnets) throw new Error('no devnets');
    // The same deployer key: the same contract id, on a chain that never saw the anchor.
    let empty: StacksDevnet | undefined;
    try {
      empty = await startStacksDevnet({ senderKey: devnets.stacks.senderKey, blockTimeMs: 0 });
      expect(empty.contractId).toBe(devnets.stacks.contractId);
      const receipt = await receiptOf(single.id);
      if (receipt.stacks?.status !== 'registered') throw new Error('Stacks leg not registered');
      // Not synced to the receipt's block: what it says is no evidence, the check does not run.
      const behind = await check(fileOf(single), { receipt, stacksApiUrls: [empty.url] });
      expect(behind.checks[3], JSON.stringify(behind.checks[3], null, 2)).toMatchObject({
        status: 'not-run',
        reason: 'unavailable',
      });
      expect(behind.checks[3]?.summary).toMatch(/not synced/);
      expect(behind).toMatchObject({ outcome: 'incomplete', exitCode: 3 });
      // Past the receipt's block, a chain without the anchor contradicts the receipt.
      empty.mine(receipt.stacks.blockHeight + 1);
      const alone = await check(fileOf(single), { receipt, stacksApiUrls: [empty.url] });
      expect(alone.failedAt, JSON.stringify(alone.checks[3], null, 2)).toBe(4);
      expect(failedEvidence(alone, 4).map((e) => e.label)).toEqual(
        expect.arrayContaining(['get-anchor', 'transaction']),
      );
      const both = await check(fileOf(single), { receipt, stacksApiUrls: [stacksApi, empty.url] });
      expect(both.failedAt).toBe(4);
      expect(failedEvidence(both, 4).find((e) => e.label === 'endpoints agree')?.value).toMatch(
        /disagree on/,
      );
    } finally {
      await empty?.stop();
    }
  });

  it('a tampered timestamp token fails at 5', async () => {
    const receipt = await receiptOf(single.id);
    if (!receipt.timestamp) throw new Error('no token');
    const token = Buffer.from(receipt.timestamp.token, 'base64');
    // The last bytes of the token are its SignerInfo's signature value.
    token[token.length - 5] = (token[token.length - 5] ?? 0) ^ 0x01;
    receipt.timestamp.token = token.toString('base64');
    const report = await check(fileOf(single), { receipt });
    expect(report.failedAt).toBe(5);
    expect(failedEvidence(report, 5).map((e) => e.label)).toEqual(['signature']);
  });

  it('a second EVM RPC that alters eth_call answers is reported: the endpoints disagree, check 3 fails', async () => {
    const proxy = await startLyingRpc(evmRpc);
    try {
      const receipt = await receiptOf(single.id);
      const report = await check(fileOf(single), { receipt, evmRpcUrls: [evmRpc, proxy.url] });
      expect(report.failedAt).toBe(3);
      const bad = failedEvidence(report, 3);
      expect(bad.every((e) => e.source === proxy.url)).toBe(true);
      expect(bad.find((e) => e.label === 'endpoints agree')?.value).toMatch(/disagree on attestation\.data/);
      expect(bad.map((e) => e.label)).toContain('attestation.data (bytes32 merkleRoot)');
      expect(proxy.altered).toBeGreaterThan(0);
      // The honest endpoint alone still passes.
      expect((await check(fileOf(single), { receipt })).ok).toBe(true);
    } finally {
      await proxy.stop();
    }
  });
});

/** The certificate of `doc` as the route answers it, saved to `work`. */
async function certificateOf(doc: DocumentDto, query: string): Promise<{ bytes: Uint8Array; file: string }> {
  const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const file = path.join(work, `${doc.id}${query.replace(/\W/g, '_')}.pdf`);
  await writeFile(file, bytes);
  return { bytes, file };
}

/** `pdfdetach -list`, and the attachment it lists as `receipt.json` saved with `pdfdetach -save N`, parsed. */
async function detachReceipt(file: string): Promise<{ list: string; receipt: unknown }> {
  const list = (await exec('pdfdetach', ['-list', file])).stdout;
  const n = /^(\d+): receipt\.json$/m.exec(list)?.[1];
  if (!n) throw new Error(`pdfdetach lists no receipt.json:\n${list}`);
  const out = path.join(work, `${path.basename(file)}.receipt.json`);
  await exec('pdfdetach', ['-save', n, '-o', out, file]);
  return { list, receipt: JSON.parse(await readFile(out, 'utf8')) };
}

describe('receipt.json in every certificate, and notary-verify --certificate', () => {
  it('a separate certificate (not a PDF) carries the same receipt as the route; verified from it alone', async () => {
    const doc = many[3] as DocumentDto;
    const { bytes, file } = await certificateOf(doc, '');
    const { list, receipt } = await detachReceipt(file);
    expect(list).toMatch(/^1 embedded files\n1: receipt\.json$/m);
    expect(receipt).toEqual(await receiptOf(doc.id));
    const report = await check(fileOf(doc), { certificate: bytes });
    expect(statuses(report), JSON.stringify(report, null, 2)).toEqual([
      'passed',
      'passed',
      'passed',
      'passed',
      'not-run',
      'not-run',
    ]);
    expect(report.checks[5]?.summary).toBe('the certificate is not signed');
    const evidence = report.checks[0]?.evidence.map((e) => e.value).join('\n');
    expect(evidence).toContain('in /EmbeddedFiles and /AF, AFRelationship Supplement');
    expect(evidence).toContain('separate: it does not embed the file');
  });

  it('a signed stamped PDF: pdfsig still validates it, pdfdetach extracts the route receipt, all six checks pass', async () => {
    const { bytes, file } = await certificateOf(pdfDoc, '?signed=1&lang=en');
    const sig = (await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file])).stdout;
    // The certification signature, then (B-LTA) a document timestamp and validation data after it.
    const blocks = sig.split(/Signature #\d+:/);
    const ours = blocks.find((b) => b.includes('Signature Field Name: Certification')) ?? '';
    expect(ours).toContain('Signature Validation: Signature is Valid.');
    expect(ours).toContain('Certificate Validation: Certificate is Trusted.');
    expect(blocks.some((b) => b.includes('Signature Field Name: DocumentTimestamp'))).toBe(true);
    const { receipt } = await detachReceipt(file);
    expect(receipt).toEqual(await receiptOf(pdfDoc.id));
    // The attachment is inside the signed range: the signature covers its whole revision, which holds it.
    const signatures = await readPdfSignatures(bytes);
    const certification = signatures.signatures.filter((s) => !s.documentTimestamp).at(-1);
    expect(certification?.coverage).toMatchObject({ wellFormed: true, endsARevision: true });
    const signedRevision = bytes.subarray(0, certification?.coverage.end ?? 0);
    const attached = await extractReceipt(signedRevision);
    expect(JSON.parse(new TextDecoder().decode(attached.bytes))).toEqual(receipt);

    const pdfPath = path.join(work, 'signed_verified.pdf');
    const caPath = path.join(work, 'ca.pem');
    await writeFile(pdfPath, fileOf(pdfDoc));
    await writeFile(caPath, pki.caChainPem);
    const cli = await runCli([
      pdfPath,
      '--certificate',
      file,
      '--evm-rpc',
      evmRpc,
      '--stacks-api',
      stacksApi,
      '--trust-ca',
      caPath,
      '--tsa-ca',
      caPath,
      '--json',
    ]);
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    const report = JSON.parse(cli.stdout) as VerifyReport;
    expect(statuses(report)).toEqual(['passed', 'passed', 'passed', 'passed', 'not-run', 'passed']);
    const first = report.checks[0]?.evidence.map((e) => e.value).join('\n');
    expect(first).toContain(`stamped: its first ${fileOf(pdfDoc).length} bytes are exactly the file`);
    const sixth = report.checks[5]?.evidence.map((e) => `${e.label}: ${e.value}`).join('\n');
    expect(sixth).toContain('SubFilter: ETSI.CAdES.detached');
    expect(sixth).toContain('signature timestamp: signature: valid');
    expect(sixth).toMatch(/chain to --trust-ca: trusted at/);
    // The test PKI's certificates name no OCSP or CRL URL: no revocation data, the level stays B-T.
    expect(report.checks[5]?.pades?.level).toBe('B-T');
  });

  it('a certificate with one byte changed inside the signed range fails at 6', async () => {
    const { bytes } = await certificateOf(pdfDoc, '?signed=1&lang=en');
    const tampered = Buffer.from(bytes);
    // The signature dictionary's /Reason, inside the signed range, after the original's bytes.
    const at = tampered.lastIndexOf('Notarization certificate');
    expect(at).toBeGreaterThan(fileOf(pdfDoc).length);
    tampered[at] = 'n'.charCodeAt(0);
    const report = await check(fileOf(pdfDoc), {
      certificate: new Uint8Array(tampered),
      trustCa: pemCertificates(pki.caChainPem),
    });
    expect(report.failedAt, JSON.stringify(report.checks[5], null, 2)).toBe(6);
    expect(statuses(report).slice(0, 4)).toEqual(['passed', 'passed', 'passed', 'passed']);
    // The signature's digest fails, and so does the imprint of the document timestamp over it (B-LTA).
    const labels = failedEvidence(report, 6).map((e) => e.label);
    expect(labels).toContain('signed messageDigest');
    expect(labels.filter((l) => l !== 'signed messageDigest')).toEqual(
      labels.filter((l) => /^document timestamp .*: message imprint$/.test(l)),
    );
    // Bytes appended after signing: the signature no longer covers the file.
    const appended = new Uint8Array([...bytes, ...new TextEncoder().encode('\n% appended\n')]);
    const after = await check(fileOf(pdfDoc), { certificate: appended });
    expect(after.failedAt).toBe(6);
    expect(failedEvidence(after, 6)[0]?.value).toMatch(/bytes were added after signing/);
  });
});

describe("a third party's client agrees", () => {
  it('the attestation read with plain ethers and the published EAS ABI holds the receipt root', async () => {
    const receipt = await receiptOf((many[2] as DocumentDto).id);
    const evm = otherEvm(receipt);
    const provider = new JsonRpcProvider(evmRpc, Network.from(evm.chainId), { staticNetwork: true });
    try {
      const eas = new Contract(evm.easAddress, easArtifacts().eas.abi, provider);
      const att = (await eas.getFunction('getAttestation').staticCall(evm.attestationUid)) as {
        data: string;
        attester: string;
        schema: string;
      };
      expect(String(AbiCoder.defaultAbiCoder().decode(['bytes32'], att.data)[0])).toBe(
        `0x${receipt.merkle?.root}`,
      );
      expect(att.attester).toBe(evm.attester);
      expect(att.schema).toBe(evm.schemaUid);
    } finally {
      provider.destroy();
    }
  });

  it("the verifier's ABI fragments are the published contracts' own", () => {
    const { eas, schemaRegistry } = easArtifacts();
    const published = new Interface(eas.abi);
    const ours = new Interface(EAS_ABI);
    for (const name of ['getAttestation', 'getSchemaRegistry']) {
      expect(ours.getFunction(name)?.format('full')).toBe(published.getFunction(name)?.format('full'));
    }
    expect(ours.getEvent('Attested')?.format('full')).toBe(published.getEvent('Attested')?.format('full'));
    expect(new Interface(SCHEMA_REGISTRY_ABI).getFunction('getSchema')?.format('full')).toBe(
      new Interface(schemaRegistry.abi).getFunction('getSchema')?.format('full'),
    );
  });
});

type RegisteredEvm = Extract<NonNullable<Receipt['evm']>, { status: 'registered' }>;

function otherEvm(r: Receipt): RegisteredEvm {
  if (r.evm?.status !== 'registered') throw new Error('EVM leg not registered');
  return r.evm;
}

/**
 * A loopback JSON-RPC proxy in front of `target` that answers `eth_call`s of `EAS.getAttestation` with one
 * hex digit of the attestation's data changed (the root it holds), and passes everything else through.
 */
async function startLyingRpc(
  target: string,
): Promise<{ url: string; altered: number; stop(): Promise<void> }> {
  const selector = new Interface(EAS_ABI).getFunction('getAttestation')?.selector ?? '';
  const state = { altered: 0 };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const call = JSON.parse(body) as { method: string; params?: { data?: string }[] };
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    let text = await upstream.text();
    if (call.method === 'eth_call' && call.params?.[0]?.data?.startsWith(selector)) {
      const answer = JSON.parse(text) as { result: string };
      // The last 32-byte word of the encoded tuple is the attestation's data: the anchored root.
      const at = answer.result.length - 10;
      const digit = answer.result[at] === '0' ? '1' : '0';
      answer.result = `${answer.result.slice(0, at)}${digit}${answer.result.slice(at + 1)}`;
      text = JSON.stringify(answer);
      state.altered += 1;
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get altered() {
      return state.altered;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
