import autocannon from 'autocannon';

/** Load shape for HTTP benchmarks: a few keep-alive connections, no pipelining (like real clients). */
export const HTTP_LOAD_DEFAULTS = {
  connections: 10,
  pipelining: 1,
};

export interface LoadResult {
  requestsPerSecond: number;
  latencyMeanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
}

/**
 * Drives `url` with autocannon for `durationS` seconds. Throws (the benchmark failed) on any
 * connection error, timeout or non-2xx answer: a figure measured on failing requests means nothing.
 */
export async function loadTest(url: string, durationS: number, connections = HTTP_LOAD_DEFAULTS.connections): Promise<LoadResult> {
  const result = await autocannon({ url, connections, pipelining: HTTP_LOAD_DEFAULTS.pipelining, duration: durationS });
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`);
  }
  return {
    requestsPerSecond: result.requests.average,
    latencyMeanMs: result.latency.mean,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
  };
}
