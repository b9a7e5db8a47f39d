/**
 * The REST ingest path's cost per answer (not a benchmark: `node dist/bench/ingest-profile.js
 * [embedded|scaled|express|floor] [seconds] [--profile]`). Drives `POST /sessions/{id}/messages` as
 * the `ingest` benchmark does (50 clients, 200 sessions, worker on) and prints answered/s, p99 and
 * the CPU each serving process spent per answer (from /proc, so a machine shared with other work
 * still gives comparable figures). With `--profile` the hub runs with `--cpu-prof` and the profile's
 * summary (by package, by function) of the samples taken while the load ran follows; the files stay in bench/profiles/.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { postMessages } from './ingest';
import { cpuDelta, startHubProcess } from './lib/hub-process';
import { summariseProfile } from './profile';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const profile = argv.includes('--profile');
  const [variant = 'embedded', seconds = '5'] = argv.filter((argument) => !argument.startsWith('--'));
  if (!['embedded', 'scaled', 'express', 'floor'].includes(variant))
    throw new Error('usage: ingest-profile [embedded|scaled|express|floor] [seconds] [--profile]');
  const directory = path.resolve(__dirname, '../../bench/profiles', `ingest-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  if (profile) mkdirSync(directory, { recursive: true });
  const hub = await startHubProcess({ variant: variant as 'embedded', profileDir: profile ? directory : undefined });
  let window: { from: number; to: number } | undefined;
  try {
    const { ids } = await hub.sessions(200);
    await postMessages(hub, ids, 2, 'warm-up');
    const before = await hub.cpu();
    const started = process.hrtime.bigint();
    const load = await postMessages(hub, ids, Number(seconds), variant);
    const ended = process.hrtime.bigint();
    const elapsed = Number(ended - started) / 1e9;
    // Only the samples taken while the load ran (µs of the monotonic clock, as the profile's): not start-up, not the warm-up.
    window = { from: Number(started / 1000n), to: Number(ended / 1000n) };
    const cpu = cpuDelta(before, await hub.cpu());
    const answers = load.perSecond * elapsed;
    const perAnswer = Object.entries(cpu).map(([part, spent]) => `${part} ${((spent / answers) * 1e6).toFixed(0)} µs`);
    process.stdout.write(
      `${variant}: ${load.perSecond.toFixed(0)} answered/s (${(load.accepted * 100).toFixed(1)} % 202), p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms; CPU per answer: ${perAnswer.join(', ')}\n`,
    );
  } finally {
    await hub.stop();
  }
  if (!profile) return;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    process.stdout.write(
      `\n${path.join(directory, file)}\n${summariseProfile(JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as Parameters<typeof summariseProfile>[0], 40, window)}\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
