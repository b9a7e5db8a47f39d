import { randomUUID } from 'node:crypto';
import { countTokens } from '../agent/tokens';
import { AppError } from '../core/errors';
import type { TurnMode } from '../core/events';
import type { ControlBus, EventLog, TurnQueue, TurnRegistry } from '../core/turns';
import type { MessageRecord, TurnStore } from '../db/turn-store';
import type { Logger } from '../logs/logger';
import { PickupWatch } from './pickup-watch';

export interface AcceptInput {
  sessionId: string;
  text: string;
  mode: TurnMode;
  metadata: Record<string, unknown>;
  /** The turn's id (its user message's id); a caller that follows the turn picks it before accepting. */
  turnId?: string;
}

export interface TurnServiceDeps {
  store: TurnStore;
  registry: TurnRegistry;
  queue: TurnQueue;
  events: EventLog;
  control: ControlBus;
  logger: Logger;
  /** Whether a workflow of that name exists (`metadata.workflow`), from the router's in-memory copy. */
  hasWorkflow(name: string): Promise<boolean>;
  pickup: PickupWatch;
}

/**
 * Starting and stopping turns, for every channel. Accepting a message claims the session's turn in
 * the registry (one turn per session across all processes), stores the message in one statement and
 * queues it (job id = message id). A refused message (a turn runs) touches no database at all.
 */
export class TurnService {
  constructor(private readonly deps: TurnServiceDeps) {}

  async accept(input: AcceptInput): Promise<MessageRecord> {
    const { store, registry, queue, logger } = this.deps;
    const requested = input.metadata.workflow;
    if (requested !== undefined && (typeof requested !== 'string' || !(await this.deps.hasWorkflow(requested)))) {
      throw AppError.validation({ 'metadata.workflow': [{ code: 'unknown_workflow', message: `No workflow named ${JSON.stringify(requested)}.` }] });
    }
    const turnId = input.turnId ?? randomUUID();
    if (!(await registry.claim(input.sessionId, turnId))) {
      throw new AppError('TURN_IN_PROGRESS', 'A turn is already running in this session; wait for `done`.');
    }
    let message: MessageRecord | null;
    try {
      message = await store.insertTurnMessage({
        id: turnId,
        session_id: input.sessionId,
        role: 'user',
        content: input.text,
        tool_calls: [],
        input_tokens: 0,
        output_tokens: 0,
        token_count: countTokens(input.text),
        workflow_id: null,
        mode: input.mode,
        metadata: input.metadata,
        reply_to: null,
        turn_id: turnId,
      });
    } catch (error) {
      await registry.release(input.sessionId, turnId);
      throw error;
    }
    if (!message) {
      await registry.release(input.sessionId, turnId);
      // Not stored: the session is archived or gone (one read, on this rare path only).
      const session = await store.findSession(input.sessionId);
      if (session) throw new AppError('CONFLICT', 'The session is archived; restore it first.');
      throw new AppError('SESSION_NOT_FOUND', `No session ${input.sessionId}.`);
    }
    try {
      await queue.enqueue({ sessionId: input.sessionId, userMessageId: turnId });
    } catch (error) {
      // Not queued, so not accepted: undo, and let the client retry.
      logger.error({ err: error, session_id: input.sessionId }, 'could not queue a turn');
      await registry.release(input.sessionId, turnId);
      await store.deleteMessage(turnId);
      throw new AppError('SERVICE_UNAVAILABLE', 'The turn queue is unavailable; try again shortly.', { headers: { 'Retry-After': '5' }, cause: error });
    }
    this.deps.pickup.watch(input.sessionId, turnId);
    return message;
  }

  /**
   * Cancels the session's running turn. A turn still waiting in the queue is cancelled here; one a
   * worker runs is cancelled by that worker (told over the control bus), so that the cancel events
   * come after the last event of the turn.
   */
  async cancel(sessionId: string): Promise<void> {
    const { registry, store, events, control } = this.deps;
    const live = await registry.get(sessionId);
    if (!live) throw new AppError('CONFLICT', 'No turn is running in this session.');
    if (await registry.release(sessionId, live.turnId, 'queued')) {
      await store.endTurn({ sessionId, turnId: live.turnId, reply: null, usage: { inputTokens: 0, outputTokens: 0 } });
      const turn_id = live.turnId;
      await events.append(sessionId, { type: 'agent_state', payload: { state: 'idle', turn_id } });
      await events.append(sessionId, { type: 'error', payload: { code: 'CANCELLED', message: 'The turn was cancelled.', turn_id } });
      return;
    }
    await control.publish({ kind: 'cancel', sessionId, turnId: live.turnId });
  }

  /**
   * Turns the database still owes (their process died: the user message has no ended turn): claimed
   * and queued again, deduplicated by id. A session whose turn another process runs is left alone.
   */
  async requeueUnfinished(): Promise<number> {
    const { store, registry, queue, logger } = this.deps;
    let queued = 0;
    for (const turn of await store.unansweredTurns()) {
      const live = await registry.get(turn.sessionId);
      if (live && live.turnId !== turn.messageId) {
        logger.warn({ session_id: turn.sessionId, turn_id: turn.messageId }, 'an unfinished turn waits behind another; it is not queued again');
        continue;
      }
      if (!live && !(await registry.claim(turn.sessionId, turn.messageId))) continue;
      await queue.enqueue({ sessionId: turn.sessionId, userMessageId: turn.messageId });
      queued += 1;
    }
    return queued;
  }
}
