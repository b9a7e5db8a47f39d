import { randomUUID } from 'node:crypto';
import { countTokens } from '../agent/tokens';
import { AppError } from '../core/errors';
import type { TurnMode } from '../core/events';
import type { ControlBus, EventLog, LiveTurn, MidTurnPolicy, TurnQueue, TurnRegistry } from '../core/turns';
import type { MessageRecord, TurnStore } from '../db/turn-store';
import type { Logger } from '../logs/logger';
import type { PickupWatch } from './pickup-watch';
import { TurnLifecycle } from './turn-lifecycle';

export interface AcceptInput {
  sessionId: string;
  text: string;
  mode: TurnMode;
  metadata: Record<string, unknown>;
  /** The turn's id (its user message's id); a caller that follows the turn picks it before accepting. */
  turnId?: string;
  /**
   * What to do when a turn already runs in the session (default `reject`, the spec's web rule); the
   * session's policy is read only then, so a message into an idle session costs nothing extra.
   */
  policy?: MidTurnPolicy | ((sessionId: string) => Promise<MidTurnPolicy>);
  /** Who sent it: a user id, or `<channel>:<contact id>` (usage and budgets count the turn for them). */
  sender?: string;
  /** The trace context of the message's `ingest` span, carried in the job (traces on). */
  trace?: Record<string, string>;
}

/**
 * How many of a session's waiting messages a retry looks through for its own (they are few: each
 * waits behind one running turn).
 */
const STRANDED_SCAN = 20;

/**
 * How long a claimed session may wait for its message to be stored before the claim counts as dead
 * (its request died): far longer than storing takes, even with the database slow (the same bound as
 * an abandoned event id, ABANDONED_CLAIM_MS in ./hub.ts). Compared with the claiming process's
 * clock: a few seconds of skew between processes change nothing that matters.
 */
export const UNSTORED_CLAIM_MS = 15_000;

/** A stored message and what became of it: its turn started, or it waits behind the running one. */
export interface Accepted {
  message: MessageRecord;
  disposition: 'started' | 'queued';
  /** When its job was queued (`performance.now()` of this process); null when it waits behind the running turn. */
  queuedMark: number | null;
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
 * queues it (job id = message id). A refused message (a turn runs) touches no database at all. What
 * happens to a turn after that — taken, ended, released, the next one started — is its `lifecycle`'s
 * (the worker asks it too).
 */
export class TurnService {
  readonly lifecycle: TurnLifecycle;

  constructor(private readonly deps: TurnServiceDeps) {
    this.lifecycle = new TurnLifecycle(deps);
  }

  async accept(input: AcceptInput): Promise<Accepted> {
    const { registry } = this.deps;
    const requested = input.metadata.workflow;
    if (requested !== undefined && (typeof requested !== 'string' || !(await this.deps.hasWorkflow(requested)))) {
      throw AppError.validation({ 'metadata.workflow': [{ code: 'unknown_workflow', message: `No workflow named ${JSON.stringify(requested)}.` }] });
    }
    const turnId = input.turnId ?? randomUUID();
    const first = await registry.claimOrHolder(input.sessionId, turnId);
    const claimed = first === true || ((await this.freeDeadClaim(input.sessionId, first)) && (await registry.claim(input.sessionId, turnId)));
    if (claimed) return { ...(await this.startClaimed(input, turnId)), disposition: 'started' };
    const policy = typeof input.policy === 'function' ? await input.policy(input.sessionId) : (input.policy ?? 'reject');
    if (policy === 'reject') throw new AppError('TURN_IN_PROGRESS', 'A turn is already running in this session; wait for `done`.');
    return { message: await this.queueBehind(input, turnId, policy), disposition: 'queued', queuedMark: null };
  }

