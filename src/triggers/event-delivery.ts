import { UniqueConstraintError } from 'sequelize';
import type { ChatDelivery, DeliveryQuestion, DeliveryReceipt, LiveDelivery } from '../core/delivery';
import { parseDeliverTarget } from '../core/delivery';
import { followTurn, type TurnOutcome } from '../core/follow-turn';
import type { EventLog } from '../core/turns';
import type { ApprovalProgress } from '../protocol/frames';
import { approvalNote, confirmStep, rememberAsked } from '../protocol/confirm-questions';
import type { EventDeliveryRow, Models } from '../db/models';
import type { Logger } from '../logs/logger';
import { describeOutcome, failureNote } from './event-notes';

export interface EventDelivererOptions {
  models: Models;
  events: EventLog;
  /** The started chat channel's delivery capability, or null when that channel is off (or cannot deliver). */
  deliveryFor(channel: string): ChatDelivery | null;
  logger: Logger;
  /** `hooks.delivery_attempts`, `hooks.delivery_backoff_ms`. */
  attempts: number;
  backoffMs: number;
  /** Told when a delivery is settled (delivered or failed): schedules keep their last outcome, metrics and spans count it. */
  onSettled?(row: EventDeliveryRow): void;
}

/** Where a delivery goes: the channel's capability, the conversation and the thread's first message. */
interface Destination {
  delivery: ChatDelivery | null;
  conversation: string;
  thread: string | null;
}

/** A turn's ending as the deliverer sees it: a followed outcome, or the reply stored before (a resumed delivery). */
type Ending = TurnOutcome | { kind: 'stored'; text: string };

/**
 * Delivers an event turn's answer (issue 29): shows the turn live in the `deliver` chat with that
 * channel's own presenter (its native streaming or edits), the thread key's first answer starting a
 * thread, later ones replying in it. A failed or cancelled turn is said there too. Delivered only
 * when the platform returned a message id: when the live view put nothing in the chat, the answer
 * (or the note) is posted whole, retried with backoff, and nothing is posted again once a post
 * succeeded. One thread's deliveries go out in order in this process. A delivery resumed after its
 * process died finishes the message it had started (`platform_message_id`) instead of posting another.
 */
export class EventDeliverer {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private readonly following = new Set<() => void>();
  private stopped = false;

  constructor(private readonly options: EventDelivererOptions) {}

  /** Follows `row`'s turn and delivers its answer; resolves when the delivery is settled or left for a later start (never rejects). */
  async deliver(row: EventDeliveryRow, sessionKey: string, resumed = false): Promise<void> {
    const chain = `${sessionKey}|${row.deliver}`;
    const previous = this.chains.get(chain) ?? Promise.resolve();
    const next = previous.then(() =>
      this.run(row, sessionKey, resumed).catch((error: unknown) => this.options.logger.error({ err: error, delivery_id: row.id }, 'events: a delivery failed')),
    );
    this.chains.set(chain, next);
    await next;
    if (this.chains.get(chain) === next) this.chains.delete(chain);
  }

  /** Stops (at shutdown): turns are no longer followed (their deliveries stay open for the next start), retries end. */
  stop(): void {
    this.stopped = true;
    for (const stop of this.following) stop();
    for (const wait of this.waits) {
      clearTimeout(wait.timer);
      wait.resolve();
    }
    this.waits.clear();
  }

  private async run(row: EventDeliveryRow, sessionKey: string, resumed: boolean): Promise<void> {
    if (!row.session_id || !row.turn_id) return this.settle(row, { status: 'failed', reason: 'the event started no turn' });
    const destination = await this.destination(row, sessionKey);
    // Resumed with a message already in the chat: no live view (it would post a second one).
    const started = row.platform_message_id;
    const live = started === null ? await this.present(row, destination) : null;
    const ending = await this.ending(row, destination, live, resumed);
    if (ending.kind === 'stopped') return; // shutting down: the next start (or another process) finishes it
    if (ending.kind === 'merged' || ending.kind === 'dropped') return this.settle(row, { status: 'failed', reason: describeOutcome(ending) });
    const text = ending.kind === 'done' ? ending.done.text : ending.kind === 'stored' ? ending.text : failureNote(row, ending);
    let receipt = live && ending.kind !== 'stored' ? await live.end(ending).catch(() => null) : null;
    if (!receipt && started !== null) receipt = await this.finishStarted(row, destination, started, text);
    receipt ??= await this.postWhole(row, destination, text);
    if (!receipt) return;
    const succeeded = ending.kind === 'done' || ending.kind === 'stored';
    await this.settle(row, {
      status: succeeded ? 'delivered' : 'failed',
      platform_message_id: receipt.messageId,
      reason: succeeded ? null : describeOutcome(ending),
    });
    await this.remember(sessionKey, row, receipt, destination.thread === null);
  }

