import type { Benchmark, Metric } from './lib/benchmark';
import { startHubProcess } from './lib/hub-process';
import { percentile } from './lib/latency';
import { histogramTotals, meanMs, scrapeAll } from './lib/scrape';
import { sample, turnProber } from './first-token';

/**
 * What the hub itself adds to the time to first answer, from its own stage metrics (issue 20):
 * message received → first token frame delivered (`switchboard_turn_first_answer_seconds`) minus
 * the model's own time to first token (`switchboard_model_first_token_seconds`), as means over
 * the turns of a run, read from `/metrics` of every hub process before and after it. One turn at a
 * time (as `first-token`), embedded and scaled, metrics on (each process on a port of its own).
 * The stage means say where the time goes; their sum less the model's time agrees with the
 * figure within the stages' own gaps. The client's own p50 is given beside it.
 */
export const HUB_OVERHEAD_BENCH = {
  answerTokens: 3,
  /** A model that takes this long to its first token: the overhead must not depend on it. */
  modelFirstTokenMs: 0,
  token: 'bench-metrics-token-0123456789',
  stages: ['accepted', 'queued', 'routed', 'first_token', 'delivered'] as const,
  goals: { embeddedMs: 2, scaledMs: 4 },
};

type Variant = 'embedded' | 'scaled';

interface Totals {
  firstAnswer: { sum: number; count: number };
  model: { sum: number; count: number };
  stages: Record<string, { sum: number; count: number }>;
}

function totals(text: string): Totals {
  return {
    firstAnswer: histogramTotals(text, 'switchboard_turn_first_answer_seconds'),
    model: histogramTotals(text, 'switchboard_model_first_token_seconds'),
    stages: Object.fromEntries(HUB_OVERHEAD_BENCH.stages.map((stage) => [stage, histogramTotals(text, 'switchboard_turn_stage_seconds', { stage })])),
  };
}

export const benchmark: Benchmark = {
  name: 'hub-overhead',
  description:
    "hub overhead: message received → first token frame delivered, minus the model's own time to first token, from the stage metrics (embedded, scaled)",
  async run({ runs, durationS, warmupS, log }) {
    const results: Record<Variant, Record<string, number[]>> = { embedded: {}, scaled: {} };
    const push = (variant: Variant, name: string, value: number) => (results[variant][name] ??= []).push(value);
    for (const variant of ['embedded', 'scaled'] as const) {
      const hub = await startHubProcess({
        variant,
        answerTokens: HUB_OVERHEAD_BENCH.answerTokens,
        env: { SERVICE_METRICS_ENABLED: 'true', SERVICE_METRICS_PORT: '0', SERVICE_METRICS_TOKEN: HUB_OVERHEAD_BENCH.token },
      });
      const prober = await turnProber(hub, variant);
      try {
        log(`warm-up ${variant} (${warmupS} s)`);
        await sample(prober, warmupS);
        for (let run = 0; run < runs; run += 1) {
          const before = totals(await scrapeAll(hub.metricsUrls, HUB_OVERHEAD_BENCH.token));
          const latencies = await sample(prober, durationS);
          const after = totals(await scrapeAll(hub.metricsUrls, HUB_OVERHEAD_BENCH.token));
          const firstAnswer = meanMs(before.firstAnswer, after.firstAnswer);
          const model = meanMs(before.model, after.model);
          const stages = Object.fromEntries(HUB_OVERHEAD_BENCH.stages.map((stage) => [stage, meanMs(before.stages[stage]!, after.stages[stage]!)]));
          push(variant, 'overhead', firstAnswer - model);
          push(variant, 'first answer', firstAnswer);
          push(variant, 'model', model);
          push(variant, 'stages less model', Object.values(stages).reduce((sum, value) => sum + value, 0) - model);
          for (const [stage, value] of Object.entries(stages)) push(variant, `stage ${stage}`, value);
          push(variant, 'client p50', percentile(latencies, 50));
          log(
            `run ${run + 1}/${runs} ${variant}: overhead ${(firstAnswer - model).toFixed(3)} ms (first answer ${firstAnswer.toFixed(3)}, model ${model.toFixed(3)}); ${Object.entries(
              stages,
            )
              .map(([stage, value]) => `${stage} ${value.toFixed(3)}`)
              .join(', ')}; client p50 ${percentile(latencies, 50).toFixed(3)} ms`,
          );
        }
      } finally {
        await prober.stop();
      }
    }
    const { goals } = HUB_OVERHEAD_BENCH;
    const metrics: Metric[] = [
      {
        name: 'embedded: hub overhead (first answer − model first token)',
        unit: 'ms',
        samples: results.embedded.overhead!,
        goal: { text: `≤ ${goals.embeddedMs}`, met: (median) => median <= goals.embeddedMs },
      },
      {
        name: 'scaled: hub overhead (first answer − model first token)',
        unit: 'ms',
        samples: results.scaled.overhead!,
        goal: { text: `≤ ${goals.scaledMs}`, met: (median) => median <= goals.scaledMs },
      },
      ...(['embedded', 'scaled'] as const).flatMap((variant) =>
        Object.entries(results[variant])
          .filter(([name]) => name !== 'overhead')
          .map(([name, samples]): Metric => ({ name: `${variant}: ${name}`, unit: 'ms', samples })),
      ),
    ];
    return {
      metrics,
      setup: {
        model: `fixed answer of ${HUB_OVERHEAD_BENCH.answerTokens} tokens, first token at once`,
        metrics: 'on, each process on a port of its own (scraped before and after every run)',
        measure: 'one turn at a time on one socket; means of the hub’s own histograms over the run',
      },
    };
  },
};