  /**
   * A refused claim may be a dead one: the process that claimed the session died (or lost its
   * database) between the claim and storing the message, and nothing else would free the session
   * before the registry's safety net, hours later — every message meanwhile refused
   * TURN_IN_PROGRESS. A turn still queued UNSTORED_CLAIM_MS after it was accepted whose message is
   * not stored is freed (true: claim again). One that is stored is queued again (a no-op when its
   * job waits: the queue keeps one job per message). `live` is the holder the refused claim answered.
   */
  private async freeDeadClaim(sessionId: string, live: LiveTurn): Promise<boolean> {
    if (live.phase === 'running' || Date.now() - live.acceptedAt < UNSTORED_CLAIM_MS) return false;
    if (live.phase === 'handover') {
      // Reserved for its waiting messages by a process that died before handing it over: this one does.
      await this.lifecycle.startNext(sessionId, live.turnId);
      return false;
    }
    const owed = await this.deps.store.owedTurns(sessionId, STRANDED_SCAN);
    if (owed.some((turn) => turn.id === live.turnId)) {
      await this.deps.queue.enqueue({ sessionId, userMessageId: live.turnId, queuedAt: Date.now() });
      return false;
    }
    this.deps.logger.warn({ session_id: sessionId, turn_id: live.turnId }, 'freed a session claimed for a message that was never stored');
    const released = await this.deps.registry.release(sessionId, live.turnId, 'queued');
    if (released && released.waiting) await this.lifecycle.startNext(sessionId, live.turnId);
    return released !== false && !released.waiting;
  }

  /** Lets go of a claim whose message could not be taken in; messages that waited behind it get their turn. */
  private async unclaim(sessionId: string, turnId: string): Promise<void> {
    const released = await this.deps.registry.release(sessionId, turnId);
    if (released && released.waiting) await this.lifecycle.startNextLogged(sessionId, turnId);
  }

  /** The session is ours: store the message and queue its turn (undone when either fails). */
  private async startClaimed(input: AcceptInput, turnId: string): Promise<{ message: MessageRecord; queuedMark: number }> {
    const { queue, logger } = this.deps;
    let message: MessageRecord;
    try {
      message = await this.store(input, turnId);
    } catch (error) {
      await this.unclaim(input.sessionId, turnId);
      throw error;
    }
    // The job's time is the wall clock (another process compares it); this process's own mark is finer.
    const queuedMark = performance.now();
    try {
      await queue.enqueue({ sessionId: input.sessionId, userMessageId: turnId, queuedAt: Date.now(), ...(input.trace ? { trace: input.trace } : {}) });
    } catch (error) {
      // Not queued, so not accepted: undo, and let the client retry.
      logger.error({ err: error, session_id: input.sessionId }, 'could not queue a turn');
      // Deleted before the claim goes: a message waiting behind it must not be overtaken by it.
      await this.deps.store.deleteMessage(turnId);
      await this.unclaim(input.sessionId, turnId);
      throw new AppError('SERVICE_UNAVAILABLE', 'The turn queue is unavailable; try again shortly.', { headers: { 'Retry-After': '5' }, cause: error });
    }
    this.deps.pickup.watch(input.sessionId, turnId);
    return { message, queuedMark };
  }

  /**
   * A turn runs: the message is stored (owed an answer) and the running turn flagged, so whoever ends
   * it starts the next (any process). When it ended meanwhile, the next turn is started from here.
   */
  private async queueBehind(input: AcceptInput, turnId: string, policy: Exclude<MidTurnPolicy, 'reject'>): Promise<MessageRecord> {
    const message = await this.store(input, turnId);
    const running = await this.deps.registry.markWaiting(input.sessionId);
    if (!running) {
      await this.startNext(input.sessionId);
      return message;
    }
    if (policy === 'steer' && running.phase !== 'handover') {
      // A turn no worker took yet is simply cancelled; a running one stops at its next boundary.
      if (running.phase === 'queued') await this.lifecycle.cancelQueued({ sessionId: input.sessionId, turnId: running.turnId });
      else await this.deps.control.publish({ kind: 'cancel', sessionId: input.sessionId, turnId: running.turnId, steer: true });
    }
    return message;
  }

  /** Starts the session's next waiting message, if any and if no turn runs (see TurnLifecycle.startNext). */
  startNext(sessionId: string): Promise<string | null> {
    return this.lifecycle.startNext(sessionId);
  }

  /**
   * An edited or deleted chat message that still waits for its turn: its text is replaced, or it is
   * dropped. False once its turn started (or it was answered, or never stored).
   */
  async changeWaiting(sessionId: string, messageId: string, text: string | null): Promise<boolean> {
    const live = await this.deps.registry.get(sessionId);
    if (live?.turnId === messageId) return false;
    const changed = await this.deps.store.changeOwedMessage(messageId, text, text === null ? 0 : countTokens(text));
    // Its turn never comes: whoever follows it (the channel that took it in) is told, and shows nothing.
    if (changed && text === null) await this.lifecycle.dropped({ sessionId, turnId: messageId });
    return changed;
  }

