/**
 * One send budget per platform: every call that posts or edits a message in a chat takes a slot, so
 * any number of concurrent turns together stay inside the platform's limits (per chat and overall)
 * instead of each turn pacing itself and all of them tripping 429s at once.
 *
 * Two ways to spend: `take` waits for a slot (answers, confirmations: must be sent, in order per chat);
 * `tryTake` spends only a slot that is free now and leaves `reserve` slots for the waiting kind (interim
 * edits of a streamed answer: skipping one is fine, the next edit carries the text). A 429's
 * Retry-After pauses the chat (or, without a chat, the whole platform) via `pause`.
 */
export interface SendWindow {
  /** Most sends in any `windowMs`. */
  limit: number;
  windowMs: number;
}

export interface SendBudgetLimits {
  /** Across all chats of the platform (the bot's global limit). */
  global: SendWindow;
  /** Per chat (a Slack channel, a Telegram chat). */
  perChat: SendWindow;
  /**
   * Further windows for some chats, on top of `perChat` and counted over the same sends, so a send
   * takes its slot in all of them at once (Telegram: a group's 20 a minute besides one a second).
   * Asked when a chat is first seen.
   */
  chatWindows?: (chat: string) => readonly SendWindow[];
}

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

interface ChatState {
  sent: number[];
  queue: Waiter[];
  pausedUntil: number;
  /** `perChat` and the chat's further windows. */
  windows: readonly SendWindow[];
  /** The longest of them: sends older than this no longer count anywhere. */
  keepMs: number;
}

export class SendBudget {
  private readonly global: number[] = [];
  private globalPausedUntil = 0;
  private readonly chats = new Map<string, ChatState>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly limits: SendBudgetLimits,
    private readonly now: () => number = Date.now,
  ) {
    [limits.global, limits.perChat].forEach(checkWindow);
  }

  /** Waits for a slot in `chat` (first come, first served per chat) and spends it. */
  take(chat: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('send budget closed'));
    const state = this.chat(chat);
    if (state.queue.length === 0 && this.free(state, 0)) {
      this.spend(state);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      state.queue.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Spends a slot only if one is free now with `reserve` slots left over (per chat and overall), and nobody waits. */
  tryTake(chat: string, reserve = 1): boolean {
    if (this.closed) return false;
    const state = this.chat(chat);
    if (state.queue.length > 0 || !this.free(state, reserve)) return false;
    this.spend(state);
    return true;
  }

  /** The platform answered 429: nothing more goes to `chat` (or anywhere, without a chat) for `ms`. */
  pause(ms: number, chat?: string): void {
    const until = this.now() + Math.max(0, ms);
    if (chat === undefined) this.globalPausedUntil = Math.max(this.globalPausedUntil, until);
    else {
      const state = this.chat(chat);
      state.pausedUntil = Math.max(state.pausedUntil, until);
    }
    this.schedule();
  }

  /** Sends still waiting for a slot (all chats). */
  get waiting(): number {
    let count = 0;
    for (const state of this.chats.values()) count += state.queue.length;
    return count;
  }

  /** Rejects every waiting send (shutdown). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const state of this.chats.values()) {
      for (const waiter of state.queue.splice(0)) waiter.reject(new Error('send budget closed'));
    }
  }

  private chat(chat: string): ChatState {
    let state = this.chats.get(chat);
    if (!state) {
      const windows = [this.limits.perChat, ...(this.limits.chatWindows?.(chat) ?? [])];
      windows.forEach(checkWindow);
      state = { sent: [], queue: [], pausedUntil: 0, windows, keepMs: Math.max(...windows.map((window) => window.windowMs)) };
      this.chats.set(chat, state);
    }
    return state;
  }

  private free(state: ChatState, reserve: number): boolean {
    const now = this.now();
    if (now < this.globalPausedUntil || now < state.pausedUntil) return false;
    prune(this.global, now - this.limits.global.windowMs);
    prune(state.sent, now - state.keepMs);
    if (this.global.length + reserve >= this.limits.global.limit) return false;
    return state.windows.every((window) => countSince(state.sent, now - window.windowMs) + reserve < window.limit);
  }

  private spend(state: ChatState): void {
    const now = this.now();
    this.global.push(now);
    state.sent.push(now);
  }

  /** Hands free slots to waiters, then sleeps until the earliest moment another slot can free up. */
  private drain(): void {
    this.timer = null;
    let nextAt = Infinity;
    for (const [chat, state] of this.chats) {
      while (state.queue.length > 0 && this.free(state, 0)) {
        this.spend(state);
        state.queue.shift()!.resolve();
      }
      if (state.queue.length > 0) nextAt = Math.min(nextAt, this.nextFree(state));
      else if (state.sent.length === 0 && state.pausedUntil <= this.now()) this.chats.delete(chat);
    }
    if (nextAt !== Infinity) this.arm(nextAt);
  }

  private nextFree(state: ChatState): number {
    let at = Math.max(this.globalPausedUntil, state.pausedUntil);
    if (this.global.length >= this.limits.global.limit)
      at = Math.max(at, this.global[this.global.length - this.limits.global.limit]! + this.limits.global.windowMs);
    const now = this.now();
    for (const window of state.windows) {
      // The window frees a slot when the send `limit` places from the end leaves it.
      if (countSince(state.sent, now - window.windowMs) >= window.limit) at = Math.max(at, state.sent[state.sent.length - window.limit]! + window.windowMs);
    }
    return at;
  }

  private schedule(): void {
    if (this.closed) return;
    this.arm(this.now());
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.drain(), Math.max(0, at - this.now()) + 1);
  }
}

function checkWindow(window: SendWindow): void {
  if (!(window.limit >= 1 && window.windowMs > 0)) throw new Error(`send budget: a window needs limit >= 1 and windowMs > 0`);
}

/** Sends after `cutoff` (the array is in send order, so they are at its end). */
function countSince(sent: number[], cutoff: number): number {
  let count = 0;
  for (let index = sent.length - 1; index >= 0 && sent[index]! > cutoff; index--) count++;
  return count;
}

/** Drops timestamps at or before `cutoff` (the array is in send order). */
function prune(sent: number[], cutoff: number): void {
  let drop = 0;
  while (drop < sent.length && sent[drop]! <= cutoff) drop++;
  if (drop > 0) sent.splice(0, drop);
}
