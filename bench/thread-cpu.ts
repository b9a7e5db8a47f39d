/**
 * Where a turn's CPU goes, thread by thread (not a benchmark: `node dist/bench/thread-cpu.js
 * [embedded|scaled] [in-process|openai|anthropic] [runs] [turns-per-socket]`). Drives 64 sockets of
 * 20-token turns at saturation, as `turn-cost` does, and reads every thread of every hub process
 * from /proc before and after each run: user and system CPU per turn, apart. On a machine where
 * throughput drifts by tens of percent from one minute to the next, this split is steadier than the
 * totals, and it answers what a profile cannot: whether a cost is JavaScript on the event loop
 * (main, user), system calls (main, system) or hand-offs to other threads (the SQLite writer thread,
 * the libuv pool that runs sqlite3's statements, V8's GC helpers). It also prints what the model
 * server and this driver used per turn: on a small machine they share the hub's cores.
 *
 * Thread roles are told apart by creation order and what each waits in, as Node 20
 * starts them (see `roles`); a thread they do not name is listed by its id. The numbers do not depend
 * on the names.
 */
import os from 'node:os';
import { hubLabel, startHubProcess, type BenchModel } from './lib/hub-process';
import { processCpuSeconds, threadCpu, TICKS_PER_SECOND, type ThreadCpu } from './lib/proc-cpu';
import { driveTurns } from './lib/turn-driver';

const SOCKETS = 64;
const V8_POOL = 4;
const LIBUV_POOL = Number(process.env.UV_THREADPOOL_SIZE ?? 4);

/** x86-64 and arm64 numbers of the system calls an idle thread of Node waits in. */
const WAITS: Record<string, Record<number, string>> = {
  x64: { 0: 'read', 7: 'poll', 202: 'futex', 232: 'epoll_wait', 281: 'epoll_pwait', 441: 'epoll_pwait2' },
  arm64: { 22: 'epoll_pwait', 63: 'read', 73: 'ppoll', 98: 'futex', 441: 'epoll_pwait2' },
};

/**
 * Each thread's role, as Node 20 starts them: the main thread; the platform's delayed-task thread
 * (an event loop of its own, started next); V8's worker pool (the first `--v8-pool-size` threads
 * that wait in futex); libuv's pool (UV_THREADPOOL_SIZE threads, started on first use, before any
 * worker thread); then worker threads (an event loop each) and anything else, by thread id.
 */
function roles(threads: readonly ThreadCpu[]): Map<number, string> {
  const named = new Map<number, string>();
  const [main, ...rest] = threads;
  if (!main) return named;
  named.set(main.tid, 'main (event loop)');
  const waits = (thread: ThreadCpu) => WAITS[process.arch]?.[thread.waitingIn] ?? `syscall ${thread.waitingIn}`;
  const loops = rest.filter((thread) => waits(thread).startsWith('epoll'));
  if (loops[0] && loops[0] === rest[0]) named.set(loops[0].tid, 'platform: delayed tasks');
  const parked = rest.filter((thread) => waits(thread) === 'futex');
  for (const thread of parked.slice(0, V8_POOL)) named.set(thread.tid, 'V8 workers (GC, compiler)');
  // libuv starts its pool on first use, during module loading: the last futex threads before the first worker thread's loop.
  const firstWorker = loops.find((thread) => thread !== rest[0]);
  const pool = parked
    .slice(V8_POOL)
    .filter((thread) => !firstWorker || thread.tid < firstWorker.tid)
    .slice(-LIBUV_POOL);
  for (const thread of pool) named.set(thread.tid, 'libuv pool (sqlite3, fs)');
  for (const thread of rest) {
    if (named.has(thread.tid)) continue;
    named.set(thread.tid, loops.includes(thread) ? `worker thread ${thread.tid} (an event loop)` : `thread ${thread.tid} (waits in ${waits(thread)})`);
  }
  return named;
}

interface Usage {
  user: number;
  system: number;
}

