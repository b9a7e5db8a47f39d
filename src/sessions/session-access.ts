import { AppError } from '../core/errors';
import type { Principal } from '../core/principal';
import type { ControlBus, Unsubscribe } from '../core/turns';
import type { TurnStore } from '../db/turn-store';

export const SESSION_ACCESS_DEFAULTS = {
  /** Sessions whose access facts are kept (least recently used ones go first). */
  maxEntries: 50_000,
};

interface AccessFacts {
  ownerId: string;
  archived: boolean;
}

/**
 * Who may post to a session, without a database read per message: a session's owner never changes,
 * and archiving, restoring or deleting one tells every process (`session_changed`) to forget it.
 * A stale entry cannot let a message in: the insert itself checks the session is there and not archived.
 */
export class SessionAccess {
  private readonly facts = new Map<string, AccessFacts>();
  private stopListening: Unsubscribe | null = null;

  constructor(
    private readonly store: TurnStore,
    private readonly limits = SESSION_ACCESS_DEFAULTS,
  ) {}

  async start(control: ControlBus): Promise<void> {
    this.stopListening = await control.subscribe((message) => {
      if (message.kind === 'session_changed') this.facts.delete(message.sessionId);
    });
  }

  stop(): void {
    this.stopListening?.();
    this.facts.clear();
  }

  /** The session's id if the caller may use it; 404 SESSION_NOT_FOUND otherwise (not 403: no existence leak). */
  async check(principal: Principal, sessionId: string): Promise<{ archived: boolean }> {
    let facts = this.facts.get(sessionId);
    if (facts) {
      this.facts.delete(sessionId); // re-inserted: most recently used last
    } else {
      const session = await this.store.findSession(sessionId);
      if (!session) throw new AppError('SESSION_NOT_FOUND', `No session ${sessionId}.`);
      facts = { ownerId: session.owner_id, archived: session.archived_at !== null };
      if (this.facts.size >= this.limits.maxEntries) this.facts.delete(this.facts.keys().next().value!);
    }
    this.facts.set(sessionId, facts);
    if (principal.role !== 'admin' && facts.ownerId !== principal.userId) throw new AppError('SESSION_NOT_FOUND', `No session ${sessionId}.`);
    return { archived: facts.archived };
  }
}
