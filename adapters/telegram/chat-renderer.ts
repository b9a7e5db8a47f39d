import type { Logger } from 'pino';
import type { Telegram } from 'telegraf';
import type { AgentEvent, SessionFrame } from '../../src/core/events';
import type { TurnOutcome } from '../../src/core/follow-turn';
import { isNotModified, loggableError, retryAfterMs, withFloodRetry } from './bot-api';
import {
  APOLOGY_TEXT,
  CANCELLED_TEXT,
  confirmationKeyboard,
  PLACEHOLDER_TEXT,
  splitMessage,
  streamingView,
} from './render';

export interface ChatRendererOptions {
  telegram: Telegram;
  chatId: number;
  sessionId: string;
  botToken: string;
  editIntervalMs: number;
  maxMessageChars: number;
  maxAttempts: number;
  maxRetryAfterMs: number;
  logger: Logger;
}

/**
 * Renders one chat's turn as Bot API calls: a placeholder reply, edited with the streamed tokens at
 * most once per `editIntervalMs` (Telegram throttles frequent edits), ending with the full `done`
 * text (split over several messages past Telegram's length limit); confirmations as inline
 * keyboards; errors as a short apology. Frames are handled one after the other, in seq order; the
 * turn's end (and how it ended) comes from the core's turn follower (`finishTurn`).
 */
export class ChatRenderer {
  /** The user message the reply answers (a reply in groups keeps the thread readable). */
  replyTo: number | null = null;
  private lastSeq = -1;
  private chain: Promise<void> = Promise.resolve();
  private placeholderId: number | null = null;
  private text = '';
  private shown = '';
  private nextEditAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private turnOver = false;

  constructor(private readonly options: ChatRendererOptions) {}

  /** Takes a frame of the turn; frames already seen are ignored. */
  push(frame: SessionFrame): void {
    if (frame.seq <= this.lastSeq || frame.type === 'pong') return;
    this.lastSeq = frame.seq;
    this.enqueue(() => this.render(frame));
  }

  /** The turn ended: the full answer, or a short apology (an error), or a note that it was cancelled. */
  finishTurn(outcome: TurnOutcome): Promise<void> {
    this.enqueue(() => (outcome.kind === 'done' ? this.finish(outcome.done.text) : this.renderEnd(outcome)));
    return this.chain;
  }

  /** Waits for what is being sent, then drops any pending edit. */
  async stop(): Promise<void> {
    this.turnOver = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
  }

  private enqueue(task: () => Promise<void>): void {
    this.chain = this.chain.then(task).catch((error: unknown) => {
      this.options.logger.error({ err: loggableError(error, this.options.botToken), session_id: this.options.sessionId }, 'telegram: rendering failed');
    });
  }

  private async render(event: AgentEvent): Promise<void> {
    switch (event.type) {
      case 'agent_state':
        if (event.payload.state === 'thinking') return this.beginTurn();
        return;
      case 'token':
        this.text += event.payload.text;
        return this.scheduleEdit();
      case 'tool_confirm_request':
        await this.call(() =>
          this.options.telegram.sendMessage(this.options.chatId, event.payload.message, {
            reply_markup: confirmationKeyboard(this.options.sessionId, event.payload.confirmation_id),
          }),
        );
        return;
      case 'error':
        // The payload's message stays in the logs: the chat gets an apology, never internals.
        if (event.payload.code !== 'CANCELLED') this.options.logger.warn({ session_id: this.options.sessionId, code: event.payload.code, message: event.payload.message }, 'telegram: the turn reported an error');
        return;
      default:
        return;
    }
  }

  private async beginTurn(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    Object.assign(this, { timer: null, text: '', shown: '', placeholderId: null, turnOver: false, nextEditAt: 0 });
    await this.ensurePlaceholder();
  }

  private async ensurePlaceholder(): Promise<number> {
    if (this.placeholderId !== null) return this.placeholderId;
    const reply = this.replyTo === null ? {} : { reply_parameters: { message_id: this.replyTo, allow_sending_without_reply: true } };
    const sent = await this.call(() => this.options.telegram.sendMessage(this.options.chatId, PLACEHOLDER_TEXT, reply));
    this.placeholderId = sent.message_id;
    this.shown = PLACEHOLDER_TEXT;
    return sent.message_id;
  }

  private scheduleEdit(): void {
    if (this.timer || this.turnOver) return;
    const delay = Math.max(0, this.nextEditAt - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.enqueue(() => this.streamEdit());
    }, delay);
  }

  /** One coalesced edit; a 429 only postpones the next one (later tokens make it obsolete anyway). */
  private async streamEdit(): Promise<void> {
    if (this.turnOver) return;
    const view = streamingView(this.text, this.options.maxMessageChars);
    if (view === this.shown) return;
    const messageId = await this.ensurePlaceholder();
    this.nextEditAt = Date.now() + this.options.editIntervalMs;
    try {
      await this.options.telegram.editMessageText(this.options.chatId, messageId, undefined, view);
      this.shown = view;
    } catch (error) {
      const wait = retryAfterMs(error);
      if (wait === null) {
        if (isNotModified(error)) return;
        throw error;
      }
      this.nextEditAt = Date.now() + wait;
      this.scheduleEdit();
    }
  }

  /** The full answer: the placeholder becomes its first part, the rest follow as new messages. */
  private async finish(fullText: string): Promise<void> {
    this.turnOver = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pieces = splitMessage(fullText.trim() === '' ? this.text || PLACEHOLDER_TEXT : fullText, this.options.maxMessageChars);
    const [first, ...rest] = pieces;
    await this.replaceOrSend(first!);
    for (const piece of rest) await this.call(() => this.options.telegram.sendMessage(this.options.chatId, piece));
  }

  private async renderEnd(outcome: Exclude<TurnOutcome, { kind: 'done' }>): Promise<void> {
    this.turnOver = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const note = outcome.kind === 'cancelled' ? CANCELLED_TEXT : APOLOGY_TEXT;
    // An empty placeholder becomes the note; text already streamed stays, the note follows it.
    if (this.shown === PLACEHOLDER_TEXT) await this.replaceOrSend(note);
    else await this.call(() => this.options.telegram.sendMessage(this.options.chatId, note));
  }

  /** Edits the placeholder into `text` while it shows nothing yet or streamed text; sends otherwise. */
  private async replaceOrSend(text: string): Promise<void> {
    if (this.placeholderId === null) {
      await this.call(() => this.options.telegram.sendMessage(this.options.chatId, text));
      return;
    }
    const messageId = this.placeholderId;
    try {
      await this.call(() => this.options.telegram.editMessageText(this.options.chatId, messageId, undefined, text));
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
    this.shown = text;
  }

  private call<T>(request: () => Promise<T>): Promise<T> {
    return withFloodRetry(request, { maxAttempts: this.options.maxAttempts, maxRetryAfterMs: this.options.maxRetryAfterMs });
  }
}
