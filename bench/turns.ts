import path from 'node:path';
import { Queue, Worker } from 'bullmq';
import { QueryTypes } from 'sequelize';
import type { Benchmark, Metric } from './lib/benchmark';
import { spawnNode, type Child } from './lib/child';
import { benchEnv, startBenchHub, registerUser, postJson, type BenchHub } from './lib/hub';
import { SessionRows } from './lib/session-rows';
import { BENCH_REDIS_URL, createPostgresDatabase, deleteRedisKeys, uniquePrefix, type ThrowAwayDatabase } from './lib/stores';
import { TURN_QUEUE_NAME } from '../src/queue/redis-turn-queue';

/**
 * Complete turns per second (a 20-token answer streamed, stored, `done` emitted) with 1 and 2
 * worker processes, scaled out: PostgreSQL and Redis (BullMQ, Streams), worker processes spawned
 * like `npm run worker` (bench/lib/worker-entry.ts: startWorkerProcess with a 20-token model).
 * Each run: the queue is paused, `backlog` messages are accepted through the REST API (one per
 * session) by an API process with no worker (this process), the queue resumes, and the rate is the
 * backlog over the time until every reply is stored. Baseline: raw BullMQ no-op jobs through one
 * Worker of the same concurrency in this process, the same way (added first, then drained).
 */
export const TURNS_BENCH = {
  answerTokens: 20,
  /** Turns per run at least; otherwise about `duration` seconds' worth at the warm-up's rate. */
  minimumBacklog: 300,
  workerConcurrency: 8,
  drainTimeoutMs: 120_000,
  goals: { twoWorkersPerSecond: 500, scaling: 1.7 },
};

interface Stack {
  hub: BenchHub;
  rows: SessionRows;
  token: string;
  userId: string;
  queue: Queue;
  env: Record<string, string>;
}

