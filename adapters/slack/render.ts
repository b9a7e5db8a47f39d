import type { Logger } from 'pino';
import { WORKING_STATES, type SessionFrame } from '../../src/core/events';
import { errorText, type TurnOutcome } from '../../src/core/follow-turn';
import { confirmationBlocks } from './confirm-buttons';
import { EditReply } from './edit-reply';
import { SLACK_LIMITS } from './limits';
import { REPLY_TEXT } from './reply-text';
import { StreamUnavailable, type ReplyTarget, type ReplyWriter } from './reply-writer';
import type { SlackCalls } from './slack-outbox';
import { StreamReply } from './stream-reply';
import { STATUS_TEXT, ThreadStatus } from './thread-status';

export { REPLY_TEXT, slackText } from './reply-text';
export type { ReplyTarget } from './reply-writer';

export interface RenderOptions {
  editIntervalMs: number;
  /** `channels.slack.native_streaming`: stream in threads with chat.startStream (unless the workspace refuses). */
  nativeStreaming: boolean;
  /** `channels.slack.thread_status`: show "is thinking…" / "is running <tool>…" in threads. */
  threadStatus: boolean;
  logger: Logger;
}

/**
 * Renders one turn's AgentEvents in Slack. In a thread the answer streams natively (StreamReply);
 * at the top level of a DM, where the workspace refuses streaming, or when it is turned off, a
 * message is edited as it grows (EditReply). `token`s are coalesced to at most one interim send
 * every `editIntervalMs`, and interim sends spend only a free slot of the shared send budget.
 * The thread status tells what the agent is doing; tool confirmations are Block Kit messages.
 * Slack calls run one at a time, in order; a failed call is logged and the turn goes on.
 */
export class TurnRenderer {
  private chain: Promise<void> = Promise.resolve();
  private writer: ReplyWriter;
  private readonly status: ThreadStatus;
  private streamed = '';
  private lastInterimAt = 0;
  private interimTimer: NodeJS.Timeout | null = null;
  private interimQueued = false;
  private readonly statusRefresh: NodeJS.Timeout;
  private ended = false;

  constructor(
    private readonly calls: SlackCalls,
    private readonly target: ReplyTarget,
    private readonly sessionId: string,
    private readonly options: RenderOptions,
  ) {
    const thread = target.threadTs === null ? null : { ...target, threadTs: target.threadTs };
    const streams = thread !== null && options.nativeStreaming && !calls.refusals.isRefused(calls.workspace, 'stream');
    this.writer = streams ? new StreamReply(calls, thread, options.logger) : new EditReply(calls, target);
    this.status = new ThreadStatus(calls, options.threadStatus && thread ? { channel: thread.channel, threadTs: thread.threadTs } : null);
    this.statusRefresh = setInterval(() => this.status.active && this.enqueue(() => this.status.refresh()), SLACK_LIMITS.statusRefreshMs);
    this.statusRefresh.unref();
  }

  /** Renders one frame of the turn (its end is `finish`'s, decided by the core's turn follower). */
  handle(frame: SessionFrame): void {
    if (this.ended) return;
    switch (frame.type) {
      case 'agent_state': {
        const status = STATUS_TEXT.states[frame.payload.state];
        if (status && WORKING_STATES.has(frame.payload.state)) this.enqueue(() => this.status.set(status));
        if (frame.payload.state === 'thinking') this.enqueue(() => this.write((writer) => writer.begin()));
        return;
      }
      case 'token':
        this.streamed += frame.payload.text;
        this.scheduleInterim();
        return;
      case 'tool_start':
        this.enqueue(() => this.status.set(STATUS_TEXT.tool(frame.payload.tool_name)));
        return;
      case 'tool_end':
        this.enqueue(() => this.status.set(STATUS_TEXT.states.thinking!));
        return;
      case 'tool_confirm_request': {
        const blocks = confirmationBlocks(this.sessionId, frame.payload);
        const text = `Confirm ${frame.payload.tool}?`;
        const thread = this.target.threadTs ? { thread_ts: this.target.threadTs } : {};
        this.enqueue(async () => {
          await this.calls.send('chat.postMessage', { channel: this.target.channel, ...thread, text, blocks });
          this.status.replied();
          await this.status.set(STATUS_TEXT.confirm(frame.payload.tool));
        });
        return;
      }
      case 'error':
        // The message can carry internals (a provider's error text): logged, never shown.
        this.options.logger.warn({ session_id: this.sessionId, code: frame.payload.code, detail: frame.payload.message }, 'slack turn reported an error');
        return;
      default:
        return;
    }
  }

  /** The turn ended: its answer, or a short apology (an error), or a note that it was cancelled. */
  finish(outcome: TurnOutcome): void {
    if (this.ended) return;
    this.stopTimers();
    // Answered together with an earlier waiting message (collect), deleted before its turn, or shutting
    // down: nothing to show for this message.
    if (outcome.kind === 'merged' || outcome.kind === 'dropped' || outcome.kind === 'stopped') return;
    const text = outcome.kind === 'done' ? outcome.done.text : outcome.kind === 'cancelled' ? REPLY_TEXT.cancelled : outcome.kind === 'error' ? errorText(outcome, REPLY_TEXT.apology) : REPLY_TEXT.apology;
    this.enqueue(() => this.write((writer) => writer.final(text)));
    this.enqueue(() => this.status.clear());
  }

  /** Resolves once every Slack call queued so far has finished. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Stops without another Slack call (shutdown, or the turn went silent). */
  abandon(): void {
    this.stopTimers();
  }

  private stopTimers(): void {
    this.ended = true;
    if (this.interimTimer) clearTimeout(this.interimTimer);
    this.interimTimer = null;
    clearInterval(this.statusRefresh);
  }

  private scheduleInterim(): void {
    if (this.interimTimer || this.interimQueued || this.ended) return;
    const wait = Math.max(0, this.lastInterimAt + this.options.editIntervalMs - Date.now());
    this.interimTimer = setTimeout(() => {
      this.interimTimer = null;
      if (this.ended) return;
      this.interimQueued = true;
      this.enqueue(async () => {
        this.interimQueued = false;
        if (this.ended) return;
        this.lastInterimAt = Date.now();
        const text = this.streamed;
        const shown = await this.write((writer) => writer.interim(text));
        if (shown) this.status.replied(); // Slack hides the status once the bot's reply shows
        // No free slot: try again later (the final send carries everything anyway).
        if (!shown || this.streamed !== text) this.scheduleInterim();
      });
    }, wait);
  }

  /** Runs `step` on the reply writer; when native streaming turns out unavailable, on the edit writer instead. */
  private async write<T>(step: (writer: ReplyWriter) => Promise<T>): Promise<T> {
    const before = this.writer;
    try {
      return await step(before);
    } catch (error) {
      if (!(error instanceof StreamUnavailable)) throw error;
      const log = { session_id: this.sessionId, slack_channel: this.target.channel, reason: error.reason };
      if (error.refused) this.options.logger.info(log, 'Slack refused native streaming for this workspace; replies are edited messages from now on');
      else this.options.logger.warn(log, 'a Slack stream could not start; this reply is an edited message');
      this.writer = new EditReply(this.calls, this.target);
      return step(this.writer);
    }
  }

  private enqueue(call: () => Promise<unknown>): void {
    this.chain = this.chain
      .then(call)
      .then(() => undefined)
      .catch((error: unknown) => this.options.logger.error({ err: error, session_id: this.sessionId }, 'a Slack call failed'));
  }
}
