import type WebSocket from 'ws';
import type { Benchmark, Metric } from './lib/benchmark';
import { closeSockets, openSocket } from './lib/hub';
import { startHubProcess } from './lib/hub-process';
import { withTimeout } from './lib/latency';

/**
 * A worker killed mid-turn (SIGKILL: no goodbye, its turn's lock simply stops being renewed): how
 * long until another worker has taken the turn over and the client has its `done`. Scaled hub
 * (API process, PostgreSQL, Redis); per run, one worker takes a turn whose model streams slowly, a
 * second worker is started, the first is killed at the turn's first token. Measured on the client:
 * kill → first token of the re-run turn, and kill → `done`. The turn itself takes `turnMs` to stream.
 */
export const TAKEOVER_BENCH = {
  tokens: 40,
  tokenDelayMs: 50,
  doneTimeoutMs: 60_000,
  goals: { killToDoneS: 10 },
};

function frames(ws: WebSocket): { next(type: string): Promise<number> } {
  const waiting: { type: string; resolve: (at: number) => void }[] = [];
  ws.on('message', (data) => {
    const type = /^\{"type":"([a-z_]+)"/.exec(data.toString())?.[1];
    for (const waiter of waiting.filter((entry) => entry.type === type)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve(Date.now());
    }
  });
  return { next: (type) => new Promise((resolve) => waiting.push({ type, resolve })) };
}

export const benchmark: Benchmark = {
  name: 'takeover',
  description: 'a worker SIGKILLed mid-turn: kill → the turn resumed on another worker, kill → done (scaled hub)',
  async run({ runs, log }) {
    const { tokens, tokenDelayMs, doneTimeoutMs } = TAKEOVER_BENCH;
    const hub = await startHubProcess({ variant: 'scaled', workers: 0, answerTokens: tokens, tokenDelayMs, env: { BENCH_ANNOUNCE_TURNS: '1' } });
    const resumed: number[] = [];
    const done: number[] = [];
    try {
      for (let run = 0; run < runs; run += 1) {
        // Two fresh workers; the one whose model starts answering is killed at the first token.
        const workers = [await hub.addWorker(), await hub.addWorker()];
        const { urls } = await hub.sessions(1);
        const ws = await openSocket(urls[0]!, hub.headers);
        try {
          const stream = frames(ws);
          const firstToken = stream.next('token');
          const runner = Promise.race(workers.map((worker) => worker.waitFor('bench model answering', doneTimeoutMs).then(() => worker)));
          ws.send(JSON.stringify({ type: 'user_message', payload: { text: 'Take your time.', mode: 'normal' } }));
          const victim = await runner;
          await withTimeout(firstToken, doneTimeoutMs, 'no first token');
          const resumedToken = stream.next('token');
          const ended = stream.next('done');
          const killed = Date.now();
          victim.process.kill('SIGKILL');
          resumed.push(((await withTimeout(resumedToken, doneTimeoutMs, 'the turn never resumed')) - killed) / 1000);
          done.push(((await withTimeout(ended, doneTimeoutMs, 'no done after the kill')) - killed) / 1000);
          log(`run ${run + 1}/${runs}: resumed ${resumed[run]!.toFixed(1)} s after the kill, done ${done[run]!.toFixed(1)} s after it`);
        } finally {
          await closeSockets([ws]);
        }
        for (const child of hub.children.slice(1)) await child.stop(2_000);
        hub.children.splice(1);
      }
    } finally {
      await hub.stop();
    }
    const metrics: Metric[] = [
      {
        name: 'kill → done',
        unit: 's',
        samples: done,
        goal: { text: `≤ ${TAKEOVER_BENCH.goals.killToDoneS}`, met: (median) => median <= TAKEOVER_BENCH.goals.killToDoneS },
      },
      { name: 'kill → turn resumed (first token again)', unit: 's', samples: resumed },
    ];
    return {
      metrics,
      setup: {
        turn: `${tokens} tokens ${tokenDelayMs} ms apart (the taken-over turn streams again from the start)`,
        hub: 'scaled: API process, two worker processes per run, PostgreSQL, Redis; default worker.turn_lock_s and worker.stalled_check_s',
      },
    };
  },
};
