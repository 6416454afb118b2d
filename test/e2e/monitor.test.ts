/**
 * A monitoring of a loopback site (the certidão de permanência): the site's text changes at run 3, it answers 404 at
 * runs 5 and 6 and comes back at run 7 (its behaviour follows the count of page loads, so each run sees what its
 * number says whatever the clock). The service is stopped after run 3 and started again on the same data: the
 * runs go on from the job queue with none lost or doubled. The certidão states the windows, the gap's cause and
 * the change; `notary-verify chain` accepts its chain, and refuses one issued after a run was removed or two were
 * swapped in the database. Caps, roles and the storage quota are refused clearly: a reader may fetch the certidão
 * already issued but not cause a new one, and a run past the quota is recorded as refused. The job queue polls
 * every 0.5 s (`JOB_POLLING_INTERVAL_SECONDS`), so each run starts as soon as it is due.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { type Service, startService } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { Monitor, MonitorRun } from '@notary/server/db/entities';
import type { MonitorDto, MonitorListDto } from '@notary/shared';
import { runCli } from '@notary/verify/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';
import { startSite, type TestSite } from '../harness/web-site';

const exec = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
const RUNS = 7;
/** A quota no run of this test comes near: only a workspace whose counter is set to it is over. */
const QUOTA = 1024 ** 3;

/** The page at its `n`th load: the price changes at 3, 404 at 5 and 6, back at 7. */
function siteHandler(): http.RequestListener {
  let loads = 0;
  return (req, res) => {
    if (req.url === '/elsewhere') {
      // The quota case's page: answered, and not counted among the main monitoring's loads.
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Outra</title><p>Outra página</p>');
      return;
    }
    if (req.url !== '/page') {
      res.statusCode = 404;
      res.end();
      return;
    }
    loads += 1;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (loads === 5 || loads === 6) {
      res.statusCode = 404;
      res.end('<!doctype html><title>Not found</title><p>Página removida</p>');
      return;
    }
    const price = loads >= 3 ? 'R$ 12,00' : 'R$ 10,00';
    const colour = loads >= 3 ? '#c00' : '#06c';
    res.end(`<!doctype html><html><head><title>Oferta</title></head><body style="margin:0">
      <h1>Oferta do dia</h1><p id="price" style="background:${colour};color:#fff;width:300px">Preço: ${price}</p>
      </body></html>`);
  };
}

