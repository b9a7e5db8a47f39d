import { randomUUID } from 'node:crypto';
import type { Config } from '../config';
import type { AgentEvent, AgentState, DonePayload, TurnMode } from '../core/events';
import type { ControlBus, EventLog, TurnContext as QueueContext, TurnJob, TurnQueue, TurnRegistry, Unsubscribe, WorkerPresence } from '../core/turns';
import { parseCommand, runCommand, type Command } from '../agent/commands';
import { compact, fitEntries, systemWithSummary, type Compaction, type MemoryEntry, type MemoryMode } from '../agent/memory';
import { newTurnState, runModelLoop, type TurnState } from '../agent/model-loop';
import { runDelegate, runThink } from '../agent/modes';
import { ProviderError, type LlmProvider } from '../agent/provider';
import { countTokens } from '../agent/tokens';
import type { ConfirmAction } from '../agent/tool-box';
import type { WorkflowRow } from '../db/models';
import type { MessageRecord, SessionRecord, TurnStore } from '../db/turn-store';
import { isAnonymousChannel } from '../core/channel';
import type { RouteDecision } from '../routing/router';
import type { RoutingService } from '../routing/routing-service';
import { toolNames } from '../workflows/workflow-schema';
import type { Logger } from '../logs/logger';
import type { SessionTools } from '../sessions/session-tools';
import { midTurnPolicy, type ChannelPolicyDefault } from '../sessions/mid-turn-policy';
import { conversationEntries, pendingToolRound, planTurn, type TurnPlan } from './conversation';
import { ConversationCache } from './conversation-cache';
import { TurnContext, type ConfirmAnswer, type ConfirmationWaiters } from './turn-context';
import { TurnEvents } from './turn-events';
import { NO_AUDIT, type AuditSink } from '../core/audit';
import type { HubMetrics } from '../metrics/hub-metrics';
import { activeSpanFailed, SpanKind, type Tracing } from '../tracing/tracing';
import { TurnObserver, type TurnOutcomeLabel } from './turn-observer';
import { BudgetExceeded, type DailyBudgets } from '../usage/budgets';
import type { UsageQuery, UsageToday } from '../db/turn-store';

export interface TurnWorkerOptions {
  store: TurnStore;
  registry: TurnRegistry;
  queue: TurnQueue;
  events: EventLog;
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
  /** Starts a session's next waiting message (the mid-turn policy stored it) once a turn ends. */
  turns: { startNext(sessionId: string): Promise<string | null> };
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
}

export interface TurnKnowledge {
  passagesFor(knowledgeBaseIds: readonly string[], query: string): Promise<string | null>;
}

/** Why a running turn was stopped early. */
class TurnStopped extends Error {
  constructor(readonly reason: 'cancel' | 'shutdown') {
    super(reason);
  }
}

interface RunningTurn {
  turnId: string;
  controller: AbortController;
  /** Aborted when a newer message steers: the turn ends at its next model or tool boundary. */
  steer: AbortController;
}

/** What a turn produced, ready to be stored. */
interface TurnResult {
  text: string;
  /** Tokens of `text`, counted once. */
  tokens: number;
  command: boolean;
  routing: { decision: RouteDecision; workflow: WorkflowRow | null } | null;
  compaction: Compaction | null;
}

/**
 * Consumes turn jobs: reads the session and its conversation (one statement), routes, runs the agent
 * (tools, confirmations, modes, memory, in-chat commands), ends the turn in the database (one
 * transaction: the reply and the session's totals), frees the session and emits every event of the
 * turn to the event log. Its in-flight state lives in the turn registry, not the database. It never
 * talks to a platform; channels render the events.
 */
export class TurnWorker implements ConfirmationWaiters {
  readonly id = randomUUID();
  private readonly running = new Map<string, RunningTurn>();
  private readonly conversations = new ConversationCache();
  private readonly confirmations = new Map<string, { resolve: (answer: ConfirmAnswer) => void; askAgain?: () => Promise<void> }>();
  private stopControl: Unsubscribe | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(private readonly options: TurnWorkerOptions) {}

