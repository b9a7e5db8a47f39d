import type { Logger } from 'pino';
import { WORKING_STATES, type SessionFrame } from '../../src/core/events';
import { errorText, type TurnOutcome } from '../../src/core/follow-turn';
import { NO_LEASE, type HeldLease } from '../../src/core/render-lease';
import { EditReply, PostReply } from './live-replies';
import { ReplyUnavailable, type ConfirmRequest, type LiveReply, type ReplySurface, type WorkStatus } from './reply-surface';
import { splitMessage } from './split-message';
import { ApprovalAsks } from './approval-asks';
import { NOT_APPROVED_PREFIX } from './confirm-click';

export interface PresenterOptions {
  logger: Logger;
  /** For the logs: which channel, session and turn. */
  channel: string;
  sessionId: string;
  turnId?: string;
  /**
   * The chat's rendering lease: taken before the turn's first platform call, released after its last.
   * `ticket`: the seq of the turn's first frame (its place among the chat's turns).
   */
  lease?: (ticket: number) => Promise<HeldLease>;
}

/**
 * Presents one turn on a reply surface — written once for every chat channel. Frames come in seq
 * order (from the core's turn follower); every platform call runs one after the other, in order, and
 * a failed one is logged while the turn goes on. The streamed text is shown at most once per
 * `cadence.editIntervalMs` (natively, by edits, or paragraph by paragraph, falling back in that
 * order), the status says what the agent does, confirmations are asked (or decided by a channel
 * rule), and the ending shows the answer split to the message limit, or the channel's note.
 */
export class TurnPresenter {
  private chain: Promise<void> = Promise.resolve();
  private live: LiveReply;
  private text = '';
  private shownText: string | null = null;
  private shownAt = 0;
  private nextUpdateAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private refresh: NodeJS.Timeout | null = null;
  private status: WorkStatus | null = null;
  private lease: Promise<HeldLease> | null = null;
  private ended = false;
  private readonly approvals = new ApprovalAsks();

  constructor(
    private readonly surface: ReplySurface,
    private readonly options: PresenterOptions,
  ) {
    this.live = surface.stream?.() ?? this.fallbackAfter(null);
    const every = surface.cadence.statusRefreshMs;
    if (every !== undefined && surface.status) {
      this.refresh = setInterval(() => this.status && this.status.kind !== 'idle' && this.enqueue(() => surface.status!(this.status!, true)), every);
      this.refresh.unref();
    }
  }

  /** One frame of the turn (its end is `end`'s, decided by the core's turn follower). */
  frame(frame: SessionFrame): void {
    if (this.ended) return;
    this.holdLease(frame.seq);
    switch (frame.type) {
      case 'agent_state':
        if (WORKING_STATES.has(frame.payload.state)) this.setStatus({ kind: 'working', state: frame.payload.state });
        if (frame.payload.state === 'thinking' && this.live.begin) this.enqueue(() => this.write(async (live) => live.begin?.()));
        return;
      case 'token':
        this.text += frame.payload.text;
        this.setStatus({ kind: 'working', state: 'writing' });
        return this.schedule(this.nextUpdateAt);
      case 'tool_start':
        return this.setStatus({ kind: 'tool', tool: frame.payload.tool_name });
      case 'tool_end':
        // An approval refused or timed out (issue 30) is said in the conversation.
        if (frame.payload.error?.startsWith(NOT_APPROVED_PREFIX)) this.enqueue(() => this.surface.post(frame.payload.error!, { first: false }));
        return this.setStatus({ kind: 'working', state: 'thinking' });
      case 'tool_confirm_request':
        return this.confirm(frame.payload);
      case 'error':
        // The message can carry internals (a provider's error text): logged, never shown.
        if (frame.payload.code !== 'CANCELLED')
          this.options.logger.warn(
            this.details({ code: frame.payload.code, detail: frame.payload.message }),
            `${this.options.channel}: the turn reported an error`,
          );
        return;
      case 'memory_update':
      case 'done':
      case 'pong':
        return;
      default:
        frame satisfies never;
    }
  }

