import { SendBudget } from '../shared/send-budget';
import type { TelegramSendLimits } from './config';

/** Where a message goes: the chat id, and whether it is a group (groups have a lower limit). */
export interface ChatTarget {
  id: number;
  group: boolean;
}

const GROUP_PREFIX = 'group:';

/**
 * The bot's one send budget, shared by every turn in every chat: Telegram limits a chat (about one
 * message a second), a group on top of that (20 a minute) and the bot overall (30 a second). One
 * `SendBudget` holds all three, so a group send takes its slot in the chat's, the group's and the
 * bot's window at the same moment — the moment it goes out.
 */
export class TelegramSendBudget {
  private budget!: SendBudget;

  constructor(readonly limits: TelegramSendLimits) {
    this.open();
  }

  /** Waits for a slot (answers, confirmations, notes: they must go out, in order per chat). */
  take(chat: ChatTarget): Promise<void> {
    return this.budget.take(key(chat));
  }

  /**
   * Spends a slot only if one is free now, nobody waits in the chat, and one is left over for a send
   * that must go out (interim drafts and edits: a skipped one is fine, the next carries the text).
   */
  tryTake(chat: ChatTarget): boolean {
    // A chat window of a single slot has none to keep in reserve: the waiting sends still go first.
    return this.budget.tryTake(key(chat), this.limits.perChat.sends > 1 ? 1 : 0);
  }

  /** Telegram answered 429 for `chat`: nothing more goes there for `ms` (Retry-After). */
  pause(ms: number, chat: ChatTarget): void {
    this.budget.pause(ms, key(chat));
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
    this.budget.close();
    this.open();
  }

  private open(): void {
    const { perChat, perGroup, global } = this.limits;
    this.budget = new SendBudget({
      global: window(global),
      perChat: window(perChat),
      chatWindows: (chat) => (chat.startsWith(GROUP_PREFIX) ? [window(perGroup)] : []),
    });
  }
}

function window(limit: { sends: number; windowMs: number }) {
  return { limit: limit.sends, windowMs: limit.windowMs };
}

function key(chat: ChatTarget): string {
  return chat.group ? `${GROUP_PREFIX}${chat.id}` : String(chat.id);
}
