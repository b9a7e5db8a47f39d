import type { AgentState, DonePayload, FramePayload, SessionFrame } from '../../protocol/frames';
import { confirmStep, rememberAsked } from '../../protocol/confirm-questions';
import { saysNoTurnRuns, TurnOutcomeTracker, type TurnOutcome } from '../../protocol/turn-outcome';
import { TurnTranscript } from './turn-transcript';

/** Error codes that answer one of the client's frames and leave the turn running. */
const REPLY_CODES = new Set(['INVALID_MESSAGE', 'VALIDATION_ERROR', 'CONFLICT', 'FORBIDDEN', 'APPROVAL_NOT_FOUND']);

export type ConfirmRequest = FramePayload<'tool_confirm_request'>;

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

/** The `done` payload (the protocol's; `workflow`, `routing_reason` and `turn_id` are absent from older hubs). */
export type DoneInfo = DonePayload;

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
  /**
   * The turn ended while the client was away (no `done` or error seen; on reconnecting, the hub
   * said no turn runs): its reply is in the history.
   */
  | { kind: 'ended-unseen'; errors: TurnError[] };

export interface TurnView {
  /** Answer text to show (`restated`: the whole answer again, after a rerun that said otherwise). */
  text(text: string, restated: boolean): void;
  /** The snapshot changed (state, tools, memory). */
  changed(snapshot: TurnSnapshot): void;
  /** A confirmation to ask at once. */
  confirm(request: ConfirmRequest): void;
  /**
   * An approval asked already, sent again as approvers' clicks count (issue 30,
   * src/protocol/confirm-questions.ts): update what is shown; never ask it again.
   */
  progress(request: ConfirmRequest): void;
  /** An error frame answering one of the client's frames (the turn goes on). */
  notice(error: TurnError): void;
  ended(end: TurnEnd): void;
}

/**
 * Follows one turn through its frames: streams its text through a `TurnTranscript` and keeps the
 * status snapshot. When the turn is over is the protocol's to say, not this client's: the turn's
 * frames go to the `TurnOutcomeTracker` the server follows turns with (src/protocol), and after a
 * reconnect the hub's on-connect state may say no turn runs (the end happened out of sight).
 */
export class TurnFollower {
  readonly snapshot: TurnSnapshot;
  readonly transcript = new TurnTranscript();
  /** The turn's id (its user message id) once known; frames naming another turn are ignored. */
  turnId: string | null = null;
  private errors: TurnError[] = [];
  /** Confirmation ids asked in this turn (an approval's progress re-sends its id). */
  private asked: readonly string[] = [];
  private started = false;
  private over = false;
  private readonly tracker = new TurnOutcomeTracker();
  /** The connection came back at least once: an on-connect state may follow the replayed frames. */
  private reconnected = false;

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
    this.reconnected = true;
    if (outage && !this.over) this.holdUntilEnd();
  }

  handle(frame: SessionFrame): void {
    if (this.over) return;
    const turnId = (frame.payload as { turn_id?: unknown }).turn_id;
    if (this.turnId !== null && typeof turnId === 'string' && turnId !== this.turnId) return;
    if (this.reconnected && saysNoTurnRuns(frame)) {
      this.onState('idle');
      return this.end({ kind: 'ended-unseen', errors: this.errors });
    }
    // Errors that answer one of this client's frames belong to no turn: they end nothing.
    if (frame.type === 'error' && REPLY_CODES.has(frame.payload.code)) return this.view.notice({ code: frame.payload.code, message: frame.payload.message });
    this.show(frame);
    const outcome = frame.type === 'pong' ? null : this.tracker.next(frame);
    if (outcome) this.end(this.turnEnd(outcome));
  }

  /** What a frame changes on screen. */
  private show(frame: SessionFrame): void {
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
      case 'tool_confirm_request': {
        const step = confirmStep(this.asked, frame.payload);
        this.asked = rememberAsked(this.asked, frame.payload);
        return step === 'ask' ? this.view.confirm(frame.payload) : this.view.progress(frame.payload);
      }
      case 'memory_update':
        this.snapshot.memory = { mode: frame.payload.mode, tokensUsed: frame.payload.tokens_used, summarized: frame.payload.summarized };
        return this.view.changed(this.snapshot);
      case 'error':
        this.errors.push({ code: frame.payload.code, message: frame.payload.message });
        return;
      case 'done': {
        const { text, restated } = this.transcript.finish(frame.payload.text);
        if (text) this.view.text(text, restated);
        return;
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
  }

  /** The tracker's outcome as this client reports it. */
  private turnEnd(outcome: TurnOutcome): TurnEnd {
    switch (outcome.kind) {
      case 'done':
        return { kind: 'done', done: outcome.done, errors: this.errors };
      case 'cancelled':
      case 'dropped':
        return { kind: 'cancelled', errors: this.errors };
      case 'error':
        return { kind: 'failed', errors: this.errors };
      case 'merged':
      case 'stopped':
        // Not decided by a frame of this turn (the tracker never says these): the reply is elsewhere.
        return { kind: 'ended-unseen', errors: this.errors };
    }
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
  }

  private holdUntilEnd(): void {
    this.transcript.hold();
    this.snapshot.catchingUp = true;
  }

  private end(end: TurnEnd): void {
    if (this.over) return;
    this.over = true;
    this.view.ended(end);
  }
}
