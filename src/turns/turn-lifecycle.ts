import type { EventLog, PendingConfirmation, TurnQueue, TurnRegistry } from '../core/turns';
import type { MessageRecord, TurnEnd, TurnStore } from '../db/turn-store';
import type { Logger } from '../logs/logger';
import type { PickupWatch } from './pickup-watch';
import { donePayload, endingFrames, type TurnEnding } from './turn-endings';
import { TurnEvents } from './turn-events';

/**
 * How long a given-up turn waits for the database to say whether its reply was stored (it may be
 * what failed every attempt) before it is reported failed.
 */
export const GIVE_UP_STORE_WAIT_MS = 30_000;

/**
 * How often starting the next waiting turn reads the waiting messages again when new ones keep
 * arriving between the read and the handover (each read sees them; more than two is a storm).
 */
const HAND_OVER_ATTEMPTS = 3;

/** A turn, by its session and its id (its user message's id). */
export interface TurnRef {
  sessionId: string;
  turnId: string;
}

/** What a turn leaves in the database when it ends: its reply (none when it did not answer) and its totals. */
export type TurnRecord = Omit<TurnEnd, 'sessionId' | 'turnId'>;

/** A turn that ended without an answer and without spending anything (cancelled in the queue, given up). */
export const NO_ANSWER: TurnRecord = { reply: null, usage: { inputTokens: 0, outputTokens: 0 } };

/** How a turn's end went in storage and the registry. */
export interface Finished {
  /** The stored reply; null when none was given, or a second reply to its message was refused. */
  reply: MessageRecord | null;
  /** The session's `updated_at` after the end was stored (null: nothing was stored). */
  updatedAt: Date | null;
  /** The turn was still the session's when it was released (a late worker's was not). */
  ours: boolean;
  /** Messages waited behind it: the next one has been started. */
  waiting: boolean;
}

export interface FinishOptions {
  /** Only while no worker took it (a cancel in the queue): the registry decides first, so a worker taking it meanwhile wins. */
  onlyIfQueued?: boolean;
  /** A failure to store is logged and the session freed anyway (a given-up turn must not keep its session). */
  storeFailure?: 'throw' | 'log';
}

export interface TurnLifecycleDeps {
  store: TurnStore;
  registry: TurnRegistry;
  queue: TurnQueue;
  events: EventLog;
  logger: Logger;
  pickup: PickupWatch;
}

/**
 * The one owner of a turn's transitions once it is accepted (TurnService accepts): a worker takes
 * it, it runs (routed, waiting for a confirmation), it ends — done, cancelled, failed, given up,
 * dropped — in the database and the registry, the session is released and the next waiting message
 * starts; and it is the single writer of the frames that end a turn (`announce`, turn-endings.ts).
 * Every write of a turn's state to the two stores (TurnStore, TurnRegistry) is made in src/turns.
 */
export class TurnLifecycle {
  constructor(private readonly deps: TurnLifecycleDeps) {}

  /** The frame stream of a turn (`onFirstToken`: the stage metrics' first token). */
  events(turn: TurnRef, onFirstToken: (() => void) | null = null): TurnEvents {
    return new TurnEvents(this.deps, turn.sessionId, turn.turnId, onFirstToken);
  }

  /** A worker takes a turn it was handed: only while it is still the session's (it may have been cancelled in the queue). */
  take(turn: TurnRef): Promise<boolean> {
    return this.deps.registry.update(turn.sessionId, turn.turnId, { phase: 'running' });
  }

  /** The turn routed to another workflow than the session's: messages sent meanwhile follow that workflow's mid-turn policy. */
  async routed(turn: TurnRef, workflowId: string | null): Promise<void> {
    await this.deps.registry.update(turn.sessionId, turn.turnId, { workflowId });
  }

  /** The confirmation the turn waits for (null: none any more), kept with it so a socket that connects meanwhile is asked again. */
  async awaitConfirmation(turn: TurnRef, pending: PendingConfirmation | null): Promise<void> {
    await this.deps.registry.update(turn.sessionId, turn.turnId, { pending });
  }

