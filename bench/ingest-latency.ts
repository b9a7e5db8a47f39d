/**
 * The REST ingest path's latency by answer (not a benchmark: `node dist/bench/ingest-latency.js
 * [embedded|scaled] [seconds]`). Drives `POST /sessions/{id}/messages` as the `ingest` benchmark
 * does (50 clients, 200 sessions, worker on), from this process over kept-alive connections, and
 * prints p50/p90/p99 of the accepted messages (202) and of the refused ones (409) apart, and how
 * many of the slowest 1 % were accepted ones: what the benchmark's single p99 is made of.
 */
import http from 'node:http';
import { INGEST_BENCH } from './ingest';
import { startHubProcess, type HubUnderTest } from './lib/hub-process';
import { elapsedMs, percentile } from './lib/latency';

type Latencies = Record<'202' | '409', number[]>;

function post(agent: http.Agent, hub: HubUnderTest, sessionId: string): Promise<{ status: number; ms: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${hub.base}/api/v1/sessions/${sessionId}/messages`,
      { method: 'POST', agent, headers: { ...hub.headers, 'content-type': 'application/json' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: elapsedMs(started) }));
      },
    );
    request.on('error', reject);
    request.end(INGEST_BENCH.body);
  });
}

async function drive(hub: HubUnderTest, sessions: readonly string[], seconds: number, latencies: Latencies | null): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: INGEST_BENCH.clients });
  const until = Date.now() + seconds * 1000;
  let next = 0;
  const client = async () => {
    while (Date.now() < until) {
      const { status, ms } = await post(agent, hub, sessions[next++ % sessions.length]!);
      if (status !== 202 && status !== 409) throw new Error(`answered ${status}`);
      latencies?.[String(status) as '202' | '409'].push(ms);
    }
  };
  try {
    await Promise.all(Array.from({ length: INGEST_BENCH.clients }, client));
  } finally {
    agent.destroy();
  }
}

const describe = (values: number[]) =>
  values.length === 0 ? 'no answers' : `${values.length} answers, ${[50, 90, 99].map((p) => `p${p} ${percentile(values, p).toFixed(1)} ms`).join(', ')}`;

async function main(): Promise<void> {
  const [variant = 'embedded', seconds = '5'] = process.argv.slice(2);
  if (variant !== 'embedded' && variant !== 'scaled') throw new Error('usage: ingest-latency [embedded|scaled] [seconds]');
  const hub = await startHubProcess({ variant });
  try {
    const { ids } = await hub.sessions(INGEST_BENCH.sessions);
    await drive(hub, ids, 2, null);
    const latencies: Latencies = { '202': [], '409': [] };
    await drive(hub, ids, Number(seconds), latencies);
    const all = [...latencies['202'], ...latencies['409']];
    const cut = percentile(all, 99);
    const slowest = all.filter((ms) => ms >= cut).length;
    process.stdout.write(
      [
        `${variant}: ${(all.length / Number(seconds)).toFixed(0)} answered/s, ${((latencies['202'].length / all.length) * 100).toFixed(1)} % accepted; all: p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${cut.toFixed(1)} ms`,
        `  202: ${describe(latencies['202'])}`,
        `  409: ${describe(latencies['409'])}`,
        `  of the slowest 1 % (${slowest}), accepted: ${latencies['202'].filter((ms) => ms >= cut).length}`,
      ].join('\n') + '\n',
    );
  } finally {
    await hub.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
