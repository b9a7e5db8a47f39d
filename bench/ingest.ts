import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import type { Server } from 'node:http';
import type { Benchmark, Metric } from './lib/benchmark';
import { benchEnv, registerUser, startBenchHub, type BenchHub } from './lib/hub';
import { SessionRows } from './lib/session-rows';

/**
 * `POST /api/v1/sessions/{id}/messages` accepted per second: JWT auth, rate limit (counted, never
 * refusing), validation, the store transaction (session marked busy + message inserted) and the
 * enqueue — on the default single-process hub (SQLite, in-process queue). The worker is off so the
 * figure is the ingest path alone; every request goes to a different session, so no request meets
 * TURN_IN_PROGRESS, and the sessions are freed between runs.
 *
 * Accepted means answered 202; anything else (409, 429, 5xx, errors, timeouts) fails the benchmark,
 * since a rate that includes refusals measures nothing (a pool too small for the rate shows as 409s).
 * The rate is 202s divided by the wall time of the run. Baseline: a bare express POST route parsing the same JSON body and
 * answering 202 with a JSON body, driven the same way for `duration` seconds.
 */
export const INGEST_BENCH = {
  connections: 10,
  /** Sessions created up front; a run never sends more requests than this. */
  sessionPool: 40_000,
  body: JSON.stringify({ text: 'Please summarise the incident report from last night.' }),
  goals: { ratio: 0.6, p99Ms: 25 },
};

interface Load {
  accepted: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function drive(options: autocannon.Options, label: string): Promise<Load> {
  const started = process.hrtime.bigint();
  const result = await autocannon(options);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const codes = result.statusCodeStats ?? {};
  const accepted = (codes as Record<string, { count?: number }>)['202']?.count ?? 0;
  const other = Object.entries(codes).filter(([code]) => code !== '202');
  if (result.errors > 0 || result.timeouts > 0 || other.length > 0) {
    throw new Error(`${label}: ${result.errors} errors, ${result.timeouts} timeouts, other answers ${JSON.stringify(Object.fromEntries(other))}`);
  }
  return { accepted, perSecond: accepted / seconds, p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
}

/** The hub: each request takes the next session of the pool (one message per session per run). */
async function driveHub(hub: BenchHub, token: string, sessions: readonly string[], durationS: number): Promise<Load> {
  let next = 0;
  let refusal = '';
  try {
    return await drive(
      {
        url: hub.api.replace(/\/api\/v1$/, ''),
        connections: INGEST_BENCH.connections,
        pipelining: 1,
        duration: durationS,
        requests: [
          {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: INGEST_BENCH.body,
            // Past the pool a session would be reused and answer 409: the run then fails, saying so.
            setupRequest: (request) => ({ ...request, path: `/api/v1/sessions/${sessions[next++ % sessions.length]}/messages` }),
            // Kept for the failure message: which answer, to which request.
            onResponse: (status, body) => {
              if (status !== 202 && !refusal) refusal = `${status} ${String(body).slice(0, 300)}`;
            },
          },
        ],
      },
      'hub',
    );
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; first refusal: ${refusal || 'none seen'}`);
  }
}

async function startBaseline(): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.post('/api/v1/sessions/:id/messages', (request, response) => {
    // About the size of the hub's answer (the stored message), so both send similar bytes.
    response.status(202).json({ data: { id: request.params.id, role: 'user', content: (request.body as { text?: string }).text ?? '', created_at: new Date().toISOString() } });
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/sessions/00000000-0000-4000-8000-000000000000/messages`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function driveBaseline(url: string, durationS: number): Promise<Load> {
  return drive(
    {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: INGEST_BENCH.body,
      connections: INGEST_BENCH.connections,
      pipelining: 1,
      duration: durationS,
    },
    'baseline',
  );
}

export const benchmark: Benchmark = {
  name: 'ingest',
  description: 'POST /sessions/{id}/messages answered 202 per second (auth, rate limit, store, enqueue) vs a bare express 202 route',
  async run({ runs, durationS, warmupS, log }) {
    const extra = { SERVICE_EMBEDDED_WORKER: 'false' };
    const hub = await startBenchHub({ env: extra });
    const baseline = await startBaseline();
    let rows: SessionRows | null = null;
    try {
      rows = await SessionRows.open(hub, benchEnv(hub.dataDir, extra));
      const user = await registerUser(hub.api);
      log(`creating ${INGEST_BENCH.sessionPool} sessions`);
      const sessions = await rows.create(user.id, INGEST_BENCH.sessionPool);

      log(`warm-up (${warmupS} s each)`);
      await driveBaseline(baseline.url, warmupS);
      await driveHub(hub, user.token, sessions, warmupS);
      const hubRuns: Load[] = [];
      const baseRuns: Load[] = [];
      for (let run = 0; run < runs; run += 1) {
        await rows.freeAll();
        const measured = await driveHub(hub, user.token, sessions, durationS);
        hubRuns.push(measured);
        const base = await driveBaseline(baseline.url, durationS);
        baseRuns.push(base);
        log(`run ${run + 1}/${runs}: hub ${measured.perSecond.toFixed(0)}/s (${measured.accepted} × 202, p99 ${measured.p99Ms} ms), baseline ${base.perSecond.toFixed(0)}/s (p99 ${base.p99Ms} ms)`);
      }
      const metrics: Metric[] = [
        {
          name: 'hub / baseline',
          unit: '×',
          samples: hubRuns.map((load, run) => load.perSecond / baseRuns[run]!.perSecond),
          goal: { text: `≥ ${INGEST_BENCH.goals.ratio}`, met: (median) => median >= INGEST_BENCH.goals.ratio },
        },
        {
          name: 'hub: p99',
          unit: 'ms',
          samples: hubRuns.map((load) => load.p99Ms),
          goal: { text: `≤ ${INGEST_BENCH.goals.p99Ms}`, met: (median) => median <= INGEST_BENCH.goals.p99Ms },
        },
        { name: 'hub: accepted (202)', unit: 'req/s', samples: hubRuns.map((load) => load.perSecond) },
        { name: 'baseline: answered 202', unit: 'req/s', samples: baseRuns.map((load) => load.perSecond) },
        { name: 'hub: p50', unit: 'ms', samples: hubRuns.map((load) => load.p50Ms) },
        { name: 'baseline: p99', unit: 'ms', samples: baseRuns.map((load) => load.p99Ms) },
        { name: 'hub: requests per run', unit: 'count', samples: hubRuns.map((load) => load.accepted) },
      ];
      return {
        metrics,
        setup: {
          connections: INGEST_BENCH.connections,
          pipelining: 1,
          body: INGEST_BENCH.body,
          hub: 'single process, SQLite, in-process queue, worker off, rate limit default 1000000/second (memory store)',
          sessions: `${INGEST_BENCH.sessionPool}, one request each per run, freed between runs`,
          accepted: 'HTTP 202 only; any other answer fails the benchmark',
          load_generator: 'autocannon in the same process as both servers (loopback)',
        },
      };
    } finally {
      await rows?.close();
      await baseline.close();
      await hub.stop();
    }
  },
};
