import { RENDER_LEASE, type HeldLease, type RenderLeases } from '../core/render-lease';

interface ChatLine {
  holder: string | null;
  /** Turns waiting for the lease, first come first served. */
  waiting: (() => void)[];
}

/**
 * The rendering lease of one API process (no Redis): per chat, the holder and a line of waiters.
 * Nothing expires here: a process that dies takes its leases with it.
 */
export class InProcessRenderLeases implements RenderLeases {
  private readonly chats = new Map<string, ChatLine>();

  constructor(private readonly limits: { maxWaitMs: number } = RENDER_LEASE) {}

  async acquire(chat: string, holder: string): Promise<HeldLease> {
    const line = this.chats.get(chat) ?? { holder: null, waiting: [] };
    this.chats.set(chat, line);
    if (line.holder !== null) {
      const granted = await this.wait(line);
      if (!granted) return { waitedOut: true, release: async () => undefined };
    }
    line.holder = holder;
    let released = false;
    return {
      waitedOut: false,
      release: async () => {
        if (released) return;
        released = true;
        this.handOn(chat, line);
      },
    };
  }

  /** Chats with a lease held or waited for. */
  get active(): number {
    return this.chats.size;
  }

  /** Resolves true when the lease was handed to this waiter, false when the wait ran out. */
  private wait(line: ChatLine): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const turn = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        line.waiting.splice(line.waiting.indexOf(turn), 1);
        resolve(false);
      }, this.limits.maxWaitMs);
      timer.unref();
      line.waiting.push(turn);
    });
  }

  private handOn(chat: string, line: ChatLine): void {
    line.holder = null;
    const next = line.waiting.shift();
    // The next waiter takes the lease before anyone else can (its `acquire` sets the holder).
    if (next) {
      line.holder = 'handed-on';
      next();
    } else this.chats.delete(chat);
  }
}
