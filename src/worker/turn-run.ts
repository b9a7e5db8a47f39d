import { parseCommand } from '../agent/commands';
import { ProviderError } from '../agent/provider';
import { newTurnState } from '../agent/model-loop';
import { TurnStopped } from '../agent/turn-stopped';
import type { AgentEvent } from '../core/events';
import type { TurnJob } from '../core/turns';
import { isBackingServiceUnreachable } from '../core/unreachable';
import type { MessageRecord, SessionRecord } from '../db/turn-store';
import { midTurnPolicy, type ChannelPolicyDefault } from '../sessions/mid-turn-policy';
import type { Tracing } from '../tracing/tracing';
import { donePayload } from '../turns/turn-endings';
import type { TurnEvents } from '../turns/turn-events';
import type { TurnRef } from '../turns/turn-lifecycle';
import { BudgetExceeded } from '../usage/budgets';
import { runAgentTurn, type AgentTurnDeps } from './agent-turn';
import { runCommandTurn, streamText } from './command-turn';
import { planTurn, type TurnPlan } from './conversation';
import { describeFailure, reportFailure } from './turn-failure';
import type { LoadedTurn, TurnLoader } from './turn-loader';
import type { TurnObserver, TurnOutcomeLabel } from './turn-observer';
import { keptConversation, replyRecord, type AnsweredTurn, type TurnResult } from './turn-reply';

export interface TurnRunDeps extends AgentTurnDeps {
  loader: TurnLoader;
  /** A chat channel's mid-turn policy when the session's workflow sets none. */
  midTurnDefault: ChannelPolicyDefault;
}

/** A turn a worker took, and what stops it. */
export interface RunningTurn {
  turnId: string;
  /** Aborted with TurnStopped: a cancel, or the worker's shutdown (the job is handed back). */
  controller: AbortController;
  /** Aborted when a newer message steers: the turn ends at its next model or tool boundary. */
  steer: AbortController;
}

type Runnable = Extract<LoadedTurn, { kind: 'runnable' }>;

/** The session and its conversation, in the `load conversation` span (traces on); today's usage with it (budgets on). */
export async function loadTurn(deps: TurnRunDeps, turn: TurnRef, tracing: Tracing | null): Promise<LoadedTurn> {
  const usageQuery = await deps.budgets?.usageQuery(turn.turnId);
  const load = () => deps.loader.load(turn.sessionId, turn.turnId, usageQuery);
  return tracing ? await tracing.inSpan('load conversation', {}, load) : await load();
}

/**
 * One job's path, as a pipeline: load the conversation (one statement) → plan what the turn answers
 * → route and run the agent, or answer an in-chat command → store the reply → end the turn. How a
 * turn ends — in the database, the registry, and the frames that say so — is src/turns' (the
 * worker asks TurnLifecycle); a cancel or a failure ends it without a reply, a shutdown hands the
 * job back to the queue.
 */
export class TurnRun {
  private readonly turn: TurnRef;
  private readonly started = Date.now();
  private readonly events: TurnEvents;
  private readonly state = newTurnState();
  private result: TurnResult | null = null;
  /** Set once the reply's statement was sent: from then on a failure may leave the reply stored. */
  private storing = false;

  constructor(
    private readonly deps: TurnRunDeps,
    private readonly job: TurnJob,
    private readonly running: RunningTurn,
    private readonly observer: TurnObserver | null,
    private readonly tracing: Tracing | null,
  ) {
    this.turn = { sessionId: job.sessionId, turnId: job.userMessageId };
    this.events = deps.turns.events(this.turn, observer ? () => observer.firstToken() : null);
  }

  /** `loading`: the read of the conversation, started while the turn was taken (`loadTurn`). */
  async execute(loading: Promise<LoadedTurn>): Promise<void> {
    try {
      const loaded = await loading;
      if (loaded.session) this.observer?.loaded(loaded.session.channel);
      if (loaded.kind !== 'runnable') return await this.endUnrun(loaded);
      const answered = await this.answer(loaded);
      await this.storeAndEnd(loaded, answered);
    } catch (error) {
      await this.endStopped(error);
    }
  }

