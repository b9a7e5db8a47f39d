import type { Logger } from 'pino';
import { WORKING_STATES, type AgentEvent, type SessionFrame } from '../../src/core/events';
import { errorText, type TurnOutcome } from '../../src/core/follow-turn';
import { loggableError } from './bot-api';
import { APOLOGY_TEXT, CANCELLED_TEXT, confirmationKeyboard, PLACEHOLDER_TEXT, streamingView } from './render';
import { DraftReply, EditReply, type ReplyStream } from './reply-stream';
import type { TelegramSender } from './sender';
import { splitMessage } from './split';
import type { ChatTarget } from './telegram-budget';
import type { TypingIndicator } from './typing';

export interface ChatRendererOptions {
  sender: TelegramSender;
  typing: TypingIndicator;
  chat: ChatTarget;
  sessionId: string;
  /** The user message the reply answers (quoted by the reply's first message). */
  replyTo: number | null;
  /** Non-zero id of this turn's draft (private chats); null streams the reply as edits. */
  draftId: number | null;
  /** Minimum time between two interim updates (drafts or edits). */
  interimIntervalMs: number;
  /** A draft that did not change is sent again this often (Telegram drops it after about 30 s). */
  draftKeepAliveMs: number;
  maxMessageChars: number;
  botToken: string;
  logger: Logger;
}

/**
 * Renders one turn into its chat: "typing…" while the agent works; the streamed text as a draft
 * (private chats) or as a message edited in place (groups, or where drafts are refused), at most once
 * per interval and only with a free send slot; then the full answer, split past Telegram's length
 * limit; confirmations as inline keyboards; errors as a short apology. Frames are handled one after
 * the other, in seq order; how the turn ended comes from the core's turn follower (`finishTurn`).
 */
export class ChatRenderer {
  private lastSeq = -1;
  private chain: Promise<void> = Promise.resolve();
  private stream: ReplyStream;
  private text = '';
  private shownView = '';
  private shownAt = 0;
  private nextUpdateAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private turnOver = false;
  private releaseTyping: (() => Promise<void>) | null = null;
  private stopped = false;

  constructor(private readonly options: ChatRendererOptions) {
    const target = { sender: options.sender, chat: options.chat, replyTo: options.replyTo };
    const drafts = options.draftId !== null && options.sender.draftsRefused === null;
    this.stream = drafts ? new DraftReply(target, options.draftId!) : new EditReply(target);
  }

  /** Takes a frame of the turn; frames already seen are ignored. */
  push(frame: SessionFrame): void {
    if (frame.seq <= this.lastSeq || frame.type === 'pong') return;
    this.lastSeq = frame.seq;
    this.enqueue(() => this.render(frame));
  }

  /** The turn ended: the full answer, or a short apology (an error), or a note that it was cancelled. */
  finishTurn(outcome: TurnOutcome): Promise<void> {
    this.enqueue(async () => {
      this.endStreaming();
      await this.typingOff();
      if (outcome.kind === 'done') return this.finish(outcome.done.text);
      // Answered together with an earlier waiting message (collect), deleted before its turn, or
      // shutting down: nothing to show for this message.
      if (outcome.kind === 'merged' || outcome.kind === 'dropped' || outcome.kind === 'stopped') return;
      return this.renderEnd(outcome.kind === 'cancelled' ? CANCELLED_TEXT : outcome.kind === 'error' ? errorText(outcome, APOLOGY_TEXT) : APOLOGY_TEXT);
    });
    return this.chain;
  }

