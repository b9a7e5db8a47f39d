import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { Benchmark, Metric } from './lib/benchmark';
import { closeSockets, createSessions, openSessionSocket, openSocket, registerUser, startBenchHub } from './lib/hub';
import { withTimeout } from './lib/latency';
import { FixedAnswerProvider, wordTokens } from './lib/models';

/**
 * Token frames per second delivered to one session socket: a turn whose model yields
 * `tokensPerTurn` tokens at once, counted on the client from the first `token` frame to the last.
 * Embedded drivers (the in-process event log), client in the same process. Baseline: a bare `ws`
 * server sending the same number of frames, each byte for byte a token frame the hub sent, in a
 * plain loop. Timed from the request (user_message; for the baseline, a trigger frame) to the last
 * token frame, so the hub's figure includes starting the turn. Each turn uses a fresh session (the worker reads the whole history every turn).
 */
export const TOKEN_STREAM_BENCH = {
  tokensPerTurn: 20_000,
  /** Characters per token, like an English word and its space. */
  tokenSize: 6,
  turnTimeoutMs: 60_000,
  goals: { ratio: 0.5 },
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

export const benchmark: Benchmark = {
  name: 'token-stream',
  description: 'token frames/s delivered on one session socket vs a raw ws send loop of the same frames',
  async run({ runs, durationS, warmupS, log }) {
    const { tokensPerTurn, tokenSize, turnTimeoutMs } = TOKEN_STREAM_BENCH;
    const hub = await startBenchHub({ provider: new FixedAnswerProvider(wordTokens(tokensPerTurn, tokenSize)) });
    let baseline: WebSocketServer | null = null;
    try {
      const { token } = await registerUser(hub.api);
      let sampleFrame = '';
      const hubTurn = async (): Promise<Stream> => {
        const [sessionId] = await createSessions(hub.api, token, 1);
        const ws = await openSessionSocket(hub, sessionId!, token);
        try {
          const counted = countFrames(ws, isTokenFrame, isTurnEnd);
          ws.send(JSON.stringify({ type: 'user_message', payload: { text: 'Stream a long answer.', mode: 'normal' } }));
          const stream = await withTimeout(counted, turnTimeoutMs, 'hub: the turn did not end');
          if (stream.frames !== tokensPerTurn) throw new Error(`hub: ${stream.frames} token frames, expected ${tokensPerTurn}`);
          sampleFrame = stream.sample;
          return stream;
        } finally {
          await closeSockets([ws]);
        }
      };
      // Repeats turns for `seconds`; the rate is every frame over the time spent streaming them.
      const measure = async (turn: () => Promise<Stream>, seconds: number): Promise<number> => {
        let frames = 0;
        let streaming = 0;
        const until = Date.now() + seconds * 1000;
        do {
          const stream = await turn();
          frames += stream.frames;
          streaming += stream.seconds;
        } while (Date.now() < until);
        return frames / streaming;
      };

      log(`warm-up hub (${warmupS} s)`);
      await measure(hubTurn, warmupS);
      baseline = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
      await new Promise<void>((resolve) => baseline!.once('listening', resolve));
      const frame = sampleFrame;
      const end = '{"type":"done"}';
      baseline.on('connection', (ws) =>
        ws.on('message', () => {
          for (let index = 0; index < tokensPerTurn; index += 1) ws.send(frame);
          ws.send(end);
        }),
      );
      const baselineSocket = await openSocket(`ws://127.0.0.1:${(baseline.address() as AddressInfo).port}`);
      const baselineTurn = async (): Promise<Stream> => {
        const counted = countFrames(baselineSocket, isTokenFrame, isTurnEnd);
        baselineSocket.send('go');
        return withTimeout(counted, turnTimeoutMs, 'baseline: the stream did not end');
      };
      log(`warm-up baseline (${warmupS} s)`);
      await measure(baselineTurn, warmupS);

      const hubRates: number[] = [];
      const baseRates: number[] = [];
      for (let run = 0; run < runs; run += 1) {
        hubRates.push(await measure(hubTurn, durationS));
        baseRates.push(await measure(baselineTurn, durationS));
        log(`run ${run + 1}/${runs}: hub ${hubRates[run]!.toFixed(0)} frames/s, baseline ${baseRates[run]!.toFixed(0)} frames/s`);
      }
      await closeSockets([baselineSocket]);
      const metrics: Metric[] = [
        {
          name: 'hub / baseline',
          unit: '×',
          samples: hubRates.map((rate, run) => rate / baseRates[run]!),
          goal: { text: `≥ ${TOKEN_STREAM_BENCH.goals.ratio}`, met: (median) => median >= TOKEN_STREAM_BENCH.goals.ratio },
        },
        { name: 'hub: token frames', unit: 'frames/s', samples: hubRates },
        { name: 'baseline: same frames', unit: 'frames/s', samples: baseRates },
      ];
      return {
        metrics,
        setup: {
          tokens_per_turn: tokensPerTurn,
          frame_bytes: Buffer.byteLength(frame),
          frame_example: frame,
          hub: 'single process, embedded drivers (in-process event log), SQLite; client in the same process',
          timing: 'request sent to last token frame received, summed over the turns of a run',
        },
      };
    } finally {
      if (baseline) {
        for (const client of baseline.clients) client.terminate();
        await new Promise<void>((resolve) => baseline!.close(() => resolve()));
      }
      await hub.stop();
    }
  },
};
