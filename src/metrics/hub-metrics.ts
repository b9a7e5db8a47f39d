import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { TURN_STAGES, type TurnStage } from './stages';
import { defineAgentMetrics, type AgentMetrics } from './agent-metrics';
import { LATENCY_BUCKETS } from './buckets';

export { LATENCY_BUCKETS };

/** A label value outside the known set (a tool name the model made up): one series, not one per name. */
export const UNKNOWN_LABEL = 'unknown';
/** The workflow label of a turn no workflow answered (the config default). */
export const NO_WORKFLOW_LABEL = 'none';

export interface HubMetricsOptions {
  /** `api` or `worker`: every series carries it as `role`, so one dashboard tells the processes apart. */
  role: string;
  /** Tool names the catalog has, and `knownTool`'s known later (an MCP server's); any other name is counted as `unknown`. */
  tools: readonly string[];
  knownTool?: (name: string) => boolean;
  /** Jobs waiting for a worker, read at scrape time. */
  queueDepth?: () => Promise<number>;
  /** Default process metrics (event-loop delay, memory, CPU, GC); off in tests that build many hubs. */
  processMetrics?: boolean;
}

/**
 * The hub's Prometheus metrics, one registry per process (docs/observability.md lists them). Every
 * method is an in-memory update: nothing on a turn's path waits on a metric. Label values are
 * bounded: route templates, channel and workflow names, the catalog's tool names, platform methods.
 */
export class HubMetrics {
  readonly registry = new Registry();
  private readonly knownTool: (name: string) => boolean;
  /** Frames written to sockets since the last scrape: one addition per frame, folded in at scrape time. */
  private framesPending = new Map<string, number>();
  private readonly sockets = new Map<string, number>();

  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly framesReceived: Counter<'channel' | 'type'>;
  private readonly turnsStarted: Counter<'channel' | 'workflow'>;
  private readonly turnsEnded: Counter<'channel' | 'workflow' | 'outcome'>;
  private readonly turnDuration: Histogram<'channel' | 'outcome'>;
  private readonly stages: Histogram<'stage' | 'channel'>;
  private readonly firstAnswer: Histogram<'channel'>;
  /** The model's and the tools' series (agent-metrics.ts). */
  private readonly agent: AgentMetrics;
  private readonly rateLimited: Counter<'limit'>;
  private readonly budgetRefusals: Counter<'scope'>;
  private readonly platformCalls: Counter<'channel' | 'method' | 'status'>;
  private readonly platformDuration: Histogram<'channel' | 'method'>;

