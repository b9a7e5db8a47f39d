import { randomUUID } from 'node:crypto';
import type { WorkflowRow } from '../src/db/models';
import { Router } from '../src/routing/router';
import { regexProblem } from '../src/workflows/regex-safety';
import type { Benchmark, Metric } from './lib/benchmark';
import { percentile } from './lib/latency';

/**
 * The router's cost per message (decisions.md §4 scoring) with 50 and 500 workflows, on 1 KB and
 * 64 KiB messages. Every workflow has keywords (some phrases), a regex and contact tags; one is a
 * hostile-regex workflow: the most backtracking-prone pattern the save-time check still accepts,
 * matched against messages built to provoke it. No baseline: the goal is absolute.
 */
export const ROUTING_BENCH = {
  workflowCounts: [50, 500],
  messageBytes: [1024, 64 * 1024],
  goals: { p99Ms: 1 },
};

/**
 * Accepted by the save-time check (no nested quantifiers, probes finish), yet costly: `\w+\d+$` tries
 * every split of every word run, quadratic in a run's length (the messages end in a long run).
 * A truly catastrophic pattern, e.g. `(\w+\s?)+$`, is refused at save.
 */
const HOSTILE_PATTERN = '\\w+\\d+$';

function workflows(count: number): WorkflowRow[] {
  const rows = Array.from({ length: count }, (_, index) => ({
    id: randomUUID(),
    name: `workflow-${String(index).padStart(4, '0')}`,
    binding_channels: ['web', 'slack'],
    triggers: {
      keywords: [`service${index}`, `deploying team${index}`, 'incident', `runbook step ${index % 7}`],
      regex: [`\\bTICKET-${index}\\d*\\b`],
      contact_tags: [`tag${index % 20}`],
    },
  }));
  const hostile = { id: randomUUID(), name: 'hostile', binding_channels: ['web'], triggers: { keywords: [], regex: [HOSTILE_PATTERN], contact_tags: [] } };
  return [...rows, hostile] as unknown as WorkflowRow[];
}

/** Ordinary chat text with a few trigger words, padded to `bytes`; the tail provokes the hostile regex. */
function message(bytes: number, seed: number): string {
  const words = ['please', 'check', 'the', 'incident', 'for', `service${seed % 50}`, 'after', 'deploying', 'team7', 'yesterday'];
  let text = '';
  for (let index = 0; text.length < bytes - 40; index += 1) text += `${words[(index + seed) % words.length]} `;
  return `${text}${'x'.repeat(200)}!`.slice(-bytes);
}

export const benchmark: Benchmark = {
  name: 'routing',
  description: 'router p50/p99 per message with 50 and 500 workflows on 1 KB and 64 KiB messages, incl. a hostile-regex workflow',
  async run(options) {
    const problem = regexProblem(HOSTILE_PATTERN);
    if (problem) throw new Error(`the hostile pattern is refused at save (${problem}); pick one the check accepts`);
    const metrics: Metric[] = [];
    for (const count of ROUTING_BENCH.workflowCounts) {
      const router = new Router(workflows(count));
      for (const bytes of ROUTING_BENCH.messageBytes) {
        const messages = Array.from({ length: 20 }, (_, seed) => message(bytes, seed));
        const route = (index: number) =>
          router.route({ text: messages[index % messages.length]!, channel: 'web', contact: { tags: ['tag3'], workflow_id: null } });
        const deadline = (seconds: number) => performance.now() + seconds * 1000;
        for (let index = 0, end = deadline(options.warmupS); performance.now() < end; index += 1) route(index);
        const p50: number[] = [];
        const p99: number[] = [];
        for (let run = 0; run < options.runs; run += 1) {
          const samples: number[] = [];
          for (let index = 0, end = deadline(options.durationS); performance.now() < end; index += 1) {
            const started = performance.now();
            route(index);
            samples.push(performance.now() - started);
          }
          p50.push(percentile(samples, 50));
          p99.push(percentile(samples, 99));
          options.log(
            `routing ${count} workflows, ${bytes} B: run ${run + 1} p50 ${p50.at(-1)!.toFixed(3)} ms, p99 ${p99.at(-1)!.toFixed(3)} ms (${samples.length} messages)`,
          );
        }
        const label = `${count} workflows, ${bytes >= 1024 * 64 ? '64 KiB' : '1 KB'}`;
        metrics.push({ name: `${label}: p50`, unit: 'ms', samples: p50 });
        const goal =
          count === 500 && bytes === 1024
            ? { text: `≤ ${ROUTING_BENCH.goals.p99Ms} ms`, met: (median: number) => median <= ROUTING_BENCH.goals.p99Ms }
            : undefined;
        metrics.push({ name: `${label}: p99`, unit: 'ms', samples: p99, ...(goal ? { goal } : {}) });
      }
    }
    return { metrics, setup: { workflowCounts: ROUTING_BENCH.workflowCounts, messageBytes: ROUTING_BENCH.messageBytes, hostilePattern: HOSTILE_PATTERN } };
  },
};
