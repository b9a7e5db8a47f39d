import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cell, code, generatedBanner, table } from './markdown';
import { repoRoot } from './repo';
import { stringProperties } from './ts-docs';

/**
 * Benchmark figures on the site come from docs/reference/bench-latest.json, a committed file:
 * bench/results/ is git-ignored (every run writes one file per benchmark), so the site cannot read
 * it on a fresh clone. `npm run docs:bench` copies the newest result of each benchmark from
 * bench/results/ into that file (keeping the entries of benchmarks not run since), without the raw
 * samples. Commit it after a benchmark run you want to publish.
 */
export const BENCH_LATEST = 'docs/reference/bench-latest.json';

export interface BenchMetric {
  name: string;
  unit: string;
  median: number;
  min: number;
  max: number;
  spread: number;
  goal: { text: string; met: boolean } | null;
}

export interface BenchResult {
  benchmark: string;
  description: string;
  started_at: string;
  machine: { node: string; platform: string; cores: number; cpu_model: string; total_memory_gib: number };
  options: { runs: number; durationS: number; warmupS: number };
  setup: Record<string, unknown>;
  metrics: BenchMetric[];
}

export interface BenchLatest {
  results: Record<string, BenchResult>;
}

/** The benchmarks of bench/ (one file each, `export const benchmark = {name, description, …}`), read without running them. */
export function benchmarkCatalogue(root = repoRoot()): { name: string; description: string }[] {
  const dir = path.join(root, 'bench');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
    .sort()
    .flatMap((file) => {
      const properties = stringProperties(path.join(dir, file), 'benchmark');
      const name = properties.get('name');
      return name ? [{ name, description: properties.get('description') ?? '' }] : [];
    });
}

export function readBenchLatest(root = repoRoot()): BenchLatest {
  const file = path.join(root, BENCH_LATEST);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchLatest) : { results: {} };
}

/** Folds the newest bench/results/<name>-*.json of each benchmark into bench-latest.json. Returns the benchmarks updated. */
export function collectBenchResults(root = repoRoot()): string[] {
  const resultsDir = path.join(root, 'bench/results');
  const latest = readBenchLatest(root);
  const updated: string[] = [];
  const files = existsSync(resultsDir) ? readdirSync(resultsDir).filter((file) => file.endsWith('.json')) : [];
  for (const file of files) {
    const result = JSON.parse(readFileSync(path.join(resultsDir, file), 'utf8')) as Omit<BenchResult, 'metrics'> & {
      metrics: (BenchMetric & { samples?: number[] })[];
    };
    const known = latest.results[result.benchmark];
    if (known && known.started_at >= result.started_at) continue;
    latest.results[result.benchmark] = {
      ...result,
      metrics: result.metrics.map(({ samples: _samples, ...metric }) => metric),
    };
    updated.push(result.benchmark);
  }
  const sorted = Object.fromEntries(Object.entries(latest.results).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(path.join(root, BENCH_LATEST), `${JSON.stringify({ results: sorted }, null, 2)}\n`);
  return [...new Set(updated)];
}

function figure(value: number): string {
  if (!Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  const digits = abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function benchReferencePage(root = repoRoot()): string {
  const catalogue = benchmarkCatalogue(root);
  const latest = readBenchLatest(root);
  const parts = [
    generatedBanner(`${BENCH_LATEST} (written by \`npm run docs:bench\` from bench/results/) and the benchmarks in bench/`),
    '# Benchmark figures',
    '',
    'The latest recorded run of each benchmark, with the machine it ran on and when. `npm run bench`',
    'measures (see [Performance](../performance.md) for what each benchmark means and what limits the',
    'figures); `npm run docs:bench` copies the newest results into the site. Each figure is the median',
    'of the runs, with the min–max range; goals are reported, not asserted.',
    '',
    table(
      ['Benchmark', 'Measures', 'Latest run'],
      catalogue.map((entry) => {
        const result = latest.results[entry.name];
        return [`[${code(entry.name)}](#${entry.name})`, cell(entry.description), result ? result.started_at.slice(0, 10) : 'not recorded'];
      }),
    ),
    '',
  ];
  for (const entry of catalogue) {
    const result = latest.results[entry.name];
    parts.push(`## ${entry.name}`, '', cell(entry.description), '');
    if (!result) {
      parts.push(`No recorded result yet: run \`npm run bench -- ${entry.name}\`, then \`npm run docs:bench\`.`, '');
      continue;
    }
    const { machine, options } = result;
    parts.push(
      `Run ${result.started_at.replace('T', ' ').slice(0, 16)} UTC on ${machine.cores} cores (${cell(machine.cpu_model)}), ${machine.total_memory_gib} GiB, ${machine.platform}, Node ${machine.node}; ` +
        `${options.runs} run${options.runs === 1 ? '' : 's'} of ${options.durationS} s after ${options.warmupS} s of warm-up.`,
      '',
    );
    const setup = Object.entries(result.setup ?? {});
    if (setup.length > 0) parts.push(`Setup: ${setup.map(([key, value]) => `${key.replace(/_/g, ' ')}: ${cell(String(value))}`).join('; ')}.`, '');
    parts.push(
      table(
        ['Metric', 'Median', 'Range', 'Goal'],
        result.metrics.map((metric) => [
          cell(metric.name),
          `${figure(metric.median)} ${cell(metric.unit)}`,
          metric.min === metric.max ? '—' : `${figure(metric.min)}–${figure(metric.max)}`,
          metric.goal ? `${cell(metric.goal.text)}: ${metric.goal.met ? 'met' : '**not met**'}` : '',
        ]),
      ),
      '',
    );
  }
  return parts.join('\n');
}
