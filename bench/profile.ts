/**
 * Profiles the hub under turn load (not a benchmark: `npm run bench:profile -- [embedded|scaled]
 * [turns-per-socket] [history-messages] [--model=in-process|openai|anthropic] [--stream=N]`; with
 * history, each session starts with that many stored messages). Starts the hub processes with
 * `--cpu-prof`, runs 64 sockets of 20-token turns (or, with `--stream=N`, one turn of N tokens on
 * one socket, `turns-per-socket` times), stops them, and prints where the CPU went: self time by
 * function and by package, per process. `--model=openai` / `anthropic`: the hub reaches its model
 * through the real provider over HTTP (the fake vendor server in a process of its own, not
 * profiled). The .cpuprofile files stay in bench/profiles/ (open them in Chrome DevTools).
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_MODELS, startHubProcess, type BenchModel } from './lib/hub-process';
import { driveTurns } from './lib/turn-driver';
import { fillHistory } from './turn-cost';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self time per function and per package (node_modules/<name>, our own files, node internals).
 * With `window` (µs of the monotonic clock, which `process.hrtime` and V8's profile timestamps both
 * read on Linux) only the samples inside it count: the load, not the process start and stop.
 */
export function summariseProfile(profile: CpuProfile, top = 25, window?: { from: number; to: number }): string {
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index += 1) {
    const id = profile.samples[index]!;
    at += profile.timeDeltas[index] ?? 0;
    if (window && (at < window.from || at > window.to)) continue;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const micros = self.get(node.id) ?? 0;
    if (micros === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    total += micros;
    const file = url.replace(/^file:\/\//, '');
    const name = `${functionName || '(anonymous)'} ${file ? `${path.basename(file)}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    const packageName =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ??
      (file.includes('/dist/') ? 'switchboard' : file.startsWith('node:') ? 'node' : functionName.startsWith('(') ? functionName : 'node');
    byPackage.set(packageName, (byPackage.get(packageName) ?? 0) + micros);
  }
  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => `  ${((micros / total) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`);
  return [
    `busy ${(total / 1000).toFixed(0)} ms${window ? ` while the load ran (${((window.to - window.from) / 1000).toFixed(0)} ms)` : ''}`,
    'by package:',
    ...rows(byPackage).slice(0, 15),
    'by function (self):',
    ...rows(byFunction),
  ].join('\n');
}

const USAGE = 'usage: profile [embedded|scaled|floor] [turns-per-socket] [history-messages] [--model=in-process|openai|anthropic] [--stream=tokens]';

function parseArguments(argv: string[]) {
  const flags = Object.fromEntries(argv.filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=') as [string, string]));
  const [variant = 'embedded', turns = '40', history = '0'] = argv.filter((a) => !a.startsWith('--'));
  const model = (flags.model ?? 'in-process') as BenchModel;
  if (variant !== 'embedded' && variant !== 'scaled' && variant !== 'floor') throw new Error(USAGE);
  if (!BENCH_MODELS.includes(model) || Object.keys(flags).some((flag) => flag !== 'model' && flag !== 'stream')) throw new Error(USAGE);
  return { variant: variant as 'embedded' | 'scaled' | 'floor', turns: Number(turns), history: Number(history), model, stream: Number(flags.stream ?? 0) };
}

async function main(): Promise<void> {
  const { variant, turns, history, model, stream } = parseArguments(process.argv.slice(2));
  const directory = path.resolve(__dirname, '../../bench/profiles', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(directory, { recursive: true });
  let window: { from: number; to: number } | undefined;
  const hub = await startHubProcess({ variant, profileDir: directory, model, ...(stream > 0 ? { answerTokens: stream } : {}) });
  try {
    const { ids, urls } = await hub.sessions(stream > 0 ? 1 : 64);
    if (history > 0) await fillHistory(hub, ids, history);
    const from = Number(process.hrtime.bigint() / 1000n);
    const run = await driveTurns(urls, hub.headers, turns);
    window = { from, to: Number(process.hrtime.bigint() / 1000n) };
    const tokens = stream > 0 ? `, ${((run.turns * stream) / run.seconds).toFixed(0)} tokens/s` : '';
    process.stdout.write(`${run.turns} turns in ${run.seconds.toFixed(2)} s (${(run.turns / run.seconds).toFixed(0)} turns/s${tokens}), model ${model}\n`);
  } finally {
    await hub.stop();
  }
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    process.stdout.write(
      `\n${path.join(directory, file)}\n${summariseProfile(JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as CpuProfile, 25, window)}\n`,
    );
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
