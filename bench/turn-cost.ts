import { randomUUID } from 'node:crypto';
import type { Benchmark, Metric } from './lib/benchmark';
import type { BenchHub } from './lib/hub';
import { benchModels, cpuDelta, hubLabel, startHubProcess, type BenchModel, type HubUnderTest } from './lib/hub-process';
import { percentile } from './lib/latency';
import { SessionRows } from './lib/session-rows';
import { driveTurns, type TurnRun } from './lib/turn-driver';

/**
 * What a turn costs at saturation: complete 20-token turns per second with `sockets` sessions each
 * sending its next message as soon as `done` arrives, and the CPU every serving process used per
 * turn (read from /proc, so the figure includes everything: HTTP, sockets, queue, database driver,
 * and for the scaled hub its PostgreSQL backends and the Redis server). Three systems, one at a time:
 * the floor program (bench/lib/floor-entry.ts), the embedded hub (one process, SQLite, in-process
 * queue) and the scaled hub (an API process, a worker process, PostgreSQL, Redis). Then the embedded
 * hub's CPU per turn on sessions with `historyMessages` messages of history against fresh sessions,
 * with the default context window (8192 tokens): a long session's prompt holds its newest turns and
 * the rolling summary of the rest, so what a turn costs must not grow with the stored history.
 * Each run uses fresh sessions. The embedded and scaled hubs run with the in-process model (the
 * floor of the hub's own cost) and with the real `openai` and `anthropic` providers over HTTP
 * against the fake vendor server in a process of its own (BENCH_MODELS picks; the model server's CPU
 * is not counted: a deployment's model runs elsewhere).
 */
export const TURN_COST_BENCH = {
  sockets: 64,
  answerTokens: 20,
  historyMessages: 500,
  historySockets: 16,
  historyTurnsPerSocket: 20,
  goals: {
    embedded: { turnsPerSecond: 300, cpuMsPerTurn: 4 },
    scaled: { turnsPerSecond: 200, cpuMsPerTurn: 8 },
    historyRatio: 1.2,
    /** Real provider path (issue 34): turns/s ≥ 0.6× the same hub with the in-process model; CPU per turn, embedded. */
    realPath: { turnsRatio: 0.6, embeddedCpuMsPerTurn: 1.5 },
  },
};

type Variant = 'floor' | 'embedded' | 'scaled';
type RealModel = Exclude<BenchModel, 'in-process'>;

interface Measured {
  rate: number;
  cpuMs: Record<string, number>;
  p50: number;
  p99: number;
}

export async function measure(hub: HubUnderTest, sockets: number, turnsPerSocket: number): Promise<Measured> {
  const { urls } = await hub.sessions(sockets);
  const before = await hub.cpu();
  const run: TurnRun = await driveTurns(urls, hub.headers, turnsPerSocket);
  const delta = cpuDelta(before, await hub.cpu());
  const cpuMs = Object.fromEntries(Object.entries(delta).map(([part, seconds]) => [part, (seconds * 1000) / run.turns]));
  return { rate: run.turns / run.seconds, cpuMs, p50: percentile(run.turnMs, 50), p99: percentile(run.turnMs, 99) };
}

/** Inserts `count` alternating user/assistant messages into each session, as earlier turns would have. */
export async function fillHistory(hub: HubUnderTest, sessionIds: readonly string[], count: number): Promise<void> {
  const rows = await SessionRows.open({ dataDir: hub.dataDir } as BenchHub, hub.env);
  try {
    await rows.fillHistory(sessionIds, count);
  } finally {
    await rows.close();
  }
}