  /** Gone, redelivered after its reply was stored, or answered by a `collect` turn: it ends without running again. */
  private async endUnrun(loaded: Exclude<LoadedTurn, Runnable>): Promise<void> {
    const finished = await this.deps.turns.finish(this.turn, null);
    if (loaded.kind === 'answered') {
      // Not ours: another attempt of this turn (one that ran alongside, after a takeover) released it and says `done` itself.
      if (!finished?.ours) return await this.deps.turns.doneIfMissing(this.turn, loaded.reply);
      const done = donePayload(loaded.reply, { durationMs: Date.now() - this.started, toolCalls: Number(loaded.reply.metadata?.tool_calls ?? 0) });
      await this.deps.turns.announce(this.events, { kind: 'done', done });
    } else if (loaded.kind === 'gone') this.deps.logger.warn({ job: this.job }, 'the session or message of a turn is gone; the turn ends');
  }

  /** Plans the turn, says `thinking`, runs the agent or the command, then `writing`; the stream is flushed. */
  private async answer(loaded: Runnable): Promise<AnsweredTurn> {
    const { session, userMessage } = loaded;
    const { controller, steer } = this.running;
    const plan = await this.plan(session, loaded.messages, userMessage);
    const emit = (event: AgentEvent) => (controller.signal.aborted ? Promise.resolve() : this.events.send(event));
    // A turn that answers several messages says which, so channels that follow those messages know.
    const answers = plan.merged.length > 0 ? { answers: [userMessage, ...plan.merged].sort((a, b) => a.ordinal - b.ordinal).map((row) => row.id) } : {};
    await emit({ type: 'agent_state', payload: { state: 'thinking', ...answers } });
    const command = parseCommand(userMessage.content);
    if (command) this.observer?.routed(null);
    this.result = command
      ? await runCommandTurn(this.deps, command, session, userMessage, emit)
      : await runAgentTurn(this.deps, {
          session,
          plan,
          userMessage,
          state: this.state,
          events: this.events,
          controller,
          steered: steer.signal,
          observer: this.observer,
          usage: loaded.usage,
        });
    controller.signal.throwIfAborted();
    if (!this.state.writing) await emit({ type: 'agent_state', payload: { state: 'writing' } });
    if (command) streamText(this.result.text, emit);
    await this.events.flush();
    return { session, userMessage, plan, state: this.state, result: this.result, steered: steer.signal.aborted };
  }

  /** What the turn answers and its prompt rows, given the messages that waited (see planTurn). */
  private async plan(session: SessionRecord, messages: MessageRecord[], userMessage: MessageRecord): Promise<TurnPlan> {
    const newerWaiting = hasNewerUserMessage(messages, userMessage.ordinal);
    const collect =
      newerWaiting && midTurnPolicy(session.channel, await this.deps.routing.workflowById(session.active_workflow_id), this.deps.midTurnDefault) === 'collect';
    return planTurn(messages, session.answered_through ?? 0, userMessage, collect);
  }

