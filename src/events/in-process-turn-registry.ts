import type { HandOver, LiveTurn, LiveTurnChange, TurnRegistry } from '../core/turns';

type Held = LiveTurn & { waiting?: boolean };

/** The embedded turn registry: one process, memory only (the database recovers unfinished turns at start). */
export class InProcessTurnRegistry implements TurnRegistry {
  readonly name = 'in-process' as const;
  private readonly turns = new Map<string, Held>();

  async claim(sessionId: string, turnId: string): Promise<boolean> {
    const held = this.turns.get(sessionId);
    if (held) return held.turnId === turnId && held.phase === 'queued';
    this.turns.set(sessionId, queued(turnId, false));
    return true;
  }

  async claimOrHolder(sessionId: string, turnId: string): Promise<true | LiveTurn> {
    const held = this.turns.get(sessionId);
    return (await this.claim(sessionId, turnId)) || view(held!);
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
    // A reservation is no turn to change: a late worker of the ended turn must not revive it.
    if (turn?.turnId !== turnId || turn.phase === 'handover') return false;
    Object.assign(turn, change);
    return true;
  }

  async release(sessionId: string, turnId: string, onlyIf?: 'queued' | 'running'): Promise<false | { waiting: boolean }> {
    const turn = this.turns.get(sessionId);
    if (turn?.turnId !== turnId) return false;
    if (turn.phase === 'handover') return { waiting: true }; // released already, reserved for the next
    if (onlyIf && turn.phase !== onlyIf) return false;
    if (!turn.waiting) {
      this.turns.delete(sessionId);
      return { waiting: false };
    }
    this.turns.set(sessionId, { turnId, phase: 'handover', state: 'idle', pending: null, acceptedAt: Date.now() });
    return { waiting: true };
  }

  async handOver(sessionId: string, from: string, to: string | null, more: boolean): Promise<HandOver> {
    const turn = this.turns.get(sessionId);
    if (turn?.turnId !== from || turn.phase !== 'handover') return to !== null && turn?.turnId === to ? 'handed' : 'lost';
    if (to === null) {
      if (turn.waiting) return 'again';
      this.turns.delete(sessionId);
      return 'freed';
    }
    this.turns.set(sessionId, queued(to, more || turn.waiting === true));
    return 'handed';
  }

  async close(): Promise<void> {
    this.turns.clear();
  }
}

function queued(turnId: string, waiting: boolean): Held {
  return { turnId, phase: 'queued', state: 'thinking', pending: null, acceptedAt: Date.now(), ...(waiting ? { waiting } : {}) };
}

function view({ waiting: _waiting, ...turn }: Held): LiveTurn {
  return turn;
}
