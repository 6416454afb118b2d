import { execFile } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDF_WORKER_DEADLINE_MS } from '@notary/pdf/bounds';
import { objectStreamBombPdf, xrefStreamBombPdf } from '@notary/pdf/hostile-pdfs.testing';
import {
  certificateRenders,
  MAX_CONCURRENT_RENDERS,
  MAX_WAITING_RENDERS,
  RENDER_QUEUE_RETRY_AFTER_SECONDS,
} from '@notary/server/http/certificates';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { startTestTsa, type TestTsa } from '../harness/tsa';

/**
 * Bounded certificate work over HTTP against the real service: Flate bombs of 2 GiB get a separate certificate while
 * another client's public verifications keep answering and memory stays bounded; a certificate flood fills the render
 * queue and gets 429 past it; a client that disconnects frees its slot. Figures (latency, RSS) are printed; only
 * generous safety bounds are asserted.
 */

const exec = promisify(execFile);
const GIB = 1024 * 1024 * 1024;
const MB = 1024 * 1024;

let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-bounds-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

async function getCertificate(
  t: TestService,
  token: string,
  id: string,
  query = '',
  signal?: AbortSignal,
): Promise<Answer> {
  const res = await fetch(`${t.url}/api/documents/${id}/certificate${query}`, {
    headers: { authorization: `Bearer ${token}` },
    ...(signal ? { signal } : {}),
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** `qpdf --check` (exit 0 only) and the text of the last page by pdftotext. */
async function checkPdf(name: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, bytes);
  await exec('qpdf', ['--check', file]);
  const pages = Number((await exec('qpdf', ['--show-npages', file])).stdout.trim());
  const { stdout } = await exec('pdftotext', ['-f', String(pages), '-l', String(pages), file, '-']);
  return stdout;
}

/**
 * Another client: anonymous public verifications of `hash`, one after the other, until `stop()`; the
 * latency of each (ms) and its status are kept.
 */
function verificationLoop(t: TestService, hash: string) {
  const latencies: number[] = [];
  const statuses: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${t.url}/api/public/verify?hash=${hash}`);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      statuses.push(res.status);
    }
  })();
  return {
    latencies,
    statuses,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Resolves once `condition()` holds, checked at every change of the render queue. */
function whenQueue(condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (condition()) return resolve();
    const off = certificateRenders.onChange(() => {
      if (!condition()) return;
      off();
      resolve();
    });
  });
}

describe('Flate bombs of 2 GiB (PostgreSQL, anchoring off)', () => {
  let t: TestService;
  let token: string;
  let probe: DocumentDto;
  const debug: string[] = [];

  beforeAll(async () => {
    // The separate certificate's reason is logged at debug level only.
    vi.spyOn(console, 'debug').mockImplementation((...args: unknown[]) => {
      debug.push(args.map(String).join(' '));
    });
    t = await startTestService('postgresql', { LOG_LEVEL: 'debug' });
    token = await t.token('bomb@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    probe = up.body as unknown as DocumentDto;
  });

  afterAll(async () => {
    await t?.close();
    vi.restoreAllMocks();
  });

  it.each([
    ['object stream', objectStreamBombPdf, /a stream decodes to more than \d+ bytes/],
    ['cross-reference stream', xrefStreamBombPdf, /a stream inflates to more than \d+ bytes/],
  ])(
    'a bomb in the %s gets a separate certificate while verifications keep answering',
    async (name, make, reason) => {
      const bomb = await make(2 * GIB);
      const file = path.join(work, `bomb-${name.replace(/ /g, '-')}.pdf`);
      await writeFile(file, bomb);
      const up = await uploadFile(t.url, token, file);
      expect(up.status).toBe(201);
      const doc = up.body as unknown as DocumentDto;
      expect(doc.mimeType).toBe('application/pdf');

      const rssBefore = process.memoryUsage.rss();
      const loop = verificationLoop(t, probe.sha256Hash);
      const started = performance.now();
      const res = await getCertificate(t, token, doc.id);
      const elapsed = performance.now() - started;
      await loop.stop();
      const peak = process.resourceUsage().maxRSS * 1024;
      const maxLatency = Math.max(...loop.latencies);
      console.log(
        `[bounds] ${name} bomb (${(bomb.length / MB).toFixed(1)} MB, inflates to 2 GiB): certificate in ` +
          `${elapsed.toFixed(0)} ms (deadline ${PDF_WORKER_DEADLINE_MS} ms); ${loop.latencies.length} ` +
          `verifications meanwhile, max latency ${maxLatency.toFixed(0)} ms; RSS ${(rssBefore / MB).toFixed(0)} ` +
          `MB before, peak ${(peak / MB).toFixed(0)} MB (+${((peak - rssBefore) / MB).toFixed(0)} MB)`,
      );

      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      // A separate certificate: the original is not its prefix, and it is a sound PDF naming the document.
      expect(res.bytes.subarray(0, bomb.length).equals(Buffer.from(bomb))).toBe(false);
      expect(await checkPdf(`${doc.id}.pdf`, res.bytes)).toContain(doc.serialNumber);
      // The reason is the decoding bound, reached before the deadline.
      const logged = debug.find((line) => line.includes(doc.id)) ?? '';
      expect(logged).toMatch(/separate certificate \(PDF exceeds a processing bound: /);
      expect(logged).toMatch(reason);

      expect(loop.statuses.every((s) => s === 200)).toBe(true);
      expect(maxLatency).toBeLessThan(5_000);
      expect(peak - rssBefore).toBeLessThan(GIB);
    },
    120_000,
  );
});

/**
 * A loopback TSA gate: holds every time-stamp request until `release()`, then forwards it to the real test
 * TSA. Signed certificates (PAdES B-T) call the TSA while they hold their render slot, so a closed gate keeps
 * slots busy for as long as the test needs, without any timing.
 */
async function startTsaGate(target: string) {
  const arrivals = new EventEmitter();
  let count = 0;
  let open = false;
  const held: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forward = () => {
        fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/timestamp-query' },
          body: Buffer.concat(chunks),
        }).then(
          async (answer) => {
            res.writeHead(answer.status, {
              'content-type': answer.headers.get('content-type') ?? 'application/octet-stream',
            });
            res.end(Buffer.from(await answer.arrayBuffer()));
          },
          () => res.destroy(),
        );
      };
      count += 1;
      arrivals.emit('arrival', count);
      if (open) forward();
      else held.push(forward);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`,
    get count() {
      return count;
    },
    /** Resolves once `n` requests have arrived. */
    arrived: (n: number) =>
      new Promise<void>((resolve) => {
        if (count >= n) return resolve();
        const on = (c: number) => {
          if (c < n) return;
          arrivals.off('arrival', on);
          resolve();
        };
        arrivals.on('arrival', on);
      }),
    release: () => {
      open = true;
      for (const forward of held.splice(0)) forward();
    },
    /** Holds the requests that arrive from now on again, until the next `release`. */
    hold: () => {
      open = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('certificate flood (PostgreSQL, PKCS#12 key, gated loopback TSA)', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let gate: Awaited<ReturnType<typeof startTsaGate>>;
  let t: TestService;
  let token: string;
  let doc: DocumentDto;

  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    gate = await startTsaGate(tsa.url);
    t = await startTestService('postgresql', {
      SIGNING_CERT: pki.rsa.p12Path,
      SIGNING_CERT_PASSWORD: pki.p12Password,
      TSA_URL: gate.url,
      TSA_CA_CERTS: pki.caChainPath,
      // One TSA request per certificate: the gate below counts them.
      SIGNING_LEVEL: 'B-T',
    });
    token = await t.token('flood@example.com');
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    doc = up.body as unknown as DocumentDto;
  });

  afterAll(async () => {
    gate?.release();
    await t?.close();
    await gate?.close();
    await tsa?.stop();
    await pki?.dispose();
  });

  it('answers 429 with retryAfterSeconds past the queue, frees the slot of a client that left, renders the rest', async () => {
    expect(certificateRenders.running + certificateRenders.waiting).toBe(0);
    const loop = verificationLoop(t, doc.sha256Hash);
    const signed = (signal?: AbortSignal) => getCertificate(t, token, doc.id, '?signed=1', signal);

    // Every slot busy: each running render waits at the gate for its signature timestamp.
    const running = Array.from({ length: MAX_CONCURRENT_RENDERS }, () => signed());
    await gate.arrived(MAX_CONCURRENT_RENDERS);
    // The waiting room full.
    const leavers = Array.from({ length: MAX_WAITING_RENDERS }, () => new AbortController());
    const waiting = leavers.map((c) => signed(c.signal).catch((e: unknown) => e as Error));
    await whenQueue(() => certificateRenders.waiting === MAX_WAITING_RENDERS);

    // The flood past it: refused at once.
    const refused = await Promise.all(Array.from({ length: 4 }, () => signed()));
    for (const r of refused) {
      expect(r.status).toBe(429);
      const body = JSON.parse(r.bytes.toString()) as { code: string; retryAfterSeconds: number };
      expect(body.code).toBe('RATE_LIMITED');
      expect(body.retryAfterSeconds).toBe(RENDER_QUEUE_RETRY_AFTER_SECONDS);
      expect(r.headers.get('retry-after')).toBe(String(RENDER_QUEUE_RETRY_AFTER_SECONDS));
    }
    expect(certificateRenders.running).toBe(MAX_CONCURRENT_RENDERS);

    // A waiting client disconnects: its slot is free for the next one.
    leavers[0]?.abort();
    await whenQueue(() => certificateRenders.waiting === MAX_WAITING_RENDERS - 1);
    const late = signed();
    await whenQueue(() => certificateRenders.waiting === MAX_WAITING_RENDERS);

    // Slots free: everything accepted is rendered and signed, and each is a sound signed PDF.
    gate.release();
    const answers = await Promise.all([...running, ...waiting.slice(1), late]);
    const first = await waiting[0];
    await loop.stop();
    expect((first as Error).name).toBe('AbortError');
    expect(answers).toHaveLength(MAX_CONCURRENT_RENDERS + MAX_WAITING_RENDERS);
    for (const [i, a] of answers.entries()) {
      if (a instanceof Error) throw a;
      expect(a.status).toBe(200);
      expect(a.headers.get('x-service-signed')).toBe('pades');
      expect(await checkPdf(`flood-${i}.pdf`, a.bytes)).toMatch(/Certificado|certificado/);
    }
    const out = path.join(work, 'flood-0.pdf');
    const { stdout } = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, out]);
    expect(stdout).toContain('Signature Validation: Signature is Valid.');
    // The one who left was never rendered: one time-stamp request per rendered certificate.
    expect(gate.count).toBe(answers.length);
    expect(certificateRenders.running + certificateRenders.waiting).toBe(0);

    const maxLatency = Math.max(...loop.latencies);
    console.log(
      `[bounds] certificate flood: ${answers.length} rendered, ${refused.length} refused (429); ` +
        `${loop.latencies.length} verifications meanwhile, max latency ${maxLatency.toFixed(0)} ms`,
    );
    expect(loop.statuses.every((s) => s === 200)).toBe(true);
    expect(maxLatency).toBeLessThan(5_000);
  }, 120_000);

  it('a tenant holding every place delays only itself: another tenant enters in place of its newest waiter', async () => {
    expect(certificateRenders.running + certificateRenders.waiting).toBe(0);
    const otherToken = await t.token('other-tenant@example.com');
    const up = await uploadFile(t.url, otherToken, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    const otherDoc = up.body as unknown as DocumentDto;
    gate.hold();
    const arrivedBefore = gate.count;
    const signed = () => getCertificate(t, token, doc.id, '?signed=1');
    const running = Array.from({ length: MAX_CONCURRENT_RENDERS }, () => signed());
    await gate.arrived(arrivedBefore + MAX_CONCURRENT_RENDERS);
    const waiting: Array<ReturnType<typeof signed>> = [];
    for (let i = 0; i < MAX_WAITING_RENDERS; i++) {
      waiting.push(signed());
      await whenQueue(() => certificateRenders.waiting === i + 1);
    }
    // The other tenant asks while every place is taken: it enters, and the first tenant's newest waiter is refused.
    const other = getCertificate(t, otherToken, otherDoc.id, '?signed=1');
    const newest = await waiting[MAX_WAITING_RENDERS - 1];
    expect(newest?.status).toBe(429);
    expect(certificateRenders.waiting).toBe(MAX_WAITING_RENDERS);
    gate.release();
    const answers = await Promise.all([...running, ...waiting.slice(0, -1), other]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(certificateRenders.running + certificateRenders.waiting).toBe(0);
  }, 120_000);
});
