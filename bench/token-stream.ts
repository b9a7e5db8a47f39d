import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type WebSocket from 'ws';
import { spawnNode } from './lib/child';
import type { Benchmark, Metric } from './lib/benchmark';
import { closeSockets, openSocket } from './lib/hub';
import { benchModels, hubLabel, startHubProcess, type BenchModel, type HubUnderTest } from './lib/hub-process';
import { withTimeout } from './lib/latency';
import { processCpuSeconds } from './lib/proc-cpu';

/**
 * Token frames per second delivered to one session socket: a turn whose model yields
 * `tokensPerTurn` tokens at once, counted on the client. The embedded hub (in-process event log) and
 * the scaled hub (the worker appends to Redis Streams, the API process relays the pub/sub tail),
 * each a process of its own; the client in the bench process. Baseline: a bare `ws`
 * server (a process of its own) sending the same number of frames, each byte for byte a token frame
 * the hub sent, in a plain loop. Timed from the request (user_message; for the baseline, a trigger frame) to the last
 * token frame, so the hub's figure includes starting the turn. Each turn uses a fresh session (the worker reads the whole history every turn).
 * Each hub runs with the in-process model and with the real `openai` / `anthropic` provider reading
 * the answer over HTTP from the fake vendor server (one SSE event per token, in a process of its own).
 */
export const TOKEN_STREAM_BENCH = {
  tokensPerTurn: 20_000,
  /** Characters per token, like an English word and its space. */
  tokenSize: 6,
  turnTimeoutMs: 60_000,
  goals: { embeddedRatio: 0.5, scaledRatio: 0.4 },
};

interface Stream {
  frames: number;
  seconds: number;
}

/**
 * Counts `token` frames until `isLast`, timed from now (call it just before sending the request) to
 * the last token frame. Not from the first frame: a producer that never yields sends everything in
 * one burst, and first-to-last would time only the client reading the burst.
 */
function countFrames(ws: WebSocket, isToken: (text: string) => boolean, isLast: (text: string) => boolean): Promise<Stream & { sample: string }> {
  const first = process.hrtime.bigint();
  return new Promise((resolve) => {
    let last: bigint = first;
    let frames = 0;
    let sample = '';
    const onMessage = (data: WebSocket.RawData) => {
      const text = data.toString();
      if (isToken(text)) {
        last = process.hrtime.bigint();
        frames += 1;
        sample ||= text;
      }
      if (!isLast(text)) return;
      ws.off('message', onMessage);
      resolve({ frames, seconds: Number(last - first) / 1e9, sample });
    };
    ws.on('message', onMessage);
  });
}

const isTokenFrame = (text: string) => text.startsWith('{"type":"token"');
const isTurnEnd = (text: string) => text.startsWith('{"type":"done"') || text.startsWith('{"type":"error"');

/** One turn on a fresh session of `hub`: its token frames over the time from the request to the last one. */
export async function hubTurn(hub: HubUnderTest): Promise<Stream & { sample: string }> {
  const { tokensPerTurn, turnTimeoutMs } = TOKEN_STREAM_BENCH;
  const { urls } = await hub.sessions(1);
  const ws = await openSocket(urls[0]!, hub.headers);
  try {
    const counted = countFrames(ws, isTokenFrame, isTurnEnd);
    ws.send(JSON.stringify({ type: 'user_message', payload: { text: 'Stream a long answer.', mode: 'normal' } }));
    const stream = await withTimeout(counted, turnTimeoutMs, `${hub.label}: the turn did not end`);
    if (stream.frames !== tokensPerTurn) throw new Error(`${hub.label}: ${stream.frames} token frames, expected ${tokensPerTurn}`);
    return stream;
  } finally {
    await closeSockets([ws]);
  }
}

/**
 * Repeats turns for `seconds`; the rate is every frame over the time spent streaming them. `cpu`
 * reads the CPU seconds of the serving processes: the run also gives their CPU µs per frame, which
 * a machine shared with other work moves far less than the rate.
 */
async function measure(turn: () => Promise<Stream>, seconds: number, cpu: () => Promise<number>): Promise<{ rate: number; cpuUsPerFrame: number }> {
  let frames = 0;
  let streaming = 0;
  const until = Date.now() + seconds * 1000;
  const before = await cpu();
  do {
    const stream = await turn();
    frames += stream.frames;
    streaming += stream.seconds;
  } while (Date.now() < until);
  return { rate: frames / streaming, cpuUsPerFrame: (((await cpu()) - before) * 1e6) / frames };
}

