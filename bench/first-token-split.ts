/**
 * Where a real-path first token's time goes (not a benchmark: `node dist/bench/first-token-split.js
 * [embedded|scaled] [openai|anthropic] [turns]`). One turn at a time, as `first-token` probes, with
 * each turn placed against the model server's own clock: the bench sends `user_message` → the
 * request arrives at the model server → the server writes its first event → the `token` frame
 * arrives at the bench. All three processes read the same wall clock (`performance.timeOrigin +
 * performance.now()`), so the hub's share splits into its part before the model (store, route, build
 * and send the request) and after it (read the answer, emit, deliver). With the hub's stage metrics:
 * `accepted`, `routed`, and the model call as the hub times it (from its call to the first chunk),
 * means over the same turns.
 */
import { turnProber } from './first-token';
import { hubLabel, startHubProcess, type BenchModel } from './lib/hub-process';
import { percentile } from './lib/latency';
import { histogramTotals, meanMs, scrapeAll } from './lib/scrape';

const TOKEN = 'bench-split-metrics-token-0123456789';

async function main(): Promise<void> {
  const [variant = 'embedded', model = 'openai', count = '1000'] = process.argv.slice(2) as ['embedded' | 'scaled', BenchModel, string];
  if (!['embedded', 'scaled'].includes(variant) || !['openai', 'anthropic'].includes(model) || !(Number(count) > 0))
    throw new Error('usage: first-token-split [embedded|scaled] [openai|anthropic] [turns]');
  const hub = await startHubProcess({
    variant,
    model,
    answerTokens: 3,
    env: { SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0', SERVICE_METRICS_TOKEN: TOKEN },
  });
  const label = hubLabel(variant, model);
  const prober = await turnProber(hub, label);
  try {
    for (let turn = 0; turn < 200; turn += 1) await prober.probe();
    await hub.modelMarks();
    const before = await scrapeAll(hub.metricsUrls, TOKEN);
    const turns = [];
    for (let turn = 0; turn < Number(count); turn += 1) turns.push(await prober.probeMarked());
    const after = await scrapeAll(hub.metricsUrls, TOKEN);
    const marks = await hub.modelMarks();
    // One model request a turn (a short answer, no tools): the n-th request is the n-th turn's.
    if (marks.length !== turns.length) throw new Error(`the model server answered ${marks.length} requests for ${turns.length} turns`);
    const parts = {
      'user_message → the request at the model server': turns.map((turn, index) => marks[index]![0] - turn.sentAt),
      "the model server's own time (arrival → first event)": marks.map(([arrived, firstEvent]) => firstEvent - arrived),
      'first event → the token frame at the client': turns.map((turn, index) => turn.firstTokenAt - marks[index]![1]),
      'user_message → token frame (the whole)': turns.map((turn) => turn.firstTokenAt - turn.sentAt),
    };
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const lines = [`${label}: ${turns.length} turns, one at a time (ms)`, `${''.padEnd(55)}   p50    mean     p90`];
    for (const [name, values] of Object.entries(parts))
      lines.push(`${name.padEnd(55)} ${percentile(values, 50).toFixed(3)}  ${mean(values).toFixed(3)}  ${percentile(values, 90).toFixed(3)}`);
    const stageMean = (name: string, labels: Record<string, string> = {}) =>
      meanMs(histogramTotals(before, name, labels), histogramTotals(after, name, labels)).toFixed(3);
    lines.push(
      `the hub's own timing, means: accepted ${stageMean('switchboard_turn_stage_seconds', { stage: 'accepted' })}, ` +
        `routed ${stageMean('switchboard_turn_stage_seconds', { stage: 'routed' })}, ` +
        `the model call to its first chunk ${stageMean('switchboard_model_first_token_seconds')}`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await prober.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
