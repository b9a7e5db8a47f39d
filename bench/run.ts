/**
 * Benchmark runner: `npm run bench` runs every benchmark in bench/, `npm run bench -- limiter` only
 * the named ones. Options: `--runs=5 --duration=5 --warmup=2` (seconds). Each benchmark prints a
 * table (median, min, max, spread of its runs, and its goals) and writes JSON to
 * bench/results/<name>-<timestamp>.json. Exit status is non-zero only when a benchmark could not
 * measure (threw); a missed goal is reported, not failed.
 *
 * Adding a benchmark: create bench/<name>.ts exporting `benchmark: Benchmark` (see lib/benchmark.ts).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Benchmark, BenchmarkOptions } from './lib/benchmark';
import { machineFacts, renderTable, writeResult } from './lib/report';

export const RUN_DEFAULTS = { runs: 5, durationS: 5, warmupS: 2 };

const BENCH_DIR = __dirname; // dist/bench when compiled
const RESULTS_DIR = path.resolve(__dirname, '../../bench/results');
const NOT_BENCHMARKS = new Set(['run', 'profile', 'socket-heap', 'ingest-profile', 'ingest-latency', 'black-box']);
/** Benchmarks of issue 9 whose subject does not exist yet: listed, so their absence is explicit. */
const PENDING: Record<string, string> = {};

function availableBenchmarks(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((file) => file.endsWith('.js'))
    .map((file) => file.slice(0, -'.js'.length))
    .filter((name) => !NOT_BENCHMARKS.has(name))
    .sort();
}

function parseArguments(argv: string[]): { names: string[]; options: Omit<BenchmarkOptions, 'log'> } {
  const names: string[] = [];
  const options = { ...RUN_DEFAULTS };
  for (const argument of argv) {
    const flag = /^--(runs|duration|warmup)=(\d+(?:\.\d+)?)$/.exec(argument);
    if (flag) {
      const value = Number(flag[2]);
      if (flag[1] === 'runs') options.runs = Math.max(1, Math.round(value));
      if (flag[1] === 'duration') options.durationS = value;
      if (flag[1] === 'warmup') options.warmupS = value;
    } else if (argument.startsWith('--')) {
      throw new Error(`unknown option ${argument} (known: --runs=N --duration=S --warmup=S)`);
    } else {
      names.push(argument);
    }
  }
  return { names, options };
}

async function main(): Promise<number> {
  const { names, options } = parseArguments(process.argv.slice(2));
  const available = availableBenchmarks();
  const unknown = names.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    const pending = Object.entries(PENDING).map(([name, why]) => `${name} (${why})`);
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${available.join(', ')}; pending: ${pending.join(', ')}\n`);
    return 2;
  }
  const selected = names.length > 0 ? names : available;
  const machine = machineFacts();
  process.stdout.write(`Node ${machine.node}, ${machine.cores} cores (${machine.cpu_model}), ${machine.platform}\n`);
  process.stdout.write(`${options.runs} runs × ${options.durationS} s after ${options.warmupS} s warm-up per variant\n`);
  for (const [name, why] of Object.entries(PENDING)) process.stdout.write(`${name}: ${why}\n`);
  process.stdout.write('\n');

  let failed = 0;
  for (const name of selected) {
    const module = (await import(path.join(BENCH_DIR, `${name}.js`))) as { benchmark?: Benchmark };
    const benchmark = module.benchmark;
    if (!benchmark) {
      process.stderr.write(`bench/${name}: exports no \`benchmark\`\n`);
      failed += 1;
      continue;
    }
    const startedAt = new Date();
    try {
      const result = await benchmark.run({ ...options, log: (message) => process.stderr.write(`  [${name}] ${message}\n`) });
      process.stdout.write(`${renderTable(benchmark, result)}\n`);
      process.stdout.write(`→ ${path.relative(process.cwd(), writeResult(RESULTS_DIR, benchmark, result, options, startedAt))}\n\n`);
    } catch (error) {
      failed += 1;
      process.stderr.write(`bench/${name} failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