  /** One insert, only into a session that exists and is not archived (else the documented error). */
  private async store(input: AcceptInput, turnId: string): Promise<MessageRecord> {
    const message = await this.deps.store.insertTurnMessage({
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
      sender: input.sender ?? null,
    });
    if (message) return message;
    // Not stored: the session is archived or gone (one read, on this rare path only).
    const session = await this.deps.store.findSession(input.sessionId);
    if (session) throw new AppError('CONFLICT', 'The session is archived; restore it first.');
    throw new AppError('SESSION_NOT_FOUND', `No session ${input.sessionId}.`);
  }

  /**
   * Cancels the session's running turn. A turn still waiting in the queue is cancelled here; one a
   * worker runs is cancelled by that worker (told over the control bus), so that the cancel events
   * come after the last event of the turn.
   */
  async cancel(sessionId: string): Promise<void> {
    const { registry, control } = this.deps;
    const live = await registry.get(sessionId);
    // Reserved between one turn and the next: the turn that ran is over, the next has not started.
    if (!live || live.phase === 'handover') throw new AppError('CONFLICT', 'No turn is running in this session.');
    if (await this.lifecycle.cancelQueued({ sessionId, turnId: live.turnId })) return;
    await control.publish({ kind: 'cancel', sessionId, turnId: live.turnId });
  }

  /**
   * A retried message (same event id) that its first request stored without queueing its turn: the
   * turn is queued now. Either that request died after claiming the session (the claim still names
   * the message), or it was told the insert failed when it had in fact committed (PostgreSQL went
   * away with the answer on its way back), so it freed the session and, the database being gone,
   * could not free the event id either: the message then waits its turn like one stored behind a
   * running turn. Harmless otherwise: only while the message is still owed, and the queue drops a
   * job id it already holds.
   */
  async queueIfStranded(sessionId: string, messageId: string): Promise<void> {
    const live = await this.deps.registry.get(sessionId);
    if (live?.turnId === messageId && live.phase !== 'queued') return; // a worker runs it
    const owed = await this.deps.store.owedTurns(sessionId, STRANDED_SCAN);
    if (!owed.some((turn) => turn.id === messageId)) return; // answered, or never stored
    if (live?.turnId === messageId) {
      await this.deps.queue.enqueue({ sessionId, userMessageId: messageId, queuedAt: Date.now() });
      return;
    }
    if (!(await this.deps.registry.markWaiting(sessionId))) await this.startNext(sessionId);
  }

  /**
   * Turns the database still owes (their process died, or they waited behind a turn whose process
   * died): the oldest of each session is claimed and queued again (deduplicated by id); the others
   * wait behind it and start in order.
   */
  async requeueUnfinished(): Promise<number> {
    const { store, registry, queue } = this.deps;
    let queued = 0;
    for (const turn of await store.unansweredTurns()) {
      const live = await registry.get(turn.sessionId);
      if (live?.phase === 'handover') {
        // Reserved for its waiting messages by a process that died (or is about to hand it over: one of us wins).
        if ((await this.lifecycle.startNext(turn.sessionId, live.turnId)) !== null) queued += 1;
        continue;
      }
      if (live && live.turnId !== turn.messageId) {
        await registry.markWaiting(turn.sessionId);
        continue;
      }
      if (!live) {
        if (!(await registry.claim(turn.sessionId, turn.messageId))) continue;
        // Its turn may have ended since the list was read (the reply stored, then the session freed):
        // claimed now, it is queued only if still owed, or the session would stay busy with a turn
        // that never runs again (its job is done) and the client would get its `done` twice.
        const [owed] = await store.owedTurns(turn.sessionId, 1);
        if (owed?.id !== turn.messageId) {
          await registry.release(turn.sessionId, turn.messageId);
          continue;
        }
      }
      await queue.enqueue({ sessionId: turn.sessionId, userMessageId: turn.messageId, queuedAt: Date.now() });
      queued += 1;
    }
    return queued;
  }
}
