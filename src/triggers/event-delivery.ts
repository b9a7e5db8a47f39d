import { UniqueConstraintError } from 'sequelize';
import type { ChatDelivery, DeliveryQuestion, DeliveryReceipt } from '../core/delivery';
import { parseDeliverTarget } from '../core/delivery';
import { followTurn, type TurnOutcome } from '../core/follow-turn';
import type { EventLog } from '../core/turns';
import type { ApprovalProgress } from '../protocol/frames';
import { approvalNote, confirmStep, rememberAsked } from '../protocol/confirm-questions';
import type { EventDeliveryRow, Models } from '../db/models';
import type { Logger } from '../logs/logger';

export interface EventDelivererOptions {
  models: Models;
  events: EventLog;
  /** The started chat channel's delivery capability, or null when that channel is off (or cannot deliver). */
  deliveryFor(channel: string): ChatDelivery | null;
  logger: Logger;
  /** `hooks.delivery_attempts`, `hooks.delivery_backoff_ms`. */
  attempts: number;
  backoffMs: number;
  /** Told when a delivery is settled (delivered or failed): schedules keep their last outcome, metrics count it. */
  onSettled?(row: EventDeliveryRow): void;
}

/**
 * Delivers an event turn's answer (issue 29): follows the turn by its id, then posts its text into
 * the `deliver` chat through that channel's adapter — the thread key's first answer starts a thread,
 * later ones reply in it. Delivered only when the platform returned a message id; a platform failure
 * is retried with backoff (`attempts`), and nothing is posted again once a post succeeded. One
 * thread's deliveries go out in order in this process.
 */
export class EventDeliverer {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private stopped = false;

  constructor(private readonly options: EventDelivererOptions) {}

  /** Follows `row`'s turn and delivers its answer; resolves when the delivery is settled (never rejects). */
  async deliver(row: EventDeliveryRow, sessionKey: string): Promise<void> {
    try {
      const outcome = await this.outcomeOf(row, sessionKey);
      if (outcome.kind !== 'done') return await this.settle(row, { status: 'failed', reason: describeOutcome(outcome) });
      const chain = `${sessionKey}|${row.deliver}`;
      const previous = this.chains.get(chain) ?? Promise.resolve();
      const next = previous.then(() => this.post(row, sessionKey, outcome.done.text));
      this.chains.set(chain, next);
      await next;
      if (this.chains.get(chain) === next) this.chains.delete(chain);
    } catch (error) {
      this.options.logger.error({ err: error, delivery_id: row.id }, 'events: a delivery failed');
    }
  }

  /** Stops retrying (at shutdown): deliveries waiting for their next attempt end as failed. */
  stop(): void {
    this.stopped = true;
    for (const wait of this.waits) {
      clearTimeout(wait.timer);
      wait.resolve();
    }
    this.waits.clear();
  }

  private async outcomeOf(row: EventDeliveryRow, sessionKey: string): Promise<TurnOutcome> {
    if (!row.session_id || !row.turn_id) return { kind: 'error', code: 'INTERNAL_ERROR', message: 'the event started no turn' };
    const sessionId = row.session_id;
    // Questions of this turn, in order: an approval's progress follows its question, never overtakes it.
    let asking = Promise.resolve();
    let asked: readonly string[] = [];
    const followed = await followTurn(this.options.events, sessionId, row.turn_id, {
      replay: true,
      // A tool confirmation (or approval, issue 30) of the event's turn is asked in the delivery chat,
      // with the channel's buttons, once; an approval's progress ("1 of 2") is a note under it.
      onFrame: (frame) => {
        if (frame.type !== 'tool_confirm_request') return;
        const step = confirmStep(asked, frame.payload);
        asked = rememberAsked(asked, frame.payload);
        const request = frame.payload;
        asking = asking.then(() => (step === 'ask' ? this.ask(row, sessionKey, sessionId, request) : this.tellProgress(row, sessionKey, request.approval)));
      },
    });
    return followed.outcome;
  }

  private async ask(row: EventDeliveryRow, sessionKey: string, sessionId: string, request: DeliveryQuestion['request']): Promise<void> {
    const target = parseDeliverTarget(row.deliver);
    const delivery = target ? this.options.deliveryFor(target.channel) : null;
    if (!target || !delivery?.ask) {
      // No chat to ask in: an approval is still decided by its hub approvers (API, Web UI, CLI); a plain confirmation times out.
      const note = request.approval ? 'it is asked of hub approvers only (API, Web UI, CLI)' : 'it times out';
      this.options.logger.warn(
        { delivery_id: row.id, confirmation_id: request.confirmation_id },
        `events: a tool confirmation cannot be asked in the delivery chat; ${note}`,
      );
      return;
    }
    try {
      const thread = await this.threadOf(sessionKey, row);
      await delivery.ask({ conversation: target.conversation, thread, sessionId, request });
    } catch (error) {
      this.options.logger.error({ err: error, delivery_id: row.id }, 'events: asking for a tool confirmation failed');
    }
  }

