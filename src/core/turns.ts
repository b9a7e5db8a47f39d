import type { Actor } from './actor';
import type { AgentState, ApprovalProgress, SessionFrame, SessionFrameBody } from './events';
import type { PrincipalChangeReason } from './principal';

/**
 * What goes on the queue: ids only, never message text or secrets. The job id is the stored user
 * message's id, so a message is queued at most once and a redelivery is recognised.
 */
export interface TurnJob {
  sessionId: string;
  userMessageId: string;
  /**
   * When the job was queued (ms since the epoch): the worker measures the queue's wait from it.
   * Absent in jobs queued before issue 20.
   */
  queuedAt?: number;
  /** The turn's trace context (W3C `traceparent`/`tracestate`), when traces are on: the worker's spans join it. */
  trace?: Record<string, string>;
}

/**
 * What a chat message does when it arrives while its session's turn runs (decisions.md, "Mid-turn
 * policy"): `reject` answers TURN_IN_PROGRESS (the web channel, per the spec); `queue` stores it and
 * runs it as the next turn, in order; `steer` stores it, ends the running turn at its next model or
 * tool boundary (what was said so far is kept as its answer) and runs it next; `collect` stores it and
 * the next turn answers every message waiting when it starts.
 */
export const MID_TURN_POLICIES = ['reject', 'queue', 'steer', 'collect'] as const;
export type MidTurnPolicy = (typeof MID_TURN_POLICIES)[number];

export interface TurnContext {
  /** Aborted when the worker shuts down (the job is handed back) — not on user cancel. */
  signal: AbortSignal;
}

export type TurnHandler = (job: TurnJob, context: TurnContext) => Promise<void>;

/** The turn queue: in-process (embedded default) or BullMQ on Redis. At-least-once delivery. */
export interface TurnQueue {
  readonly name: 'in-process' | 'redis';
  enqueue(job: TurnJob): Promise<void>;
  /** Jobs waiting for a worker (read when metrics are scraped, never on a turn's path). */
  depth(): Promise<number>;
  /**
   * Starts consuming jobs with `handler`, at most `concurrency` at a time in this process. A handler
   * that throws is retried; after the last attempt `onGiveUp` is called once (free the session, tell the client).
   */
  consume(handler: TurnHandler, options: { concurrency: number; onGiveUp?: (job: TurnJob, error: unknown) => Promise<void> }): void;
  /** Stops consuming: running handlers get their signal aborted and are awaited; jobs not finished return to the queue. */
  stopConsuming(): Promise<void>;
  close(): Promise<void>;
}

/** The result of asking for frames after a client's `last_seq`. */
export interface Replay {
  frames: SessionFrame[];
  /** False when frames after `last_seq` existed but are no longer kept (the buffer expired). */
  complete: boolean;
}

export type Unsubscribe = () => void;

/**
 * A live frame with its JSON text, serialised once where it was made (or as it came over the wire):
 * every socket sends `text` as it is.
 */
export type FrameListener = (frame: SessionFrame, text: string) => void;

/**
 * A long-lived subscriber (a session socket) as an object: its methods live on its prototype, so a
 * subscription keeps no closure of its own (idle sockets are counted in the hundreds of thousands).
 */
export interface FrameSubscriber {
  onFrame(frame: SessionFrame, text: string): void;
  /** Frames may have been missed (the live tail's connection dropped and came back): replay to catch up. */
  onGap?(): void;
}

/** A function listener as a subscriber (for the few short-lived subscriptions that pass functions). */
export function asSubscriber(listener: FrameListener | FrameSubscriber, onGap?: () => void): FrameSubscriber {
  return typeof listener === 'function' ? { onFrame: listener, onGap } : listener;
}

/**
 * The per-session event log: numbers every frame (seq, per session, strictly increasing), keeps
 * recent frames for replay after a reconnect, and tails them live to any process.
 */