  /** The turn ended: its answer, the channel's note (error, cancel), or nothing (merged, dropped, stopped). Resolves once shown. */
  end(outcome: TurnOutcome): Promise<void> {
    if (this.ended) return this.chain;
    this.stopTimers();
    if (outcome.kind === 'stopped') return this.close();
    // Merged or dropped: nothing is shown, so no lease is waited for.
    // No frame came (an ending known from elsewhere): its place is after every turn already waiting.
    if (outcome.kind !== 'merged' && outcome.kind !== 'dropped') this.holdLease(Number.MAX_SAFE_INTEGER);
    this.enqueue(() => this.show({ kind: 'answering' }));
    switch (outcome.kind) {
      case 'done':
        this.enqueue(() => this.finishWith(this.answerOf(outcome.done.text)));
        break;
      case 'cancelled':
        this.enqueue(() => this.note(this.surface.cadence.texts.cancelled));
        break;
      case 'error':
        this.enqueue(() => this.note(errorText(outcome, this.surface.cadence.texts.apology)));
        break;
      case 'merged': // answered together with an earlier waiting message (collect)
      case 'dropped': // deleted on the platform before its turn started
        break;
      default:
        outcome satisfies never;
    }
    this.enqueue(() => this.show({ kind: 'idle' }));
    return this.close();
  }

  /** Resolves once every platform call queued so far has finished. */
  settled(): Promise<void> {
    return this.chain;
  }

  /**
   * Stops (shutdown, or the turn went silent): no new platform call is queued; those already queued
   * finish (the channel may give up their waits for a send slot), then the lease is let go.
   */
  abandon(): Promise<void> {
    return this.end({ kind: 'stopped' });
  }

  private close(): Promise<void> {
    const lease = this.lease;
    this.chain = this.chain.then(async () => void (await (await lease)?.release()));
    return this.chain;
  }

  private stopTimers(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
    if (this.refresh) clearInterval(this.refresh);
    this.refresh = null;
  }

  /** The chat's lease, taken before this turn's first platform call (the chain waits for it). */
  private holdLease(ticket: number): void {
    if (this.lease || !this.options.lease) return;
    const take = this.options.lease;
    this.lease = this.chain.then(() => take(ticket)).catch(() => NO_LEASE);
    const lease = this.lease;
    this.chain = lease.then((held) => {
      if (held.waitedOut)
        this.options.logger.info(
          this.details({}),
          `${this.options.channel}: showing a turn without the chat's rendering lease (the previous turn held it past the wait, or the lease store failed)`,
        );
    });
  }

  private answerOf(doneText: string): string {
    const text = doneText.trim() === '' ? this.text : doneText;
    return text.trim() === '' ? (this.surface.cadence.emptyText ?? text) : text;
  }

  private pieces(text: string): string[] {
    const limit = this.surface.cadence.maxMessageChars;
    return limit === undefined ? [text] : splitMessage(text, limit);
  }

  private finishWith(text: string): Promise<void> {
    return this.write((live) => live.finish(this.pieces(text)));
  }

  /** Error or cancel: the note replaces what streamed, or follows it (what streamed stays: a draft vanishes, so it is sent). */
  private async note(text: string): Promise<void> {
    // Posted messages cannot be replaced: there the note follows what streamed whatever the cadence says.
    const replace = this.surface.cadence.failureNote === 'replace' && !(this.live instanceof PostReply);
    if (replace || this.text.trim() === '') return this.finishWith(text);
    await this.finishWith(this.text);
    await this.surface.post(text, { first: false });
  }

  private confirm(request: ConfirmRequest): void {
    // An approval asked again as clicks count (issue 30): each counted click is shown, the buttons stay.
    const { ask, note } = this.approvals.seen(request);
    if (note !== null) this.enqueue(() => this.surface.post(note, { first: false }));
    if (!ask) return;
    // What streamed before the question (later frames may be queued behind it by the time it runs).
    const streamed = this.text;
    this.enqueue(async () => {
      if (this.surface.decide && (await this.surface.decide(request, this.options.sessionId))) return;
      await this.write(async (live) => live.beforeQuestion?.(streamed));
      await this.show({ kind: 'confirm', tool: request.tool });
      if (this.surface.ask) await this.surface.ask(request, this.options.sessionId);
      else await this.surface.post(request.message, { first: false });
    });
  }