  /** A counted click (or an escalation) of an approval asked in the delivery chat, said under its question. */
  private async tellProgress(row: EventDeliveryRow, sessionKey: string, progress: ApprovalProgress | undefined): Promise<void> {
    const target = parseDeliverTarget(row.deliver);
    const delivery = target ? this.options.deliveryFor(target.channel) : null;
    if (!progress || !target || !delivery?.ask) return;
    try {
      await delivery.post({ conversation: target.conversation, thread: await this.threadOf(sessionKey, row), text: approvalNote(progress) });
    } catch (error) {
      this.options.logger.warn({ err: error, delivery_id: row.id }, 'events: telling an approval’s progress failed');
    }
  }

  private async threadOf(sessionKey: string, row: EventDeliveryRow): Promise<string | null> {
    const thread = await this.options.models.EventThread.findOne({ where: { session_key: sessionKey, deliver: row.deliver } });
    return thread?.root_message_id ?? null;
  }

  private async post(row: EventDeliveryRow, sessionKey: string, text: string): Promise<void> {
    const { models, attempts, backoffMs, logger } = this.options;
    const target = parseDeliverTarget(row.deliver);
    const thread = await models.EventThread.findOne({ where: { session_key: sessionKey, deliver: row.deliver } });
    let reason = 'not attempted';
    for (let attempt = 1; attempt <= attempts && !this.stopped; attempt += 1) {
      let receipt: DeliveryReceipt;
      try {
        const delivery = target ? this.options.deliveryFor(target.channel) : null;
        if (!target || !delivery) throw new Error(`the ${target?.channel ?? row.deliver} channel is not running here`);
        receipt = await delivery.post({ conversation: target.conversation, thread: thread?.root_message_id ?? null, text });
      } catch (error) {
        reason = error instanceof Error ? error.message : String(error);
        logger.warn({ delivery_id: row.id, attempt, reason }, 'events: posting an answer failed');
        await row.update({ attempts: attempt, reason: reason.slice(0, 500) });
        if (attempt < attempts) await this.wait(backoffMs * 2 ** (attempt - 1));
        continue;
      }
      // Posted: recorded once, never posted again whatever follows.
      await this.settle(row, { status: 'delivered', platform_message_id: receipt.messageId, attempts: attempt, reason: null });
      if (!thread) await this.remember(sessionKey, row, receipt);
      return;
    }
    await this.settle(row, { status: 'failed', reason: `not delivered: ${reason}`.slice(0, 500) });
  }

  /** The thread this answer started, and the chat conversation that continues the event's session. */
  private async remember(sessionKey: string, row: EventDeliveryRow, receipt: DeliveryReceipt): Promise<void> {
    const { models } = this.options;
    const now = new Date();
    await ignoreDuplicate(models.EventThread.create({ session_key: sessionKey, deliver: row.deliver, root_message_id: receipt.messageId, created_at: now }));
    if (receipt.replyKey && row.session_id)
      await ignoreDuplicate(models.SessionAlias.create({ session_key: receipt.replyKey, session_id: row.session_id, created_at: now }));
  }

  private async settle(row: EventDeliveryRow, values: Partial<Pick<EventDeliveryRow, 'status' | 'platform_message_id' | 'attempts' | 'reason'>>) {
    await row.update(values);
    this.options.onSettled?.(row);
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.waits.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      entry.timer.unref();
      this.waits.add(entry);
    });
  }
}

function describeOutcome(outcome: TurnOutcome): string {
  switch (outcome.kind) {
    case 'error':
      return `the turn failed: ${outcome.code}`;
    case 'cancelled':
      return 'the turn was cancelled';
    case 'merged':
      return `answered together with turn ${outcome.into}`;
    case 'dropped':
      return 'the turn was dropped';
    case 'stopped':
      return 'the hub stopped before the turn ended';
    case 'done':
      return 'done';
    default:
      return outcome satisfies never;
  }
}

async function ignoreDuplicate(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!(error instanceof UniqueConstraintError)) throw error;
  }
}