  private async destination(row: EventDeliveryRow, sessionKey: string): Promise<Destination> {
    const target = parseDeliverTarget(row.deliver);
    const thread = await this.options.models.EventThread.findOne({ where: { session_key: sessionKey, deliver: row.deliver } });
    return {
      delivery: target ? this.options.deliveryFor(target.channel) : null,
      conversation: target?.conversation ?? '',
      thread: thread?.root_message_id ?? null,
    };
  }

  /** The channel's live view of the turn, or null (the channel cannot, or failed to start one: the answer is posted whole). */
  private async present(row: EventDeliveryRow, { delivery, conversation, thread }: Destination): Promise<LiveDelivery | null> {
    if (!delivery?.present) return null;
    try {
      return await delivery.present({
        conversation,
        thread,
        sessionId: row.session_id!,
        turnId: row.turn_id!,
        failureNote: (outcome) => failureNote(row, outcome),
        // Recorded before the surface goes on: a delivery resumed after a crash finds the message it started.
        onPosted: async (receipt) => {
          await row
            .update({ platform_message_id: receipt.messageId })
            .catch((error: unknown) => this.options.logger.warn({ err: error, delivery_id: row.id }, 'events: the started message could not be recorded'));
        },
      });
    } catch (error) {
      this.options.logger.warn({ err: error, delivery_id: row.id }, 'events: the answer cannot be shown live; it is posted once done');
      return null;
    }
  }

  /** Follows the turn (frames to the live view); a resumed delivery whose turn already ended takes the stored reply. */
  private async ending(row: EventDeliveryRow, destination: Destination, live: LiveDelivery | null, resumed: boolean): Promise<Ending> {
    const sessionId = row.session_id!;
    // Without a live view, questions of this turn are asked here, in order: an approval's progress
    // ("1 of 2", issue 30) follows its question as a note under it, never overtakes it.
    let asking = Promise.resolve();
    let asked: readonly string[] = [];
    const followed = await followTurn(this.options.events, sessionId, row.turn_id!, {
      replay: true,
      onFrame: (frame) => {
        if (live) return live.frame(frame);
        if (frame.type !== 'tool_confirm_request') return;
        const request = frame.payload;
        const step = confirmStep(asked, request);
        asked = rememberAsked(asked, request);
        asking = asking.then(() => (step === 'ask' ? this.ask(row, destination, sessionId, request) : this.tellProgress(row, destination, request.approval)));
      },
    });
    this.following.add(followed.stop);
    if (this.stopped) followed.stop();
    // A resumed delivery's turn may have ended before this process followed it: its stored reply (the one without tool calls).
    const stored = resumed ? await this.storedReply(sessionId, row.turn_id!) : null;
    if (stored) followed.stop();
    const outcome = await followed.outcome;
    this.following.delete(followed.stop);
    if (outcome.kind === 'stopped' && stored) return { kind: 'stored', text: stored.content };
    return outcome;
  }

  private async storedReply(sessionId: string, turnId: string) {
    const replies = await this.options.models.Message.findAll({ where: { session_id: sessionId, role: 'assistant', turn_id: turnId } });
    return replies.find((reply) => (reply.tool_calls ?? []).length === 0) ?? null;
  }

