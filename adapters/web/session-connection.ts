import { randomUUID } from 'node:crypto';
import { AppError, type ErrorCode } from '../../src/core/errors';
import { WORKING_STATES, type AgentState, type SessionFrame, type SessionTakenOverNotice } from '../../src/core/events';
import type { Hub } from '../../src/core/hub';
import type { Principal } from '../../src/core/principal';
import type { FrameSubscriber } from '../../src/core/turns';
import { CLOSE_CODES, CLOSE_REASONS } from '../../src/protocol/close-codes';
import { parseClientFrame } from './parse-client-frame';
import { listenToSocket, type ConnectionContext, type SessionSocket } from './session-socket';

/** Close codes a session connection uses once open (the protocol's, src/protocol/close-codes.ts). */
export const CLOSE = {
  NORMAL: CLOSE_CODES.NORMAL,
  GOING_AWAY: CLOSE_CODES.GOING_AWAY,
  INTERNAL_ERROR: CLOSE_CODES.INTERNAL_ERROR,
  /** The client does not read fast enough; it reconnects and replays what it missed. */
  TRY_AGAIN_LATER: CLOSE_CODES.TRY_AGAIN_LATER,
} as const;

/** How long a closing socket waits for the client's close frame before it is cut. */
export const CLOSE_GRACE_MS = 1_000;

/** One random tag per process, and a serial per connection: a connection's id costs no string of its own until it is asked for. */
const PROCESS_TAG = randomUUID();
let nextSerial = 0;

/** Milliseconds since this module loaded: a small integer (a Date.now() field would be a boxed number per socket). */
const EPOCH = Date.now();
const sinceEpoch = () => Date.now() - EPOCH;

/**
 * One session socket: replays what the client missed, then streams the session's frames in seq
 * order, and turns client frames into hub calls. Every frame it sends comes from the event log — the
 * hub writes the on-connect state, pongs and error replies there — so numbering stays gapless.
 */
export class SessionConnection implements FrameSubscriber {
  private readonly serial = nextSerial++;
  /** When the client last sent a frame, in ms since EPOCH (see `lastClientFrameAt`). */
  private lastClientFrame = sinceEpoch();
  turnRunning: boolean;
  /** -1: none yet (every frame's seq is at least 1). */
  private lastSentSeq = -1;
  private pending: [SessionFrame, string][] | null = [];
  /** The socket's writes are corked while frames come in one tick, and go out in one write after it. */
  private corked = false;
  private subscribed = false;
  private closed = false;
  /** Frames written since the last report to the metrics (reported once per corked burst). */
  private unreported = 0;
  /** The last turn whose first answer frame went out (each turn's first `token` is reported once). */
  private answeredTurn: string | null = null;

  constructor(
    readonly socket: SessionSocket,
    readonly sessionId: string,
    readonly principal: Principal,
    readonly context: ConnectionContext,
    initialState: AgentState,
  ) {
    this.turnRunning = WORKING_STATES.has(initialState);
    // Listen from the first moment: ws drops frames nobody listens to, and the client may send
    // before `open` has run (it awaits Redis round trips). Frames wait until the on-connect frames
    // are out, then are handled one at a time, in order (a `cancel` must see the message before it).
    listenToSocket(socket, this);
  }

  /** Unique across processes (the takeover message names the connection that takes over). */
  get id(): string {
    return `${PROCESS_TAG}:${this.serial}`;
  }

  /** When the client last sent a frame (ms since the epoch). */
  get lastClientFrameAt(): number {
    return EPOCH + this.lastClientFrame;
  }

  private get hub(): Hub {
    return this.context.hub;
  }

  /** Client frames waiting (null text: a binary frame); null while none waits or runs. A plain array, not a promise chain, since every idle socket keeps this. */
  private inbox: (string | null)[] | null = null;
  private opened = false;

  /** A client frame (null: a binary one), from the socket's message listener. */
  receive(text: string | null): void {
    this.lastClientFrame = sinceEpoch();
    if (this.inbox) {
      this.inbox.push(text);
      return;
    }
    this.inbox = [text];
    if (this.opened) void this.drain();
  }

  /** Handles the waiting frames in order, including those that arrive meanwhile. */
  private async drain(): Promise<void> {
    const inbox = this.inbox;
    while (inbox && inbox.length > 0) {
      const text = inbox.shift() as string | null;
      try {
        await this.onClientFrame(text);
      } catch (error) {
        this.context.logger.error({ err: error, session_id: this.sessionId }, 'session socket failed');
        this.close(CLOSE.INTERNAL_ERROR, 'internal error');
      }
    }
    this.inbox = null;
  }

  /**
   * Subscribes, replays after `lastSeq` (null: no replay), then asks the hub to announce the current
   * state (and a confirmation still waiting that the replay did not include): the hub owns what a
   * connecting client is owed; this connection only relays the log.
   */
  async open(lastSeq: number | null): Promise<void> {
    await this.hub.events.subscribe(this.sessionId, this);
    // Closed while subscribing: dispose() found nothing to end yet.
    if (this.closed) this.hub.events.unsubscribe(this.sessionId, this);
    else this.subscribed = true;
    let replayed: SessionFrame[] = [];
    if (lastSeq !== null) {
      const replay = await this.hub.events.replay(this.sessionId, lastSeq);
      // Too old (buffer expired): the spec says send only the current state.
      if (replay.complete) replayed = replay.frames;
      // Replayed answers were delivered before (or are late): not a turn's first answer now.
      for (const frame of replayed) this.send(frame, JSON.stringify(frame), false);
    }
    await this.hub.announceSession(this.sessionId, replayed);
    const buffered = this.pending ?? [];
    this.pending = null;
    for (const [frame, text] of buffered) this.send(frame, text);
    this.opened = true;
    if (this.inbox) void this.drain();
  }

