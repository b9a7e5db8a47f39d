import { chunkBatches, flattenReads, type LlmProvider, type ProviderChunk, type ProviderRequest } from '../agent/provider';
import type { HubMetrics } from '../metrics/hub-metrics';
import { failed, SpanKind, type Tracing } from '../tracing/tracing';

/**
 * The provider as the worker calls it, with each call measured (`switchboard_model_calls_total`,
 * the model's own time to first token) and traced as a GenAI `chat` span (OpenTelemetry GenAI
 * semantic conventions: operation, provider, model, usage) under the active span. The chunks pass
 * through untouched; the provider itself never knows.
 */
export function observedProvider(provider: LlmProvider, metrics: HubMetrics | null, tracing: Tracing | null): LlmProvider {
  if (!metrics && !tracing) return provider;
  // Observed by read: a provider with `streamReads` keeps its batches.
  return {
    name: provider.name,
    model: provider.model,
    stream: (request) => flattenReads(observe(provider, request, metrics, tracing)),
    streamReads: (request) => observe(provider, request, metrics, tracing),
  };
}

async function* observe(provider: LlmProvider, request: ProviderRequest, metrics: HubMetrics | null, tracing: Tracing | null): AsyncGenerator<ProviderChunk[]> {
  const started = performance.now();
  const span =
    tracing?.startSpan(`chat ${provider.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': provider.name,
        'gen_ai.system': provider.name,
        'gen_ai.request.model': provider.model,
        'gen_ai.request.tool_count': request.tools?.length ?? 0,
      },
    }) ?? null;
  let first = true;
  let outcome: 'ok' | 'error' | 'aborted' = 'ok';
  try {
    for await (const batch of chunkBatches(provider, request)) {
      for (const chunk of batch) {
        if (first && chunk.type !== 'usage') {
          first = false;
          const seconds = (performance.now() - started) / 1000;
          metrics?.modelFirstTokenAfter(provider.model, seconds);
          span?.addEvent('gen_ai.first_token');
        }
        if (chunk.type === 'usage') span?.setAttributes({ 'gen_ai.usage.input_tokens': chunk.inputTokens, 'gen_ai.usage.output_tokens': chunk.outputTokens });
      }
      yield batch;
    }
  } catch (error) {
    outcome = request.signal.aborted ? 'aborted' : 'error';
    if (span) failed(span, error);
    throw error;
  } finally {
    metrics?.modelCall(provider.model, outcome);
    span?.end();
  }
}
