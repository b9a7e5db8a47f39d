import { randomUUID } from 'node:crypto';
import { Op } from 'sequelize';
import type { Config } from '../config';
import { WORKING_STATES, type AgentEvent, type AgentState, type DonePayload, type TurnMode } from '../core/events';
import type { ControlBus, EventLog, TurnContext as QueueContext, TurnJob, TurnQueue, Unsubscribe } from '../core/turns';
import { parseCommand, runCommand, type Command } from '../agent/commands';
import { compact, fitToBudget, systemWithSummary, type MemoryEntry, type MemoryMode } from '../agent/memory';
import { newTurnState, runModelLoop, type TurnState } from '../agent/model-loop';
import { runDelegate, runThink } from '../agent/modes';
import { ProviderError, type ChatMessage, type LlmProvider, type ToolCall } from '../agent/provider';
import type { ConfirmAction } from '../agent/tool-box';
import type { MessageRow, Models, SessionRow, WorkflowRow } from '../db/models';
import type { RoutingService } from '../routing/routing-service';
import { toolNames } from '../workflows/workflow-schema';
import type { Logger } from '../logs/logger';
import type { SessionTools } from '../sessions/session-tools';
import { TurnContext, type ConfirmationWaiters } from './turn-context';

export interface TurnWorkerOptions {
  models: Models;
  queue: TurnQueue;
  events: EventLog;
  control: ControlBus;
  provider: LlmProvider;
  sessionTools: SessionTools;
  logger: Logger;
  concurrency: number;
  agent: Config['agent'];
  contextWindow: number;
  routing: RoutingService;
  /** Passages of the workflow's knowledge collections for a message, formatted for the system prompt. */
  knowledge?: TurnKnowledge;
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
}

/**
 * Consumes turn jobs: loads the conversation, runs the agent (tools, confirmations, modes, memory,
 * in-chat commands), stores the reply and emits every event of the turn to the event log. It never
 * talks to a platform; channels render the events.
 */
export class TurnWorker implements ConfirmationWaiters {
  private readonly running = new Map<string, RunningTurn>();
  private readonly confirmations = new Map<string, (action: ConfirmAction) => void>();
  private stopControl: Unsubscribe | null = null;

  constructor(private readonly options: TurnWorkerOptions) {}

  async start(): Promise<void> {
    this.stopControl = await this.options.control.subscribe((message) => {
      if (message.kind === 'cancel') {
        const turn = this.running.get(message.sessionId);
        if (turn?.turnId === message.turnId) turn.controller.abort(new TurnStopped('cancel'));
      }
      if (message.kind === 'tool_confirm') this.confirmations.get(message.confirmationId)?.(message.action as ConfirmAction);
    });
    this.options.queue.consume((job, context) => this.handle(job, context), { concurrency: this.options.concurrency });
  }

  /** Stops taking turns; running ones finish, or are handed back when the queue's stop timeout passes. */
  async stop(): Promise<void> {
    await this.options.queue.stopConsuming();
    this.stopControl?.();
  }

  wait(confirmationId: string) {
    let resolve!: (action: ConfirmAction) => void;
    const answer = new Promise<ConfirmAction>((settle) => (resolve = settle));
    this.confirmations.set(confirmationId, resolve);
    return { answer, release: () => this.confirmations.delete(confirmationId) };
  }