  /**
   * The live tail dropped and came back (Redis restarted): frames published meanwhile are replayed
   * from the log, after the last one sent (each seq still goes out once). When they are no longer
   * kept, the client is told to reconnect with `last_seq` (it then gets the current state).
   */
  onGap(): void {
    void this.catchUp();
  }

  private async catchUp(): Promise<void> {
    if (this.closed || this.pending || this.lastSentSeq < 0) return; // opening or filling a gap: a replay is under way
    this.pending = [];
    await this.fillGap();
  }

  /** Replays what follows the last frame sent, then what the live tail brought meanwhile (held in `pending`). */
  private async fillGap(): Promise<void> {
    const replay = await this.hub.events.replay(this.sessionId, this.lastSentSeq).catch(() => null);
    const buffered = this.pending ?? [];
    this.pending = null;
    if (!replay?.complete) return this.close(CLOSE.TRY_AGAIN_LATER, 'missed frames; reconnect with last_seq');
    for (const frame of replay.frames) this.send(frame, JSON.stringify(frame), false);
    for (const [frame, text] of buffered) this.send(frame, text);
  }

  /**
   * A newer connection to the session took it over: this socket alone first gets the
   * `session_taken_over` notice (outside the numbered log: it has no seq), then closes 1001.
   */
  takenOver(): void {
    if (this.closed) return;
    const notice: SessionTakenOverNotice = { type: 'session_taken_over', session_id: this.sessionId, payload: {}, ts: new Date().toISOString() };
    this.socket.send(JSON.stringify(notice));
    this.close(CLOSE.GOING_AWAY, CLOSE_REASONS.TAKEN_OVER);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.dispose();
    this.socket.close(code, reason);
    // A client that never answers the close handshake does not hold the server (or its shutdown).
    setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** Called when the socket closed from either side. */
  dispose(): void {
    this.closed = true;
    if (!this.subscribed) return;
    this.subscribed = false;
    this.hub.events.unsubscribe(this.sessionId, this);
  }

  /** A live frame of the session (the event log calls it). */
  onFrame(frame: SessionFrame, text: string): void {
    if (this.pending) {
      this.pending.push([frame, text]);
      return;
    }
    // The live tail numbers every frame of the session: a jump means frames were missed (its
    // connection dropped meanwhile). They are replayed from the log before this one goes out.
    if (this.lastSentSeq >= 0 && frame.seq > this.lastSentSeq + 1) {
      this.pending = [[frame, text]];
      void this.fillGap();
      return;
    }
    this.send(frame, text);
  }

  /** Sends a frame's text as it was serialised once for every socket; `live` frames may be a turn's first answer. */
  private send(frame: SessionFrame, text: string, live = true): void {
    if (this.closed || frame.seq <= this.lastSentSeq) return; // replay and live tail overlap: each seq once
    this.lastSentSeq = frame.seq;
    if (frame.type === 'agent_state') this.turnRunning = WORKING_STATES.has(frame.payload.state);
    if (frame.type === 'done') this.turnRunning = false;
    if (this.socket.bufferedAmount > this.context.limits.maxBufferedBytes) {
      this.close(CLOSE.TRY_AGAIN_LATER, 'client too slow; reconnect with last_seq');
      return;
    }
    this.cork();
    this.socket.send(text);
    this.unreported += 1;
    if (!this.corked) this.report();
    if (frame.type === 'token' && frame.payload.turn_id && frame.payload.turn_id !== this.answeredTurn) {
      this.answeredTurn = frame.payload.turn_id;
      if (live) this.context.telemetry.answerDelivered(frame.payload.turn_id, frame.ts);
    }
  }

  private report(): void {
    this.context.telemetry.framesSent(this.unreported);
    this.unreported = 0;
  }

  /**
   * Frames sent in one tick (a burst of tokens) leave in one write: the TCP socket under the
   * WebSocket is corked at the first frame and uncorked after the tick. `ws` has no public API for
   * it; `_socket` is its net.Socket (stable across ws 8). nextTick runs after the microtasks that
   * produced the burst, so a burst costs one write and no added wait.
   */
  private cork(): void {
    if (this.corked) return;
    const raw = (this.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (!raw) return;
    this.corked = true;
    raw.cork();
    process.nextTick(() => {
      this.corked = false;
      raw.uncork();
      this.report();
    });
  }

  private async onClientFrame(text: string | null): Promise<void> {
    const parsed = parseClientFrame(text);
    this.context.telemetry.frameReceived('error' in parsed ? 'invalid' : parsed.type);
    if ('error' in parsed) return this.reply(parsed.error.code, parsed.error.message);
    try {
      switch (parsed.type) {
        case 'ping':
          await this.hub.answerClient(this.sessionId, { type: 'pong' });
          return;
        case 'user_message':
          await this.hub.ingest({
            channel: 'web',
            sessionId: this.sessionId,
            sender: { userId: this.principal.userId, displayName: this.principal.username },
            text: parsed.payload.text,
            mode: parsed.payload.mode,
            metadata: {},
          });
          return;
        case 'cancel':
          await this.hub.cancelTurn(this.sessionId);
          return;
        case 'tool_confirm':
          await this.hub.confirmTool(this.sessionId, parsed.payload.confirmation_id, parsed.payload.action, {
            kind: 'user',
            id: this.principal.userId,
            name: this.principal.username,
          });
          return;
      }
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      await this.reply(error.code, error.message);
    }
  }

  /** An `error` frame answering a client frame (written by the hub, numbered like every frame); the connection stays open. */
  private async reply(code: ErrorCode, message: string): Promise<void> {
    await this.hub.answerClient(this.sessionId, { type: 'error', code, message });
  }
}
