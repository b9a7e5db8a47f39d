import type WebSocket from 'ws';
import type { Benchmark, Metric } from './lib/benchmark';
import { startEchoServer, type EchoServer } from './lib/echo-server';
import { closeSockets, openSocket } from './lib/hub';
import { benchModels, hubLabel, startHubProcess, type BenchModel, type HubUnderTest } from './lib/hub-process';
import { elapsedMs, percentile, withTimeout } from './lib/latency';

/**
 * Time from sending `user_message` on a session socket to receiving the turn's first `token` frame,
 * one turn at a time (each waits for the previous `done`), with a model that answers at once — so
 * the figure is the hub's own path: socket → store + enqueue → worker → event log → socket. The
 * embedded hub (one process: SQLite, in-process queue and event log) and the scaled hub (an API
 * process and a worker process, PostgreSQL, Redis: BullMQ, Streams, pub/sub), each a process of its
 * own; against the floor program (the same turn with nothing but a durable insert) and a bare `ws`
 * echo of the frame. The embedded and scaled hubs also run with their model reached over HTTP through
 * the real `openai` / `anthropic` provider (the fake vendor server answers at once, in a process of
 * its own: its time is the model's, which the goal excludes; BENCH_MODELS picks).
 */
export const FIRST_TOKEN_BENCH = {
  /** Turns per session before moving to a fresh one: the worker reads the whole history each turn. */
  turnsPerSession: 10,
  answerTokens: 3,
  message: JSON.stringify({ type: 'user_message', payload: { text: 'How fast is the first token?', mode: 'normal' } }),
  frameTimeoutMs: 10_000,
  goals: { embeddedP50Ms: 5, scaledP50Ms: 8, realPath: { embeddedP50Ms: 2, scaledP50Ms: 4 } },
};

type Variant = string;

export interface Prober {
  /** One measured round trip, in milliseconds. */
  probe(): Promise<number>;
  /** The model server's own time of each probe since the last call (ms; none for an in-process model). */
  modelTimes?(): Promise<number[]>;
  stop(): Promise<void>;
}

/**
 * A run's first-token times less the model's own time (the goal excludes it): probe by probe when the
 * model server answered one request per probe, as it does; else (logged) p50 less the model's p50.
 */
export function lessModelTime(latencies: number[], modelTimes: number[], log: (line: string) => void): number[] {
  if (modelTimes.length === latencies.length) return latencies.map((latency, index) => latency - modelTimes[index]!);
  log(`the model server answered ${modelTimes.length} requests for ${latencies.length} turns: p50 less the model's p50`);
  return [percentile(latencies, 50) - percentile(modelTimes, 50)];
}

/** Resolves with the next frame (parsed) that matches, from one socket. */
function nextFrame(ws: WebSocket, matches: (frame: { type?: string }) => boolean): Promise<{ type?: string }> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const frame = JSON.parse(data.toString()) as { type?: string };
      if (!matches(frame)) return;
      ws.off('message', onMessage);
      resolve(frame);
    };
    ws.on('message', onMessage);
  });
}

async function echoProber(): Promise<Prober> {
  const server: EchoServer = await startEchoServer();
  const ws = await openSocket(server.url);
  return {
    probe: async () => {
      const start = process.hrtime.bigint();
      const echoed = nextFrame(ws, () => true);
      ws.send(FIRST_TOKEN_BENCH.message);
      await withTimeout(echoed, FIRST_TOKEN_BENCH.frameTimeoutMs, 'echo: no answer');
      return elapsedMs(start);
    },
    stop: async () => {
      await closeSockets([ws]);
      await server.close();
    },
  };
}

async function hubProber(variant: 'floor' | 'embedded' | 'scaled', model: BenchModel): Promise<Prober> {
  return turnProber(await startHubProcess({ variant, answerTokens: FIRST_TOKEN_BENCH.answerTokens, model }), hubLabel(variant, model));
}

/** A turn's `user_message` sent and its first `token` frame received, as wall-clock ms (`performance.timeOrigin + performance.now()`). */
export interface TurnMarks {
  sentAt: number;
  firstTokenAt: number;
}

