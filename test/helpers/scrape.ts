import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One family of the Prometheus text exposition, as parse-prometheus-text-format reads it. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: { labels?: Record<string, string>; value?: string; count?: string; sum?: string; buckets?: Record<string, string> }[];
}

/**
 * A scrape, parsed with a Prometheus text-format parser (not our own code), by family name.
 * parse-prometheus-text-format keeps only the buckets of a histogram that has labels (its
 * flattening assumes one unlabelled series), so each histogram's `_count` and `_sum` series are
 * parsed once more as counter families of their own: `<name>_count`, `<name>_sum`.
 */
export class Scrape {
  readonly families: Map<string, MetricFamily>;

  constructor(readonly text: string) {
    const families = parsePrometheusTextFormat(text) as MetricFamily[];
    const histograms = families.filter((family) => family.type === 'HISTOGRAM').map((family) => family.name);
    const series = histograms.flatMap((name) =>
      ['count', 'sum'].flatMap((part) => {
        const lines = text.split('\n').filter((line) => line.startsWith(`${name}_${part}{`) || line.startsWith(`${name}_${part} `));
        return lines.length > 0 ? [`# TYPE ${name}_${part} counter`, ...lines] : [];
      }),
    );
    const parts = series.length > 0 ? (parsePrometheusTextFormat(`${series.join('\n')}\n`) as MetricFamily[]) : [];
    this.families = new Map([...families, ...parts].map((family) => [family.name, family]));
  }

  family(name: string): MetricFamily {
    const family = this.families.get(name);
    if (!family) throw new Error(`no metric ${name} in the scrape; have: ${[...this.families.keys()].join(', ')}`);
    return family;
  }

  /** The sum of a counter's or gauge's series whose labels include `labels` (a histogram: its observations). */
  value(name: string, labels: Record<string, string> = {}): number {
    const family = this.family(name);
    // A histogram without observations has no series yet: 0.
    if (family.type === 'HISTOGRAM') return this.families.has(`${name}_count`) ? this.value(`${name}_count`, labels) : 0;
    return family.metrics
      .filter((series) => Object.entries(labels).every(([key, value]) => series.labels?.[key] === value))
      .reduce((sum, series) => sum + Number(series.value ?? 0), 0);
  }

  /** The label values a family's series carry for `label`. */
  labelValues(name: string, label: string): string[] {
    return [
      ...new Set(
        this.family(name)
          .metrics.map((series) => series.labels?.[label])
          .filter((value): value is string => value !== undefined),
      ),
    ].sort();
  }
}

/** GETs a /metrics URL with the token (if any) and parses what it answers. */
export async function scrape(url: string, token?: string): Promise<Scrape> {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status !== 200) throw new Error(`scrape of ${url} answered ${response.status}: ${await response.text()}`);
  return new Scrape(await response.text());
}
