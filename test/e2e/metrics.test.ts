import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

const run = promisify(execFile);

/**
 * `/metrics` as an operator gets it: on a port of its own (never the public one), in a format Prometheus' own
 * tools accept, scraped by a real Prometheus (Debian's `prometheus`, on loopback) whose PromQL sees the requests,
 * the shared queues and an anchoring backlog (a batch window of an hour keeps the uploads pending).
 */
describe('metrics scraped by Prometheus', () => {
  let t: TestService;
  let metricsUrl: string;
  let prometheus: ChildProcess | undefined;
  let promUrl: string;
  let tmp: string;

  beforeAll(async () => {
    t = await startTestService('pglite', {
      METRICS_PORT: '0',
      ANCHORING: 'devnet',
      ANCHOR_BATCH_SECONDS: '3600',
    });
    metricsUrl = t.service.metricsUrl ?? '';
    tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-prometheus-'));
    const target = new URL(metricsUrl).host;
    await writeFile(
      path.join(tmp, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: notary\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${path.join(tmp, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(tmp, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
  });
  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await t?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** The value of an instant PromQL query's first series, or undefined while Prometheus has none. */
  async function query(promql: string): Promise<number | undefined> {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(
      () => undefined,
    );
    if (!res?.ok) return undefined;
    const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
    const first = body.data.result[0];
    return first ? Number(first.value[1]) : undefined;
  }

  it('serves /metrics on its own loopback port only, in a format promtool accepts', async () => {
    expect(new URL(metricsUrl).hostname).toBe('127.0.0.1');
    expect((await fetch(`${t.url}/metrics`)).status).toBe(404);
    const res = await fetch(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'notary_queue_running{queue="capture"}',
      'notary_queue_waiting{queue="ipfs-import"}',
      'notary_queue_largest_share{queue="certificate-render"}',
      'notary_anchoring_pending_documents{chain="evm"}',
      'notary_anchoring_oldest_pending_seconds{chain="stacks"}',
      'notary_anchoring_batch_seconds 3600',
      'notary_dependency_requests_total{dependency="tsa",outcome="ok"} 0',
      'notary_captures_total{outcome="ok"} 0',
      'notary_disk_free_bytes{volume="data"}',
      'notary_disk_floor_bytes',
      'notary_documents_notarized_total{source="upload"} 0',
      'notary_certificates_total{level="unsigned",outcome="ok"} 0',
      'notary_anchoring_batches_total{chain="evm",outcome="confirmed"} 0',
      'notary_anchoring_batches_total{chain="stacks",outcome="failed"} 0',
      'notary_anchoring_attempt_failures_total{chain="evm"} 0',
      'notary_anchoring_confirmation_seconds_count{chain="stacks"} 0',
    ]) {
      expect(text).toContain(name);
    }
    const file = path.join(tmp, 'scrape.txt');
    await writeFile(file, text);
    const checked = await run('sh', ['-c', `promtool check metrics < "${file}"`]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    // prom-client's own default gauges `nodejs_active_{handles,requests,resources}_total` break promtool's naming
    // lint (a gauge ending in _total); every other line, the service's own metrics all, passes it.
    const problems = checked.out
      .split('\n')
      .filter((line) => line.trim() !== '' && !/^nodejs_active_\w+_total non-counter metrics/.test(line));
    expect(problems, checked.out).toEqual([]);
  });

  it('Prometheus sees the uploads by route template, the documents and certificates, and the backlog on both chains', async () => {
    const token = await t.token('metrics@example.com');
    const ids: string[] = [];
    for (const name of ['contrato.txt', 'diagram.png']) {
      const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', name));
      expect(up.status).toBe(201);
      ids.push(String(up.body.id));
    }
    // A certificate of the first (no signing key here: unsigned).
    const certificate = await fetch(`${t.url}/api/documents/${ids[0]}/certificate`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(certificate.status).toBe(200);
    await certificate.arrayBuffer();
    await fetch(`${t.url}/api/documents/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const uploads =
      'sum(notary_http_requests_total{method="POST",route="/api/documents/upload",status="201"})';
    await expect.poll(() => query(uploads), { timeout: 30_000, interval: 500 }).toBe(2);
    await expect
      .poll(() => query('notary_anchoring_pending_documents{chain="evm"}'), {
        timeout: 30_000,
        interval: 500,
      })
      .toBe(2);
    await expect
      .poll(() => query('notary_anchoring_pending_documents{chain="stacks"}'), {
        timeout: 30_000,
        interval: 500,
      })
      .toBe(2);
    expect(await query('notary_anchoring_oldest_pending_seconds{chain="evm"}')).toBeGreaterThan(0);
    await expect
      .poll(() => query('sum(notary_documents_notarized_total{source="upload"})'), {
        timeout: 30_000,
        interval: 500,
      })
      .toBe(2);
    await expect
      .poll(() => query('sum(notary_certificates_total{level="unsigned",outcome="ok"})'), {
        timeout: 30_000,
        interval: 500,
      })
      .toBe(1);
    // Nothing anchored yet (an hour's window): the batch counters are there, at zero.
    expect(await query('sum(notary_anchoring_batches_total{outcome="confirmed"})')).toBe(0);
    // A document's id is never a label: the lookup is its route's template.
    await expect
      .poll(() => query('sum(notary_http_requests_total{route="/api/documents/:id"})'), {
        timeout: 30_000,
        interval: 500,
      })
      .toBeGreaterThanOrEqual(1);
    expect(await query('count(notary_http_requests_total{route=~".*00000000.*"})')).toBeUndefined();
    // Nor is any of the new counters' labels a document's, a user's or a tenant's.
    expect(await query('count(count by (source) (notary_documents_notarized_total))')).toBe(1);
    expect(
      await query(`count({__name__=~"notary_.*", id!=""} or {__name__=~"notary_.*", tenant!=""})`),
    ).toBeUndefined();
  });
});