/** Accepts `count` messages through REST, 16 at a time, each to a fresh session. */
async function fillBacklog(stack: Stack, count: number): Promise<void> {
  const sessions = await stack.rows.create(stack.userId, count);
  let next = 0;
  const lane = async () => {
    while (next < sessions.length) {
      const id = sessions[next++]!;
      await postJson(`${stack.hub.api}/sessions/${id}/messages`, { text: 'Give me a short answer.' }, 202, stack.token);
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
}

async function replies(stack: Stack): Promise<number> {
  const [row] = await stack.rows.sequelize.query<{ count: string }>("SELECT count(*) AS count FROM messages WHERE role = 'assistant'", {
    type: QueryTypes.SELECT,
  });
  return Number(row!.count);
}

/** One measured drain: pause, accept `backlog` turns, resume, wait for every reply. Turns per second. */
async function drainTurns(stack: Stack, backlog: number): Promise<number> {
  await stack.queue.pause();
  const before = await replies(stack);
  await fillBacklog(stack, backlog);
  const started = process.hrtime.bigint();
  await stack.queue.resume();
  const deadline = Date.now() + TURNS_BENCH.drainTimeoutMs;
  while ((await replies(stack)) < before + backlog) {
    if (Date.now() > deadline) throw new Error(`turns: ${(await replies(stack)) - before} of ${backlog} replies after ${TURNS_BENCH.drainTimeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return backlog / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** Raw BullMQ: `count` no-op jobs added in bulk, then drained by one Worker. Jobs per second. */
async function drainNoOps(prefix: string, count: number, run: number): Promise<number> {
  const connection = { url: BENCH_REDIS_URL, maxRetriesPerRequest: null };
  const name = `noop-${run}`;
  const queue = new Queue(name, { connection, prefix });
  try {
    await queue.addBulk(Array.from({ length: count }, (_, index) => ({ name: 'noop', data: { index }, opts: { removeOnComplete: { count: 1_000 } } })));
    let done = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const started = process.hrtime.bigint();
    const worker = new Worker(name, async () => undefined, { connection, prefix, concurrency: TURNS_BENCH.workerConcurrency });
    worker.on('completed', () => {
      done += 1;
      if (done === count) finish();
    });
    await finished;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await worker.close();
    return count / seconds;
  } finally {
    await queue.close();
  }
}

export const benchmark: Benchmark = {
  name: 'turns',
  description: 'complete 20-token turns/s with 1 and 2 worker processes (Redis + PostgreSQL) vs raw BullMQ no-op jobs/s',
  async run({ runs, durationS, warmupS, log }) {
    const prefix = uniquePrefix('turns');
    let database: ThrowAwayDatabase | null = null;
    let stack: Stack | null = null;
    const workers: Child[] = [];
    try {
      database = await createPostgresDatabase();
      const extra = { SERVICE_DATABASE_URL: database.url, SERVICE_REDIS_URL: BENCH_REDIS_URL, SERVICE_REDIS_PREFIX: prefix, SERVICE_EMBEDDED_WORKER: 'false' };
      const hub = await startBenchHub({ env: extra });
      const env = benchEnv(hub.dataDir, extra);
      const rows = await SessionRows.open(hub, env);
      const user = await registerUser(hub.api);
      const queue = new Queue(TURN_QUEUE_NAME, { connection: { url: BENCH_REDIS_URL, maxRetriesPerRequest: null }, prefix: `${prefix}:bull` });
      stack = { hub, rows, token: user.token, userId: user.id, queue, env };

      const rates: Record<'one' | 'two', number[]> = { one: [], two: [] };
      for (const [variant, count] of [
        ['one', 1],
        ['two', 2],
      ] as const) {
        while (workers.length < count) {
          const worker = spawnNode(
            path.join(__dirname, 'lib', 'worker-entry.js'),
            { ...env, SERVICE_LOG_LEVEL: 'info', BENCH_ANSWER_TOKENS: String(TURNS_BENCH.answerTokens) },
            hub.dataDir,
          );
          workers.push(worker);
          await worker.waitFor('Switchboard worker is ready');
        }
        log(`warm-up ${count} worker(s)`);
        const warm = await drainTurns(stack, Math.max(TURNS_BENCH.minimumBacklog, 100 * warmupS));
        const backlog = Math.max(TURNS_BENCH.minimumBacklog, Math.round(warm * durationS));
        for (let run = 0; run < runs; run += 1) {
          rates[variant].push(await drainTurns(stack, backlog));
          log(`run ${run + 1}/${runs} ${count} worker(s): ${rates[variant][run]!.toFixed(0)} turns/s (backlog ${backlog})`);
        }
      }
      const noOps: number[] = [];
      const noOpCount = 5_000;
      await drainNoOps(`${prefix}:raw`, noOpCount, -1);
      for (let run = 0; run < runs; run += 1) {
        noOps.push(await drainNoOps(`${prefix}:raw`, noOpCount, run));
        log(`run ${run + 1}/${runs} raw BullMQ: ${noOps[run]!.toFixed(0)} no-op jobs/s`);
      }
      const metrics: Metric[] = [
        {
          name: '2 workers: turns',
          unit: 'turns/s',
          samples: rates.two,
          goal: { text: `≥ ${TURNS_BENCH.goals.twoWorkersPerSecond}`, met: (median) => median >= TURNS_BENCH.goals.twoWorkersPerSecond },
        },
        {
          name: '2 workers / 1 worker',
          unit: '×',
          samples: rates.two.map((rate, run) => rate / rates.one[run]!),
          goal: { text: `≥ ${TURNS_BENCH.goals.scaling}`, met: (median) => median >= TURNS_BENCH.goals.scaling },
        },
        { name: '1 worker: turns', unit: 'turns/s', samples: rates.one },
        { name: 'raw BullMQ no-op jobs (1 worker)', unit: 'jobs/s', samples: noOps },
        { name: '2 workers / raw BullMQ', unit: '×', samples: rates.two.map((rate, run) => rate / noOps[run]!) },
      ];
      return {
        metrics,
        setup: {
          answer_tokens: TURNS_BENCH.answerTokens,
          worker_concurrency: TURNS_BENCH.workerConcurrency,
          database: 'PostgreSQL (throw-away database)',
          redis: BENCH_REDIS_URL,
          api: 'this process, worker off; backlog accepted through REST while the queue is paused',
          raw_bullmq: `${noOpCount} jobs added in bulk, then one Worker, concurrency ${TURNS_BENCH.workerConcurrency}`,
        },
      };
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
      if (stack) {
        await stack.queue.close();
        await stack.rows.close();
        await stack.hub.stop();
      }
      await database?.drop();
      await deleteRedisKeys(prefix);
    }
  },
};