  async start(): Promise<void> {
    this.stopControl = await this.options.control.subscribe((message) => {
      if (message.kind === 'cancel') {
        const turn = this.running.get(message.sessionId);
        if (turn?.turnId !== message.turnId) return;
        if (message.steer) turn.steer.abort();
        else turn.controller.abort(new TurnStopped('cancel'));
      }
      if (message.kind === 'tool_confirm') this.confirmations.get(message.confirmationId)?.resolve({ action: message.action as ConfirmAction, actor: message.actor });
    }, () => this.askAgain());
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

  wait(confirmationId: string, askAgain?: () => Promise<void>) {
    let resolve!: (answer: ConfirmAnswer) => void;
    const answer = new Promise<ConfirmAnswer>((settle) => (resolve = settle));
    this.confirmations.set(confirmationId, { resolve, askAgain });
    return { answer, release: () => this.confirmations.delete(confirmationId) };
  }

  /** The control bus was cut off for a while: answers sent meanwhile never came, so every waiting question is asked again. */
  private askAgain(): void {
    for (const waiter of this.confirmations.values()) {
      void waiter.askAgain?.().catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not ask a confirmation again'));
    }
  }

  /**
   * Runs one turn job. With traces on, the turn runs inside its `turn` span, a child of the
   * message's `ingest` span in the API process (the context came in the job): every span and log
   * line of the turn joins that trace.
   */
  handle(job: TurnJob, context: QueueContext): Promise<void> {
    const { tracing } = this.options;
    if (!tracing) return this.run(job, context, null);
    const attributes = { 'switchboard.session_id': job.sessionId, 'switchboard.turn_id': job.userMessageId, 'messaging.system': this.options.queue.name, 'messaging.operation.type': 'process' };
    return tracing.inSpan('turn', { kind: SpanKind.CONSUMER, attributes }, () => this.run(job, context, tracing), tracing.contextOf(job.trace));
  }

  private async run(job: TurnJob, context: QueueContext, tracing: Tracing | null): Promise<void> {
    const { store, registry, logger, metrics } = this.options;
    const started = Date.now();
    const observer = metrics ? new TurnObserver(metrics, job) : null;
    const turnId = job.userMessageId;
    // Taken only while it is still the session's turn (it may have been cancelled in the queue).
    if (!(await registry.update(job.sessionId, turnId, { phase: 'running' }))) {
      logger.debug({ job }, 'turn no longer current (finished or cancelled); skipped');
      await this.doneIfMissing(job);
      return;
    }
    const controller = new AbortController();
    const steer = new AbortController();
    const onShutdown = () => controller.abort(new TurnStopped('shutdown'));
    context.signal.addEventListener('abort', onShutdown, { once: true });
    this.running.set(job.sessionId, { turnId, controller, steer });
    const events = new TurnEvents(this.options, job.sessionId, turnId, observer ? () => observer.firstToken() : null);
    const state = newTurnState();
    let result: TurnResult | null = null;
    const ended = (outcome: TurnOutcomeLabel) => observer?.ended(outcome, this.options.provider.model, state.usage);
    try {
      const usageQuery = await this.options.budgets?.usageQuery(turnId);
      const load = () => this.loadConversation(job.sessionId, turnId, usageQuery);
      const loaded = tracing ? await tracing.inSpan('load conversation', {}, load) : await load();
      if (loaded) observer?.loaded(loaded.session.channel);
      // The turn's own rows are the newest: looked for from the end.
      const userMessage = loaded ? findLast(loaded.messages, (message) => message.id === turnId) : undefined;
      const answered = loaded ? findLast(loaded.messages, (message) => message.reply_to === turnId, userMessage) : undefined;
      const answeredBefore = userMessage !== undefined && userMessage.ordinal <= (loaded?.session.answered_through ?? 0);
      if (!loaded || !userMessage || answered || answeredBefore) {
        // Gone, redelivered after its reply was stored, or answered by a `collect` turn: it ends without running again.
        await this.release(job.sessionId, turnId);
        if (answered) await this.emitEnd(events, answered, { durationMs: Date.now() - started, toolCalls: Number(answered.metadata?.tool_calls ?? 0) });
        else if (!answeredBefore) logger.warn({ job }, 'the session or message of a turn is gone; the turn ends');
        return;
      }
      const plan = await this.plan(loaded.session, loaded.messages, userMessage);
      const emit = (event: AgentEvent) => (controller.signal.aborted ? Promise.resolve() : events.send(event));
      // A turn that answers several messages says which, so channels that follow those messages know.
      const answers = plan.merged.length > 0 ? { answers: [userMessage, ...plan.merged].sort((a, b) => a.ordinal - b.ordinal).map((row) => row.id) } : {};
      await emit({ type: 'agent_state', payload: { state: 'thinking', ...answers } });
      const command = parseCommand(userMessage.content);
      if (command) observer?.routed(null);
      result = command
        ? await this.runCommandTurn(command, loaded.session, userMessage, emit)
        : await this.runAgentTurn(loaded.session, plan, userMessage, state, events, controller, steer.signal, observer, loaded.usage);
      controller.signal.throwIfAborted();
      if (!state.writing) await emit({ type: 'agent_state', payload: { state: 'writing' } });
      if (command) this.streamText(result.text, emit);
      await events.flush();
      const { reply, updatedAt } = await store.endTurn({
        sessionId: job.sessionId,
        turnId,
        answeredThrough: plan.last.id,
        merged: plan.merged.map((row) => row.id),
        reply: {
          id: randomUUID(),
          session_id: job.sessionId,
          role: 'assistant',
          content: result.text,
          tool_calls: [],
          input_tokens: state.usage.inputTokens,
          output_tokens: state.usage.outputTokens,
          token_count: result.tokens,
          workflow_id: result.routing?.decision.workflowId ?? loaded.session.active_workflow_id,
          mode: userMessage.mode,
          metadata: result.command
            ? { command: true }
            : {
                tool_calls: state.calls,
                workflow: result.routing?.workflow?.name ?? null,
                routing_reason: result.routing?.decision.reason ?? null,
                ...(steer.signal.aborted ? { steered: true } : {}),
              },
          reply_to: turnId,
          turn_id: turnId,
          sender: null,
        },
        usage: state.usage,
        activeWorkflowId: result.routing ? result.routing.decision.workflowId : undefined,
        memory: result.compaction ? { summary: result.compaction.summary, through: result.compaction.through } : undefined,
      });
      // Freed before `done` goes out: a client that sends its next message on `done` finds the session free.
      const released = await this.release(job.sessionId, turnId);
      if (!reply) {
        this.conversations.forget(job.sessionId);
        logger.warn({ job }, 'the turn was answered meanwhile (redelivered); this answer is dropped');
        return;
      }
      // Kept for the session's next turn, unless this turn stored more than its reply (tool rounds,
      // tool settings) or messages arrived meanwhile (the next turn plans its rows afresh).
      if (state.calls === 0 && !result.command && plan.asStored && !released.waiting) {
        const through = result.compaction?.through ?? loaded.session.memory_through ?? 0;
        this.conversations.keep(job.sessionId, updatedAt, [...loaded.messages.filter((message) => message.ordinal > through), reply]);
      } else {
        this.conversations.forget(job.sessionId);
      }
      if (result.compaction) {
        const { compaction } = result;
        await events.send({ type: 'memory_update', payload: { mode: loaded.session.memory_mode, tokens_used: compaction.tokensUsed, summarized: compaction.summarized } });
      }
      await this.emitEnd(events, reply, { durationMs: Date.now() - started, toolCalls: state.calls, routing: result.routing });
      ended('done');
      this.logTurn(job, started, 'done', state, result);
    } catch (error) {
      const stopped = controller.signal.reason instanceof TurnStopped ? controller.signal.reason : null;
      if (stopped?.reason === 'shutdown') throw error; // hand the job back: it is redelivered
      if (stopped?.reason === 'cancel') {
        await this.endWithoutReply(job, state);
        await events.send({ type: 'agent_state', payload: { state: 'idle' } });
        await events.send({ type: 'error', payload: { code: 'CANCELLED', message: 'The turn was cancelled.' } });
        await events.flush();
        ended('cancelled');
        this.logTurn(job, started, 'cancelled', state, result);
        return;
      }
      const failure = describeFailure(error);
      if (error instanceof BudgetExceeded) {
        logger.info({ job, budget: error.scope }, 'turn refused: daily token budget used up');
        this.options.metrics?.budgetRefusal(error.scope);
      } else if (failure.code === 'INTERNAL_ERROR') logger.error({ err: error, job }, 'turn failed');
      else logger.warn({ err: error instanceof Error ? error.message : String(error), job }, 'turn failed at the provider');
      if (tracing) activeSpanFailed(failure.code, failure.message);
      await this.endWithoutReply(job, state);
      await events.send({ type: 'error', payload: failure });
      await events.send({ type: 'agent_state', payload: { state: 'error' } });
      await events.send({ type: 'agent_state', payload: { state: 'idle' } });
      await events.flush();
      ended(error instanceof BudgetExceeded ? 'refused' : 'failed');
      this.logTurn(job, started, failure.code, state, result);
    } finally {
      context.signal.removeEventListener('abort', onShutdown);
      if (this.running.get(job.sessionId)?.controller === controller) this.running.delete(job.sessionId);
    }
  }

  /**
   * The session and its conversation window: only what is new when this worker ran the session's
   * last turn (and nothing touched the session since), else the whole window.
   */
  private async loadConversation(sessionId: string, turnId: string, usage?: UsageQuery) {
    const { store } = this.options;
    const after = this.conversations.readAfter(sessionId);
    const loaded = await store.loadConversation(sessionId, after, usage);
    if (!loaded || after === undefined) return loaded;
    const joined = this.conversations.join(sessionId, loaded.session.updated_at, loaded.session.memory_through, loaded.messages);
    // A message stored while the last turn ran sits before that turn's reply, so the rows read after
    // the reply miss it: the turn's own message not among the new rows means the window is read afresh.
    if (joined && loaded.messages.some((message) => message.id === turnId)) return { session: loaded.session, messages: joined, usage: loaded.usage };
    this.conversations.forget(sessionId);
    return store.loadConversation(sessionId, undefined, usage);
  }

  /**
   * A redelivered job whose turn is no longer the session's: cancelled, or ended. A worker that
   * stored the reply and freed the session (before `done`, so the client's next message finds it
   * free) may have died before `done` went out: then the client never learns the turn ended, so
   * `done` goes out now, unless the log has it.
   */
  private async doneIfMissing(job: TurnJob): Promise<void> {
    const loaded = await this.options.store.loadConversation(job.sessionId);
    const reply = loaded ? findLast(loaded.messages, (message) => message.reply_to === job.userMessageId) : undefined;
    if (!reply) return;
    const { frames } = await this.options.events.replay(job.sessionId, -1);
    if (frames.some((frame) => frame.type === 'done' && frame.payload.turn_id === job.userMessageId)) return;
    this.options.logger.info({ job }, 'a turn that ended without its done (its worker died): done sent');
    await this.emitEnd(new TurnEvents(this.options, job.sessionId, job.userMessageId), reply, { durationMs: 0, toolCalls: Number(reply.metadata?.tool_calls ?? 0) });
  }

  /**
   * The queue gave the job up (it kept failing, or the workers running it kept dying): the message
   * counts as answered (no process queues it again), the session is freed and the client told.
   */
  private async giveUp(job: TurnJob, error: unknown): Promise<void> {
    this.options.logger.error({ err: error, job }, 'turn failed after every attempt');
    if ((await this.options.registry.get(job.sessionId))?.turnId !== job.userMessageId) return; // ended meanwhile
    this.conversations.forget(job.sessionId);
    await this.options.store
      .endTurn({ sessionId: job.sessionId, turnId: job.userMessageId, reply: null, usage: { inputTokens: 0, outputTokens: 0 } })
      .catch((failure: unknown) => this.options.logger.error({ err: failure, job }, 'could not mark a given-up turn answered'));
    if (!(await this.release(job.sessionId, job.userMessageId)).ours) return;
    const events = new TurnEvents(this.options, job.sessionId, job.userMessageId);
    await events.send({ type: 'error', payload: { code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' } });
    await events.send({ type: 'agent_state', payload: { state: 'error' } });
    await events.send({ type: 'agent_state', payload: { state: 'idle' } });
    await events.flush();
  }

  /**
   * Frees the session; when messages waited behind this turn (the mid-turn policy stored them), the
   * next one starts. `ours`: this turn was still the session's; `waiting`: messages were stored behind it.
   */
  private async release(sessionId: string, turnId: string): Promise<{ ours: boolean; waiting: boolean }> {
    const released = await this.options.registry.release(sessionId, turnId);
    if (released && released.waiting) {
      await this.options.turns.startNext(sessionId).catch((error: unknown) => this.options.logger.error({ err: error, session_id: sessionId }, 'could not start the next waiting turn'));
    }
    return { ours: released !== false, waiting: released !== false && released.waiting };
  }

  /** What the turn answers and its prompt rows, given the messages that waited (see planTurn). */
  private async plan(session: SessionRecord, messages: MessageRecord[], userMessage: MessageRecord): Promise<TurnPlan> {
    const answeredThrough = session.answered_through ?? 0;
    const newerWaiting = messages.some((row) => row.role === 'user' && row.ordinal > userMessage.ordinal);
    const collect = newerWaiting && midTurnPolicy(session.channel, await this.options.routing.workflowById(session.active_workflow_id), this.options.midTurnDefault) === 'collect';
    return planTurn(messages, answeredThrough, userMessage, collect);
  }

  private async runAgentTurn(
    session: SessionRecord,
    plan: TurnPlan,
    userMessage: MessageRecord,
    state: TurnState,
    events: TurnEvents,
    controller: AbortController,
    steered: AbortSignal,
    observer: TurnObserver | null,
    usage: UsageToday | undefined,
  ): Promise<TurnResult> {
    const { agent, provider, sessionTools, logger, tracing } = this.options;
    const ports = new TurnContext(
      { ...this.options, audit: this.options.audit ?? NO_AUDIT, waiters: this, confirmationTimeoutMs: agent.confirmation_timeout_s * 1000 },
      events,
      session,
      controller.signal,
      () => controller.abort(new TurnStopped('cancel')),
      steered,
    );
    const requested = typeof userMessage.metadata?.workflow === 'string' ? userMessage.metadata.workflow : null;
    const route = () => this.options.routing.route(session, userMessage.content, requested);
    const routing = tracing
      ? await tracing.inSpan('route', {}, async (span) => {
          const decided = await route();
          span.setAttributes({ 'switchboard.workflow': decided.workflow?.name ?? 'none', 'switchboard.routing_reason': decided.decision.reason });
          return decided;
        })
      : await route();
    const { workflow } = routing;
    ports.workflow = workflow?.name ?? null;
    observer?.routed(workflow?.name ?? null);
    // Over a daily budget: refused here, before the model is called (BUDGET_EXCEEDED ends the turn).
    if (usage && this.options.budgets) await this.options.budgets.check(userMessage.sender ?? session.owner_id, workflow ? { id: workflow.id, name: workflow.name } : null, usage);
    // Messages sent meanwhile follow this workflow's mid-turn policy: the registry says which it is.
    if (routing.decision.workflowId !== session.active_workflow_id) {
      await this.options.registry.update(session.id, userMessage.id, { workflowId: routing.decision.workflowId });
    }
    logger.debug({ session_id: session.id, workflow: workflow?.name ?? null, reason: routing.decision.reason, score: routing.decision.score }, 'routed');
    // A tool round that started before a crash and never ended: its calls run first, as they were.
    const pending = pendingToolRound(plan.rows, userMessage.id);
    const entries = conversationEntries(pending ? plan.rows.filter((row) => row !== pending.row) : plan.rows);
    // The workflow's prompt replaces the default; its knowledge is searched for this message.
    const passages = workflow && workflow.knowledge_base_ids.length > 0 && this.options.knowledge
      ? await this.options.knowledge.passagesFor(workflow.knowledge_base_ids, userMessage.content)
      : null;
    // The session's own prompt (config.system_prompt) wins over the workflow's, which wins over the default.
    const config = sessionConfig(session);
    const prompt = [config.systemPrompt ?? (workflow?.system_prompt || agent.system_prompt), passages].filter(Boolean).join('\n\n');
    const system = systemWithSummary(prompt, session.memory_summary);
    const { messages: prompted, tokens: inputTokens } = fitEntries(system, entries, this.budget());
    const tools = sessionTools.toolBox(session, this.pinnedTools(session, workflow));
    const resume = pending ? { id: pending.row.id, content: pending.row.content, calls: pending.calls } : null;
    const request = { provider, messages: prompted, tools, maxRounds: config.maxSteps ?? agent.max_tool_rounds, inputTokens, resume };
    const setState = (next: AgentState) => ports.emit({ type: 'agent_state', payload: { state: next } });
    let text: string;
    switch ((userMessage.mode ?? 'normal') as TurnMode) {
      case 'think':
        text = await runThink(request, ports, state, setState);
        break;
      case 'delegate':
        text = await runDelegate(request, ports, state, setState);
        break;
      case 'normal':
        text = await runModelLoop({ ...request, stream: true }, ports, state);
        break;
    }
    controller.signal.throwIfAborted();
    const tokens = countTokens(text);
    const compaction = config.contextCompression === false ? null : await this.compactMemory(session, entries, userMessage, text, tokens, controller.signal);
    return { text, tokens, command: false, routing, compaction: compaction && foldedWhole(compaction, entries, plan.waitingOrdinals) };
  }

  /** `/info`, `/tools`, `/tools load`, `/help`: answered by the hub, not the model. */
  private async runCommandTurn(command: Command, session: SessionRecord, userMessage: MessageRecord, emit: (event: AgentEvent) => Promise<void>): Promise<TurnResult> {
    const { sessionTools, provider, store } = this.options;
    const workflow = await this.options.routing.workflowById(session.active_workflow_id);
    const pinned = this.pinnedTools(session, workflow);
    const result = await runCommand(command, {
      visitor: isAnonymousChannel(session.channel, this.options.routing.channels),
      workflow: workflow?.name ?? null,
      provider: provider.name,
      model: provider.model,
      mode: userMessage.mode ?? 'normal',
      memoryMode: session.memory_mode,
      tools: sessionTools.views(session, pinned, workflow?.name).map((view) => ({
        name: view.name,
        status: view.status,
        requiresConfirmation: view.requires_confirmation,
        note: view.reason ?? undefined,
      })),
      loadTool: async (name) => {
        if (workflow) {
          // Spec rule 2: a workflow's tools are pinned; not a failure to load, a rule.
          return { ok: false, reason: `the workflow "${workflow.name}" pins its tool list; add "${name}" to its tool_list instead.`, expansionFailed: false };
        }
        try {
          sessionTools.apply(session, { load: [name] });
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return { ok: false, reason, expansionFailed: true };
        }
        await store.saveSessionTools(session.id, session.active_tools, sessionTools.state(session));
        return { ok: true };
      },
    });
    if (result.expansionFailed) await emit({ type: 'error', payload: { code: 'TOOL_EXPANSION_FAILED', message: result.expansionFailed } });
    return { text: result.text, tokens: countTokens(result.text), command: true, routing: null, compaction: null };
  }

  /**
   * The tools a turn may use when something pins them: the workflow's tool_list; for an anonymous
   * channel's visitor (the website widget) nothing else either — no workflow, no tools, whatever the
   * session carries (sessions made before this rule carried `agent.default_tools`).
   */
  private pinnedTools(session: SessionRecord, workflow: WorkflowRow | null): readonly string[] | undefined {
    if (workflow) return toolNames(workflow.tool_list);
    return isAnonymousChannel(session.channel, this.options.routing.channels) ? [] : undefined;
  }

  /** A command's answer streamed like a model's, so every channel renders it the same way. */
  private streamText(text: string, emit: (event: AgentEvent) => Promise<void>): void {
    for (const line of text.split(/(?<=\n)/)) void emit({ type: 'token', payload: { text: line, final: false } });
  }

  private budget(): number {
    return Math.max(256, this.options.contextWindow - this.options.agent.working_memory_tokens);
  }

  /** Folds old turns into the rolling summary when the conversation (with this turn's answer) outgrows the budget. */
  private compactMemory(session: SessionRecord, entries: MemoryEntry[], userMessage: MessageRecord, answer: string, tokens: number, signal: AbortSignal): Promise<Compaction | null> {
    const reply: MemoryEntry = {
      ordinal: Number.MAX_SAFE_INTEGER, // stored after every message read; never folded (the newest turns stay)
      turnId: userMessage.id,
      message: { role: 'assistant', content: answer },
      tokens,
    };
    return compact({
      systemPrompt: this.options.agent.system_prompt,
      summary: session.memory_summary,
      entries: [...entries, reply],
      budget: this.budget(),
      mode: session.memory_mode as MemoryMode,
      provider: this.options.provider,
      signal,
    });
  }

  /** A cancelled or failed turn: the session is freed and the message counts as answered. */
  private async endWithoutReply(job: TurnJob, state: TurnState): Promise<void> {
    this.conversations.forget(job.sessionId);
    await this.options.store.endTurn({ sessionId: job.sessionId, turnId: job.userMessageId, reply: null, usage: state.usage });
    await this.release(job.sessionId, job.userMessageId);
  }

  private async emitEnd(events: TurnEvents, reply: MessageRecord, facts: { durationMs: number; toolCalls: number; routing?: TurnResult['routing'] }): Promise<void> {
    const payload: DonePayload = {
      message_id: reply.id,
      total_tokens: reply.input_tokens + reply.output_tokens,
      input_tokens: reply.input_tokens,
      output_tokens: reply.output_tokens,
      duration_ms: facts.durationMs,
      tool_calls: facts.toolCalls,
      text: reply.content,
      workflow: facts.routing ? (facts.routing.workflow?.name ?? null) : ((reply.metadata?.workflow as string | null | undefined) ?? null),
      routing_reason: facts.routing ? facts.routing.decision.reason : ((reply.metadata?.routing_reason as string | undefined) ?? (reply.metadata?.command ? 'command' : 'session')),
    };
    await events.send({ type: 'agent_state', payload: { state: 'done' } });
    await events.send({ type: 'done', payload });
    await events.flush();
  }

  /** One info line per turn: what an operator needs to follow the hub's work. */
  private logTurn(job: TurnJob, started: number, outcome: string, state: TurnState, result: TurnResult | null): void {
    this.options.logger.info(
      {
        session_id: job.sessionId,
        turn_id: job.userMessageId,
        workflow: result?.routing?.workflow?.name ?? null,
        routing_reason: result?.command ? 'command' : (result?.routing?.decision.reason ?? null),
        input_tokens: state.usage.inputTokens,
        output_tokens: state.usage.outputTokens,
        tool_calls: state.calls,
        duration_ms: Date.now() - started,
        outcome,
      },
      'turn ended',
    );
  }

  private async beat(): Promise<void> {
    await this.options.presence.beat(this.id).catch((error: unknown) => this.options.logger.warn({ err: error }, 'worker heartbeat failed'));
  }
}

/**
 * The summary may cover only a prefix of the session in arrival order: when turns' rows interleave
 * (messages arrived while a turn ran), `through` stops before the first row it did not fold, so no
 * row is lost from later prompts (a few may be both summarised and kept).
 */
function foldedWhole(compaction: Compaction, entries: readonly MemoryEntry[], waitingOrdinals: readonly number[]): Compaction {
  const index = entries.findIndex((entry) => entry.ordinal === compaction.through);
  let firstKept = Math.min(Number.MAX_SAFE_INTEGER, ...waitingOrdinals);
  for (let at = index + 1; at < entries.length; at += 1) firstKept = Math.min(firstKept, entries[at]!.ordinal);
  return firstKept > compaction.through ? compaction : { ...compaction, through: firstKept - 1 };
}

/** The last message that matches, searching back no further than `stopAt` (exclusive) when given. */
function findLast(messages: readonly MessageRecord[], matches: (message: MessageRecord) => boolean, stopAt?: MessageRecord): MessageRecord | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (matches(message)) return message;
    if (message === stopAt) return undefined;
  }
  return undefined;
}

/** The keys of a session's `config` the agent honours (checked when the session was written). */
function sessionConfig(session: SessionRecord): { systemPrompt?: string; maxSteps?: number; contextCompression?: boolean } {
  const config = session.config ?? {};
  return {
    systemPrompt: typeof config.system_prompt === 'string' ? config.system_prompt : undefined,
    maxSteps: typeof config.max_steps === 'number' ? config.max_steps : undefined,
    contextCompression: typeof config.context_compression === 'boolean' ? config.context_compression : undefined,
  };
}

/** The `error` frame for a failed turn: provider failures by name, anything else generic. */
function describeFailure(error: unknown): { code: 'PROVIDER_UNREACHABLE' | 'PROVIDER_ERROR' | 'INTERNAL_ERROR' | 'BUDGET_EXCEEDED'; message: string } {
  if (error instanceof BudgetExceeded) return { code: 'BUDGET_EXCEEDED', message: error.message };
  if (error instanceof ProviderError) {
    return error.kind === 'unreachable'
      ? { code: 'PROVIDER_UNREACHABLE', message: `The model provider could not be reached: ${error.message}` }
      : { code: 'PROVIDER_ERROR', message: `The model provider failed: ${error.message}` };
  }
  return { code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' };
}