/** A real-provider hub against the same hub with the in-process model, run by run (same-run baselines). */
function realPathMetrics(variant: 'embedded' | 'scaled', model: RealModel, real: Measured[], inProcess: Measured[]): Metric[] {
  const { realPath } = TURN_COST_BENCH.goals;
  const label = hubLabel(variant, model);
  const embedded = variant === 'embedded';
  return [
    { name: `${label}: turns at saturation`, unit: 'turns/s', samples: real.map((m) => m.rate) },
    {
      name: `${label}: turns/s ÷ in-process model`,
      unit: '×',
      samples: real.map((m, run) => m.rate / inProcess[run]!.rate),
      ...(embedded ? { goal: { text: `≥ ${realPath.turnsRatio}`, met: (median: number) => median >= realPath.turnsRatio } } : {}),
    },
    {
      name: `${label}: CPU per turn, all processes`,
      unit: 'ms',
      samples: real.map((m) => m.cpuMs.total!),
      ...(embedded ? { goal: { text: `≤ ${realPath.embeddedCpuMsPerTurn}`, met: (median: number) => median <= realPath.embeddedCpuMsPerTurn } } : {}),
    },
    { name: `${label}: CPU per turn ÷ in-process model`, unit: '×', samples: real.map((m, run) => m.cpuMs.total! / inProcess[run]!.cpuMs.total!) },
    { name: `${label}: turn p50 at saturation`, unit: 'ms', samples: real.map((m) => m.p50) },
  ];
}

