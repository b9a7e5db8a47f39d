import { randomUUID } from 'node:crypto';
import type { AgentEvent, AgentState, DonePayload, TurnMode } from '../core/events';
import type { ControlBus, EventLog, TurnContext, TurnJob, TurnQueue, Unsubscribe } from '../core/turns';
import type { ChatMessage, LlmProvider } from '../agent/provider';
import { runTurn } from '../agent/turn-runner';
import type { MessageRow, Models } from '../db/models';
import type { Logger } from '../logs/logger';

/** The system prompt when no workflow supplies one (workflows land with their own issue). */
export const DEFAULT_SYSTEM_PROMPT = 'You are Switchboard, a helpful assistant for teams. Answer clearly and briefly.';

export interface TurnWorkerOptions {
  models: Models;
  queue: TurnQueue;
  events: EventLog;
  control: ControlBus;
  provider: LlmProvider;
  logger: Logger;
  concurrency: number;
}

const WORKING_STATES = new Set<AgentState>(['thinking', 'analyzing', 'researching', 'deep_thinking', 'writing', 'delegating']);

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
 * Consumes turn jobs: loads the conversation, runs the agent, stores the reply and emits every event
 * of the turn to the event log. It never talks to a platform; channels render the events.
 */
export class TurnWorker {
  private readonly running = new Map<string, RunningTurn>();
  private stopControl: Unsubscribe | null = null;

  constructor(private readonly options: TurnWorkerOptions) {}

  async start(): Promise<void> {
    this.stopControl = await this.options.control.subscribe((message) => {
      if (message.kind !== 'cancel') return;
      const turn = this.running.get(message.sessionId);
      if (turn?.turnId === message.turnId) turn.controller.abort(new TurnStopped('cancel'));
    });
    this.options.queue.consume((job, context) => this.handle(job, context), { concurrency: this.options.concurrency });
  }

  /** Stops taking turns; running ones finish, or are handed back when the queue's stop timeout passes. */
  async stop(): Promise<void> {
    await this.options.queue.stopConsuming();
    this.stopControl?.();
  }

  async handle(job: TurnJob, context: TurnContext): Promise<void> {
    const { models, logger } = this.options;
    const started = Date.now();
    const session = await models.Session.findOne({ where: { id: job.sessionId } });
    if (!session || session.current_turn_id !== job.userMessageId) {
      logger.debug({ job }, 'turn no longer current (finished or cancelled); skipped');
      return;
    }
    const userMessage = await models.Message.findOne({ where: { id: job.userMessageId } });
    if (!userMessage) {
      logger.error({ job }, 'the user message of a running turn is missing; ending the turn');
      await this.finish(job, 'idle');
      return;
    }
    // A redelivered job whose reply was already stored: the reply is not produced twice.
    const stored = await models.Message.findOne({ where: { reply_to: job.userMessageId } });
    if (stored) {
      await this.finish(job, 'idle');
      await this.emitDone(job.sessionId, stored, Date.now() - started);
      return;
    }
    const [claimed] = await models.Session.update(
      { turn_phase: 'running' },
      { where: { id: job.sessionId, current_turn_id: job.userMessageId } },
    );
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
      const history = await this.conversation(job.sessionId, userMessage);
      const result = await runTurn(
        { mode: (userMessage.mode ?? 'normal') as TurnMode, messages: history, systemPrompt: DEFAULT_SYSTEM_PROMPT },
        this.options.provider,
        emit,
        controller.signal,
      );
      const reply = await this.storeReply(job, userMessage, result);
      if (!reply) return; // cancelled at the last moment: the cancel already ended the turn
      await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'done' } });
      await this.emitDone(job.sessionId, reply, Date.now() - started, result.toolCalls);
    } catch (error) {
      const stopped = controller.signal.reason instanceof TurnStopped ? controller.signal.reason : null;
      if (stopped?.reason === 'shutdown') throw error; // hand the job back: it is redelivered
      if (stopped?.reason === 'cancel') {
        await this.finish(job, 'idle');
        await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'idle' } });
        await this.emit(job.sessionId, { type: 'error', payload: { code: 'CANCELLED', message: 'The turn was cancelled.' } });
        return;
      }
      logger.error({ err: error, job }, 'turn failed');
      await this.finish(job, 'idle');
      await this.emit(job.sessionId, { type: 'error', payload: { code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' } });
      await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'error' } });
      await this.emit(job.sessionId, { type: 'agent_state', payload: { state: 'idle' } });
    } finally {
      context.signal.removeEventListener('abort', onShutdown);
      if (this.running.get(job.sessionId)?.controller === controller) this.running.delete(job.sessionId);
    }
  }

  /**
   * Emits an event and keeps the session's stored state in step with the working states, so a socket
   * that connects mid-turn is told the current one. Between turns the stored state is `idle`.
   */
  private async emit(sessionId: string, event: AgentEvent): Promise<void> {
    if (event.type === 'agent_state' && WORKING_STATES.has(event.payload.state)) {
      await this.options.models.Session.update({ state: event.payload.state }, { where: { id: sessionId } });
    }
    await this.options.events.append(sessionId, event);
  }

  private async emitDone(sessionId: string, reply: MessageRow, durationMs: number, toolCalls = reply.tool_calls.length): Promise<void> {
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

  /** The conversation up to and including this turn's user message, oldest first. */
  private async conversation(sessionId: string, userMessage: MessageRow): Promise<ChatMessage[]> {
    const rows = await this.options.models.Message.findAll({
      where: { session_id: sessionId },
      order: [['ordinal', 'ASC']],
    });
    return rows
      .filter((row) => row.ordinal <= userMessage.ordinal && (row.role === 'user' || row.role === 'assistant'))
      .map((row) => ({ role: row.role as 'user' | 'assistant', content: row.content }));
  }

  /**
   * Stores the reply and ends the turn in one transaction. Returns null when the turn is no longer
   * current (cancelled meanwhile); the unique `reply_to` refuses a second reply to one message.
   */
  private async storeReply(job: TurnJob, userMessage: MessageRow, result: { text: string; inputTokens: number; outputTokens: number }) {
    const { models } = this.options;
    return models.Session.sequelize!.transaction(async (transaction) => {
      const session = await models.Session.findOne({ where: { id: job.sessionId, current_turn_id: job.userMessageId }, transaction });
      if (!session) return null;
      const reply = await models.Message.create(
        {
          id: randomUUID(),
          session_id: job.sessionId,
          role: 'assistant',
          content: result.text,
          tool_calls: [],
          input_tokens: result.inputTokens,
          output_tokens: result.outputTokens,
          workflow_id: userMessage.workflow_id,
          mode: userMessage.mode,
          metadata: {},
          reply_to: job.userMessageId,
        },
        { transaction },
      );
      await session.update(
        {
          current_turn_id: null,
          turn_phase: null,
          state: 'idle',
          input_tokens: session.input_tokens + result.inputTokens,
          output_tokens: session.output_tokens + result.outputTokens,
        },
        { transaction },
      );
      return reply;
    });
  }

  private async finish(job: TurnJob, state: 'idle'): Promise<void> {
    await this.options.models.Session.update(
      { current_turn_id: null, turn_phase: null, state },
      { where: { id: job.sessionId, current_turn_id: job.userMessageId } },
    );
  }
}