  /**
   * Ends the turn in the database (its reply, or `record` null: nothing to store) and releases the
   * session, then starts the next message that waited behind it. The reply is stored before the
   * session is freed (a next turn reads it), and the next waiting message claims the session before
   * the turn's ending frames go out (a message a client sends on them must not overtake it).
   * Null when `onlyIfQueued` and a worker has the turn.
   */
  async finish(turn: TurnRef, record: TurnRecord | null, options: FinishOptions = {}): Promise<Finished | null> {
    const { registry } = this.deps;
    const releasedFirst = options.onlyIfQueued ? await registry.release(turn.sessionId, turn.turnId, 'queued') : null;
    if (releasedFirst === false) return null;
    const stored = record ? await this.store(turn, record, options.storeFailure ?? 'throw') : null;
    const released = releasedFirst ?? (await registry.release(turn.sessionId, turn.turnId));
    if (released && released.waiting) await this.startNextLogged(turn.sessionId, turn.turnId);
    return { reply: stored?.reply ?? null, updatedAt: stored?.updatedAt ?? null, ours: released !== false, waiting: released !== false && released.waiting };
  }

  /** Writes the frames that end the turn (after `finish`); the turn sends nothing after them. */
  announce(events: TurnEvents, ending: TurnEnding): Promise<void> {
    return events.sendLast(endingFrames(ending, events.openToolCalls()));
  }

  /** `finish`, then `announce` (`events`: the running turn's stream, whose open tool calls the ending closes). Null when not ended here. */
  async end(turn: TurnRef, record: TurnRecord | null, ending: TurnEnding, options: FinishOptions & { events?: TurnEvents } = {}): Promise<Finished | null> {
    const finished = await this.finish(turn, record, options);
    if (finished) await this.announce(options.events ?? this.events(turn), ending);
    return finished;
  }

  /** Cancels a turn no worker took yet, where it waits; false when a worker has it (its worker ends it) or it ended. */
  async cancelQueued(turn: TurnRef): Promise<boolean> {
    return (await this.end(turn, NO_ANSWER, { kind: 'cancelled' }, { onlyIfQueued: true })) !== null;
  }

  /**
   * The queue gave the turn's job up (it kept failing, or the workers running it kept dying): the
   * message counts as answered (no process queues it again), the session is freed and the client
   * told. Unless its reply is stored after all (an attempt's statement committed while the database
   * went away with the answer): then it ends with that reply's `done`.
   */
  async giveUp(turn: TurnRef): Promise<void> {
    if ((await this.deps.registry.get(turn.sessionId))?.turnId !== turn.turnId) return; // ended meanwhile
    const stored = await this.settledReply(turn);
    if (stored) {
      await this.endAnswered(turn, stored);
      return;
    }
    const finished = await this.finish(turn, NO_ANSWER, { storeFailure: 'log' });
    if (finished?.ours) await this.announce(this.events(turn), { kind: 'given_up' });
  }

  /** A waiting message deleted before its turn started: whoever follows it (the channel that took it in) is told, and shows nothing. */
  async dropped(turn: TurnRef): Promise<void> {
    await this.announce(this.events(turn), { kind: 'dropped' });
  }

  /**
   * A redelivered job whose turn is no longer the session's: cancelled, or ended. A worker that
   * stored the reply and freed the session (before `done`, so the client's next message finds it
   * free) may have died before `done` went out: then the client never learns the turn ended, so
   * `done` goes out now, unless the log has it.
   */
  async doneIfMissing(turn: TurnRef, known?: MessageRecord): Promise<void> {
    const reply = known ?? (await this.storedReply(turn));
    if (!reply) return;
    const { frames } = await this.deps.events.replay(turn.sessionId, -1);
    if (frames.some((frame) => frame.type === 'done' && frame.payload.turn_id === turn.turnId)) return;
    this.deps.logger.info(
      { job: { sessionId: turn.sessionId, userMessageId: turn.turnId } },
      'a turn that ended without its done (its worker died): done sent',
    );
    await this.announce(this.events(turn), { kind: 'done', done: donePayload(reply, { durationMs: 0, toolCalls: Number(reply.metadata?.tool_calls ?? 0) }) });
  }

