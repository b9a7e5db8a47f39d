import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { summarise, type Benchmark, type BenchmarkOptions, type BenchmarkResult } from './benchmark';

/** Facts about the machine that make figures comparable (or not) between runs. */
export function machineFacts() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cores: cpus.length,
    cpu_model: cpus[0]?.model ?? 'unknown',
    total_memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  };
}

export function renderTable(benchmark: Benchmark, result: BenchmarkResult): string {
  const header = ['metric', 'median', 'min', 'max', 'spread', 'goal'];
  const rows = result.metrics.map((metric) => {
    const summary = summarise(metric.samples);
    const goal = metric.goal ? `${metric.goal.text} ${metric.goal.met(summary.median) ? '(met)' : '(NOT met)'}` : '';
    return [
      `${metric.name} (${metric.unit})`,
      format(summary.median),
      format(summary.min),
      format(summary.max),
      Number.isNaN(summary.spread) ? '-' : `${(summary.spread * 100).toFixed(0)}%`,
      goal,
    ];
  });
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [`${benchmark.name}: ${benchmark.description}`, line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Writes `bench/results/<name>-<timestamp>.json` (git-ignored) and returns its path. */
export function writeResult(
  resultsDir: string,
  benchmark: Benchmark,
  result: BenchmarkResult,
  options: Omit<BenchmarkOptions, 'log'>,
  startedAt: Date,
): string {
  mkdirSync(resultsDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const file = path.join(resultsDir, `${benchmark.name}-${stamp}.json`);
  const document = {
    benchmark: benchmark.name,
    description: benchmark.description,
    started_at: startedAt.toISOString(),
    machine: machineFacts(),
    options,
    setup: result.setup,
    metrics: result.metrics.map((metric) => {
      const summary = summarise(metric.samples);
      return {
        name: metric.name,
        unit: metric.unit,
        ...summary,
        samples: metric.samples,
        goal: metric.goal ? { text: metric.goal.text, met: metric.goal.met(summary.median) } : null,
      };
    }),
  };
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  return file;
}

function format(value: number): string {
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(3);
}
