/** The package ships no types: it parses the Prometheus text exposition into metric families. */
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