  /**
   * A turn whose reply turned out to be stored after all (its statement committed, the answer lost
   * with the connection, or what failed came after it): the session is freed and the turn ends with
   * that reply's `done`, unless the log has it.
   */
  async endAnswered(turn: TurnRef, reply: MessageRecord): Promise<void> {
    const finished = await this.finish(turn, null);
    if (finished?.ours) await this.doneIfMissing(turn, reply);
  }

  /** The reply stored for the turn; null when there is none. Throws when the database does not answer. */
  async storedReply(turn: TurnRef): Promise<MessageRecord | null> {
    const loaded = await this.deps.store.loadConversation(turn.sessionId);
    return loaded?.messages.findLast((message) => message.reply_to === turn.turnId) ?? null;
  }

  /**
   * storedReply, asked again while the database does not answer (every attempt of a turn can fall
   * inside one outage), for at most GIVE_UP_STORE_WAIT_MS; undefined when it never answered.
   */
  private async settledReply(turn: TurnRef): Promise<MessageRecord | null | undefined> {
    const deadline = Date.now() + GIVE_UP_STORE_WAIT_MS;
    for (let pause = 250; ; pause = Math.min(pause * 2, 2_000)) {
      try {
        return await this.storedReply(turn);
      } catch {
        if (Date.now() + pause > deadline) return undefined;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * Starts the session's next waiting message, if any. `reservedBy`: the turn whose release reserved
   * the session for its waiting messages (TurnRegistry.release): the session goes straight to the
   * oldest of them, so a message arriving meanwhile cannot overtake them. Without it (a message that
   * found no turn running, a retry), the session is claimed if free. Safe to race: the registry lets
   * one caller claim or hand over the session.
   */
  async startNext(sessionId: string, reservedBy?: string): Promise<string | null> {
    const { store, registry } = this.deps;
    for (let attempt = 0; attempt < HAND_OVER_ATTEMPTS; attempt += 1) {
      const [next, after] = await store.owedTurns(sessionId, 2);
      if (reservedBy === undefined) {
        if (!next || !(await registry.claim(sessionId, next.id))) return null;
        if (after) await registry.markWaiting(sessionId);
      } else {
        const handed = await registry.handOver(sessionId, reservedBy, next?.id ?? null, after !== undefined);
        if (handed === 'again') continue; // a message was stored since the list was read
        if (handed !== 'handed' || !next) return null;
      }
      return this.queueNext(sessionId, next.id);
    }
    this.deps.logger.warn({ session_id: sessionId }, 'waiting messages kept changing while the next turn was started; the next message starts it');
    return null;
  }

  /** The next waiting message's turn is the session's: queue it (on failure the session is let go; a restart queues it again). */
  private async queueNext(sessionId: string, turnId: string): Promise<string | null> {
    const { registry, queue, logger } = this.deps;
    try {
      await queue.enqueue({ sessionId, userMessageId: turnId, queuedAt: Date.now() });
    } catch (error) {
      // Stays stored and owed: requeued when a process starts (requeueUnfinished).
      logger.error({ err: error, session_id: sessionId, turn_id: turnId }, 'could not queue a waiting turn');
      await registry.release(sessionId, turnId);
      return null;
    }
    this.deps.pickup.watch(sessionId, turnId);
    return turnId;
  }

  /** startNext after a release that reserved the session; a failure is logged (the turn that ended is not undone by it). */
  async startNextLogged(sessionId: string, reservedBy: string): Promise<void> {
    await this.startNext(sessionId, reservedBy).catch((error: unknown) =>
      this.deps.logger.error({ err: error, session_id: sessionId }, 'could not start the next waiting turn'),
    );
  }

  private async store(turn: TurnRef, record: TurnRecord, onFailure: 'throw' | 'log'): Promise<{ reply: MessageRecord | null; updatedAt: Date } | null> {
    try {
      return await this.deps.store.endTurn({ sessionId: turn.sessionId, turnId: turn.turnId, ...record });
    } catch (error) {
      if (onFailure === 'throw') throw error;
      this.deps.logger.error({ err: error, job: { sessionId: turn.sessionId, userMessageId: turn.turnId } }, 'could not mark a given-up turn answered');
      return null;
    }
  }
}
