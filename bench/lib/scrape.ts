/**
 * A histogram's `_sum` and `_count` in a Prometheus text exposition, over every series whose labels
 * include `labels` (the benchmark's own small reader; the test suite checks the format with a
 * real parser).
 */
export function histogramTotals(text: string, name: string, labels: Record<string, string> = {}): { sum: number; count: number } {
  const totals = { sum: 0, count: 0 };
  for (const line of text.split('\n')) {
    const match = /^([a-z_:][a-z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/i.exec(line);
    if (!match || (match[1] !== `${name}_sum` && match[1] !== `${name}_count`)) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-z_][a-z0-9_]*)="((?:[^"\\]|\\.)*)"/gi)].map((pair) => [pair[1], pair[2]]));
    if (!Object.entries(labels).every(([key, value]) => found[key] === value)) continue;
    if (match[1].endsWith('_sum')) totals.sum += Number(match[3]);
    else totals.count += Number(match[3]);
  }
  return totals;
}

/** Mean in milliseconds of what a histogram observed between two readings (`histogramTotals` before and after). */
export function meanMs(before: { sum: number; count: number }, after: { sum: number; count: number }): number {
  const count = after.count - before.count;
  if (count <= 0) throw new Error('no observations in the run');
  return ((after.sum - before.sum) / count) * 1000;
}

/** Every process's exposition, concatenated (their series differ by `role`). */
export async function scrapeAll(urls: readonly string[], token: string): Promise<string> {
  const texts = await Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      if (!response.ok) throw new Error(`scraping ${url}: ${response.status}`);
      return response.text();
    }),
  );
  return texts.join('\n');
}
