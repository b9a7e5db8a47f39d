import type { ApprovalService } from '../approvals/approval-service';
import { randomUUID } from 'node:crypto';
import type { LlmProvider } from '../agent/provider';
import type { ConfirmAction } from '../agent/tool-box';
import { TurnStopped } from '../agent/turn-stopped';
import type { Config } from '../config';
import { NO_AUDIT, type AuditSink } from '../core/audit';
import type { ControlBus, ControlMessage, TurnContext as QueueContext, TurnJob, TurnQueue, Unsubscribe, WorkerPresence } from '../core/turns';
import type { TurnStore } from '../db/turn-store';
import type { Logger } from '../logs/logger';
import type { HubMetrics } from '../metrics/hub-metrics';
import type { RoutingService } from '../routing/routing-service';
import type { ChannelPolicyDefault } from '../sessions/mid-turn-policy';
import type { SessionTools } from '../sessions/session-tools';
import { SpanKind, type Tracing } from '../tracing/tracing';
import type { TurnLifecycle } from '../turns/turn-lifecycle';
import type { DailyBudgets } from '../usage/budgets';
import type { TurnKnowledge } from './agent-turn';
import { PendingConfirmations } from './confirmation-waiters';
import { TurnLoader } from './turn-loader';
import { TurnObserver } from './turn-observer';
import { loadTurn, TurnRun, type RunningTurn, type TurnRunDeps } from './turn-run';

export type { TurnKnowledge } from './agent-turn';

export interface TurnWorkerOptions {
  store: TurnStore;
  /** The owner of a turn's transitions: the worker takes the turns it is handed and asks it to end them. */
  turns: TurnLifecycle;
  queue: TurnQueue;
  control: ControlBus;
  presence: WorkerPresence;
  provider: LlmProvider;
  sessionTools: SessionTools;
  logger: Logger;
  concurrency: number;
  agent: Config['agent'];
  contextWindow: number;
  routing: RoutingService;
  /** Passages of the workflow's knowledge collections for a message, formatted for the system prompt. */
  knowledge?: TurnKnowledge;
  /** How often this worker says it is alive (WorkerPresence). */
  heartbeatMs: number;
  /** A chat channel's mid-turn policy when the session's workflow sets none. */
  midTurnDefault: ChannelPolicyDefault;
  /** Confirmations and auto-approvals are recorded here (default: nowhere). */
  audit?: AuditSink;
  /** Turn, stage, model and tool metrics (off: null). */
  metrics?: HubMetrics | null;
  /** The `turn` span and its children (off: null). */
  tracing?: Tracing | null;
  /** Daily token budgets (`usage.budgets`); absent or none set: no usage is read. */
  budgets?: DailyBudgets | null;
  /** Approvals by the right people (issue 30): opened, re-asked and timed out by the turn waiting for them. */
  approvals?: ApprovalService | null;
}

/**
 * Consumes turn jobs and runs the agent for the turns it is handed (TurnRun: load → route → run the
 * agent or a command → store → end). It takes and ends turns through src/turns (TurnLifecycle),
 * which writes a turn's state and the frames that end it; the worker's own state is what runs here
 * (abort controllers, confirmation waiters, the conversations it keeps). It never talks to a
 * platform; channels render the events.
 */
export class TurnWorker {
  readonly id = randomUUID();
  private readonly running = new Map<string, RunningTurn>();
  private readonly confirmations = new PendingConfirmations();
  private readonly runDeps: TurnRunDeps;
  private stopControl: Unsubscribe | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(private readonly options: TurnWorkerOptions) {
    this.runDeps = { ...options, audit: options.audit ?? NO_AUDIT, waiters: this.confirmations, loader: new TurnLoader(options.store) };
  }

  async start(): Promise<void> {
    this.stopControl = await this.options.control.subscribe(
      (message) => this.onControl(message),
      () => this.confirmations.askAgain(this.options.logger),
    );
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
    this.options.queue.consume((job, context) => this.handle(job, context), {
      concurrency: this.options.concurrency,
      onGiveUp: (job, error) => this.giveUp(job, error),
    });
  }