export const benchmark: Benchmark = {
  name: 'token-stream',
  description: 'token frames/s delivered on one session socket (embedded, scaled) vs a raw ws send loop of the same frames',
  async run({ runs, durationS, warmupS, log }) {
    const { tokensPerTurn, turnTimeoutMs, goals } = TOKEN_STREAM_BENCH;
    const models = benchModels();
    const rates: Record<string, number[]> = {};
    const cpuPerFrame: Record<string, number[]> = {};
    let sampleFrame = '';
    const hubs = (['embedded', 'scaled'] as const).flatMap((kind) => models.map((model: BenchModel) => ({ kind, model })));
    for (const { kind, model } of hubs) {
      const variant = hubLabel(kind, model);
      rates[variant] = [];
      cpuPerFrame[variant] = [];
      const hub = await startHubProcess({ variant: kind, answerTokens: tokensPerTurn, model });
      // Every serving process (scaled: PostgreSQL and Redis too); not the model server, whose CPU is the model's.
      const hubCpu = async () => Object.values(await hub.cpu()).reduce((sum, seconds) => sum + seconds, 0);
      try {
        log(`warm-up ${variant} (${warmupS} s)`);
        await measure(
          async () => {
            const stream = await hubTurn(hub);
            sampleFrame ||= stream.sample;
            return stream;
          },
          warmupS,
          hubCpu,
        );
        for (let run = 0; run < runs; run += 1) {
          const measured = await measure(() => hubTurn(hub), durationS, hubCpu);
          rates[variant]!.push(measured.rate);
          cpuPerFrame[variant]!.push(measured.cpuUsPerFrame);
          log(`run ${run + 1}/${runs} ${variant}: ${measured.rate.toFixed(0)} frames/s, CPU ${measured.cpuUsPerFrame.toFixed(2)} µs/frame`);
        }
      } finally {
        await hub.stop();
      }
    }

    // The raw ws loop also runs in a process of its own, sending the hub's own frame.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-raw-ws-'));
    const raw = spawnNode(path.join(__dirname, 'lib', 'raw-ws-entry.js'), { BENCH_FRAME: sampleFrame, BENCH_FRAMES: String(tokensPerTurn) }, dataDir);
    const baseRates: number[] = [];
    const baseCpu: number[] = [];
    const rawCpu = () => Promise.resolve(processCpuSeconds(raw.process.pid!));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let output = '';
        raw.process.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /ready (\d+)/.exec(output);
          if (match) resolve(Number(match[1]));
        });
        raw.waitFor('ready').catch(reject);
      });
      const socket = await openSocket(`ws://127.0.0.1:${port}`);
      const baselineTurn = async (): Promise<Stream> => {
        const counted = countFrames(socket, isTokenFrame, isTurnEnd);
        socket.send('go');
        return withTimeout(counted, turnTimeoutMs, 'baseline: the stream did not end');
      };
      await measure(baselineTurn, warmupS, rawCpu);
      for (let run = 0; run < runs; run += 1) {
        const measured = await measure(baselineTurn, durationS, rawCpu);
        baseRates.push(measured.rate);
        baseCpu.push(measured.cpuUsPerFrame);
        log(`run ${run + 1}/${runs} raw ws: ${measured.rate.toFixed(0)} frames/s, CPU ${measured.cpuUsPerFrame.toFixed(2)} µs/frame`);
      }
      await closeSockets([socket]);
    } finally {
      await raw.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // The same goals for every model path: the real provider's is the one users run.
    const metrics: Metric[] = [
      ...hubs.map(({ kind, model }): Metric => {
        const goal = kind === 'embedded' ? goals.embeddedRatio : goals.scaledRatio;
        return {
          name: `${hubLabel(kind, model)} ÷ raw ws`,
          unit: '×',
          samples: rates[hubLabel(kind, model)]!.map((rate, run) => rate / baseRates[run]!),
          goal: { text: `≥ ${goal}`, met: (median) => median >= goal },
        };
      }),
      ...hubs.map(({ kind, model }): Metric => ({ name: `${hubLabel(kind, model)}: token frames`, unit: 'frames/s', samples: rates[hubLabel(kind, model)]! })),
      { name: 'raw ws: same frames', unit: 'frames/s', samples: baseRates },
      // Load-robust companions of the rates: CPU per frame of the serving processes, and raw ws's ÷ the hub's.
      ...hubs.map(({ kind, model }): Metric => ({
        name: `${hubLabel(kind, model)}: CPU per token frame`,
        unit: 'µs',
        samples: cpuPerFrame[hubLabel(kind, model)]!,
      })),
      { name: 'raw ws: CPU per frame', unit: 'µs', samples: baseCpu },
      ...hubs.map(({ kind, model }): Metric => ({
        name: `${hubLabel(kind, model)}: raw ws CPU per frame ÷ hub's`,
        unit: '×',
        samples: cpuPerFrame[hubLabel(kind, model)]!.map((micros, run) => baseCpu[run]! / micros),
      })),
    ];
    return {
      metrics,
      setup: {
        tokens_per_turn: tokensPerTurn,
        frame_bytes: Buffer.byteLength(sampleFrame),
        frame_example: sampleFrame,
        hubs: 'processes of their own; client and the raw ws loop in the bench process',
        models: `in-process, and over HTTP through the real provider: ${models.filter((model) => model !== 'in-process').join(', ') || 'none'}`,
        timing: 'request sent to last token frame received, summed over the turns of a run',
      },
    };
  },
};
