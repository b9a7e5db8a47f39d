import type { SessionFrame, SessionFrameBody } from './events';

/**
 * What goes on the queue: ids only, never message text or secrets. The job id is the stored user
 * message's id, so a message is queued at most once and a redelivery is recognised.
 */
export interface TurnJob {
  sessionId: string;
  userMessageId: string;
}

export interface TurnContext {
  /** Aborted when the worker shuts down (the job is handed back) — not on user cancel. */
  signal: AbortSignal;
}

export type TurnHandler = (job: TurnJob, context: TurnContext) => Promise<void>;

/** The turn queue: in-process (embedded default) or BullMQ on Redis. At-least-once delivery. */
export interface TurnQueue {
  readonly name: 'in-process' | 'redis';
  enqueue(job: TurnJob): Promise<void>;
  /** Starts consuming jobs with `handler`, at most `concurrency` at a time in this process. */
  consume(handler: TurnHandler, options: { concurrency: number }): void;
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
 * The per-session event log: numbers every frame (seq, per session, strictly increasing), keeps
 * recent frames for replay after a reconnect, and tails them live to any process.
 */
export interface EventLog {
  readonly name: 'in-process' | 'redis';
  append(sessionId: string, body: SessionFrameBody): Promise<SessionFrame>;
  /**
   * Frames with seq > afterSeq. `afterSeq < 0` (a fresh page) means every frame still kept. When the
   * client is ahead of the log (the log restarted and lost its counter), the counter is raised to
   * `afterSeq` so that what follows stays increasing for it.
   */
  replay(sessionId: string, afterSeq: number): Promise<Replay>;
  /** Calls `listener` for every frame appended from now on, from any process. */
  subscribe(sessionId: string, listener: (frame: SessionFrame) => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}

/** Messages from the API side to whoever is running (or showing) a session's turn. */
export type ControlMessage =
  | { kind: 'cancel'; sessionId: string; turnId: string }
  | { kind: 'tool_confirm'; sessionId: string; confirmationId: string; action: string }
  /** A new socket for the session opened (on any process): other sockets for it close with 1001. */
  | { kind: 'takeover'; sessionId: string; connectionId: string };

export interface ControlBus {
  readonly name: 'in-process' | 'redis';
  publish(message: ControlMessage): Promise<void>;
  /** Every message published on any process, including this one. */
  subscribe(listener: (message: ControlMessage) => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}