  /** Stops typing and drops any pending update; waits for what is being sent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.endStreaming();
    void this.typingOff();
    await this.chain;
  }

  private enqueue(task: () => Promise<void>): void {
    this.chain = this.chain.then(task).catch((error: unknown) => {
      const details = { err: loggableError(error, this.options.botToken), session_id: this.options.sessionId };
      // At shutdown a reply still waiting for a send slot is abandoned (it stays in the history).
      if (this.stopped) this.options.logger.warn(details, 'telegram: a reply was abandoned at shutdown');
      else this.options.logger.error(details, 'telegram: rendering failed');
    });
  }

  private async render(event: AgentEvent): Promise<void> {
    switch (event.type) {
      case 'agent_state':
        if (WORKING_STATES.has(event.payload.state)) this.typingOn();
        return;
      case 'token':
        this.typingOn();
        this.text += event.payload.text;
        return this.schedule(this.nextUpdateAt);
      case 'tool_start':
      case 'tool_end':
        this.typingOn();
        return;
      case 'tool_confirm_request':
        // The turn now waits for a person: no "typing…" until it goes on.
        await this.typingOff();
        await this.options.sender.send(this.options.chat, event.payload.message, {
          reply_markup: confirmationKeyboard(this.options.sessionId, event.payload.confirmation_id),
        });
        return;
      case 'error':
        // The payload's message stays in the logs: the chat gets an apology, never internals.
        if (event.payload.code !== 'CANCELLED') this.options.logger.warn({ session_id: this.options.sessionId, code: event.payload.code, message: event.payload.message }, 'telegram: the turn reported an error');
        return;
      case 'memory_update':
      case 'done':
        return;
      default:
        event satisfies never;
    }
  }

  private typingOn(): void {
    if (this.releaseTyping || this.turnOver) return;
    this.releaseTyping = this.options.typing.hold(this.options.chat);
  }

  /** Resolves once no typing action is on its way, so that a message sent next comes after it. */
  private typingOff(): Promise<void> {
    const release = this.releaseTyping;
    this.releaseTyping = null;
    return release ? release() : Promise.resolve();
  }

  /** An interim update at `at` (or earlier, if one is already due sooner). */
  private schedule(at: number): void {
    if (this.turnOver || this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.enqueue(() => this.interimUpdate());
    }, Math.max(0, at - Date.now()));
  }

  private async interimUpdate(): Promise<void> {
    if (this.turnOver) return;
    const view = streamingView(this.text, this.options.maxMessageChars);
    if (this.text.trim() === '') return;
    const expired = this.stream.expires && Date.now() - this.shownAt >= this.options.draftKeepAliveMs;
    if (view === this.shownView && !expired) return;
    this.nextUpdateAt = Date.now() + this.options.interimIntervalMs;
    const result = await this.stream.update(view);
    if (result === 'refused') {
      // Drafts are refused for this bot: the reply goes on as an edited message.
      this.stream = new EditReply({ sender: this.options.sender, chat: this.options.chat, replyTo: this.options.replyTo });
      this.nextUpdateAt = 0;
    } else if (result === 'shown') {
      this.shownView = view;
      this.shownAt = Date.now();
    }
    // Newer text than shown (tokens came meanwhile, or this one was skipped): the next interval tries again.
    if (this.shownView !== streamingView(this.text, this.options.maxMessageChars)) this.schedule(this.nextUpdateAt);
    else if (this.stream.expires) this.schedule(Math.max(this.nextUpdateAt, this.shownAt + this.options.draftKeepAliveMs));
  }

  private endStreaming(): void {
    this.turnOver = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  /** The full answer (the streamed text when `done` carries none), split past the message limit. */
  private async finish(fullText: string): Promise<void> {
    const text = fullText.trim() === '' ? this.text : fullText;
    await this.stream.finish(splitMessage(text.trim() === '' ? PLACEHOLDER_TEXT : text, this.options.maxMessageChars));
  }

  /** Error or cancel: what was streamed stays (drafts vanish, so it is sent), then the note follows. */
  private async renderEnd(note: string): Promise<void> {
    if (this.text.trim() === '') return this.stream.finish([note]);
    await this.stream.finish(splitMessage(this.text, this.options.maxMessageChars));
    await this.options.sender.send(this.options.chat, note);
  }
}
