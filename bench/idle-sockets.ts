import { fork, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer } from 'ws';
import type { Benchmark, Metric } from './lib/benchmark';
import { benchEnv, registerUser, startBenchHub } from './lib/hub';
import { withTimeout } from './lib/latency';
import { SessionRows } from './lib/session-rows';

/**
 * Memory per idle socket held by the server: authenticated session sockets on the hub (embedded,
 * SQLite; one session per socket, since a newer socket replaces an older one) vs bare `ws`
 * connections. The clients live in a child process (bench/lib/socket-client-entry.ts), so this
 * process holds one file descriptor per socket and its memory only the server side. Measured after
 * a full garbage collection, before and after opening `connections` sockets: the JS heap plus
 * external memory (what the sockets cost; RSS is reported too but grows in steps). Sockets per GiB =
 * 1 GiB / bytes per socket; the goal compares that with the bare baseline.
 */
export const IDLE_SOCKETS_BENCH = {
  /** Well below the 20,000 open files of this machine (one descriptor here, one in the child). */
  connections: 4_000,
  openTimeoutMs: 120_000,
  // Issue 34: idle authenticated session sockets per GiB at least 0.8× bare `ws`.
  goals: { ratio: 0.8 },
};

const GIB = 2 ** 30;

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function memory(): { heap: number; rss: number } {
  collectGarbage();
  collectGarbage();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed + usage.external, rss: usage.rss };
}

function request(child: ChildProcess, message: object, timeoutMs: number): Promise<Record<string, unknown>> {
  return withTimeout(
    new Promise((resolve, reject) => {
      child.once('message', (answer: Record<string, unknown>) => (answer.failed ? reject(new Error(`client: ${String(answer.failed)}`)) : resolve(answer)));
      child.send(message);
    }),
    timeoutMs,
    'client process did not answer',
  );
}

/** Opens every url from the child, lets the server settle, and returns bytes per socket (heap, RSS). */
async function measure(child: ChildProcess, urls: string[], headers: Record<string, string>): Promise<{ heap: number; rss: number }> {
  const before = memory();
  await request(child, { open: { urls, headers } }, IDLE_SOCKETS_BENCH.openTimeoutMs);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = memory();
  await request(child, { close: true }, IDLE_SOCKETS_BENCH.openTimeoutMs);
  await new Promise((resolve) => setTimeout(resolve, 1_500)); // server-side close handshakes and cut-offs
  return { heap: (after.heap - before.heap) / urls.length, rss: (after.rss - before.rss) / urls.length };
}

export const benchmark: Benchmark = {
  name: 'idle-sockets',
  description: 'memory per authenticated idle session socket on the hub vs bare ws connections (sockets per GiB)',
  async run({ runs, log }) {
    const { connections } = IDLE_SOCKETS_BENCH;
    const child = fork(path.join(__dirname, 'lib', 'socket-client-entry.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const hub = await startBenchHub();
    const bare = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    let rows: SessionRows | null = null;
    try {
      await new Promise<void>((resolve) => bare.once('listening', resolve));
      rows = await SessionRows.open(hub, benchEnv(hub.dataDir));
      const user = await registerUser(hub.api);
      const sessions = await rows.create(user.id, connections);
      const hubUrls = sessions.map((id) => hub.socketUrl(id));
      const bareUrls = Array.from({ length: connections }, () => `ws://127.0.0.1:${(bare.address() as AddressInfo).port}/`);
      const hubHeaders = { authorization: `Bearer ${user.token}` };

      log(`warm-up (${connections} sockets each)`);
      await measure(child, bareUrls, {});
      await measure(child, hubUrls, hubHeaders);
      const hubBytes: { heap: number; rss: number }[] = [];
      const bareBytes: { heap: number; rss: number }[] = [];
      for (let run = 0; run < runs; run += 1) {
        bareBytes.push(await measure(child, bareUrls, {}));
        hubBytes.push(await measure(child, hubUrls, hubHeaders));
        log(
          `run ${run + 1}/${runs}: hub ${(hubBytes[run]!.heap / 1024).toFixed(1)} KiB/socket (RSS ${(hubBytes[run]!.rss / 1024).toFixed(1)}), bare ${(bareBytes[run]!.heap / 1024).toFixed(1)} KiB/socket (RSS ${(bareBytes[run]!.rss / 1024).toFixed(1)})`,
        );
      }
      const perGib = (bytes: number) => GIB / bytes;
      const metrics: Metric[] = [
        {
          name: 'hub / bare, sockets per GiB (heap)',
          unit: '×',
          samples: hubBytes.map((hubRun, run) => bareBytes[run]!.heap / hubRun.heap),
          goal: { text: `≥ ${IDLE_SOCKETS_BENCH.goals.ratio}`, met: (median) => median >= IDLE_SOCKETS_BENCH.goals.ratio },
        },
        { name: 'hub: sockets per GiB (heap)', unit: 'sockets', samples: hubBytes.map((run) => perGib(run.heap)) },
        { name: 'bare: sockets per GiB (heap)', unit: 'sockets', samples: bareBytes.map((run) => perGib(run.heap)) },
        { name: 'hub: heap + external per socket', unit: 'KiB', samples: hubBytes.map((run) => run.heap / 1024) },
        { name: 'bare: heap + external per socket', unit: 'KiB', samples: bareBytes.map((run) => run.heap / 1024) },
        { name: 'hub: RSS per socket', unit: 'KiB', samples: hubBytes.map((run) => run.rss / 1024) },
        { name: 'bare: RSS per socket', unit: 'KiB', samples: bareBytes.map((run) => run.rss / 1024) },
      ];
      return {
        metrics,
        setup: {
          connections,
          hub: 'single process, embedded drivers, SQLite; one session per socket; JWT in the Authorization header',
          clients: 'a child process (bench/lib/socket-client-entry.js)',
          memory: 'process.memoryUsage() after two full GCs, before and after opening; heap = heapUsed + external',
          warm_up: 'one round of each before measuring',
        },
      };
    } finally {
      child.kill();
      for (const client of bare.clients) client.terminate();
      await new Promise<void>((resolve) => bare.close(() => resolve()));
      await rows?.close();
      await hub.stop();
    }
  },
};
