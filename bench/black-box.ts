/**
 * Issue 34's goals measured black-box (not a benchmark of `npm run bench`): a hub someone started
 * the way a deployment does — `npm start`, its configuration from the environment and config.yaml,
 * its model reached over HTTP — driven from outside as clients meet it, its CPU read from
 * /proc/<pid>. Same-run baselines are started here: the developers' bench hub with the in-process
 * model (turns/s ratio) and a bare express route (REST ratio). docs/performance.md, "Black-box run",
 * gives the commands that start the model server and the hub.
 *
 *   node dist/bench/black-box.js <hub URL> <hub pid> [--model-times=<URL>] [--runs=3] [--duration=5] [--log-level=info]
 *
 * `--log-level`: the hub's own (default info, config.yaml's), given to the in-process reference hub.
 *
 * The hub must let one address register a user and send ~10,000 requests a second
 * (SERVICE_RATE_LIMIT_DEFAULT, SERVICE_RATE_LIMIT_AUTH_REGISTER); its model answers 20 tokens.
 */
import { randomUUID } from 'node:crypto';
import type { Metric } from './lib/benchmark';
import { FIRST_TOKEN_BENCH, lessModelTime, sample, turnProber } from './first-token';
import { createSessions, registerUser } from './lib/hub';
import { startHubProcess, type HubUnderTest } from './lib/hub-process';
import { percentile } from './lib/latency';
import { processCpuSeconds } from './lib/proc-cpu';
import { renderTable } from './lib/report';
import { INGEST_BENCH, postMessages } from './ingest';
import { measure, TURN_COST_BENCH } from './turn-cost';

interface Arguments {
  base: string;
  pid: number;
  modelTimesUrl: string | null;
  runs: number;
  durationS: number;
  /** The reference hub's log level: the hub under test's own (config.yaml's default: info). */
  logLevel: string;
}

function parseArguments(argv: string[]): Arguments {
  const flags = new Map<string, string>();
  for (const argument of argv) {
    const flag = /^--(model-times|runs|duration|log-level)=(.+)$/.exec(argument);
    if (flag) flags.set(flag[1]!, flag[2]!);
    else if (argument.startsWith('--')) throw new Error(`unknown option ${argument} (known: --model-times=URL --runs=N --duration=S --log-level=L)`);
  }
  const [base, pid] = argv.filter((argument) => !argument.startsWith('--'));
  if (!base || !pid || !/^\d+$/.test(pid))
    throw new Error('usage: black-box <hub URL> <hub pid> [--model-times=<URL>] [--runs=3] [--duration=5] [--log-level=info]');
  if (processCpuSeconds(Number(pid)) === 0) throw new Error(`no process ${pid} to read CPU from (/proc/${pid}/stat)`);
  return {
    base: base.replace(/\/$/, ''),
    pid: Number(pid),
    modelTimesUrl: flags.get('model-times') ?? null,
    runs: Number(flags.get('runs') ?? '3'),
    durationS: Number(flags.get('duration') ?? '5'),
    logLevel: flags.get('log-level') ?? 'info',
  };
}

/** The running hub as the bench's drivers see one; stopping it leaves it running (it is not ours). */
async function outsideHub(args: Arguments): Promise<HubUnderTest> {
  const api = `${args.base}/api/v1`;
  const user = await registerUser(api, `blackbox-${randomUUID().slice(0, 8)}`);
  const socketBase = args.base.replace(/^http/, 'ws');
  return {
    label: 'black-box',
    base: args.base,
    headers: { authorization: `Bearer ${user.token}` },
    metricsUrls: [],
    children: [],
    dataDir: '',
    env: {},
    addWorker: () => Promise.reject(new Error('the black-box hub is not started here')),
    modelTimes: async () => (args.modelTimesUrl ? ((await (await fetch(args.modelTimesUrl)).json()) as number[]) : []),
    modelMarks: async () => (args.modelTimesUrl ? ((await (await fetch(new URL('marks', args.modelTimesUrl))).json()) as [number, number][]) : []),
    sessions: async (count) => {
      const ids = await createSessions(api, user.token, count);
      return { ids, urls: ids.map((id) => `${socketBase}/ws/v1/sessions/${id}`) };
    },
    cpu: () => Promise.resolve({ hub: processCpuSeconds(args.pid) }),
    stop: () => Promise.resolve(),
  };
}

