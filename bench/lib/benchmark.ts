/**
 * The contract every benchmark file implements. A benchmark file in bench/ (e.g. `limiter.ts`)
 * exports `benchmark`; `npm run bench -- <name>` runs it, `npm run bench` runs them all. Goals are
 * reported next to the figures, never asserted: a benchmark fails only when it could not measure.
 */
export interface BenchmarkOptions {
  /** Measured runs per variant; the report gives their median and spread. */
  runs: number;
  /** Seconds per measured run. */
  durationS: number;
  /** Seconds of warm-up per variant before measuring (JIT, connection pools, caches). */
  warmupS: number;
  /** Progress lines for the terminal (stderr). */
  log(message: string): void;
}

export interface Metric {
  name: string;
  unit: string;
  /** One value per measured run. */
  samples: number[];
  /** What we aim for, in words, e.g. "≤ 0.05 ms"; `met` says whether the median meets it. */
  goal?: { text: string; met: (median: number) => boolean };
}

export interface BenchmarkResult {
  metrics: Metric[];
  /** Anything needed to compare runs (load shape, limits, store URLs without credentials). */
  setup: Record<string, unknown>;
}

export interface Benchmark {
  name: string;
  description: string;
  run(options: BenchmarkOptions): Promise<BenchmarkResult>;
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  /** (max - min) / |median|, as a fraction; NaN when the median is 0. */
  spread: number;
}

export function summarise(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  const min = sorted[0]!;
  const max = sorted[sorted.length - 1]!;
  return { median, min, max, spread: median === 0 ? Number.NaN : (max - min) / Math.abs(median) };
}
