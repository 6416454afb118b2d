import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { SearchResponse } from '../src/search/schemas';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function run(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Runs a root package.json script the way `npm run` does (through `sh`, so its variable assignments apply),
 * with `tsx` as this Node's `--import tsx` and `exec`, so that signals reach the catalog itself.
 */
function runScript(name: string, env: Record<string, string>): ChildProcess {
  const scripts = (
    JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const script = scripts[name];
  if (!script) throw new Error(`no script ${name}`);
  const command = script.replace(/(^|\s)tsx\s/, `$1exec "${process.execPath}" --import tsx `);
  return spawn('sh', ['-c', command], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function output(child: ChildProcess): { text: () => string } {
  let text = '';
  child.stdout?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  return { text: () => text };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

let dataDir: string | undefined;
let catalog: ChildProcess | undefined;
afterAll(async () => {
  if (catalog && catalog.exitCode === null) {
    catalog.kill('SIGKILL');
    await exited(catalog);
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('npm run start:catalog (indicator-catalog/src/main.ts)', () => {
  it('starts the catalog with the reference provider, syncs it, answers /health, and the CLI follows a sync', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-start-'));
    // The root script as `npm run start:catalog` runs it: CATALOG_ADMIN_OPEN=1 on its loopback listen.
    catalog = runScript('start:catalog', {
      CATALOG_PORT: '0',
      PROVIDER_PORT: '0',
      CATALOG_DATA_DIR: dataDir,
    });
    const log = output(catalog);
    let url: string | undefined;
    for (let i = 0; i < 600 && !url; i++) {
      url = /\[catalog\] listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log.text())?.[1];
      if (catalog.exitCode !== null) throw new Error(`catalog exited: ${log.text()}`);
      await sleep(100);
    }
    expect(url, log.text()).toBeDefined();
    let health: { status: number; body: unknown } | undefined;
    for (let i = 0; i < 300; i++) {
      const response = await fetch(`${url}/health`);
      health = { status: response.status, body: await response.json() };
      if (response.status === 200) break;
      expect(health).toEqual({ status: 503, body: { status: 'starting' } });
      await sleep(100);
    }
    expect(health).toEqual({ status: 200, body: { status: 'ok' } });
    // The line is written before /health says ok, but the pipe may deliver it after the HTTP answer arrives.
    await expect
      .poll(() => log.text(), { timeout: 10_000 })
      .toContain('[sync] startup sync of ibge-referencia: ok');

    const search = (await (
      await fetch(`${url}/api/search?q=popula%C3%A7%C3%A3o&city=Manaus&limit=1`)
    ).json()) as SearchResponse;
    expect(search.results[0]?.values[0]).toMatchObject({ city: 'Manaus', year: 2021 });

    const cli = run(['indicator-catalog/src/cli.ts', 'sync', 'ibge-referencia'], {
      CATALOG_URL: url as string,
    });
    const cliLog = output(cli);
    expect(await exited(cli)).toBe(0);
    expect(cliLog.text()).toMatch(
      /ibge-referencia: ok in \d+ ms: 102 definitions, 0 embedded, 102 unchanged, 0 removed/,
    );

    catalog.kill('SIGTERM');
    expect(await exited(catalog)).toBe(0);
  });

  it('refuses to start beyond loopback without CATALOG_ADMIN_TOKEN, before listening', async () => {
    const refused = runScript('start:catalog', {
      CATALOG_HOST: '0.0.0.0',
      CATALOG_PORT: '0',
      PROVIDER_PORT: '0',
      CATALOG_DATA_DIR: path.join(os.tmpdir(), 'catalog-start-refused-never-created'),
    });
    const log = output(refused);
    expect(await exited(refused)).toBe(1);
    expect(log.text()).toContain(
      '[catalog] The catalog listens on 0.0.0.0, beyond loopback, without CATALOG_ADMIN_TOKEN: set CATALOG_ADMIN_TOKEN',
    );
    expect(log.text()).not.toContain('listening on');
  });
});