  private async ask(row: EventDeliveryRow, { delivery, conversation, thread }: Destination, sessionId: string, request: DeliveryQuestion['request']) {
    if (!delivery?.ask) {
      // No chat to ask in: an approval is still decided by its hub approvers (API, Web UI, CLI); a plain confirmation times out.
      const note = request.approval ? 'it is asked of hub approvers only (API, Web UI, CLI)' : 'it times out';
      this.options.logger.warn(
        { delivery_id: row.id, confirmation_id: request.confirmation_id },
        `events: a tool confirmation cannot be asked in the delivery chat; ${note}`,
      );
      return;
    }
    try {
      await delivery.ask({ conversation, thread, sessionId, request });
    } catch (error) {
      this.options.logger.error({ err: error, delivery_id: row.id }, 'events: asking for a tool confirmation failed');
    }
  }

  /** A counted click (or an escalation) of an approval asked in the delivery chat, said under its question. */
  private async tellProgress(row: EventDeliveryRow, { delivery, conversation, thread }: Destination, progress: ApprovalProgress | undefined): Promise<void> {
    if (!progress || !delivery?.ask) return;
    try {
      await delivery.post({ conversation, thread, text: approvalNote(progress) });
    } catch (error) {
      this.options.logger.warn({ err: error, delivery_id: row.id }, 'events: telling an approval’s progress failed');
    }
  }

  /** A resumed delivery's started message gets the final text (edited where the channel can; left as it is where not). */
  private async finishStarted(row: EventDeliveryRow, { delivery, conversation }: Destination, messageId: string, text: string) {
    const receipt: DeliveryReceipt = { messageId, replyKey: null };
    if (!delivery?.replace) return receipt;
    const done = await this.attempt(row, () => delivery.replace!({ conversation, messageId, text }).then(() => receipt));
    return done ?? receipt; // the message is in the chat either way: never posted again
  }

  private postWhole(row: EventDeliveryRow, { delivery, conversation, thread }: Destination, text: string): Promise<DeliveryReceipt | null> {
    return this.attempt(row, () => {
      if (!delivery) throw new Error(`the ${parseDeliverTarget(row.deliver)?.channel ?? row.deliver} channel is not running here`);
      return delivery.post({ conversation, thread, text });
    });
  }

  /** Tries `call` up to `attempts` times with backoff; null (and the delivery failed) when every try failed. */
  private async attempt(row: EventDeliveryRow, call: () => Promise<DeliveryReceipt>): Promise<DeliveryReceipt | null> {
    const { attempts, backoffMs, logger } = this.options;
    let reason = 'not attempted';
    for (let attempt = row.attempts + 1, tried = 1; tried <= attempts && !this.stopped; attempt += 1, tried += 1) {
      try {
        const receipt = await call();
        await row.update({ attempts: attempt });
        return receipt;
      } catch (error) {
        reason = error instanceof Error ? error.message : String(error);
        logger.warn({ delivery_id: row.id, attempt, reason }, 'events: posting an answer failed');
        await row.update({ attempts: attempt, reason: reason.slice(0, 500) });
        if (tried < attempts) await this.wait(backoffMs * 2 ** (tried - 1));
      }
    }
    if (!this.stopped) await this.settle(row, { status: 'failed', reason: `not delivered: ${reason}`.slice(0, 500) });
    return null;
  }

  /** The thread this answer started, and the chat conversation that continues the event's session. */
  private async remember(sessionKey: string, row: EventDeliveryRow, receipt: DeliveryReceipt, startsThread: boolean): Promise<void> {
    const { models } = this.options;
    const now = new Date();
    if (startsThread)
      await ignoreDuplicate(models.EventThread.create({ session_key: sessionKey, deliver: row.deliver, root_message_id: receipt.messageId, created_at: now }));
    if (receipt.replyKey && row.session_id)
      await ignoreDuplicate(models.SessionAlias.create({ session_key: receipt.replyKey, session_id: row.session_id, created_at: now }));
  }

  private async settle(row: EventDeliveryRow, values: Partial<Pick<EventDeliveryRow, 'status' | 'platform_message_id' | 'attempts' | 'reason'>>) {
    await row.update({ ...values, claimed_by: null, claimed_until: null });
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

async function ignoreDuplicate(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!(error instanceof UniqueConstraintError)) throw error;
  }
}