  constructor(options: HubMetricsOptions) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ role: options.role });
    const tools = new Set(options.tools);
    this.knownTool = (name) => tools.has(name) || options.knownTool?.(name) === true;
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });

    this.httpRequests = new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests answered, by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const sockets = this.sockets;
    new Gauge({
      name: 'switchboard_websocket_connections',
      help: 'Session sockets open now',
      labelNames: ['channel'],
      registers,
      collect() {
        for (const [channel, open] of sockets) this.set({ channel }, open);
      },
    });
    const pending = () => this.takePendingFrames();
    new Counter({
      name: 'switchboard_websocket_frames_sent_total',
      help: 'Frames written to session sockets',
      labelNames: ['channel'],
      registers,
      collect() {
        for (const [channel, count] of pending()) this.inc({ channel }, count);
      },
    });
    this.framesReceived = new Counter({
      name: 'switchboard_websocket_frames_received_total',
      help: 'Client frames received, by type',
      labelNames: ['channel', 'type'],
      registers,
    });
    this.turnsStarted = new Counter({
      name: 'switchboard_turns_started_total',
      help: 'Turns a worker started (routed), by channel and workflow',
      labelNames: ['channel', 'workflow'],
      registers,
    });
    this.turnsEnded = new Counter({
      name: 'switchboard_turns_ended_total',
      help: 'Turns ended, by outcome: done, failed, cancelled, refused (over budget)',
      labelNames: ['channel', 'workflow', 'outcome'],
      registers,
    });
    this.turnDuration = new Histogram({
      name: 'switchboard_turn_duration_seconds',
      help: 'From a worker taking a turn to its end',
      labelNames: ['channel', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.stages = new Histogram({
      name: 'switchboard_turn_stage_seconds',
      help: `Each stage of a turn: ${TURN_STAGES.join(', ')}`,
      labelNames: ['stage', 'channel'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.firstAnswer = new Histogram({
      name: 'switchboard_turn_first_answer_seconds',
      help: 'From a message received to its first answer frame delivered to the channel',
      labelNames: ['channel'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'switchboard_queue_depth',
      help: 'Turns waiting for a worker',
      registers,
      async collect() {
        if (options.queueDepth) this.set(await options.queueDepth().catch(() => Number.NaN));
      },
    });
    this.agent = defineAgentMetrics(registers);
    this.rateLimited = new Counter({
      name: 'switchboard_rate_limit_refusals_total',
      help: 'Requests refused by the rate limiter, by limit (route key)',
      labelNames: ['limit'],
      registers,
    });
    this.budgetRefusals = new Counter({
      name: 'switchboard_budget_refusals_total',
      help: 'Turns refused over a daily token budget, by budget (user, workflow)',
      labelNames: ['scope'],
      registers,
    });
    this.platformCalls = new Counter({
      name: 'switchboard_channel_api_calls_total',
      help: "Calls to a chat platform's API, by method and HTTP status (429: rate-limited; 0: no answer)",
      labelNames: ['channel', 'method', 'status'],
      registers,
    });
    this.platformDuration = new Histogram({
      name: 'switchboard_channel_api_call_seconds',
      help: "Time of a call to a chat platform's API",
      labelNames: ['channel', 'method'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  socketOpened(channel: string): void {
    this.sockets.set(channel, (this.sockets.get(channel) ?? 0) + 1);
  }

  socketClosed(channel: string): void {
    this.sockets.set(channel, Math.max(0, (this.sockets.get(channel) ?? 0) - 1));
  }

  framesWritten(channel: string, count: number): void {
    this.framesPending.set(channel, (this.framesPending.get(channel) ?? 0) + count);
  }

  frameReceived(channel: string, type: string): void {
    this.framesReceived.inc({ channel, type });
  }

  turnStarted(channel: string, workflow: string | null): void {
    this.turnsStarted.inc({ channel, workflow: workflow ?? NO_WORKFLOW_LABEL });
  }

  turnEnded(channel: string, workflow: string | null, outcome: 'done' | 'failed' | 'cancelled' | 'refused', seconds: number): void {
    this.turnsEnded.inc({ channel, workflow: workflow ?? NO_WORKFLOW_LABEL, outcome });
    this.turnDuration.observe({ channel, outcome }, seconds);
  }

  stage(stage: TurnStage, channel: string, seconds: number): void {
    this.stages.observe({ stage, channel }, Math.max(0, seconds));
  }

  firstAnswerDelivered(channel: string, seconds: number): void {
    this.firstAnswer.observe({ channel }, Math.max(0, seconds));
  }

  modelCall(model: string, outcome: 'ok' | 'error' | 'aborted'): void {
    this.agent.modelCalls.inc({ model, outcome });
  }

  /** A turn's tokens, as stored with its reply (the provider's usage, or counted with the tokenizer). */
  modelTokens(model: string, usage: { inputTokens: number; outputTokens: number }): void {
    if (usage.inputTokens > 0) this.agent.tokens.inc({ model, direction: 'input' }, usage.inputTokens);
    if (usage.outputTokens > 0) this.agent.tokens.inc({ model, direction: 'output' }, usage.outputTokens);
  }

  modelFirstTokenAfter(model: string, seconds: number): void {
    this.agent.modelFirstToken.observe({ model }, seconds);
  }

  toolCall(tool: string, ok: boolean, seconds: number): void {
    const name = this.toolLabel(tool);
    this.agent.toolCalls.inc({ tool: name, outcome: ok ? 'ok' : 'error' });
    this.agent.toolDuration.observe({ tool: name }, seconds);
  }

  confirmation(tool: string, action: string, waitedSeconds: number | null): void {
    const name = this.toolLabel(tool);
    this.agent.confirmations.inc({ tool: name, action });
    if (waitedSeconds !== null) this.agent.confirmationWait.observe({ tool: name }, waitedSeconds);
  }

  rateLimitRefusal(limit: string): void {
    this.rateLimited.inc({ limit });
  }

  budgetRefusal(scope: 'user' | 'workflow'): void {
    this.budgetRefusals.inc({ scope });
  }

  platformCall(channel: string, method: string, status: number, seconds: number): void {
    this.platformCalls.inc({ channel, method, status: String(status) });
    this.platformDuration.observe({ channel, method }, seconds);
  }

  /** The text exposition (`text/plain; version=0.0.4`). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private takePendingFrames(): Map<string, number> {
    const taken = this.framesPending;
    this.framesPending = new Map();
    return taken;
  }

  private toolLabel(tool: string): string {
    return this.knownTool(tool) ? tool : UNKNOWN_LABEL;
  }
}
