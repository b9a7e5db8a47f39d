import { SendBudget } from '../shared/send-budget';
import type { TelegramSendLimits } from './config';

/** Where a message goes: the chat id, and whether it is a group (groups have a lower limit). */
export interface ChatTarget {
  id: number;
  group: boolean;
}

/**
 * The bot's one send budget, shared by every turn in every chat: Telegram limits a chat (about one
 * message a second), a group on top of that (20 a minute) and the bot overall (30 a second). Two
 * shared `SendBudget`s cover the three windows: one for every chat and the bot, one for groups.
 */
export class TelegramSendBudget {
  private chats!: SendBudget;
  private groups!: SendBudget;

  constructor(readonly limits: TelegramSendLimits) {
    this.open();
  }

  private open(): void {
    this.chats = new SendBudget({ global: window(this.limits.global), perChat: window(this.limits.perChat) });
    // The group budget only paces groups; the bot-wide window is the other budget's.
    this.groups = new SendBudget({ global: { limit: Number.MAX_SAFE_INTEGER, windowMs: this.limits.perGroup.windowMs }, perChat: window(this.limits.perGroup) });
  }

  /** Waits for a slot (answers, confirmations, notes: they must go out, in order per chat). */
  async take(chat: ChatTarget): Promise<void> {
    if (chat.group) await this.groups.take(key(chat));
    await this.chats.take(key(chat));
  }

  /**
   * Spends a slot only if one is free now (interim drafts and edits: a skipped one is fine, the next
   * carries the text). The bot-wide budget is asked first: a slot it grants and the group budget then
   * refuses is lost, and a second's slot is the cheaper one to lose than a group's minute slot.
   */
  tryTake(chat: ChatTarget): boolean {
    // A window of one slot has none to keep in reserve; waiting sends still go first (tryTake checks).
    const reserve = this.limits.perChat.sends > 1 ? 1 : 0;
    if (!this.chats.tryTake(key(chat), reserve)) return false;
    return !chat.group || this.groups.tryTake(key(chat), this.limits.perGroup.sends > 1 ? 1 : 0);
  }

  /** Telegram answered 429 for `chat`: nothing more goes there for `ms` (Retry-After). */
  pause(ms: number, chat: ChatTarget): void {
    this.chats.pause(ms, key(chat));
  }

  /**
   * The shortest gap between two interim updates of one turn that its chat's limit sustains: a
   * group's 20 a minute allow one every 3 s; faster edits would use up the window and then stall.
   */
  interimGapMs(chat: ChatTarget): number {
    const perChat = this.limits.perChat.windowMs / this.limits.perChat.sends;
    return chat.group ? Math.max(perChat, this.limits.perGroup.windowMs / this.limits.perGroup.sends) : perChat;
  }

  /**
   * Rejects every waiting send (the channel stops). The budget stays usable: a channel is started
   * again after a failure, with its windows empty.
   */
  abandonWaiting(): void {
    this.chats.close();
    this.groups.close();
    this.open();
  }
}

function window(limit: { sends: number; windowMs: number }) {
  return { limit: limit.sends, windowMs: limit.windowMs };
}

function key(chat: ChatTarget): string {
  return String(chat.id);
}
