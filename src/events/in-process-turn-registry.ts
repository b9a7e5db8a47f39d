import type { LiveTurn, LiveTurnChange, TurnRegistry } from '../core/turns';

/** The embedded turn registry: one process, memory only (the database recovers unfinished turns at start). */
export class InProcessTurnRegistry implements TurnRegistry {
  readonly name = 'in-process' as const;
  private readonly turns = new Map<string, LiveTurn & { waiting?: boolean }>();

  async claim(sessionId: string, turnId: string): Promise<boolean> {
    const held = this.turns.get(sessionId);
    if (held) return held.turnId === turnId && held.phase === 'queued';
    this.turns.set(sessionId, { turnId, phase: 'queued', state: 'thinking', pending: null, acceptedAt: Date.now() });
    return true;
  }

  async get(sessionId: string): Promise<LiveTurn | null> {
    const turn = this.turns.get(sessionId);
    return turn ? view(turn) : null;
  }

  async getMany(sessionIds: readonly string[]): Promise<Map<string, LiveTurn>> {
    const found = new Map<string, LiveTurn>();
    for (const id of sessionIds) {
      const turn = this.turns.get(id);
      if (turn) found.set(id, view(turn));
    }
    return found;
  }

  async markWaiting(sessionId: string): Promise<{ turnId: string; phase: LiveTurn['phase'] } | null> {
    const turn = this.turns.get(sessionId);
    if (!turn) return null;
    turn.waiting = true;
    return { turnId: turn.turnId, phase: turn.phase };
  }

  async update(sessionId: string, turnId: string, change: LiveTurnChange): Promise<boolean> {
    const turn = this.turns.get(sessionId);
    if (turn?.turnId !== turnId) return false;
    Object.assign(turn, change);
    return true;
  }

  async release(sessionId: string, turnId: string, onlyIf?: LiveTurn['phase']): Promise<false | { waiting: boolean }> {
    const turn = this.turns.get(sessionId);
    if (turn?.turnId !== turnId || (onlyIf && turn.phase !== onlyIf)) return false;
    this.turns.delete(sessionId);
    return { waiting: turn.waiting === true };
  }

  async close(): Promise<void> {
    this.turns.clear();
  }
}

function view({ waiting: _waiting, ...turn }: LiveTurn & { waiting?: boolean }): LiveTurn {
  return turn;
}