  async handle(job: TurnJob, context: QueueContext): Promise<void> {
    const { models, logger } = this.options;
    const started = Date.now();
    logger.debug({ job }, 'turn taken');
    const session = await models.Session.findOne({ where: { id: job.sessionId } });
    if (!session || session.current_turn_id !== job.userMessageId) {
      logger.debug({ job }, 'turn no longer current (finished or cancelled); skipped');
      return;
    }
    const userMessage = await models.Message.findOne({ where: { id: job.userMessageId } });
    if (!userMessage) {
      logger.error({ job }, 'the user message of a running turn is missing; ending the turn');
      await this.finish(job);
      return;
    }
    // A redelivered job whose reply was already stored: the reply is not produced twice.
    const stored = await models.Message.findOne({ where: { reply_to: job.userMessageId } });
    if (stored) {
      await this.finish(job);
      await this.emitDone(job.sessionId, stored, Date.now() - started);
      return;
    }
    const [claimed] = await models.Session.update({ turn_phase: 'running' }, { where: { id: job.sessionId, current_turn_id: job.userMessageId } });
    if (claimed === 0) return; // cancelled while queued

    const controller = new AbortController();
    const onShutdown = () => controller.abort(new TurnStopped('shutdown'));
    context.signal.addEventListener('abort', onShutdown, { once: true });
    this.running.set(job.sessionId, { turnId: job.userMessageId, controller });
    // Once stopped, the turn's own events are dropped, so the cancel events are the last ones.
    const emit = async (event: AgentEvent) => {
      if (controller.signal.aborted) return;
      await this.emit(job.sessionId, event);
    };
    try {
      await emit({ type: 'agent_state', payload: { state: 'thinking' } });
      const state = newTurnState();
      const command = parseCommand(userMessage.content);
      const text = command
        ? await this.runCommandTurn(command, session, userMessage, emit)
        : await this.runAgentTurn(session, userMessage, state, emit, controller);
      if (!state.writing) await emit({ type: 'agent_state', payload: { state: 'writing' } });
      if (command) await this.streamText(text, emit);
      const reply = await this.storeReply(job, userMessage, text, state, command !== null);
      if (!reply) return; // cancelled at the last moment: the cancel already ended the turn
      if (!command) await this.compactMemory(session, emit, controller.signal);
      await this.finish(job, state);
      await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'done' } });
      await this.emitDone(job.sessionId, reply, Date.now() - started, state.calls);
    } catch (error) {
      const stopped = controller.signal.reason instanceof TurnStopped ? controller.signal.reason : null;
      if (stopped?.reason === 'shutdown') throw error; // hand the job back: it is redelivered
      if (stopped?.reason === 'cancel') {
        await this.finish(job);
        await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'idle' } });
        await this.emit(job.sessionId, { type: 'error', payload: { code: 'CANCELLED', message: 'The turn was cancelled.' } });
        return;
      }
      const failure = describeFailure(error);
      if (failure.code === 'INTERNAL_ERROR') logger.error({ err: error, job }, 'turn failed');
      else logger.warn({ err: error instanceof Error ? error.message : String(error), job }, 'turn failed at the provider');
      await this.finish(job);
      await this.emit(job.sessionId, { type: 'error', payload: failure });
      await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'error' } });
      await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'idle' } });
    } finally {
      context.signal.removeEventListener('abort', onShutdown);
      if (this.running.get(job.sessionId)?.controller === controller) this.running.delete(job.sessionId);
    }
  }

  private async runAgentTurn(session: SessionRow, userMessage: MessageRow, state: TurnState, emit: (event: AgentEvent) => Promise<void>, controller: AbortController): Promise<string> {
    const { agent, provider, sessionTools, models } = this.options;
    const ports = new TurnContext(
      { models, sessionTools, waiters: this, confirmationTimeoutMs: agent.confirmation_timeout_s * 1000, emitEvent: emit },
      session,
      userMessage.id,
      controller.signal,
      () => controller.abort(new TurnStopped('cancel')),
    );
    const workflow = await this.applyRouting(session, userMessage);
    const entries = await this.conversation(session);
    // The workflow's prompt replaces the default; its knowledge is searched for this message.
    const passages = workflow && workflow.knowledge_base_ids.length > 0 && this.options.knowledge
      ? await this.options.knowledge.passagesFor(workflow.knowledge_base_ids, userMessage.content)
      : null;
    const prompt = [workflow?.system_prompt || agent.system_prompt, passages].filter(Boolean).join('\n\n');
    const system = systemWithSummary(prompt, session.memory_summary);
    const messages = fitToBudget(system, entries, this.budget());
    const tools = sessionTools.toolBox(session, workflow ? toolNames(workflow.tool_list) : undefined);
    const request = { provider, messages, tools, maxRounds: agent.max_tool_rounds };
    const setState = (next: AgentState) => emit({ type: 'agent_state', payload: { state: next } });
    switch ((userMessage.mode ?? 'normal') as TurnMode) {
      case 'think':
        return runThink(request, ports, state, setState);
      case 'delegate':
        return runDelegate(request, ports, state, setState);
      case 'normal':
        return runModelLoop({ ...request, stream: true }, ports, state);
    }
  }

  /** Picks the turn's workflow; it becomes the session's `active_workflow_id` and the messages' `workflow_id`. */
  private async applyRouting(session: SessionRow, userMessage: MessageRow): Promise<WorkflowRow | null> {
    const { models, routing, logger } = this.options;
    const requested = typeof userMessage.metadata?.workflow === 'string' ? userMessage.metadata.workflow : null;
    const { decision, workflow } = await routing.route(session, userMessage.content, requested);
    logger.debug({ session_id: session.id, workflow: workflow?.name ?? null, reason: decision.reason, score: decision.score }, 'routed');
    if (decision.workflowId !== session.active_workflow_id) {
      session.active_workflow_id = decision.workflowId;
      await models.Session.update({ active_workflow_id: decision.workflowId }, { where: { id: session.id } });
    }
    userMessage.workflow_id = decision.workflowId;
    await models.Message.update({ workflow_id: decision.workflowId }, { where: { id: userMessage.id } });
    return workflow;
  }

  /** `/info`, `/tools`, `/tools load`, `/help`: answered by the hub, not the model. */
  private async runCommandTurn(command: Command, session: SessionRow, userMessage: MessageRow, emit: (event: AgentEvent) => Promise<void>): Promise<string> {
    const { sessionTools, provider, models } = this.options;
    await models.Message.update({ metadata: { ...userMessage.metadata, command: true } }, { where: { id: userMessage.id } });
    const workflow = await this.options.routing.workflowById(session.active_workflow_id);
    const pinned = workflow ? toolNames(workflow.tool_list) : undefined;
    const result = await runCommand(command, {
      workflow: workflow?.name ?? null,
      provider: provider.name,
      model: provider.model,
      mode: userMessage.mode ?? 'normal',
      memoryMode: session.memory_mode,
      tools: sessionTools.views(session, pinned).map((view) => ({
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
        await models.Session.update({ active_tools: session.active_tools, tool_state: session.tool_state }, { where: { id: session.id } });
        return { ok: true };
      },
    });
    if (result.expansionFailed) await emit({ type: 'error', payload: { code: 'TOOL_EXPANSION_FAILED', message: result.expansionFailed } });
    return result.text;
  }

  /** A command's answer streamed like a model's, so every channel renders it the same way. */
  private async streamText(text: string, emit: (event: AgentEvent) => Promise<void>): Promise<void> {
    for (const line of text.split(/(?<=\n)/)) await emit({ type: 'token', payload: { text: line, final: false } });
  }

  private budget(): number {
    return Math.max(256, this.options.contextWindow - this.options.agent.working_memory_tokens);
  }

  /** Folds old turns into the rolling summary when the conversation outgrows the budget. */
  private async compactMemory(session: SessionRow, emit: (event: AgentEvent) => Promise<void>, signal: AbortSignal): Promise<void> {
    const fresh = await this.options.models.Session.findOne({ where: { id: session.id } });
    if (!fresh) return;
    const compaction = await compact({
      systemPrompt: this.options.agent.system_prompt,
      summary: fresh.memory_summary,
      entries: await this.conversation(fresh),
      budget: this.budget(),
      mode: fresh.memory_mode as MemoryMode,
      provider: this.options.provider,
      signal,
    });
    if (!compaction) return;
    await this.options.models.Session.update(
      { memory_summary: compaction.summary, memory_through: compaction.through, memory_updated_at: new Date() },
      { where: { id: session.id } },
    );
    await emit({ type: 'memory_update', payload: { mode: fresh.memory_mode, tokens_used: compaction.tokensUsed, summarized: compaction.summarized } });
  }

  /** Emits an event and keeps the session's stored state in step with the working states. */
  private async emit(sessionId: string, event: AgentEvent): Promise<void> {
    if (event.type === 'agent_state' && WORKING_STATES.has(event.payload.state)) {
      await this.options.models.Session.update({ state: event.payload.state }, { where: { id: sessionId } });
    }
    await this.options.events.append(sessionId, event);
  }

  private async emitDone(sessionId: string, reply: MessageRow, durationMs: number, toolCalls = Number(reply.metadata?.tool_calls ?? 0)): Promise<void> {
    const payload: DonePayload = {
      message_id: reply.id,
      total_tokens: reply.input_tokens + reply.output_tokens,
      input_tokens: reply.input_tokens,
      output_tokens: reply.output_tokens,
      duration_ms: durationMs,
      tool_calls: toolCalls,
      text: reply.content,
    };
    await this.options.events.append(sessionId, { type: 'done', payload });
  }

  /** The conversation the model sees (after the summary), oldest first, in-chat commands left out. */
  private async conversation(session: SessionRow): Promise<MemoryEntry[]> {
    // Only the messages after the rolling summary: the cost of a turn does not grow with the history.
    const rows = await this.options.models.Message.findAll({
      where: { session_id: session.id, ordinal: { [Op.gt]: session.memory_through ?? 0 } },
      order: [['ordinal', 'ASC']],
    });
    return rows
      .filter((row) => !row.metadata?.command && row.role !== 'system')
      .map((row) => ({ ordinal: row.ordinal, turnId: row.turn_id ?? row.reply_to ?? null, message: toChatMessage(row) }));
  }

  /**
   * Stores the reply (the turn stays busy until `finish`). Returns null when the turn is no longer
   * current (cancelled meanwhile); the unique `reply_to` refuses a second reply to one message.
   */
  private async storeReply(job: TurnJob, userMessage: MessageRow, text: string, state: TurnState, command: boolean): Promise<MessageRow | null> {
    const { models } = this.options;
    const session = await models.Session.findOne({ where: { id: job.sessionId, current_turn_id: job.userMessageId } });
    if (!session) return null;
    return models.Message.create({
      id: randomUUID(),
      session_id: job.sessionId,
      role: 'assistant',
      content: text,
      tool_calls: [],
      input_tokens: state.usage.inputTokens,
      output_tokens: state.usage.outputTokens,
      workflow_id: userMessage.workflow_id,
      mode: userMessage.mode,
      metadata: command ? { command: true } : { tool_calls: state.calls },
      reply_to: job.userMessageId,
      turn_id: job.userMessageId,
    });
  }

  /** Ends the turn: the session is idle again (and its token totals include this turn). */
  private async finish(job: TurnJob, state?: TurnState): Promise<void> {
    const { models } = this.options;
    const session = await models.Session.findOne({ where: { id: job.sessionId, current_turn_id: job.userMessageId } });
    if (!session) return;
    await session.update({
      current_turn_id: null,
      turn_phase: null,
      state: 'idle',
      pending_confirmation: null,
      input_tokens: session.input_tokens + (state?.usage.inputTokens ?? 0),
      output_tokens: session.output_tokens + (state?.usage.outputTokens ?? 0),
    });
  }
}

function toChatMessage(row: MessageRow): ChatMessage {
  if (row.role === 'tool') {
    const metadata = row.metadata as { tool_call_id?: string; name?: string };
    return { role: 'tool', toolCallId: metadata.tool_call_id ?? '', name: metadata.name ?? '', content: row.content };
  }
  if (row.role === 'assistant') {
    const calls = row.tool_calls as ToolCall[];
    return calls.length > 0 ? { role: 'assistant', content: row.content, toolCalls: calls } : { role: 'assistant', content: row.content };
  }
  return { role: 'user', content: row.content };
}

/** The `error` frame for a failed turn: provider failures by name, anything else generic. */
function describeFailure(error: unknown): { code: 'PROVIDER_UNREACHABLE' | 'PROVIDER_ERROR' | 'INTERNAL_ERROR'; message: string } {
  if (error instanceof ProviderError) {
    return error.kind === 'unreachable'
      ? { code: 'PROVIDER_UNREACHABLE', message: `The model provider could not be reached: ${error.message}` }
      : { code: 'PROVIDER_ERROR', message: `The model provider failed: ${error.message}` };
  }
  return { code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' };
}
