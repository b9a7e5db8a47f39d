/**
 * What each idle session socket holds (not a benchmark: `node dist/bench/socket-heap.js [small]
 * [large]`, default 1000 and 5000). Starts the hub in this process as `idle-sockets` does, opens
 * `small` authenticated session sockets from a child process, writes a heap snapshot, opens more up
 * to `large`, writes another, and prints the difference per added socket by constructor (bytes and
 * objects), with the most common retainer paths of the largest groups. The snapshots stay in
 * bench/profiles/ (open them in Chrome DevTools' Memory tab, "Comparison" view).
 * `--bare [small] [large]` does the same with bare `ws` connections (the baseline);
 * `--diff a.heapsnapshot b.heapsnapshot sockets` diffs two files.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer } from 'ws';
import { commonRetainers, readHeapSnapshot, totalsByLabel } from './lib/heap-snapshot';
import { benchEnv, registerUser, startBenchHub } from './lib/hub';
import { withTimeout } from './lib/latency';
import { SessionRows } from './lib/session-rows';

const PROFILE_DIR = path.resolve(__dirname, '../../bench/profiles');

function request(child: ChildProcess, message: object): Promise<unknown> {
  return withTimeout(
    new Promise((resolve, reject) => {
      child.once('message', (answer: Record<string, unknown>) => (answer.failed ? reject(new Error(String(answer.failed))) : resolve(answer)));
      child.send(message);
    }),
    120_000,
    'client process did not answer',
  );
}

function snapshot(name: string): string {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return writeHeapSnapshot(path.join(PROFILE_DIR, `${name}-${Date.now()}.heapsnapshot`));
}

/** Opens `small` sockets, snapshots, opens up to `large`, snapshots again. */
async function openAndSnapshot(urls: string[], headers: Record<string, string>, small: number, name: string): Promise<[string, string]> {
  const child = fork(path.join(__dirname, 'lib', 'socket-client-entry.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    // A round first, so what the first socket creates once (caches, compiled code) is in both snapshots.
    await request(child, { open: { urls: urls.slice(0, small), headers } });
    await request(child, { close: true });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await request(child, { open: { urls: urls.slice(0, small), headers } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const first = snapshot(`${name}-${small}`);
    await request(child, { open: { urls: urls.slice(small), headers } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    return [first, snapshot(`${name}-${urls.length}`)];
  } finally {
    child.kill();
  }
}

async function takeHub(small: number, large: number): Promise<[string, string]> {
  const hub = await startBenchHub();
  const rows = await SessionRows.open(hub, benchEnv(hub.dataDir));
  try {
    const user = await registerUser(hub.api);
    const urls = (await rows.create(user.id, large)).map((id) => hub.socketUrl(id));
    return await openAndSnapshot(urls, { authorization: `Bearer ${user.token}` }, small, 'hub-sockets');
  } finally {
    await rows.close();
    await hub.stop();
  }
}

/** The baseline: bare `ws` connections on a server in this process. */
async function takeBare(small: number, large: number): Promise<[string, string]> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  try {
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    return await openAndSnapshot(
      Array.from({ length: large }, () => url),
      {},
      small,
      'bare-sockets',
    );
  } finally {
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function diff(firstFile: string, secondFile: string, added: number): void {
  const first = totalsByLabel(readHeapSnapshot(firstFile));
  const graph = readHeapSnapshot(secondFile);
  const second = totalsByLabel(graph);
  const rows = [...second.entries()]
    .map(([label, totals]) => ({
      label,
      count: (totals.count - (first.get(label)?.count ?? 0)) / added,
      bytes: (totals.bytes - (first.get(label)?.bytes ?? 0)) / added,
    }))
    .filter((row) => Math.abs(row.bytes) >= 2)
    .sort((a, b) => b.bytes - a.bytes);
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  process.stdout.write(`per added socket: ${total.toFixed(0)} B self size (${added} sockets)\n\n  bytes  objects  constructor\n`);
  for (const row of rows) process.stdout.write(`${row.bytes.toFixed(0).padStart(7)}  ${row.count.toFixed(2).padStart(7)}  ${row.label}\n`);
  process.stdout.write('\nretainers of the largest groups (first retainer, three steps up):\n');
  for (const row of rows.slice(0, 12)) {
    process.stdout.write(`\n${row.label}\n`);
    for (const [retainers, count] of commonRetainers(graph, row.label, 3, 4)) process.stdout.write(`  ${String(count).padStart(6)}  ${retainers}\n`);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--diff') return diff(argv[1]!, argv[2]!, Number(argv[3]));
  const bare = argv[0] === '--bare';
  const sizes = bare ? argv.slice(1) : argv;
  const small = Number(sizes[0] ?? '1000');
  const large = Number(sizes[1] ?? '5000');
  mkdirSync(PROFILE_DIR, { recursive: true });
  const [first, second] = await (bare ? takeBare : takeHub)(small, large);
  process.stdout.write(`snapshots: ${first}\n           ${second}\n`);
  diff(first, second, large - small);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