  /** Stops taking turns; running ones finish, or are handed back when the queue's stop timeout passes. */
  async stop(): Promise<void> {
    await this.options.queue.stopConsuming();
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.options.presence.leave(this.id).catch(() => undefined);
    this.stopControl?.();
  }

  /**
   * Runs one turn job. With traces on, the turn runs inside its `turn` span, a child of the
   * message's `ingest` span in the API process (the context came in the job): every span and log
   * line of the turn joins that trace.
   */
  handle(job: TurnJob, context: QueueContext): Promise<void> {
    const { tracing } = this.options;
    if (!tracing) return this.run(job, context, null);
    const attributes = {
      'switchboard.session_id': job.sessionId,
      'switchboard.turn_id': job.userMessageId,
      'messaging.system': this.options.queue.name,
      'messaging.operation.type': 'process',
    };
    return tracing.inSpan('turn', { kind: SpanKind.CONSUMER, attributes }, () => this.run(job, context, tracing), tracing.contextOf(job.trace));
  }

  /** A cancel or steer for a turn this worker runs, or the answer to a confirmation one of them waits for. */
  private onControl(message: ControlMessage): void {
    if (message.kind === 'cancel') {
      const turn = this.running.get(message.sessionId);
      if (turn?.turnId !== message.turnId) return;
      if (message.steer) turn.steer.abort();
      else turn.controller.abort(new TurnStopped('cancel'));
    }
    // A click counted (or a decision) on any process: the turn waiting for that approval reads it again.
    if (message.kind === 'approval_changed') this.confirmations.nudge(message.approvalId, this.options.logger);
    if (message.kind === 'tool_confirm') this.confirmations.answer(message.confirmationId, { action: message.action as ConfirmAction, actor: message.actor });
  }

  private async run(job: TurnJob, context: QueueContext, tracing: Tracing | null): Promise<void> {
    const { turns, metrics } = this.options;
    const observer = metrics ? new TurnObserver(metrics, job) : null;
    const turn = { sessionId: job.sessionId, turnId: job.userMessageId };
    // The conversation is read while the turn is taken (the database and Redis in one wait); a read
    // for a turn that is not taken is dropped.
    const loading = loadTurn(this.runDeps, turn, tracing);
    loading.catch(() => undefined);
    // Taken only while it is still the session's turn (it may have been cancelled in the queue).
    if (!(await turns.take(turn))) {
      this.options.logger.debug({ job }, 'turn no longer current (finished or cancelled); skipped');
      await turns.doneIfMissing(turn);
      return;
    }
    const running: RunningTurn = { turnId: turn.turnId, controller: new AbortController(), steer: new AbortController() };
    const onShutdown = () => running.controller.abort(new TurnStopped('shutdown'));
    context.signal.addEventListener('abort', onShutdown, { once: true });
    this.running.set(job.sessionId, running);
    try {
      await new TurnRun(this.runDeps, job, running, observer, tracing).execute(loading);
    } finally {
      context.signal.removeEventListener('abort', onShutdown);
      if (this.running.get(job.sessionId) === running) this.running.delete(job.sessionId);
    }
  }

  /** The queue gave the job up (it kept failing, or the workers running it kept dying): src/turns ends it. */
  private async giveUp(job: TurnJob, error: unknown): Promise<void> {
    this.options.logger.error({ err: error, job }, 'turn failed after every attempt');
    // Whatever this worker kept of the session is not trusted any more (its next turn reads afresh).
    this.runDeps.loader.forget(job.sessionId);
    await this.options.turns.giveUp({ sessionId: job.sessionId, turnId: job.userMessageId });
  }

  private async beat(): Promise<void> {
    await this.options.presence.beat(this.id).catch((error: unknown) => this.options.logger.warn({ err: error }, 'worker heartbeat failed'));
  }
}