/**
 * One turn at a time on a session socket of `hub`: `probe` answers the time from `user_message` to
 * the first `token` frame; `probeMarked`, when each happened. Stopping it stops the hub.
 */
export async function turnProber(hub: HubUnderTest, variant: string): Promise<Prober & { probeMarked(): Promise<TurnMarks> }> {
  let ws: WebSocket | null = null;
  try {
    let turns = FIRST_TOKEN_BENCH.turnsPerSession;
    const freshSocket = async () => {
      if (ws) await closeSockets([ws]);
      ws = null;
      const { urls } = await hub.sessions(1);
      const opened = await openSocket(urls[0]!, hub.headers);
      // The on-connect `agent_state` comes first; wait for it so it is not taken for a turn's frame.
      await withTimeout(
        nextFrame(opened, (frame) => frame.type === 'agent_state'),
        FIRST_TOKEN_BENCH.frameTimeoutMs,
        `${variant}: no agent_state on connect`,
      );
      ws = opened;
      turns = 0;
      return opened;
    };
    const probeMarked = async (): Promise<TurnMarks> => {
      const socket = turns >= FIRST_TOKEN_BENCH.turnsPerSession || !ws ? await freshSocket() : ws;
      turns += 1;
      const done = nextFrame(socket, (frame) => frame.type === 'done' || frame.type === 'error');
      const first = nextFrame(socket, (frame) => frame.type === 'token' || frame.type === 'error');
      const sentAt = performance.timeOrigin + performance.now();
      socket.send(FIRST_TOKEN_BENCH.message);
      const frame = await withTimeout(first, FIRST_TOKEN_BENCH.frameTimeoutMs, `${variant}: no token frame`);
      const firstTokenAt = performance.timeOrigin + performance.now();
      const last = await withTimeout(done, FIRST_TOKEN_BENCH.frameTimeoutMs, `${variant}: no done frame`);
      if (frame.type !== 'token' || last.type !== 'done') throw new Error(`${variant}: the turn failed: ${JSON.stringify(last)}`);
      return { sentAt, firstTokenAt };
    };
    return {
      probe: async () => {
        const { sentAt, firstTokenAt } = await probeMarked();
        return firstTokenAt - sentAt;
      },
      probeMarked,
      modelTimes: () => hub.modelTimes(),
      stop: async () => {
        if (ws) await closeSockets([ws]);
        await hub.stop();
      },
    };
  } catch (error) {
    await hub.stop();
    throw error;
  }
}

/** Probes back to back for `seconds`; returns every latency. */
export async function sample(prober: Prober, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) latencies.push(await prober.probe());
  return latencies;
}