async function turnsPerSocketFor(hub: HubUnderTest, durationS: number): Promise<number> {
  const { sockets } = TURN_COST_BENCH;
  await measure(hub, sockets, 3);
  const warm = await measure(hub, sockets, 5);
  return Math.max(5, Math.round((warm.rate * durationS) / sockets));
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  const log = (line: string) => process.stderr.write(`  [black-box] ${line}\n`);
  const hub = await outsideHub(args);
  // The same hub with the in-process model: configured alike, so its log lines cost what the other's do.
  const reference = await startHubProcess({ variant: 'embedded', answerTokens: TURN_COST_BENCH.answerTokens, env: { SERVICE_LOG_LEVEL: args.logLevel } });
  const express = await startHubProcess({ variant: 'express' });
  const samples: Record<string, number[]> = {};
  const push = (name: string, value: number) => (samples[name] ??= []).push(value);
  try {
    const [hubTurns, referenceTurns] = [await turnsPerSocketFor(hub, args.durationS), await turnsPerSocketFor(reference, args.durationS)];
    const hubIds = (await hub.sessions(INGEST_BENCH.sessions)).ids;
    const expressIds = (await express.sessions(INGEST_BENCH.sessions)).ids;
    await postMessages(hub, hubIds, 2, 'black-box warm-up');
    await postMessages(express, expressIds, 2, 'express warm-up');
    const prober = await turnProber(hub, 'black-box');
    try {
      await sample(prober, 1);
      for (let run = 0; run < args.runs; run += 1) {
        const turns = await measure(hub, TURN_COST_BENCH.sockets, hubTurns);
        const inProcess = await measure(reference, TURN_COST_BENCH.sockets, referenceTurns);
        await prober.modelTimes?.();
        const latencies = await sample(prober, args.durationS);
        const modelTimes = (await prober.modelTimes?.()) ?? [];
        const firstToken = percentile(args.modelTimesUrl ? lessModelTime(latencies, modelTimes, log) : latencies, 50);
        const rest = await postMessages(hub, hubIds, args.durationS, 'black-box');
        const bare = await postMessages(express, expressIds, args.durationS, 'express');
        push('turns', turns.rate);
        push('inProcess', inProcess.rate);
        push('cpu', turns.cpuMs.total!);
        push('firstToken', firstToken);
        push('rest', rest.perSecond);
        push('restRatio', rest.perSecond / bare.perSecond);
        push('restP99', rest.p99Ms);
        push('express', bare.perSecond);
        log(
          `run ${run + 1}/${args.runs}: ${turns.rate.toFixed(0)} turns/s (in-process bench hub ${inProcess.rate.toFixed(0)}), CPU ${turns.cpuMs.total!.toFixed(3)} ms/turn; ` +
            `first token p50 ${firstToken.toFixed(2)} ms less the model's; REST ${rest.perSecond.toFixed(0)}/s (express ${bare.perSecond.toFixed(0)}), p99 ${rest.p99Ms} ms`,
        );
      }
    } finally {
      await prober.stop();
    }
  } finally {
    await reference.stop();
    await express.stop();
  }
  const { realPath } = TURN_COST_BENCH.goals;
  const { goals } = INGEST_BENCH;
  const ratio = (name: string, over: string) => samples[name]!.map((value, run) => value / samples[over]![run]!);
  const metrics: Metric[] = [
    { name: 'turns at saturation', unit: 'turns/s', samples: samples.turns! },
    {
      name: `turns/s ÷ the same hub with the in-process model (log level ${args.logLevel})`,
      unit: '×',
      samples: ratio('turns', 'inProcess'),
      goal: { text: `≥ ${realPath.turnsRatio}`, met: (median) => median >= realPath.turnsRatio },
    },
    {
      name: 'CPU per turn, the hub process',
      unit: 'ms',
      samples: samples.cpu!,
      goal: { text: `≤ ${realPath.embeddedCpuMsPerTurn}`, met: (median) => median <= realPath.embeddedCpuMsPerTurn },
    },
    {
      name: `first token p50${args.modelTimesUrl ? ' less the model’s own time' : ''}`,
      unit: 'ms',
      samples: samples.firstToken!,
      goal: { text: `≤ ${FIRST_TOKEN_BENCH.goals.realPath.embeddedP50Ms}`, met: (median) => median <= FIRST_TOKEN_BENCH.goals.realPath.embeddedP50Ms },
    },
    { name: 'REST answered (202 + 409)', unit: 'req/s', samples: samples.rest! },
    {
      name: 'REST answered ÷ bare express',
      unit: '×',
      samples: samples.restRatio!,
      goal: { text: `≥ ${goals.ratio}`, met: (median) => median >= goals.ratio },
    },
    { name: 'REST p99', unit: 'ms', samples: samples.restP99!, goal: { text: `≤ ${goals.p99Ms}`, met: (median) => median <= goals.p99Ms } },
    { name: 'bare express answered', unit: 'req/s', samples: samples.express! },
  ];
  process.stdout.write(
    `${renderTable({ name: 'black-box', description: `the hub at ${args.base} (pid ${args.pid}), driven from outside`, run: () => Promise.reject(new Error('not a bench')) }, { metrics, setup: {} })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