describe('monitoring and the certidão de permanência', () => {
  let site: TestSite;
  let t: TestService;
  let service: Service;
  let url: string;
  let org: TestOrg;
  let dir: string;
  const env = (dataDir: string, port = 0) => ({
    NODE_ENV: 'test',
    // The same port after the restart: the session tokens name the service's URL.
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ANCHORING: 'off',
    RATE_LIMITS: 'off',
    CHROMIUM_PATH: CHROMIUM,
    CAPTURE_ALLOW_HOSTS: '127.0.0.1',
    MONITOR_MIN_INTERVAL_SECONDS: '1',
    MONITOR_MAX_DAYS: '2',
    JOB_POLLING_INTERVAL_SECONDS: '0.5',
    // A loopback page loads in a second; the bound only keeps a busy shared machine from faking a gap.
    CAPTURE_TIMEOUT_MS: '120000',
    TENANT_STORAGE_QUOTA_BYTES: String(QUOTA),
  });

  beforeAll(async () => {
    site = await startSite(siteHandler());
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-monitor-'));
    const { NODE_ENV, PORT, HOST, DATA_DIR, LOG_LEVEL, ...own } = env('');
    t = await startTestService('pglite', own);
    service = t.service;
    url = t.url;
    org = await makeOrg(t, 'Monitoring', [
      ['owner@monitor.test', 'owner'],
      ['reader@monitor.test', 'reader'],
    ]);
  });

  afterAll(async () => {
    await service?.close();
    await site?.close();
    await rm(t?.dataDir ?? '', { recursive: true, force: true });
    await rm(dir ?? '', { recursive: true, force: true });
  });

  const owner = () => org.tokens['owner@monitor.test'] ?? '';
  const reader = () => org.tokens['reader@monitor.test'] ?? '';
  const get = (id: string, token = owner()) => api<MonitorDto>(url, `/api/monitors/${id}`, { token });
  /** Waits for `done` on the monitoring, polling its state with a deadline. */
  const until = async (id: string, done: (m: MonitorDto) => boolean, token = owner()) => {
    let last: unknown;
    await expect
      .poll(
        async () => {
          const res = await get(id, token);
          last = {
            status: res.status,
            state: res.body.state,
            runs: res.body.runs?.map((r) => [r.run, r.outcome, r.cause, r.detail]),
          };
          return done(res.body);
        },
        { timeout: 100_000, interval: 200, message: `monitoring: ${JSON.stringify(last)}` },
      )
      .toBe(true)
      .catch((e: unknown) => {
        throw new Error(`${String(e)}; last seen ${JSON.stringify(last)}`);
      });
  };
  const fetchCertidao = (id: string, token: string) =>
    fetch(`${url}/api/monitors/${id}/certidao`, { headers: { authorization: `Bearer ${token}` } });
  const certidao = async (id: string, name: string) => {
    const res = await fetchCertidao(id, owner());
    expect(res.status).toBe(200);
    const file = path.join(dir, `${name}.pdf`);
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    return { file, serial: res.headers.get('x-serial-number') };
  };

  it('refuses an interval under the minimum, a period over the maximum, readers and other tenants', async () => {
    const body = (interval: string, period: string) => ({ url: `${site.origin}/page`, interval, period });
    const short = await api(url, '/api/monitors', {
      method: 'POST',
      token: owner(),
      body: body('PT0.5S', 'PT10S'),
    });
    expect(short.status).toBe(400);
    const long = await api(url, '/api/monitors', {
      method: 'POST',
      token: owner(),
      body: body('PT1H', 'P3D'),
    });
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toContain('MONITOR_MAX_DAYS');
    const bad = await api(url, '/api/monitors', {
      method: 'POST',
      token: owner(),
      body: body('6 hours', 'P1D'),
    });
    expect(bad.status).toBe(400);
    const byReader = await api(url, '/api/monitors', {
      method: 'POST',
      token: reader(),
      body: body('PT1H', 'P1D'),
    });
    expect(byReader.status).toBe(403);
  });

  it('refuses a monitoring to a workspace at its quota, and records a run past it as refused', async () => {
    const full = await makeOrg(t, 'Full', [['full@monitor.test', 'owner']]);
    const token = full.tokens['full@monitor.test'] ?? '';
    // The counter the quota reads (a new workspace has no row yet).
    const setUsed = (usedBytes: number) =>
      (service.deps.db.fork() as SqlEntityManager).execute(
        `insert into tenant_storage (tenant_id, used_bytes, updated_at) values (?, ?, now())
          on conflict (tenant_id) do update set used_bytes = excluded.used_bytes`,
        [full.tenantId, usedBytes],
      );
    // Another path of the site: the page's own loads count the main monitoring's runs.
    const body = { url: `${site.origin}/elsewhere`, interval: 'PT1H', period: 'P1D' };
    await setUsed(QUOTA);
    const refused = await api(url, '/api/monitors', { method: 'POST', token, body });
    expect(refused.status).toBe(413);
    expect(JSON.stringify(refused.body)).toContain('storage quota');
    // Room for the request, not for the run's archive: the run is recorded as refused, not dropped.
    await setUsed(QUOTA - 1);
    const created = await api<MonitorDto>(url, '/api/monitors', { method: 'POST', token, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await until(created.body.id, (m) => m.state !== 'active', token);
    const ended = (await get(created.body.id, token)).body;
    expect(ended.state).toBe('failed');
    expect(ended.failure).toContain('quota');
    expect(ended.runs).toMatchObject([
      { run: 1, outcome: 'unavailable', cause: 'refused', serialNumber: null },
    ]);
    // Nor can a certidão be issued into the full workspace.
    expect((await fetchCertidao(created.body.id, token)).status).toBe(413);
  }, 180_000);

  it('captures every run as a chained capture, survives a restart, and issues a certidão that notary-verify checks', async () => {
    const created = await api<MonitorDto>(url, '/api/monitors', {
      method: 'POST',
      token: owner(),
      body: { url: `${site.origin}/page`, interval: 'PT1S', period: `PT${RUNS - 1}S` },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    expect(created.body).toMatchObject({ state: 'active', plannedRuns: RUNS });
    // Signed in before the restart below: `t` is the service that stops there.
    const stranger = await t.token(freshEmail('stranger'));
    // Members read it, another workspace does not see it, a reader cannot cancel it.
    expect((await get(id, reader())).status).toBe(200);
    expect((await get(id, stranger)).status).toBe(404);
    expect((await api(url, `/api/monitors/${id}`, { method: 'DELETE', token: reader() })).status).toBe(403);

    await until(id, (m) => m.runs.length >= 1);
    // A reader may not cause a certidão to be issued (none is yet).
    expect((await fetchCertidao(id, reader())).status).toBe(403);
    await until(id, (m) => m.runs.length >= 3);
    // A restart in the middle: the queued run is in the database, not in a timer of the process that stops.
    const port = Number(new URL(url).port);
    await service.close();
    service = await startService(loadConfig(env(t.dataDir, port)));
    await until(id, (m) => m.state !== 'active');

    const done = (await get(id)).body;
    expect(done.state).toBe('finished');
    expect(done.runs.map((r) => r.run)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(done.runs.map((r) => r.outcome)).toEqual([
      'seen',
      'seen',
      'seen',
      'seen',
      'unavailable',
      'unavailable',
      'seen',
    ]);
    expect(done.runs[4]).toMatchObject({ cause: 'http-status', httpStatus: 404 });
    // The workspace's list: every member sees it with how far it got; another workspace's list does not.
    const listed = await api<MonitorListDto>(url, '/api/monitors', { token: reader() });
    expect(listed.status).toBe(200);
    expect(listed.body.monitors.find((m) => m.id === id)).toMatchObject({
      state: 'finished',
      runsDone: RUNS,
      lastRun: { run: RUNS, outcome: 'seen' },
    });
    const strangers = await api<MonitorListDto>(url, '/api/monitors', { token: stranger });
    expect(strangers.body.monitors).toEqual([]);
    for (const [i, r] of done.runs.entries()) {
      expect(r.waczSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(r.previousWaczSha256).toBe(i === 0 ? null : done.runs[i - 1]?.waczSha256);
    }

    const issued = await certidao(id, 'certidao');
    expect(issued.serial).toBe(done.certidaoSerialNumber ?? issued.serial);
    // The one issued after the last run is served to a reader as it is: no new issuance.
    const byReader = await fetchCertidao(id, reader());
    expect(byReader.status).toBe(200);
    expect(byReader.headers.get('x-serial-number')).toBe(issued.serial);
    const text = (await exec('pdftotext', [issued.file, '-'])).stdout.replace(/\s+/g, ' ');
    expect(text).toContain('CERTIDÃO DE PERMANÊNCIA');
    expect(text).toContain('Disponível (capturas 1 a 4)');
    expect(text).toContain('Indisponível (capturas 5 a 6)');
    expect(text).toContain('erro HTTP 404');
    expect(text).toContain('Da captura 2 para a captura 3');
    expect(text).toContain('R$ 12,00');
    expect(text).toMatch(/Imagem: \d+,\d{2}% dos pixels alterados/);
    const ok = await runCli(['chain', issued.file]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);

    // A run removed from the database: the certidão issued from what is left shows the break.
    const em = service.deps.db.fork();
    await em.nativeDelete(MonitorRun, { monitor: id, run: 3 });
    await em.nativeUpdate(Monitor, { id }, { certidao: null });
    const removed = await runCli(['chain', (await certidao(id, 'removed')).file]);
    expect(removed.code, removed.stdout).toBe(1);
    expect(removed.stdout).toContain('BREAK');

    // Two runs swapped (their numbers exchanged).
    await em.nativeUpdate(MonitorRun, { monitor: id, run: 2 }, { run: 1000 });
    await em.nativeUpdate(MonitorRun, { monitor: id, run: 4 }, { run: 2 });
    await em.nativeUpdate(MonitorRun, { monitor: id, run: 1000 }, { run: 4 });
    await em.nativeUpdate(Monitor, { id }, { certidao: null });
    const swapped = await runCli(['chain', (await certidao(id, 'swapped')).file]);
    expect(swapped.code, swapped.stdout).toBe(1);
  }, 240_000);
});