export const benchmark: Benchmark = {
  name: 'turn-cost',
  description: 'complete 20-token turns/s at saturation and CPU ms per turn (all serving processes): floor, embedded, scaled; history 500 vs fresh',
  async run({ runs, durationS, warmupS, log }) {
    const { sockets, answerTokens } = TURN_COST_BENCH;
    const results: Record<string, Measured[]> = {};
    const models = benchModels();
    const hubs: { variant: Variant; model: BenchModel }[] = [
      { variant: 'floor', model: 'in-process' },
      ...(['embedded', 'scaled'] as const).flatMap((variant) => models.map((model) => ({ variant, model }))),
    ];
    for (const { variant: kind, model } of hubs) {
      const variant = hubLabel(kind, model);
      results[variant] = [];
      const hub = await startHubProcess({ variant: kind, answerTokens, model });
      try {
        log(`warm-up ${variant}`);
        const warm = await measure(hub, sockets, 3);
        const warmAgain = await measure(hub, sockets, Math.max(3, Math.round((warm.rate * warmupS) / sockets)));
        const turnsPerSocket = Math.max(5, Math.round((warmAgain.rate * durationS) / sockets));
        for (let run = 0; run < runs; run += 1) {
          const measured = await measure(hub, sockets, turnsPerSocket);
          results[variant]!.push(measured);
          const parts = Object.entries(measured.cpuMs)
            .map(([part, ms]) => `${part} ${ms.toFixed(2)}`)
            .join(', ');
          log(`run ${run + 1}/${runs} ${variant}: ${measured.rate.toFixed(0)} turns/s, CPU ms/turn: ${parts}; turn p50 ${measured.p50.toFixed(1)} ms`);
        }
      } finally {
        await hub.stop();
      }
    }

    // History: the same embedded hub, fresh sessions against sessions with 500 messages.
    const history: { fresh: number[]; long: number[] } = { fresh: [], long: [] };
    const hub = await startHubProcess({ variant: 'embedded', answerTokens });
    try {
      const { historySockets, historyTurnsPerSocket, historyMessages } = TURN_COST_BENCH;
      const cpuPerTurn = async (prefill: number): Promise<number> => {
        const { ids, urls } = await hub.sessions(historySockets);
        if (prefill > 0) {
          await fillHistory(hub, ids, prefill);
          // One turn each first, as the sessions' next turn after those messages: it folds what
          // outgrew the context window into the rolling summary, as every turn of a long session does.
          await driveTurns(urls, hub.headers, 1);
        }
        const before = await hub.cpu();
        const run = await driveTurns(urls, hub.headers, historyTurnsPerSocket);
        return (cpuDelta(before, await hub.cpu()).total! * 1000) / run.turns;
      };
      log('warm-up history');
      await cpuPerTurn(0);
      await cpuPerTurn(historyMessages);
      for (let run = 0; run < runs; run += 1) {
        history.fresh.push(await cpuPerTurn(0));
        history.long.push(await cpuPerTurn(historyMessages));
        log(
          `run ${run + 1}/${runs} history: fresh ${history.fresh[run]!.toFixed(2)} ms/turn, ${historyMessages} messages ${history.long[run]!.toFixed(2)} ms/turn`,
        );
      }
    } finally {
      await hub.stop();
    }

    const { goals } = TURN_COST_BENCH;
    const floor = results.floor!;
    const floorRate = (run: number) => floor[run]!.rate;
    const floorCpu = (run: number) => floor[run]!.cpuMs.total!;
    const metrics: Metric[] = [];
    for (const variant of ['embedded', 'scaled'] as const) {
      const goal = goals[variant];
      const inProcess = results[variant]!;
      metrics.push(
        {
          name: `${variant}: turns at saturation`,
          unit: 'turns/s',
          samples: inProcess.map((m) => m.rate),
          goal: { text: `≥ ${goal.turnsPerSecond}`, met: (median) => median >= goal.turnsPerSecond },
        },
        {
          name: `${variant}: CPU per turn, all processes`,
          unit: 'ms',
          samples: inProcess.map((m) => m.cpuMs.total!),
          goal: { text: `≤ ${goal.cpuMsPerTurn}`, met: (median) => median <= goal.cpuMsPerTurn },
        },
        { name: `${variant}: turns/s ÷ floor`, unit: '×', samples: inProcess.map((m, run) => m.rate / floorRate(run)) },
        { name: `${variant}: CPU per turn ÷ floor`, unit: '×', samples: inProcess.map((m, run) => m.cpuMs.total! / floorCpu(run)) },
        { name: `${variant}: turn p50 at saturation`, unit: 'ms', samples: inProcess.map((m) => m.p50) },
      );
      for (const part of Object.keys(inProcess[0]!.cpuMs).filter((name) => name !== 'total')) {
        metrics.push({ name: `${variant}: CPU per turn, ${part}`, unit: 'ms', samples: inProcess.map((m) => m.cpuMs[part]!) });
      }
      for (const model of models.filter((name): name is RealModel => name !== 'in-process')) {
        metrics.push(...realPathMetrics(variant, model, results[hubLabel(variant, model)]!, inProcess));
      }
    }
    metrics.push(
      { name: 'floor: turns at saturation', unit: 'turns/s', samples: floor.map((m) => m.rate) },
      { name: 'floor: CPU per turn', unit: 'ms', samples: floor.map((m) => m.cpuMs.total!) },
      { name: 'floor: turn p50 at saturation', unit: 'ms', samples: floor.map((m) => m.p50) },
      {
        name: `embedded: CPU per turn at ${TURN_COST_BENCH.historyMessages} messages ÷ fresh`,
        unit: '×',
        samples: history.long.map((long, run) => long / history.fresh[run]!),
        goal: { text: `≤ ${goals.historyRatio}`, met: (median) => median <= goals.historyRatio },
      },
      { name: 'embedded: CPU per turn, fresh sessions', unit: 'ms', samples: history.fresh },
      { name: `embedded: CPU per turn, ${TURN_COST_BENCH.historyMessages} messages of history`, unit: 'ms', samples: history.long },
    );
    return {
      metrics,
      setup: {
        sockets,
        answer_tokens: answerTokens,
        model:
          'fixed answer, no latency: in-process (bench/lib/models.ts), and over HTTP through the real openai / anthropic provider (bench/lib/model-server-entry.ts)',
        models: models.join(', '),
        client: 'this process; each socket sends its next user_message when `done` arrives; fresh sessions per run',
        cpu: '/proc/<pid>/stat user+system of the hub processes; scaled adds the PostgreSQL backends of its database and the Redis server (shared with anything else using it)',
        history: `${TURN_COST_BENCH.historySockets} sockets × ${TURN_COST_BENCH.historyTurnsPerSocket} turns, default context window; long sessions: ${TURN_COST_BENCH.historyMessages} stored messages and one turn before measuring`,
        run_id: randomUUID(),
      },
    };
  },
};
