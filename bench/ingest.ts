import autocannon from 'autocannon';
import type { Benchmark, Metric } from './lib/benchmark';
import { startHubProcess, type HubUnderTest } from './lib/hub-process';

/**
 * The REST messages endpoint under load, as clients meet it: `clients` connections post messages
 * to a pool of sessions with the worker running, so some are accepted (202: stored, queued, the
 * turn runs) and some meet a running turn (409 TURN_IN_PROGRESS, refused without a database
 * statement). Both count as answered; anything else fails the run. Against a bare express route
 * parsing the same body (the baseline) and the floor program's route (store + queue, no auth).
 * Then `POST /sessions` created per second (same connections). Every server is a process of its
 * own; autocannon runs in this one.
 */
export const INGEST_BENCH = {
  clients: 50,
  /** Sessions the messages go to: about one in four finds its session free. */
  sessions: 200,
  body: JSON.stringify({ text: 'Please summarise the incident report from last night.' }),
  goals: { ratio: 0.5, p99Ms: 25, sessionsPerSecond: 1000 },
};

interface Load {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Share of answers that were 202. */
  accepted: number;
}

async function drive(options: autocannon.Options, label: string, answered: readonly number[]): Promise<Load> {
  const started = process.hrtime.bigint();
  let refusal = '';
  const result = await autocannon({
    ...options,
    requests: (options.requests ?? [{}]).map((entry) => ({
      ...entry,
      onResponse: (status: number, body: string) => {
        if (!answered.includes(status) && !refusal) refusal = `${status} ${String(body).slice(0, 300)}`;
      },
    })),
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const codes = (result.statusCodeStats ?? {}) as Record<string, { count?: number }>;
  const count = (code: number) => codes[String(code)]?.count ?? 0;
  const other = Object.keys(codes).filter((code) => !answered.includes(Number(code)));
  if (result.errors > 0 || result.timeouts > 0 || other.length > 0) {
    throw new Error(`${label}: ${result.errors} errors, ${result.timeouts} timeouts, other answers ${other.join(', ')}; first: ${refusal || 'none'}`);
  }
  const total = answered.reduce((sum, code) => sum + count(code), 0);
  return { perSecond: total / seconds, p50Ms: result.latency.p50, p99Ms: result.latency.p99, accepted: total === 0 ? 0 : count(answered[0]!) / total };
}

export function postMessages(target: HubUnderTest, sessions: readonly string[], durationS: number, label: string): Promise<Load> {
  let next = 0;
  return drive(
    {
      url: target.base,
      connections: INGEST_BENCH.clients,
      pipelining: 1,
      duration: durationS,
      requests: [
        {
          method: 'POST',
          headers: { ...target.headers, 'content-type': 'application/json' },
          body: INGEST_BENCH.body,
          setupRequest: (request) => ({ ...request, path: `/api/v1/sessions/${sessions[next++ % sessions.length]}/messages` }),
        },
      ],
    },
    label,
    [202, 409],
  );
}

function createSessions(target: HubUnderTest, durationS: number): Promise<Load> {
  return drive(
    {
      url: `${target.base}/api/v1/sessions`,
      connections: INGEST_BENCH.clients,
      pipelining: 1,
      duration: durationS,
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json' },
      body: '{}',
    },
    'sessions',
    [201],
  );
}

export const benchmark: Benchmark = {
  name: 'ingest',
  description: 'REST messages answered/s (202 + 409), 50 clients, worker on: embedded and scaled hub vs a bare express route and the floor; sessions created/s',
  async run({ runs, durationS, warmupS, log }) {
    const hubs: Record<'embedded' | 'scaled', Load[]> = { embedded: [], scaled: [] };
    const created: Record<'embedded' | 'scaled', number[]> = { embedded: [], scaled: [] };
    const baselines: Record<'express' | 'floor', Load[]> = { express: [], floor: [] };
    for (const variant of ['express', 'floor'] as const) {
      const target = await startHubProcess({ variant });
      try {
        const { ids } = await target.sessions(INGEST_BENCH.sessions);
        await postMessages(target, ids, warmupS, `${variant} warm-up`);
        for (let run = 0; run < runs; run += 1) {
          baselines[variant].push(await postMessages(target, ids, durationS, variant));
          log(`run ${run + 1}/${runs} ${variant}: ${baselines[variant][run]!.perSecond.toFixed(0)}/s, p99 ${baselines[variant][run]!.p99Ms} ms`);
        }
      } finally {
        await target.stop();
      }
    }
    for (const variant of ['embedded', 'scaled'] as const) {
      const target = await startHubProcess({ variant });
      try {
        const { ids } = await target.sessions(INGEST_BENCH.sessions);
        await postMessages(target, ids, warmupS, `${variant} warm-up`);
        for (let run = 0; run < runs; run += 1) {
          const load = await postMessages(target, ids, durationS, variant);
          hubs[variant].push(load);
          log(
            `run ${run + 1}/${runs} ${variant}: ${load.perSecond.toFixed(0)}/s (${(load.accepted * 100).toFixed(0)} % accepted), p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms`,
          );
        }
        await createSessions(target, warmupS);
        for (let run = 0; run < runs; run += 1) {
          created[variant].push((await createSessions(target, durationS)).perSecond);
          log(`run ${run + 1}/${runs} ${variant}: ${created[variant][run]!.toFixed(0)} sessions created/s`);
        }
      } finally {
        await target.stop();
      }
    }
    const { goals } = INGEST_BENCH;
    const metrics: Metric[] = [];
    for (const variant of ['embedded', 'scaled'] as const) {
      const loads = hubs[variant];
      metrics.push(
        {
          name: `${variant}: answered ÷ bare express`,
          unit: '×',
          samples: loads.map((load, run) => load.perSecond / baselines.express[run]!.perSecond),
          goal: { text: `≥ ${goals.ratio}`, met: (median) => median >= goals.ratio },
        },
        {
          name: `${variant}: p99`,
          unit: 'ms',
          samples: loads.map((load) => load.p99Ms),
          goal: { text: `≤ ${goals.p99Ms}`, met: (median) => median <= goals.p99Ms },
        },
        { name: `${variant}: answered (202 + 409)`, unit: 'req/s', samples: loads.map((load) => load.perSecond) },
        { name: `${variant}: answered ÷ floor`, unit: '×', samples: loads.map((load, run) => load.perSecond / baselines.floor[run]!.perSecond) },
        { name: `${variant}: p50`, unit: 'ms', samples: loads.map((load) => load.p50Ms) },
        { name: `${variant}: share accepted (202)`, unit: '%', samples: loads.map((load) => load.accepted * 100) },
        // The turns this load starts: a hub that accepts sooner frees sessions sooner and runs more of them beside the requests.
        { name: `${variant}: accepted (turns started)`, unit: '/s', samples: loads.map((load) => load.perSecond * load.accepted) },
        {
          name: `${variant}: sessions created`,
          unit: '/s',
          samples: created[variant],
          goal: { text: `≥ ${goals.sessionsPerSecond}`, met: (median) => median >= goals.sessionsPerSecond },
        },
      );
    }
    metrics.push(
      { name: 'bare express: answered 202', unit: 'req/s', samples: baselines.express.map((load) => load.perSecond) },
      { name: 'bare express: p99', unit: 'ms', samples: baselines.express.map((load) => load.p99Ms) },
      { name: 'floor: answered (202 + 409)', unit: 'req/s', samples: baselines.floor.map((load) => load.perSecond) },
      { name: 'floor: p99', unit: 'ms', samples: baselines.floor.map((load) => load.p99Ms) },
    );
    return {
      metrics,
      setup: {
        clients: INGEST_BENCH.clients,
        sessions: INGEST_BENCH.sessions,
        body: INGEST_BENCH.body,
        hub: 'a process of its own; embedded: SQLite, in-process queue, embedded worker; scaled: API process + worker process, PostgreSQL, Redis; rate limit 1000000/second',
        answered: '202 and 409 TURN_IN_PROGRESS; any other answer fails the run',
        load_generator: 'autocannon in the bench process (loopback)',
      },
    };
  },
};
