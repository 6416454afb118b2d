import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createServiceMetrics } from './registry';

const run = promisify(execFile);

/** The operator's Prometheus files: alert rules, their tests on recorded series, the Grafana dashboard. */
const DEPLOY = path.resolve(import.meta.dirname, '../../../../deploy/prometheus');

/** The series names a scrape of the service can hold: its metrics, with a histogram's `_bucket`, `_sum`, `_count`. */
async function exposedNames(): Promise<Set<string>> {
  const metrics = await createServiceMetrics().registry.getMetricsAsJSON();
  return new Set(
    metrics.flatMap((m) =>
      // prom-client's types declare a numeric enum; its objects carry the exposition's own type name.
      String(m.type) === 'histogram' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name],
    ),
  );
}

/** The metric names `text` (PromQL, or a file holding some) names: the service's, Node's and the process'. */
function namedMetrics(text: string): string[] {
  return [...new Set([...text.matchAll(/\b(?:notary|nodejs|process)_[a-z0-9_]+\b/g)].map((m) => m[0]))];
}

/** `promtool` with `args` in the deploy folder: its exit code and output (stdout and stderr). */
async function promtool(...args: string[]): Promise<{ code: number; out: string }> {
  return run('promtool', args, { cwd: DEPLOY }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

describe('deploy/prometheus', () => {
  it('the alert rules pass promtool check rules, and name only metrics the service exposes', async () => {
    const checked = await promtool('check', 'rules', 'alerts.yml');
    expect(checked.code, checked.out).toBe(0);
    const rules = readFileSync(path.join(DEPLOY, 'alerts.yml'), 'utf8');
    const exposed = await exposedNames();
    const named = namedMetrics(rules);
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((n) => !exposed.has(n))).toEqual([]);
  });

  it('every alert fires, and only where it should, on the recorded series of promtool test rules', async () => {
    const tested = await promtool('test', 'rules', 'alerts.test.yml');
    expect(tested.code, tested.out).toBe(0);
    const alerts = [...readFileSync(path.join(DEPLOY, 'alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map(
      (m) => m[1],
    );
    const tests = readFileSync(path.join(DEPLOY, 'alerts.test.yml'), 'utf8');
    expect(
      alerts.filter((a) => !new RegExp(`alertname: ${a}\\n\\s+exp_alerts:\\n\\s+- exp_labels`).test(tests)),
    ).toEqual([]);
  });

  it('the Grafana dashboard is JSON whose queries name only exposed metrics, and shows every notary metric', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(DEPLOY, 'grafana-dashboard.json'), 'utf8')) as {
      uid: string;
      panels: { title: string; targets: { expr: string }[] }[];
    };
    expect(dashboard.uid).toBe('notary-service');
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const exposed = await exposedNames();
    const named = namedMetrics(exprs.join('\n'));
    expect(named.filter((n) => !exposed.has(n))).toEqual([]);
    const shown = new Set(named.map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    const notary = [...exposed].filter((n) => n.startsWith('notary_') && !/_(bucket|sum|count)$/.test(n));
    expect(notary.filter((n) => !shown.has(n))).toEqual([]);
  });
});