  /**
   * The reply is stored and the session freed (before `done` goes out: a client that sends its next
   * message on `done` finds the session free), the conversation kept for the session's next turn
   * when it can be, then `done`.
   */
  private async storeAndEnd(loaded: Runnable, answered: AnsweredTurn): Promise<void> {
    const { turns, loader } = this.deps;
    this.storing = true;
    const finished = (await turns.finish(this.turn, replyRecord(answered)))!;
    if (!finished.reply) {
      loader.forget(this.turn.sessionId);
      this.deps.logger.warn({ job: this.job }, 'the turn was answered meanwhile (redelivered); this answer is dropped');
      return;
    }
    if (!finished.ours) {
      // Stored, but another attempt of this turn (taken over while this one ran) released it: that
      // attempt says `done`, this one only if the log still lacks it.
      loader.forget(this.turn.sessionId);
      await turns.doneIfMissing(this.turn, finished.reply);
      this.ended('done', 'done');
      return;
    }
    const kept = keptConversation(answered, loaded.messages, finished.reply, finished.waiting);
    if (kept) loader.keep(this.turn.sessionId, finished.updatedAt!, kept);
    else loader.forget(this.turn.sessionId);
    const { routing, compaction } = answered.result;
    const routed = routing ? { workflow: routing.workflow?.name ?? null, routingReason: routing.decision.reason } : {};
    await turns.announce(this.events, {
      kind: 'done',
      done: donePayload(finished.reply, { durationMs: Date.now() - this.started, toolCalls: this.state.calls, ...routed }),
      ...(compaction ? { memory: { mode: loaded.session.memory_mode, tokensUsed: compaction.tokensUsed, summarized: compaction.summarized } } : {}),
    });
    this.ended('done', 'done');
  }

  /** A shutdown hands the job back (it is redelivered); a cancel or a failure ends the turn without a reply. */
  private async endStopped(error: unknown): Promise<void> {
    const { reason } = this.running.controller.signal;
    const stopped = reason instanceof TurnStopped ? reason.reason : null;
    if (stopped === 'shutdown') throw error;
    this.deps.loader.forget(this.turn.sessionId);
    const record = { reply: null, usage: this.state.usage };
    if (stopped === 'cancel') {
      await this.deps.turns.end(this.turn, record, { kind: 'cancelled' }, { events: this.events });
      this.ended('cancelled', 'cancelled');
      return;
    }
    // The database or Redis could not be reached (the model provider's own failures are ProviderErrors,
    // ended below as such): nothing says the turn is broken, so it is not ended
    // (its `error` frame would be final for the client); the queue tries it again for as long as an
    // outage may last (turn-retries.ts), and ends it only when no attempt is left.
    if (!(error instanceof ProviderError) && isBackingServiceUnreachable(error)) throw error;
    // Stored after all (its statement committed, the answer lost with the connection; or what failed
    // came after it): the turn is answered, so it ends as answered. Throws while the database cannot
    // say: the job is tried again, and finds its reply then.
    const stored = this.storing ? await this.deps.turns.storedReply(this.turn) : null;
    if (stored) {
      await this.deps.turns.endAnswered(this.turn, stored);
      this.ended('done', 'done');
      return;
    }
    const failure = describeFailure(error);
    reportFailure(error, failure, this.job, { logger: this.deps.logger, metrics: this.deps.metrics, traced: this.tracing !== null });
    await this.deps.turns.end(this.turn, record, { kind: 'failed', ...failure }, { events: this.events });
    this.ended(error instanceof BudgetExceeded ? 'refused' : 'failed', failure.code);
  }

  /** The turn's metrics, and one info line per turn: what an operator needs to follow the hub's work. */
  private ended(outcome: TurnOutcomeLabel, logged: string): void {
    const { state, result } = this;
    this.observer?.ended(outcome, this.deps.provider.model, state.usage);
    this.deps.logger.info(
      {
        session_id: this.turn.sessionId,
        turn_id: this.turn.turnId,
        workflow: result?.routing?.workflow?.name ?? null,
        routing_reason: result?.command ? 'command' : (result?.routing?.decision.reason ?? null),
        input_tokens: state.usage.inputTokens,
        output_tokens: state.usage.outputTokens,
        tool_calls: state.calls,
        duration_ms: Date.now() - this.started,
        outcome: logged,
      },
      'turn ended',
    );
  }
}

/** A user message after `ordinal`: the rows are in ordinal order (as loaded), so only their tail is looked at, not a long session's every row. */
function hasNewerUserMessage(messages: readonly MessageRecord[], ordinal: number): boolean {
  for (let index = messages.length - 1; index >= 0 && messages[index]!.ordinal > ordinal; index -= 1) {
    if (messages[index]!.role === 'user') return true;
  }
  return false;
}