export interface EventLog {
  readonly name: 'in-process' | 'redis';
  /**
   * Numbers, keeps and publishes a frame. Appends to one session are numbered in call order, so a
   * caller need not await one append before the next (the worker streams tokens without waiting).
   */
  append(sessionId: string, body: SessionFrameBody): Promise<SessionFrame>;
  /**
   * Appends frames in order, numbered as `append` would number them one by one, with no frame to
   * answer each: resolves once all are in the log. A streamed read's tokens go this way (one promise
   * per read, not per token).
   */
  appendAll(sessionId: string, bodies: readonly SessionFrameBody[]): Promise<void>;
  /**
   * Frames with seq > afterSeq. `afterSeq < 0` (a fresh page) means every frame still kept. When the
   * client is ahead of the log (the log restarted and lost its counter), the counter is raised to
   * `afterSeq` so that what follows stays increasing for it.
   */
  replay(sessionId: string, afterSeq: number): Promise<Replay>;
  /**
   * Calls `listener` for every frame appended from now on, from any process. `onGap`: frames may
   * have been missed (the live tail's connection dropped and came back): replay to catch up.
   */
  subscribe(sessionId: string, listener: FrameListener | FrameSubscriber, onGap?: () => void): Promise<Unsubscribe>;
  /**
   * Ends the subscription of `subscriber` (the object given to `subscribe`): what a subscriber object
   * calls instead of keeping the function `subscribe` returned. Unknown subscribers are ignored.
   */
  unsubscribe(sessionId: string, subscriber: FrameSubscriber): void;
  close(): Promise<void>;
}

/** The `tool_confirm_request` a running turn waits for (asked again when a socket connects). */
export interface PendingConfirmation {
  confirmation_id: string;
  tool: string;
  parameters: Record<string, unknown>;
  message: string;
  /** The workflow the turn runs (its name; null: the config default), as on the `tool_confirm_request`. */
  workflow?: string | null;
  /** Set when an approval policy governs the tool (issue 30): clicks go to the approval service. */
  approval?: ApprovalProgress;
}

/**
 * A session's running turn as every process sees it. In-flight state lives here (memory, or Redis
 * when scaled out), never in the database: the database keeps only what durability is owed (the
 * accepted message, the stored reply).
 */
export interface LiveTurn {
  /** The turn's id: its user message's id. */
  turnId: string;
  /** `queued` until a worker takes it; a queued turn is cancelled where it waits, a running one by its worker. */
  phase: 'queued' | 'running' | 'handover';
  /** The agent state clients see (`thinking` … `writing`). */
  state: AgentState;
  pending: PendingConfirmation | null;
  /** When it was accepted (ms since the epoch). */
  acceptedAt: number;
  /**
   * The workflow this turn routed to, when it differs from the session's current one (set once
   * routed; absent: the session's). Its mid-turn policy governs messages sent meanwhile.
   */
  workflowId?: string | null;
}

/** What `TurnRegistry.handOver` did. */
export type HandOver = 'handed' | 'freed' | 'again' | 'lost';

export type LiveTurnChange = Partial<Pick<LiveTurn, 'phase' | 'state' | 'pending' | 'workflowId'>>;

/**
 * One turn per session at a time, across every process: the registry of running turns. Each change
 * names the turn it is for and is refused when that turn is no longer the session's, so a late
 * worker can never touch the next turn.
 */