export const benchmark: Benchmark = {
  name: 'first-token',
  description: 'user_message → first token frame (0-latency model), one turn at a time: embedded and scaled hub vs the floor and a raw ws echo',
  async run({ runs, durationS, warmupS, log }) {
    const models = benchModels();
    const real = models.filter((model) => model !== 'in-process');
    const hubs: { variant: 'echo' | 'floor' | 'embedded' | 'scaled'; model: BenchModel }[] = [
      { variant: 'echo', model: 'in-process' },
      { variant: 'floor', model: 'in-process' },
      ...(['embedded', 'scaled'] as const).flatMap((variant) => models.map((model) => ({ variant, model }))),
    ];
    const variants: Variant[] = hubs.map((hub) => hubLabel(hub.variant, hub.model));
    const results: Record<Variant, { p50: number[]; p99: number[]; count: number[]; hubP50: number[]; modelP50: number[] }> = Object.fromEntries(
      variants.map((variant) => [
        variant,
        { p50: [] as number[], p99: [] as number[], count: [] as number[], hubP50: [] as number[], modelP50: [] as number[] },
      ]),
    );
    // One variant at a time: a hub idling beside another still runs timers and would add noise.
    for (const { variant: kind, model } of hubs) {
      const variant = hubLabel(kind, model);
      const prober = kind === 'echo' ? await echoProber() : await hubProber(kind, model);
      try {
        log(`warm-up ${variant} (${warmupS} s)`);
        await sample(prober, warmupS);
        await prober.modelTimes?.();
        for (let run = 0; run < runs; run += 1) {
          const latencies = await sample(prober, durationS);
          results[variant]!.p50.push(percentile(latencies, 50));
          results[variant]!.p99.push(percentile(latencies, 99));
          results[variant]!.count.push(latencies.length);
          let hubOnly = '';
          if (model !== 'in-process') {
            const modelTimes = (await prober.modelTimes?.()) ?? [];
            results[variant]!.hubP50.push(percentile(lessModelTime(latencies, modelTimes, log), 50));
            results[variant]!.modelP50.push(percentile(modelTimes, 50));
            hubOnly = `; less the model server's own time p50 ${results[variant]!.hubP50.at(-1)!.toFixed(3)} ms (the model's p50 ${percentile(modelTimes, 50).toFixed(3)} ms)`;
          }
          log(
            `run ${run + 1}/${runs} ${variant}: p50 ${percentile(latencies, 50).toFixed(3)} ms, p99 ${percentile(latencies, 99).toFixed(3)} ms (${latencies.length} turns)${hubOnly}`,
          );
        }
      } finally {
        await prober.stop();
      }
    }
    const ratio = (variant: Variant, to: Variant) => results[variant]!.p50.map((p50, run) => p50 / results[to]!.p50[run]!);
    const { goals } = FIRST_TOKEN_BENCH;
    const metrics: Metric[] = [
      {
        name: 'embedded: p50',
        unit: 'ms',
        samples: results.embedded!.p50,
        goal: { text: `≤ ${goals.embeddedP50Ms}`, met: (median) => median <= goals.embeddedP50Ms },
      },
      { name: 'scaled: p50', unit: 'ms', samples: results.scaled!.p50, goal: { text: `≤ ${goals.scaledP50Ms}`, met: (median) => median <= goals.scaledP50Ms } },
      // The goal excludes the model's own time: the model server's time from a request's arrival to
      // its first event, measured in its process, is taken off each turn's.
      ...real.flatMap((model): Metric[] =>
        (['embedded', 'scaled'] as const).flatMap((variant): Metric[] => {
          const goal = goals.realPath[variant === 'embedded' ? 'embeddedP50Ms' : 'scaledP50Ms'];
          const label = hubLabel(variant, model);
          return [
            {
              name: `${label}: p50 less the model's own time`,
              unit: 'ms',
              samples: results[label]!.hubP50,
              goal: { text: `≤ ${goal}`, met: (median) => median <= goal },
            },
            { name: `${label}: p50`, unit: 'ms', samples: results[label]!.p50 },
            { name: `${label}: the model server's own time, p50`, unit: 'ms', samples: results[label]!.modelP50 },
          ];
        }),
      ),
      { name: 'floor: p50', unit: 'ms', samples: results.floor!.p50 },
      { name: 'echo: p50', unit: 'ms', samples: results.echo!.p50 },
      { name: 'embedded: p50 ÷ floor', unit: '×', samples: ratio('embedded', 'floor') },
      { name: 'scaled: p50 ÷ floor', unit: '×', samples: ratio('scaled', 'floor') },
      ...real.flatMap((model) =>
        (['embedded', 'scaled'] as const).map((variant): Metric => ({
          name: `${hubLabel(variant, model)}: p50 ÷ in-process model`,
          unit: '×',
          samples: ratio(hubLabel(variant, model), variant),
        })),
      ),
      ...variants.map((variant): Metric => ({ name: `${variant}: p99`, unit: 'ms', samples: results[variant]!.p99 })),
      ...variants.map((variant): Metric => ({ name: `${variant}: round trips per run`, unit: 'count', samples: results[variant]!.count })),
    ];
    return {
      metrics,
      setup: {
        model: `fixed answer of ${FIRST_TOKEN_BENCH.answerTokens} tokens, no latency: in-process, and over HTTP (${real.join(', ') || 'none'})`,
        turns_per_session: FIRST_TOKEN_BENCH.turnsPerSession,
        hubs: 'processes of their own; embedded: SQLite, in-process drivers; scaled: API + worker processes, PostgreSQL, Redis',
        measure: 'one turn at a time on one socket; client in the bench process',
      },
    };
  },
};
