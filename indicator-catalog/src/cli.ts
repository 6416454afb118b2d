/**
 * `npm run catalog -- <command>`: talks to a running catalog over its REST API (`CATALOG_URL`, default
 * http://127.0.0.1:3100; `CATALOG_ADMIN_TOKEN` when the catalog has one). Commands:
 *   sync <slug>            trigger a sync and follow it with a progress bar (exit 1 when it fails)
 *   status <slug>          sync status and the last runs
 *   providers              list the providers
 *   register <file.json>   register a provider from a JSON file (`-` reads standard input)
 *   remove <slug>          remove a provider
 *   search <text> [--city <name>] [--geocode <7 digits>] [--year <yyyy>] [--limit <n>]
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { errorMessage } from '@notary/shared';
import cliProgress from 'cli-progress';
import { loadConfig } from './config';
import type { ProviderView } from './providers/schemas';
import type { SearchResponse } from './search/schemas';
import type { SyncStatusView } from './sync/status';

const config = loadConfig();
const base = config.catalogUrl.replace(/\/$/, '');

// What the CLI prints is its output, not a log: plain lines on stdout, usage and failures on stderr.
const print = (text: string) => process.stdout.write(`${text}\n`);
const printError = (text: string) => process.stderr.write(`${text}\n`);

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (config.adminToken) headers.authorization = `Bearer ${config.adminToken}`;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (e) {
    throw new Error(
      `No catalog answers at ${base} (${errorMessage(e)}); start it with npm run start:catalog`,
    );
  }
  const json = (await response.json().catch(() => ({}))) as T & { message?: string };
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}: ${json.message ?? ''}`);
  return json;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The bar's counter for the phase a sync is in. */
function counter(p: NonNullable<SyncStatusView['progress']>): { value: number; total: number; unit: string } {
  switch (p.phase) {
    case 'crawl':
      return {
        value: p.categoriesDone,
        total: Math.max(p.categoriesTotal, 1),
        unit: `categories, ${p.indicatorsSeen} definitions`,
      };
    case 'embed':
      return { value: p.embedded, total: Math.max(p.toEmbed, 1), unit: 'embedded' };
    case 'upsert':
      return { value: p.upserted, total: Math.max(p.toEmbed, 1), unit: 'upserted' };
    default:
      return { value: 1, total: 1, unit: `${p.indicatorsSeen} definitions` };
  }
}

async function sync(slug: string): Promise<number> {
  const { runId } = await call<{ runId: string }>('POST', `/api/providers/${encodeURIComponent(slug)}/sync`);
  const bar = new cliProgress.SingleBar(
    { format: '{phase} |{bar}| {value}/{total} {unit}', hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  const tty = process.stdout.isTTY === true;
  let started = false;
  let lastPhase = '';
  for (;;) {
    const status = await call<SyncStatusView>('GET', `/api/providers/${encodeURIComponent(slug)}/sync`);
    const run = status.recentRuns.find((r) => r.id === runId);
    if (status.progress) {
      const c = counter(status.progress);
      const payload = { phase: status.progress.phase.padEnd(7), unit: c.unit };
      if (tty) {
        if (!started) bar.start(c.total, c.value, payload);
        else bar.setTotal(c.total);
        bar.update(c.value, payload);
        started = true;
      } else if (status.progress.phase !== lastPhase) {
        print(`${status.progress.phase}: ${c.value}/${c.total} ${c.unit}`);
      }
      lastPhase = status.progress.phase;
    }
    if (run && run.status !== 'running') {
      if (started) {
        if (run.status !== 'failed') bar.update(bar.getTotal());
        bar.stop();
      }
      const s = run.stats;
      print(
        `${slug}: ${run.status}` +
          (s
            ? ` in ${s.durationMs} ms: ${s.indicatorsSeen} definitions, ${s.embedded} embedded, ${s.unchanged} unchanged, ${s.removed} removed`
            : '') +
          (run.error ? `\n  ${run.error}` : ''),
      );
      return run.status === 'failed' ? 1 : 0;
    }
    await sleep(250);
  }
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      city: { type: 'string' },
      geocode: { type: 'string' },
      year: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const [command, arg] = positionals;
  switch (command) {
    case 'sync':
      if (!arg) break;
      return sync(arg);
    case 'status':
      if (!arg) break;
      print(JSON.stringify(await call('GET', `/api/providers/${encodeURIComponent(arg)}/sync`), null, 2));
      return 0;
    case 'providers': {
      const { providers } = await call<{ providers: ProviderView[] }>('GET', '/api/providers');
      for (const p of providers) {
        print(
          `${p.slug}\t${p.sync.status}\t${p.sync.indicatorCount} indicators\tlast sync ${p.sync.lastSyncAt ?? 'never'}\t${p.baseUrl}`,
        );
      }
      return 0;
    }
    case 'register': {
      if (!arg) break;
      const text = arg === '-' ? await readStdin() : await readFile(arg, 'utf8');
      const provider = await call<ProviderView>('POST', '/api/providers', JSON.parse(text));
      print(`registered ${provider.slug}; run: npm run catalog -- sync ${provider.slug}`);
      return 0;
    }
    case 'remove':
      if (!arg) break;
      await call('DELETE', `/api/providers/${encodeURIComponent(arg)}`);
      print(`removed ${arg}`);
      return 0;
    case 'search': {
      if (!arg) break;
      const query = new URLSearchParams({ q: arg });
      for (const key of ['city', 'geocode', 'year', 'limit'] as const) {
        const v = values[key];
        if (v !== undefined) query.set(key, v);
      }
      const { results, municipality } = await call<SearchResponse>('GET', `/api/search?${query}`);
      if (municipality)
        print(`municipality: ${municipality.name ?? ''} ${municipality.uf ?? ''} (${municipality.geocode})`);
      for (const r of results) {
        print(`${r.score.toFixed(3)}  ${r.indicator.id}  ${r.indicator.name} [${r.indicator.provider.slug}]`);
        for (const v of r.values.slice(0, 3))
          print(`         ${v.year}  ${v.city ?? v.geocode}: ${v.value} ${v.unit ?? ''}`);
        if (r.error) print(`         error: ${r.error}`);
        print(
          `         ${r.attribution.publisherName} (${r.attribution.license}) ${r.attribution.sourceUrl}`,
        );
      }
      return 0;
    }
  }
  printError(
    'usage: npm run catalog -- sync <slug> | status <slug> | providers | register <file.json|-> | remove <slug> | search <text> [--city <name>] [--geocode <code>] [--year <yyyy>] [--limit <n>]',
  );
  return 2;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    printError(errorMessage(e));
    process.exit(1);
  },
);
