import type { AgentState, DonePayload, SessionFrame } from '../../core/events';
import { TurnTranscript } from './turn-transcript';

export const FOLLOWER_DEFAULTS = {
  /**
   * After `agent_state idle` with no `done`: how long to wait for the `error CANCELLED` that a
   * cancel sends right after it, before the turn counts as ended while the client was away.
   */
  idleGraceMs: 1_500,
} as const;

/** Error codes that answer one of the client's frames and leave the turn running. */
const REPLY_CODES = new Set(['INVALID_MESSAGE', 'VALIDATION_ERROR', 'CONFLICT']);

export interface ConfirmRequest {
  confirmation_id: string;
  tool: string;
  parameters: Record<string, unknown>;
  message: string;
}

export interface ToolResult {
  id: string;
  name: string;
  durationMs: number;
  error: string | null;
}

export interface TurnError {
  code: string;
  message: string;
}

/** `done` with the fields newer hubs add (issue 12); absent ones are undefined. */
export type DoneInfo = DonePayload & { workflow?: string | null; routing_reason?: string; turn_id?: string };

/** What the status line shows, kept up to date frame by frame. */
export interface TurnSnapshot {
  /** `queued` until the hub reports the turn's first state. */
  state: AgentState | 'queued';
  startedAt: number;
  running: Map<string, { name: string; startedAt: number }>;
  finished: ToolResult[];
  memory: { mode: string; tokensUsed: number; summarized: boolean } | null;
  /** Tokens are held back until the end (frames may have been lost while reconnecting). */
  catchingUp: boolean;
}

export type TurnEnd =
  | { kind: 'done'; done: DoneInfo; errors: TurnError[] }
  | { kind: 'cancelled'; errors: TurnError[] }
  | { kind: 'failed'; errors: TurnError[] }
  /** The turn ended while the client was away (no `done` or error seen): its reply is in the history. */
  | { kind: 'ended-unseen'; errors: TurnError[] };

export interface TurnView {
  /** Answer text to show (`restated`: the whole answer again, after a rerun that said otherwise). */
  text(text: string, restated: boolean): void;
  /** The snapshot changed (state, tools, memory). */
  changed(snapshot: TurnSnapshot): void;
  /** A confirmation to ask at once. */
  confirm(request: ConfirmRequest): void;
  /** An error frame answering one of the client's frames (the turn goes on). */
  notice(error: TurnError): void;
  ended(end: TurnEnd): void;
}

/**
 * Follows one turn through its frames: streams its text through a `TurnTranscript`, keeps the
 * status snapshot, and decides when the turn is over (`done`; `error CANCELLED`; an error and then
 * `idle`; or `idle` alone, when the end happened out of sight).
 */
export class TurnFollower {
  readonly snapshot: TurnSnapshot;
  readonly transcript = new TurnTranscript();
  /** The turn's id (its user message id) once known; frames naming another turn are ignored. */
  turnId: string | null = null;
  private errors: TurnError[] = [];
  private started = false;
  private over = false;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly view: TurnView,
    options: { joined?: boolean; now?: number } = {},
  ) {
    this.snapshot = { state: 'queued', startedAt: options.now ?? Date.now(), running: new Map(), finished: [], memory: null, catchingUp: false };
    // Joining a turn already under way: its beginning was never seen; show it whole at the end.
    if (options.joined) this.holdUntilEnd();
  }

  get ended(): boolean {
    return this.over;
  }

  /** The connection came back; after an outage frames may be missing, so the text is held. */
  resumed(outage: boolean): void {
    if (outage && !this.over) this.holdUntilEnd();
  }

  handle(frame: SessionFrame): void {
    if (this.over) return;
    const turnId = (frame.payload as { turn_id?: unknown }).turn_id;
    if (this.turnId !== null && typeof turnId === 'string' && turnId !== this.turnId) return;
    if (this.idleTimer && frame.type !== 'pong') this.clearIdleTimer();
    switch (frame.type) {
      case 'agent_state':
        return this.onState(frame.payload.state);
      case 'token': {
        const text = this.transcript.accept(frame.payload.text);
        if (text) this.view.text(text, false);
        return;
      }
      case 'tool_start':
        this.snapshot.running.set(frame.payload.tool_call_id, { name: frame.payload.tool_name, startedAt: Date.now() });
        return this.view.changed(this.snapshot);
      case 'tool_end': {
        const { tool_call_id: id, tool_name: name, duration_ms: durationMs, error } = frame.payload;
        this.snapshot.running.delete(id);
        // A rerun repeats calls: each call id once, the latest outcome.
        this.snapshot.finished = [...this.snapshot.finished.filter((result) => result.id !== id), { id, name, durationMs, error }];
        return this.view.changed(this.snapshot);
      }
      case 'tool_confirm_request':
        return this.view.confirm(frame.payload);
      case 'memory_update':
        this.snapshot.memory = { mode: frame.payload.mode, tokensUsed: frame.payload.tokens_used, summarized: frame.payload.summarized };
        return this.view.changed(this.snapshot);
      case 'error': {
        const error = { code: frame.payload.code as string, message: frame.payload.message };
        if (REPLY_CODES.has(error.code)) return this.view.notice(error);
        this.errors.push(error);
        if (error.code === 'CANCELLED') return this.end({ kind: 'cancelled', errors: this.errors });
        return;
      }
      case 'done': {
        const done = frame.payload as DoneInfo;
        const { text, restated } = this.transcript.finish(done.text);
        if (text) this.view.text(text, restated);
        return this.end({ kind: 'done', done, errors: this.errors });
      }
      case 'pong':
        return;
      default: {
        const unknown: never = frame;
        void unknown; // a frame type this client does not know: newer hubs may add some
      }
    }
  }

  /** Stops waiting (the caller gave up on the turn, e.g. the connection is gone for good). */
  dispose(): void {
    this.over = true;
    this.clearIdleTimer();
  }

  private onState(state: AgentState): void {
    if (state === 'thinking') {
      // `thinking` starts a turn; seen again, the hub started it over (a redelivery after a restart).
      if (this.started) this.transcript.restart();
      this.started = true;
      this.snapshot.catchingUp = this.transcript.holding;
    }
    this.snapshot.state = state;
    this.view.changed(this.snapshot);
    if (state !== 'idle') return;
    if (this.errors.length > 0) return this.end({ kind: 'failed', errors: this.errors });
    // A cancel sends `idle` just before `error CANCELLED`; without it, the turn ended unseen.
    this.idleTimer = setTimeout(() => this.end({ kind: 'ended-unseen', errors: this.errors }), FOLLOWER_DEFAULTS.idleGraceMs);
  }

  private holdUntilEnd(): void {
    this.transcript.hold();
    this.snapshot.catchingUp = true;
  }

  private end(end: TurnEnd): void {
    if (this.over) return;
    this.over = true;
    this.clearIdleTimer();
    this.view.ended(end);
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}
