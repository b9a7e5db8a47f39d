import { RENDER_LEASE, type HeldLease, type RenderLeases } from '../core/render-lease';

interface Waiter {
  ticket: number;
  grant(): void;
}

interface ChatLine {
  held: boolean;
  /** Turns waiting for the lease, lowest ticket first. */
  waiting: Waiter[];
}

/**
 * The rendering lease of one API process (no Redis): per chat, whether it is held and a line of
 * waiters in ticket order. Nothing expires here: a process that dies takes its leases with it.
 */
export class InProcessRenderLeases implements RenderLeases {
  private readonly chats = new Map<string, ChatLine>();

  constructor(private readonly limits: { maxWaitMs: number } = RENDER_LEASE) {}

  async acquire(chat: string, _holder: string, ticket: number): Promise<HeldLease> {
    const line = this.chats.get(chat) ?? { held: false, waiting: [] };
    this.chats.set(chat, line);
    if (line.held && !(await this.wait(line, ticket))) return { waitedOut: true, release: async () => undefined };
    line.held = true;
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
  private wait(line: ChatLine, ticket: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        ticket,
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        line.waiting.splice(line.waiting.indexOf(waiter), 1);
        resolve(false);
      }, this.limits.maxWaitMs);
      timer.unref();
      const at = line.waiting.findIndex((other) => other.ticket > ticket);
      line.waiting.splice(at === -1 ? line.waiting.length : at, 0, waiter);
    });
  }

  /** The lowest ticket waiting takes the lease before anyone else can; with nobody waiting, the chat is free. */
  private handOn(chat: string, line: ChatLine): void {
    const next = line.waiting.shift();
    if (next) next.grant();
    else {
      line.held = false;
      this.chats.delete(chat);
    }
  }
}
