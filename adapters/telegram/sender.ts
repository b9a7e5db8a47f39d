import type { Logger } from 'pino';
import { TelegramError, type Telegram } from 'telegraf';
import type { Message } from 'telegraf/types';
import { isNotModified, loggableError, retryAfterMs } from './bot-api';
import type { ChatTarget, TelegramSendBudget } from './telegram-budget';

export interface SenderOptions {
  telegram: Telegram;
  budget: TelegramSendBudget;
  botToken: string;
  maxAttempts: number;
  maxRetryAfterMs: number;
  logger: Logger;
}

type SendExtra = Parameters<Telegram['sendMessage']>[2];
type EditExtra = Parameters<Telegram['editMessageText']>[4];

/** What became of an interim update: shown, skipped (no free slot, or a 429), or refused for good. */
export type InterimResult = 'shown' | 'skipped' | 'refused';

/**
 * Every message the bot sends or edits goes through here and the bot's one send budget. Messages
 * that must arrive wait for a slot (`send`, `edit`) and, on a 429, pause the chat for `retry_after`
 * and try again; interim updates (`sendDraft`, `interimSend`, `interimEdit`) only use a free slot.
 * It also remembers, for the bot, that Telegram refused `sendMessageDraft`.
 */
export class TelegramSender {
  /** Why Telegram refused drafts (then every reply streams as edits); null while they work. */
  draftsRefused: string | null = null;

  constructor(private readonly options: SenderOptions) {}

  send(chat: ChatTarget, text: string, extra?: SendExtra): Promise<Message.TextMessage> {
    return this.must(chat, () => this.options.telegram.sendMessage(chat.id, text, extra));
  }

  /** Edits a message; "message is not modified" (the same text) counts as done. */
  async edit(chat: ChatTarget, messageId: number, text: string, extra?: EditExtra): Promise<void> {
    try {
      await this.must(chat, () => this.options.telegram.editMessageText(chat.id, messageId, undefined, text, extra));
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
  }

  /** An interim message (the first view of a streamed reply); its id, or null when skipped. */
  async interimSend(chat: ChatTarget, text: string, extra?: SendExtra): Promise<number | null> {
    if (!this.options.budget.tryTake(chat)) return null;
    const sent = await this.interim(chat, () => this.options.telegram.sendMessage(chat.id, text, extra));
    return sent === undefined ? null : sent.message_id;
  }

  async interimEdit(chat: ChatTarget, messageId: number, text: string): Promise<InterimResult> {
    if (!this.options.budget.tryTake(chat)) return 'skipped';
    try {
      const edited = await this.interim(chat, () => this.options.telegram.editMessageText(chat.id, messageId, undefined, text));
      return edited === undefined ? 'skipped' : 'shown';
    } catch (error) {
      if (isNotModified(error)) return 'shown';
      throw error;
    }
  }

  /**
   * Shows `text` as the chat's draft `draftId` (Bot API 9.3 `sendMessageDraft`, private chats
   * only). A 400 or 404 answer means this bot cannot use drafts (an older Bot API server, a bot
   * without the feature): remembered for the bot, and the reply streams as edits from then on.
   */
  async sendDraft(chat: ChatTarget, draftId: number, text: string): Promise<InterimResult> {
    if (this.draftsRefused !== null) return 'refused';
    if (!this.options.budget.tryTake(chat)) return 'skipped';
    try {
      const shown = await this.interim(chat, () => callRaw(this.options.telegram, 'sendMessageDraft', { chat_id: chat.id, draft_id: draftId, text }));
      return shown === undefined ? 'skipped' : 'shown';
    } catch (error) {
      if (!(error instanceof TelegramError) || (error.code !== 400 && error.code !== 404)) throw error;
      this.draftsRefused = `${error.code}: ${error.description}`;
      this.options.logger.warn({ err: loggableError(error, this.options.botToken) }, 'telegram: sendMessageDraft refused; replies stream as edits from now on');
      return 'refused';
    }
  }

  /** The typing action (shown about 5 s, or until the bot's next message); not a message, so no budget. */
  async typing(chat: ChatTarget): Promise<void> {
    await this.options.telegram.sendChatAction(chat.id, 'typing');
  }

  /**
   * Sets (emoji) or clears (null) the bot's reaction on a message — the acknowledgement of a message
   * that waits for its turn. Not a message, so no budget; best effort: a refusal is only logged.
   */
  async react(chat: ChatTarget, messageId: number, emoji: string | null): Promise<void> {
    try {
      await callRaw(this.options.telegram, 'setMessageReaction', {
        chat_id: chat.id,
        message_id: messageId,
        reaction: emoji ? [{ type: 'emoji', emoji }] : [],
      });
    } catch (error) {
      this.options.logger.info({ err: loggableError(error, this.options.botToken) }, 'telegram: could not set a reaction');
    }
  }

  /** Waits for a slot; a 429 pauses the chat for its `retry_after`, then the call waits its turn again. */
  private async must<T>(chat: ChatTarget, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      await this.options.budget.take(chat);
      try {
        return await call();
      } catch (error) {
        const wait = retryAfterMs(error);
        if (wait === null) throw error;
        // Telegram asked for quiet in this chat: every send there waits, this one included.
        this.options.budget.pause(wait, chat);
        if (attempt >= this.options.maxAttempts || wait > this.options.maxRetryAfterMs) throw error;
      }
    }
  }

  /** An interim call whose slot is already spent; a 429 pauses the chat and skips it (undefined). */
  private async interim<T>(chat: ChatTarget, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      const wait = retryAfterMs(error);
      if (wait === null) throw error;
      this.options.budget.pause(wait, chat);
      return undefined;
    }
  }
}

/** A Bot API method telegraf 4.16 does not know yet (its `callApi` is typed by method name). */
function callRaw(telegram: Telegram, method: string, payload: Record<string, unknown>): Promise<unknown> {
  const call = telegram.callApi.bind(telegram) as unknown as (method: string, payload: Record<string, unknown>) => Promise<unknown>;
  return call(method, payload);
}
