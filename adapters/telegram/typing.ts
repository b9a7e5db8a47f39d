import type { ChatTarget } from './telegram-budget';

export interface TypingOptions {
  /** Sends the typing action to a chat; failures are the caller's to log (`onFailure`). */
  send: (chat: ChatTarget) => Promise<void>;
  /** Telegram shows the action for about 5 s, so it is sent again this often. */
  intervalMs: number;
  onFailure: (error: unknown) => void;
}

interface ChatTyping {
  holders: number;
  timer: NodeJS.Timeout;
  /** The action on its way: the reply must not overtake it, or "typing…" shows after the answer. */
  inFlight: Promise<void>;
}

/**
 * "typing…" in a chat while at least one turn runs there: sent when the first turn starts, again
 * every `intervalMs`, stopped when the last one ends. One loop per chat, however many turns run in
 * it, so a burst of turns in a group sends no more chat actions than a single turn.
 */
export class TypingIndicator {
  private readonly chats = new Map<number, ChatTyping>();

  constructor(private readonly options: TypingOptions) {}

  /**
   * Starts (or joins) the chat's typing. The returned function ends this holder's share (once) and
   * resolves when no action sent for the chat is still on its way, so a reply sent then comes after it.
   */
  hold(chat: ChatTarget): () => Promise<void> {
    let typing = this.chats.get(chat.id);
    if (typing) typing.holders += 1;
    else {
      const fresh: ChatTyping = { holders: 1, timer: setInterval(() => this.ping(chat, fresh), this.options.intervalMs), inFlight: Promise.resolve() };
      this.chats.set(chat.id, fresh);
      this.ping(chat, fresh);
      typing = fresh;
    }
    const held = typing;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.release(chat.id);
      }
      return held.inFlight;
    };
  }

  /** Chats with typing shown now. */
  get active(): number {
    return this.chats.size;
  }

  stopAll(): void {
    for (const typing of this.chats.values()) clearInterval(typing.timer);
    this.chats.clear();
  }

  private release(chatId: number): void {
    const typing = this.chats.get(chatId);
    if (!typing) return;
    typing.holders -= 1;
    if (typing.holders > 0) return;
    clearInterval(typing.timer);
    this.chats.delete(chatId);
  }

  private ping(chat: ChatTarget, typing: ChatTyping): void {
    typing.inFlight = this.options.send(chat).catch(this.options.onFailure);
  }
}
