import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config';
import { VERSION } from '../version';

export { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';

/** Limits of the span batch sent to the collector. */
export const TRACING_DEFAULTS = {
  /** Spans are sent at least this often. */
  scheduledDelayMs: 1_000,
  /** Spans kept while the collector is slow; older ones are dropped, the hub never waits. */
  maxQueueSize: 4_096,
  exportTimeoutMs: 10_000,
};

/**
 * OpenTelemetry traces of this process (docs/observability.md), or nothing: `startTracing` returns
 * null unless `traces.otlp_url` is set, and every caller skips its spans then, so a hub without
 * traces pays one null check per place. One trace per turn: the span of the inbound message
 * (`ingest`, API process) is the parent of the worker's `turn` span — the context travels in the job
 * (`TurnJob.trace`) — and of the channel's `deliver` span; routing, every model call (GenAI semantic
 * conventions), tool call and confirmation wait are children of `turn`.
 */
export class Tracing {
  private constructor(
    private readonly provider: NodeTracerProvider,
    readonly tracer: Tracer,
  ) {}

  /** Starts the SDK (exporter, AsyncLocalStorage context, W3C propagation) when configured. */
  static start(config: Readonly<Config>['traces'], role: string): Tracing | null {
    if (!config.otlp_url) return null;
    // The SDK and its exporter are loaded only when traces are on (~0.3 s of a start, 2-core machine).
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
    const { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } =
      require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
    const exporter = new OTLPTraceExporter({ url: config.otlp_url, timeoutMillis: TRACING_DEFAULTS.exportTimeoutMs });
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.service_name, 'service.version': VERSION, 'service.instance.role': role }),
      // A turn is traced whole or not at all: the worker follows the API process's decision.
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sample_ratio) }),
      spanProcessors: [
        new BatchSpanProcessor(exporter, { scheduledDelayMillis: TRACING_DEFAULTS.scheduledDelayMs, maxQueueSize: TRACING_DEFAULTS.maxQueueSize }),
      ],
    });
    // The active span follows async calls (AsyncLocalStorage): model, tool and log calls made
    // inside a turn find it without being handed it.
    provider.register();
    return new Tracing(provider, provider.getTracer('switchboard', VERSION));
  }

  /** A span started now under `parent` (default: the active one). */
  startSpan(name: string, options: { kind?: SpanKind; attributes?: Attributes; startTime?: number } = {}, parent: Context = context.active()): Span {
    return this.tracer.startSpan(name, options, parent);
  }

  /**
   * Runs `work` inside a new span (the active one meanwhile), ending it when `work` settles; a throw
   * marks it failed. `parent` defaults to the active span.
   */
  async inSpan<T>(
    name: string,
    options: { kind?: SpanKind; attributes?: Attributes },
    work: (span: Span) => Promise<T>,
    parent: Context = context.active(),
  ): Promise<T> {
    const span = this.tracer.startSpan(name, options, parent);
    try {
      return await context.with(trace.setSpan(parent, span), () => work(span));
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** Runs `work` with `span` active (spans it starts are its children); the span is not ended. */
  within<T>(span: Span, work: () => Promise<T>): Promise<T> {
    return context.with(trace.setSpan(context.active(), span), work);
  }

  /** The W3C trace context of `span`, for a job's data. */
  carrier(span: Span): Record<string, string> {
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    return carrier;
  }

  /** A context whose active span is `span` (a parent for spans started later, elsewhere). */
  contextWith(span: Span): Context {
    return trace.setSpan(context.active(), span);
  }

  /** The context a job's carrier describes (the root context when it has none). */
  contextOf(carrier: Record<string, string> | undefined): Context {
    return carrier ? propagation.extract(context.active(), carrier) : context.active();
  }

  /** Sends what is still buffered; called at shutdown. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }
}

/** Marks a span failed with the error's class and message (never a stack or a secret-bearing cause). */
export function failed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
}

/** Marks the active span (a turn's) failed with an error code: the turn ended in an error it reported. */
export function activeSpanFailed(code: string, message: string): void {
  const span = trace.getSpan(context.active());
  if (!span) return;
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute('error.type', code);
}

/** `trace_id` and `span_id` of the active span, for every log line written inside a turn. */
export function activeTraceFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
