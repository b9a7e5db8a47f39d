/** One turn's place in its conversation's line. */
export interface TurnSlot<T> {
  /** Delivers now when every earlier turn of the conversation has ended, else keeps them until then. */
  push(items: readonly T[]): void;
  /** The turn ended (after its last push): the next turn's kept items follow. */
  close(): void;
}

interface Slot<T> {
  kept: T[];
  closed: boolean;
}

/**
 * A conversation's turns answer in the order they were taken in (the mid-turn policy runs them one
 * after the other), but each is followed on its own, and a turn's end is known a moment after its
 * last frame — when the next turn may already have streamed its first. This keeps a later turn's
 * output until every earlier turn of the same conversation has ended, so answers never interleave.
 */
export class TurnOrder<T> {
  private readonly lines = new Map<string, Slot<T>[]>();

  constructor(private readonly deliver: (conversation: string, item: T) => void) {}

  /** A new turn at the end of `conversation`'s line. */
  open(conversation: string): TurnSlot<T> {
    const slot: Slot<T> = { kept: [], closed: false };
    const line = this.lines.get(conversation) ?? [];
    line.push(slot);
    this.lines.set(conversation, line);
    return {
      push: (items) => {
        if (slot.closed) return;
        if (line[0] === slot) for (const item of items) this.deliver(conversation, item);
        else slot.kept.push(...items);
      },
      close: () => {
        slot.closed = true;
        this.advance(conversation, line);
      },
    };
  }

  /** Conversations with a turn still open. */
  get active(): number {
    return this.lines.size;
  }

  /** Whether a turn of `conversation` is still open. */
  has(conversation: string): boolean {
    return this.lines.has(conversation);
  }

  private advance(conversation: string, line: Slot<T>[]): void {
    while (line.length > 0 && line[0]!.closed) {
      line.shift();
      const next = line[0];
      if (!next) break;
      for (const item of next.kept.splice(0)) this.deliver(conversation, item);
    }
    if (line.length === 0) this.lines.delete(conversation);
  }
}