/** Ticks used between two readings, by role (threads of one role summed; a thread that ended meanwhile is not counted). */
function byRole(owner: string, named: Map<number, string>, before: ThreadCpu[], after: ThreadCpu[], into: Map<string, Usage>): void {
  const earlier = new Map(before.map((thread) => [thread.tid, thread]));
  after.forEach((thread) => {
    const key = `${owner} ${named.get(thread.tid) ?? `thread ${thread.tid} (started during the run)`}`;
    const was = earlier.get(thread.tid);
    const usage = into.get(key) ?? { user: 0, system: 0 };
    usage.user += thread.userTicks - (was?.userTicks ?? 0);
    usage.system += thread.systemTicks - (was?.systemTicks ?? 0);
    into.set(key, usage);
  });
}

async function main(): Promise<void> {
  const [variant = 'embedded', model = 'openai', runs = '3', turnsPerSocket = '20'] = process.argv.slice(2) as [
    'embedded' | 'scaled',
    BenchModel,
    string,
    string,
  ];
  if (
    !['embedded', 'scaled'].includes(variant) ||
    !['in-process', 'openai', 'anthropic'].includes(model) ||
    !(Number(runs) > 0) ||
    !(Number(turnsPerSocket) > 0)
  )
    throw new Error('usage: thread-cpu [embedded|scaled] [in-process|openai|anthropic] [runs] [turns-per-socket]');
  const hub = await startHubProcess({ variant, model });
  try {
    const processes = hub.children.map((child, index) => ({
      name: index === 0 ? 'api' : `worker${hub.children.length > 2 ? index : ''}`,
      pid: child.process.pid!,
    }));
    const { urls } = await hub.sessions(SOCKETS);
    await driveTurns(urls, hub.headers, 10); // warm-up
    // Named once, idle (a thread at work waits in nothing, so it could not be told apart).
    const named = processes.map(({ pid }) => roles(threadCpu(pid)));
    const usage = new Map<string, Usage>();
    let turns = 0;
    let seconds = 0;
    let outside = { model: 0, driver: 0 };
    for (let run = 0; run < Number(runs); run += 1) {
      const before = processes.map(({ pid }) => threadCpu(pid));
      const modelBefore = hub.modelServerPid ? processCpuSeconds(hub.modelServerPid) : 0;
      const driverBefore = process.cpuUsage();
      const measured = await driveTurns(urls, hub.headers, Number(turnsPerSocket));
      const driver = process.cpuUsage(driverBefore);
      const modelAfter = hub.modelServerPid ? processCpuSeconds(hub.modelServerPid) : 0;
      processes.forEach(({ name, pid }, index) => byRole(name, named[index]!, before[index]!, threadCpu(pid), usage));
      outside = { model: outside.model + modelAfter - modelBefore, driver: outside.driver + (driver.user + driver.system) / 1e6 };
      turns += measured.turns;
      seconds += measured.seconds;
    }
    const perTurn = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6) / turns;
    const lines = [
      `${hubLabel(variant, model)}: ${turns} turns, ${(turns / seconds).toFixed(0)} turns/s (${os.cpus().length} cores); CPU µs per turn`,
      `${'thread'.padEnd(56)}  user  system   total`,
    ];
    let total = 0;
    for (const [key, { user, system }] of [...usage].sort((a, b) => b[1].user + b[1].system - (a[1].user + a[1].system))) {
      if (user + system === 0) continue;
      total += user + system;
      lines.push(
        `${key.padEnd(56)} ${perTurn(user).toFixed(0).padStart(5)}  ${perTurn(system).toFixed(0).padStart(6)}  ${perTurn(user + system)
          .toFixed(0)
          .padStart(6)}`,
      );
    }
    lines.push(
      `${(variant === 'scaled' ? 'the hub processes, all threads (not PostgreSQL, Redis)' : 'the hub, all threads').padEnd(56)} ${''.padStart(5)}  ${''.padStart(6)}  ${perTurn(total).toFixed(0).padStart(6)}`,
    );
    if (hub.modelServerPid)
      lines.push(
        `${'the model server (not the hub: shares the cores)'.padEnd(56)} ${''.padStart(13)}  ${((outside.model * 1e6) / turns).toFixed(0).padStart(6)}`,
      );
    lines.push(`${'this driver (64 sockets; shares the cores)'.padEnd(56)} ${''.padStart(13)}  ${((outside.driver * 1e6) / turns).toFixed(0).padStart(6)}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await hub.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
