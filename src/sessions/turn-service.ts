import { randomUUID } from 'node:crypto';
import { Op } from 'sequelize';
import { AppError, type ErrorCode } from '../core/errors';
import type { DonePayload, SessionFrame, TurnMode } from '../core/events';
import type { ControlBus, EventLog, TurnQueue } from '../core/turns';
import type { MessageRow, Models, SessionRow } from '../db/models';
import type { Logger } from '../logs/logger';

export interface AcceptInput {
  session: SessionRow;
  text: string;
  mode: TurnMode;
  metadata: Record<string, unknown>;
}

/**
 * Starting and stopping turns, for every channel: a user message is stored and its session marked
 * busy in one transaction, then queued (job id = message id). One turn per session at a time, across
 * all processes, because the busy mark is a conditional update in the shared database.
 */
export class TurnService {
  constructor(
    private readonly deps: { models: Models; queue: TurnQueue; events: EventLog; control: ControlBus; logger: Logger },
  ) {}

  async accept(input: AcceptInput): Promise<MessageRow> {
    const { models, queue, logger } = this.deps;
    if (input.session.archived_at) throw new AppError('CONFLICT', 'The session is archived; restore it first.');
    const requested = input.metadata.workflow;
    if (requested !== undefined && (typeof requested !== 'string' || !(await models.Workflow.findOne({ where: { name: requested } })))) {
      throw AppError.validation({ 'metadata.workflow': [{ code: 'unknown_workflow', message: `No workflow named ${JSON.stringify(requested)}.` }] });
    }
    const messageId = randomUUID();
    const message = await models.Session.sequelize!.transaction(async (transaction) => {
      const [claimed] = await models.Session.update(
        { current_turn_id: messageId, turn_phase: 'queued', state: 'thinking' },
        { where: { id: input.session.id, current_turn_id: null, archived_at: null }, transaction },
      );
      if (claimed === 0) throw new AppError('TURN_IN_PROGRESS', 'A turn is already running in this session; wait for `done`.');
      return models.Message.create(
        {
          id: messageId,
          session_id: input.session.id,
          role: 'user',
          content: input.text,
          tool_calls: [],
          workflow_id: null,
          mode: input.mode,
          metadata: input.metadata,
          reply_to: null,
          turn_id: messageId,
        },
        { transaction },
      );
    });
    try {
      await queue.enqueue({ sessionId: input.session.id, userMessageId: messageId });
    } catch (error) {
      // Not queued, so not accepted: undo, and let the client retry.
      logger.error({ err: error, session_id: input.session.id }, 'could not queue a turn');
      await models.Session.update({ current_turn_id: null, turn_phase: null, state: 'idle' }, { where: { id: input.session.id, current_turn_id: messageId } });
      await models.Message.destroy({ where: { id: messageId } });
      throw new AppError('SERVICE_UNAVAILABLE', 'The turn queue is unavailable; try again shortly.', {
        headers: { 'Retry-After': '5' },
        cause: error,
      });
    }
    return message;
  }

  /**
   * Cancels the session's running turn. A turn still waiting in the queue is cancelled here; one a
   * worker runs is cancelled by that worker (told over the control bus), so that the cancel events
   * come after the last event of the turn.
   */
  async cancel(session: SessionRow): Promise<void> {
    const { models, events, control } = this.deps;
    const fresh = await models.Session.findOne({ where: { id: session.id } });
    const turnId = fresh?.current_turn_id;
    if (!fresh || !turnId) throw new AppError('CONFLICT', 'No turn is running in this session.');
    const [unqueued] = await models.Session.update(
      { current_turn_id: null, turn_phase: null, state: 'idle' },
      { where: { id: session.id, current_turn_id: turnId, turn_phase: 'queued' } },
    );
    if (unqueued === 1) {
      await events.append(session.id, { type: 'agent_state', payload: { state: 'idle' } });
      await events.append(session.id, { type: 'error', payload: { code: 'CANCELLED', message: 'The turn was cancelled.' } });
      return;
    }
    await control.publish({ kind: 'cancel', sessionId: session.id, turnId });
  }

  /**
   * Waits for the end of the turn that starts after `subscribed`: its `done` payload, or the error
   * that ended it (an `agent_state idle` without `done`).
   */
  async waitForOutcome(sessionId: string, timeoutMs: number, start: (listen: () => void) => Promise<void>): Promise<DonePayload> {
    const { events } = this.deps;
    let settle!: (outcome: { done: DonePayload } | { error: { code: ErrorCode; message: string } }) => void;
    const outcome = new Promise<{ done: DonePayload } | { error: { code: ErrorCode; message: string } }>((resolve) => (settle = resolve));
    let lastError: { code: ErrorCode; message: string } | null = null;
    let listening = false;
    const unsubscribe = await events.subscribe(sessionId, (frame: SessionFrame) => {
      if (!listening) return;
      if (frame.type === 'done') settle({ done: frame.payload });
      if (frame.type === 'error') lastError = frame.payload;
      if (frame.type === 'agent_state' && frame.payload.state === 'idle') {
        settle({ error: lastError ?? { code: 'INTERNAL_ERROR', message: 'The turn ended without an answer.' } });
      }
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await start(() => (listening = true));
      const result = await Promise.race([
        outcome,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
        }),
      ]);
      if (result === 'timeout') {
        throw new AppError('SERVICE_UNAVAILABLE', `The turn did not finish within ${Math.round(timeoutMs / 1000)} s; it goes on — follow it on the WebSocket.`, {
          headers: { 'Retry-After': '5' },
        });
      }
      if ('done' in result) return result.done;
      throw new AppError(result.error.code, result.error.message);
    } finally {
      clearTimeout(timer);
      unsubscribe();
    }
  }

  /** Turns the database marks as unfinished (their process died): queued again, deduplicated by id. */
  async requeueUnfinished(): Promise<number> {
    const { models, queue } = this.deps;
    const busy = await models.Session.findAll({ where: { current_turn_id: { [Op.ne]: null } }, attributes: ['id', 'current_turn_id'] });
    for (const session of busy) await queue.enqueue({ sessionId: session.id, userMessageId: session.current_turn_id! });
    return busy.length;
  }
}