export interface TurnRegistry {
  readonly name: 'in-process' | 'redis';
  /**
   * Makes `turnId` the session's running turn (phase `queued`, state `thinking`); false when another
   * runs. Claiming again the turn that holds the session while it is still queued answers true: a
   * claim sent twice (its answer lost when the connection dropped) is not refused by itself.
   */
  claim(sessionId: string, turnId: string): Promise<boolean>;
  /**
   * `claim`, answering a refusal with the turn that holds the session (what `get` would) in the same
   * round trip: accepting a message looks at the holder of a refused claim (a dead claim is freed).
   */
  claimOrHolder(sessionId: string, turnId: string): Promise<true | LiveTurn>;
  get(sessionId: string): Promise<LiveTurn | null>;
  /** The running turns of these sessions (sessions without one are absent). */
  getMany(sessionIds: readonly string[]): Promise<Map<string, LiveTurn>>;
  /**
   * Notes that a message waits behind the session's running turn (stored, owed an answer), so that
   * whoever ends that turn starts the next. Returns the running turn's id and phase; null when no turn
   * runs (then the caller starts the waiting message itself).
   */
  markWaiting(sessionId: string): Promise<{ turnId: string; phase: LiveTurn['phase'] } | null>;
  /** Changes the turn if it is still the session's; false otherwise. */
  update(sessionId: string, turnId: string, change: LiveTurnChange): Promise<boolean>;
  /**
   * Ends the turn if it is still the session's (and, with `onlyIf`, still in that phase); false
   * otherwise. A queued turn is cancelled with `onlyIf: 'queued'`, so a worker taking it at the same
   * moment and the canceller cannot both win. When messages wait behind it (`markWaiting`), the
   * session is not freed but reserved for the oldest of them (phase `handover`, still named by this
   * turn): a message that arrives meanwhile waits behind them too instead of overtaking them; the
   * releaser then calls `handOver`. A release sent twice (its answer lost when the connection
   * dropped) answers what it did the first time.
   */
  release(sessionId: string, turnId: string, onlyIf?: 'queued' | 'running'): Promise<false | { waiting: boolean }>;
  /**
   * Hands a session that `release` reserved for turn `from` to the next waiting message `to` (phase
   * `queued`; `more`: messages wait behind it too), or frees it when `to` is null. `again`: with
   * `to` null, a message was marked waiting since the reservation (read the waiting messages again);
   * `lost`: the session is no longer reserved for `from` (someone else handed it over). Sent twice,
   * a handover to `to` answers `handed` again.
   */
  handOver(sessionId: string, from: string, to: string | null, more: boolean): Promise<HandOver>;
  close(): Promise<void>;
}

/** Messages between processes: to whoever runs or shows a session's turn, and cache invalidations. */
export type ControlMessage =
  /** Stop a turn: `steer` ends it at its next model or tool boundary and keeps what was said as its answer. */
  | { kind: 'cancel'; sessionId: string; turnId: string; steer?: boolean }
  | { kind: 'tool_confirm'; sessionId: string; confirmationId: string; action: string; actor?: Actor }
  /** A new socket for the session opened (on any process): other sockets for it close with 1001. */
  | { kind: 'takeover'; sessionId: string; connectionId: string }
  /**
   * A principal's credentials changed (deactivated, deleted, role changed, logged out everywhere,
   * password changed, an API key revoked): every process drops what it cached and closes the
   * sockets those credentials opened. `apiKeyId` names the one key when only it changed.
   */
  | { kind: 'principal_changed'; userId: string; apiKeyId?: string; reason: PrincipalChangeReason }
  /** A session was archived, restored or deleted: cached access facts are dropped. */
  | { kind: 'session_changed'; sessionId: string }
  /** A workflow was created, changed or deleted: routers reload. */
  | { kind: 'workflows_changed' }
  /** An approval counted a click, was decided or escalated (issue 30): the worker waiting for it reads it again. */
  | { kind: 'approval_changed'; sessionId: string; approvalId: string };

export interface ControlBus {
  readonly name: 'in-process' | 'redis';
  publish(message: ControlMessage): Promise<void>;
  /**
   * Every message published on any process, including this one. `onGap`: messages may have been
   * missed (the bus's connection dropped and came back).
   */
  subscribe(listener: (message: ControlMessage) => void, onGap?: () => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}

/**
 * Which workers are alive: each sends a heartbeat; readiness and the "nobody took this turn" check
 * ask how many beat recently. In-process: the embedded worker; Redis: a sorted set of last beats.
 */
export interface WorkerPresence {
  readonly name: 'in-process' | 'redis';
  beat(workerId: string): Promise<void>;
  leave(workerId: string): Promise<void>;
  /** Workers whose last heartbeat is younger than the presence timeout. */
  alive(): Promise<number>;
}

/**
 * The turn a session runs, as clients see it: none between turns, also while the session is reserved
 * for its next waiting message (phase `handover`: the turn that ran is over, the next has not started).
 */
export function runningTurn(live: LiveTurn | null): LiveTurn | null {
  return live && live.phase !== 'handover' ? live : null;
}
