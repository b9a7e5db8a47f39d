/** A point of a time series: seconds since the start, and a value. */
export interface Sample {
  t: number;
  value: number;
}

/** Least-squares line through the samples: slope (value per second) and intercept. */
export function fitLine(samples: Sample[]): { slope: number; intercept: number } {
  const n = samples.length;
  if (n < 2) return { slope: 0, intercept: samples[0]?.value ?? 0 };
  const meanT = samples.reduce((sum, sample) => sum + sample.t, 0) / n;
  const meanV = samples.reduce((sum, sample) => sum + sample.value, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const sample of samples) {
    covariance += (sample.t - meanT) * (sample.value - meanV);
    variance += (sample.t - meanT) ** 2;
  }
  const slope = variance === 0 ? 0 : covariance / variance;
  return { slope, intercept: meanV - slope * meanT };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The soak's definition of "no RSS growth trend" (docs/guides/reliability.md, Soak): over the steady
 * part of the run (after the first quarter, which is warm-up: JIT, caches, pools, heap sizing), the
 * least-squares line through the RSS samples may rise by at most 10% of the median RSS across that
 * window, plus 8 MB for garbage-collector sawtooth. A leak of 1 KB per turn at the full run's rate
 * projects well past it; GC noise does not.
 */
export function rssTrend(samples: Sample[]): {
  steady: Sample[];
  slopeBytesPerMinute: number;
  growthBytes: number;
  allowedBytes: number;
  medianBytes: number;
  ok: boolean;
} {
  const end = samples.at(-1)?.t ?? 0;
  const steady = samples.filter((sample) => sample.t >= end / 4);
  const { slope } = fitLine(steady);
  const window = (steady.at(-1)?.t ?? 0) - (steady[0]?.t ?? 0);
  const medianBytes = median(steady.map((sample) => sample.value));
  const growthBytes = slope * window;
  const allowedBytes = 0.1 * medianBytes + 8 * 1024 * 1024;
  return { steady, slopeBytesPerMinute: slope * 60, growthBytes, allowedBytes, medianBytes, ok: growthBytes <= allowedBytes };
}
