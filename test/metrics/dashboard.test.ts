import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { HubMetrics } from '../../src/metrics/hub-metrics';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { REPO_ROOT } from '../helpers/process';
import { scrape, type Scrape } from '../helpers/scrape';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

/**
 * The Grafana dashboard (ops/grafana/switchboard-dashboard.json) against what a hub really exports:
 * every query parses as PromQL (Prometheus's own grammar), names metrics that a scrape of a hub has,
 * and uses only labels those metrics carry. A renamed metric or label fails here, not on a blank panel.
 */
const DASHBOARD = path.join(REPO_ROOT, 'ops/grafana/switchboard-dashboard.json');
const TOKEN = 'metrics-token-0123456789';
/** Labels Prometheus adds at scrape time, or a histogram's bucket bound. */
const SCRAPE_LABELS = new Set(['instance', 'job', 'role', 'le']);

interface Query {
  panel: string;
  expr: string;
}

function queries(): Query[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
}

/** Metric names and label names a PromQL expression uses, and whether it parsed without error. */
function analyse(expr: string): { metrics: string[]; labels: string[]; errors: number } {
  // Grafana's interval variable is not PromQL: a duration stands in for it.
  const tree = parser.parse(expr.replaceAll('$__rate_interval', '5m'));
  const source = expr.replaceAll('$__rate_interval', '5m');
  const metrics: string[] = [];
  const labels: string[] = [];
  let errors = 0;
  const cursor = tree.cursor();
  do {
    const text = source.slice(cursor.from, cursor.to);
    if (cursor.type.isError) errors += 1;
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') metrics.push(text);
    if (cursor.name === 'LabelName') labels.push(text);
  } while (cursor.next());
  return { metrics, labels, errors };
}

let service: RunningService;
let scraped: Scrape;
const registry = new HubMetrics({ role: 'api', tools: [], processMetrics: false }).registry;

beforeAll(async () => {
  service = await startService({
    env: testEnv(makeTempDir(), { ...GENEROUS_RATE_LIMITS, SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_TOKEN: TOKEN }),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'root');
  const sessionId = (await request(`${api}/sessions`, jsonBody({}, { authorization: `Bearer ${token}` }))).body.data.id;
  await request(`${api}/sessions/${sessionId}/messages?sync=true`, jsonBody({ text: 'hello' }, { authorization: `Bearer ${token}` }));
  scraped = await scrape(`http://127.0.0.1:${service.port}/metrics`, TOKEN);
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

it('has panels, each with queries', () => {
  const panels = queries();
  expect(new Set(panels.map((query) => query.panel)).size).toBeGreaterThanOrEqual(20);
});

it.each(queries().map((query) => [query.panel, query.expr]))('%s: %s', (_panel, expr) => {
  const { metrics, labels, errors } = analyse(expr);
  expect(errors).toBe(0);
  expect(metrics.length).toBeGreaterThan(0);
  for (const metric of metrics) {
    const family = metric.replace(/_(bucket|sum|count)$/, '');
    const exported = scraped.families.has(metric) || (scraped.families.get(family)?.type === 'HISTOGRAM' && metric !== family);
    expect({ metric, exported }).toEqual({ metric, exported: true });
    const known = (registry.getSingleMetric(family) as unknown as { labelNames?: string[] } | undefined)?.labelNames ?? [];
    for (const label of labels)
      expect({ metric, label, known: SCRAPE_LABELS.has(label) || known.includes(label) || metrics.some((other) => labelsOf(other).includes(label)) }).toEqual({
        metric,
        label,
        known: true,
      });
  }
});

function labelsOf(metric: string): string[] {
  return (registry.getSingleMetric(metric.replace(/_(bucket|sum|count)$/, '')) as unknown as { labelNames?: string[] } | undefined)?.labelNames ?? [];
}