  private setStatus(status: WorkStatus): void {
    if (sameStatus(this.status, status)) return;
    this.status = status;
    this.enqueue(() => this.show(status));
  }

  private async show(status: WorkStatus): Promise<void> {
    this.status = status;
    await this.surface.status?.(status, false);
  }

  /** An interim update at `at` (or earlier, if one is already due sooner). */
  private schedule(at: number): void {
    if (this.ended || this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.enqueue(() => this.interim());
      },
      Math.max(0, at - Date.now()),
    );
  }

  private async interim(): Promise<void> {
    const text = this.text;
    if (this.ended || text.trim() === '') return;
    const expired = this.live.expires === true && Date.now() - this.shownAt >= (this.surface.cadence.keepAliveMs ?? Infinity);
    if (text === this.shownText && !expired) {
      // A timer can fire a millisecond before the keep-alive is due by the wall clock: keep the chain going.
      if (this.live.expires && this.surface.cadence.keepAliveMs !== undefined) this.schedule(this.shownAt + this.surface.cadence.keepAliveMs);
      return;
    }
    this.nextUpdateAt = Date.now() + this.surface.cadence.editIntervalMs;
    const result = await this.write((live) => live.update(text));
    if (result === 'shown') {
      this.shownText = text;
      this.shownAt = Date.now();
    }
    // Newer text than shown (tokens came meanwhile, or this one was skipped): the next interval tries again.
    if (this.shownText !== this.text) this.schedule(this.nextUpdateAt);
    else if (this.live.expires && this.surface.cadence.keepAliveMs !== undefined)
      this.schedule(Math.max(this.nextUpdateAt, this.shownAt + this.surface.cadence.keepAliveMs));
  }

  /** Runs `step` on the live reply; when that way turns out unavailable, on the next way instead. */
  private async write<T>(step: (live: LiveReply) => Promise<T>): Promise<T | undefined> {
    for (;;) {
      const live = this.live;
      try {
        const result = await step(live);
        if (result !== 'unavailable') return result;
        this.live = this.fallbackAfter(live);
      } catch (error) {
        if (!(error instanceof ReplyUnavailable)) throw error;
        const log = this.details({ reason: error.reason });
        if (error.refused) this.options.logger.info(log, `${this.options.channel}: native streaming was refused here; replies are edited messages from now on`);
        else this.options.logger.warn(log, `${this.options.channel}: a stream could not start; this reply is an edited message`);
        this.live = this.fallbackAfter(live);
      }
    }
  }

  /** The next way to show the answer: edits where the surface has them, else posts. */
  private fallbackAfter(current: LiveReply | null): LiveReply {
    if (this.surface.edit && !(current instanceof EditReply) && !(current instanceof PostReply)) return new EditReply(this.surface, this.surface.edit);
    return new PostReply(this.surface, () => this.text);
  }

  private enqueue(call: () => Promise<unknown>): void {
    this.chain = this.chain
      .then(call)
      .then(() => undefined)
      .catch((error: unknown) => this.options.logger.error(this.details({ err: error }), `${this.options.channel}: rendering failed`));
  }

  private details(fields: Record<string, unknown>): Record<string, unknown> {
    return { session_id: this.options.sessionId, ...(this.options.turnId ? { turn_id: this.options.turnId } : {}), ...fields };
  }
}

function sameStatus(a: WorkStatus | null, b: WorkStatus): boolean {
  if (a === null || a.kind !== b.kind) return false;
  if (a.kind === 'working' && b.kind === 'working') return a.state === b.state;
  if (a.kind === 'tool' && b.kind === 'tool') return a.tool === b.tool;
  return a.kind !== 'confirm';
}
