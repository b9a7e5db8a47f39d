import type { Logger } from 'pino';
import type { SessionFrame } from '../../src/core/events';
import type { TurnOutcome } from '../../src/core/follow-turn';
import { confirmationBlocks, escapeText } from './confirm-buttons';
import { SLACK_LIMITS } from './limits';

/** The Slack calls a turn needs (the adapter backs them with the Web API client). */
export interface SlackCalls {
  /** Posts a message and answers its `ts`. */
  post(message: { channel: string; thread_ts?: string; text: string; blocks?: unknown[] }): Promise<string>;
  update(message: { channel: string; ts: string; text: string; blocks?: unknown[] }): Promise<void>;
}

/** Where the turn's replies go. */
export interface ReplyTarget {
  channel: string;
  /** The thread to answer in; null answers at the top level (a DM outside a thread). */
  threadTs: string | null;
}

export const REPLY_TEXT = {
  placeholder: '_…_',
  /** Internal errors reach people only as this; the details go to the logs. */
  apology: 'Sorry, something went wrong while answering. Please try again in a moment.',
  cancelled: 'The answer was cancelled.',
  busy: 'Still answering your previous message; please wait for it to finish.',
} as const;

/** A reply as Slack text: Slack's control characters escaped, cut to the message limit. */
export function slackText(text: string): string {
  const escaped = escapeText(text);
  return escaped.length > SLACK_LIMITS.maxMessageChars ? `${escaped.slice(0, SLACK_LIMITS.maxMessageChars)}…` : escaped || ' ';
}

/**
 * Renders one turn's AgentEvents in Slack: a placeholder reply when the turn starts, `token`s
 * coalesced into `chat.update` edits at most every `editIntervalMs` (Slack rate-limits edits), a
 * Block Kit message for each `tool_confirm_request`, and the full `done` text as the last edit.
 * Slack calls run one at a time, in order; a failed call is logged and the turn goes on.
 */
export class TurnRenderer {
  private chain: Promise<void> = Promise.resolve();
  private placeholderTs: string | null = null;
  private streamed = '';
  private lastEditAt = 0;
  private editTimer: NodeJS.Timeout | null = null;
  private ended = false;

  constructor(
    private readonly calls: SlackCalls,
    private readonly target: ReplyTarget,
    private readonly sessionId: string,
    private readonly options: { editIntervalMs: number; logger: Logger },
  ) {}

  /** Renders one frame of the turn (its end is `finish`'s, decided by the core's turn follower). */
  handle(frame: SessionFrame): void {
    if (this.ended) return;
    switch (frame.type) {
      case 'agent_state':
        if (frame.payload.state === 'thinking') this.enqueue(() => this.ensurePlaceholder());
        return;
      case 'token':
        this.streamed += frame.payload.text;
        this.scheduleEdit();
        return;
      case 'tool_confirm_request': {
        const blocks = confirmationBlocks(this.sessionId, frame.payload);
        const text = `Confirm ${frame.payload.tool}?`;
        this.enqueue(async () => void (await this.calls.post({ ...this.where(), text, blocks })));
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
    this.abandon();
    const text = outcome.kind === 'done' ? outcome.done.text : outcome.kind === 'cancelled' ? REPLY_TEXT.cancelled : REPLY_TEXT.apology;
    this.enqueue(() => this.edit(text));
  }

  /** Resolves once every Slack call queued so far has finished. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Stops without another Slack call (shutdown, or the turn went silent). */
  abandon(): void {
    this.ended = true;
    if (this.editTimer) clearTimeout(this.editTimer);
  }

  private scheduleEdit(): void {
    if (this.editTimer || this.ended) return;
    const wait = Math.max(0, this.lastEditAt + this.options.editIntervalMs - Date.now());
    this.editTimer = setTimeout(() => {
      this.editTimer = null;
      if (!this.ended) this.enqueue(() => this.edit(this.streamed));
    }, wait);
  }

  private async ensurePlaceholder(): Promise<string> {
    this.placeholderTs ??= await this.calls.post({ ...this.where(), text: REPLY_TEXT.placeholder });
    return this.placeholderTs;
  }

  private async edit(text: string): Promise<void> {
    const ts = await this.ensurePlaceholder();
    this.lastEditAt = Date.now();
    await this.calls.update({ channel: this.target.channel, ts, text: slackText(text) });
  }

  private where(): { channel: string; thread_ts?: string } {
    return this.target.threadTs ? { channel: this.target.channel, thread_ts: this.target.threadTs } : { channel: this.target.channel };
  }

  private enqueue(call: () => Promise<unknown>): void {
    this.chain = this.chain
      .then(call)
      .then(() => undefined)
      .catch((error: unknown) => this.options.logger.error({ err: error, session_id: this.sessionId }, 'a Slack call failed'));
  }
}
