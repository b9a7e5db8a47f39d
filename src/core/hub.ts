import type { IncomingMessage } from 'node:http';
import type { Actor } from './actor';
import type { AgentState, ApprovalProgress, SessionFrame } from './events';
import type { ErrorCode } from './errors';
import type { ChannelName, InboundMessage } from './inbound';
import type { Principal, Role } from './principal';
import type { ControlBus, EventLog, PendingConfirmation } from './turns';

/** The outcome of checking a WebSocket upgrade's credential (spec, Authentication rules 3–8). */
export type SocketAuthResult = { ok: true; principal: Principal } | { ok: false; closeCode: 4001 | 4003; reason: string };

/** What a channel needs to know about a session before showing it. */
export interface SessionSummary {
  id: string;
  ownerId: string;
  archived: boolean;
  /** The agent state: `idle` between turns, the working state during one. */
  state: AgentState;
  /** The running turn's id, if one runs. */
  turnId: string | null;
  /** The `tool_confirm_request` the running turn waits for, if any (asked again on reconnect). */
  pendingConfirmation: PendingConfirmation | null;
}

/** What `Hub.ingest` did with a message. */
export interface Ingested {
  sessionId: string;
  /** The stored message's id, which is its turn's id ('' for a duplicate that was never stored). */
  userMessageId: string;
  /** A platform retry of a message already taken in: nothing new was stored or started. */
  duplicate: boolean;
  /** `started`: its turn runs now; `queued`: it waits behind the running turn (the mid-turn policy). */
  disposition: 'started' | 'queued' | 'duplicate';
  /** When it was stored (null for a duplicate). */
  createdAt: Date | null;
}

/**
 * What channel adapters may use of the hub: ingest messages, control turns, read the event log.
 * Adapters translate; everything behind this port (storage, queue, routing, agent) is the hub's.
 */
/**
 * What the channel a click came from can tell about the clicker, asked when the click arrives
 * (issue 30). A channel that knows no groups does not pass one.
 */
export interface ApproverGroups {
  /**
   * Whether the clicker is in the platform group `group` (a Slack user group's id; `chat_admins`: an
   * administrator of the chat the turn runs in). Throws when the platform cannot say: the click is
   * refused (fail-closed).
   */
  isMember(group: string): Promise<boolean>;
}

/** What an approver's click did (issue 30): counted toward the quorum, or decided the approval. */
export interface ConfirmResult {
  approval: { counted: boolean; decided: string | null; progress: ApprovalProgress };
}

export interface Hub {
  /**
   * Stores the message and queues its turn. Chat channels address a session by `sessionKey` (found or
   * created, its contact kept up to date); a repeated `externalId` (a platform retry) makes no second
   * turn and answers `duplicate: true`. A message that arrives while a turn runs follows the
   * channel's mid-turn policy (web: TURN_IN_PROGRESS). Throws AppError (TURN_IN_PROGRESS,
   * SESSION_NOT_FOUND, …).
   */
  ingest(message: InboundMessage): Promise<Ingested>;
  /**
   * A chat message was edited (`text`) or deleted (null) on the platform: while it still waits for
   * its turn its text is replaced, or the turn dropped. False when its turn already started (or it
   * was never taken in).
   */
  amendWaiting(channel: ChannelName, externalId: string, text: string | null): Promise<boolean>;
  /** Cancels the session's running turn. Throws AppError (CONFLICT when none runs). */
  cancelTurn(sessionId: string): Promise<void>;
  /**
   * Answers a `tool_confirm_request`. Throws AppError when none with that id is pending. `actor` is
   * who answered (the web user, the Slack or Telegram contact who pressed the button): the audit
   * trail names them; absent, the answer is recorded as the channel's. When an approval policy
   * governs the tool (issue 30) the click is a vote: throws AppError `FORBIDDEN` (with a note to show
   * the clicker privately) when the actor may not approve, and resolves what the click did. `groups`
   * answers, at click time, which of the platform's groups the clicker belongs to.
   */
  confirmTool(sessionId: string, confirmationId: string, action: string, actor?: Actor, groups?: ApproverGroups): Promise<ConfirmResult | void>;
  findSession(sessionId: string): Promise<SessionSummary | null>;
  /**
   * A client opened the session's stream and was sent `seen` (the replay, if any): the hub appends
   * what it is owed now, numbered like every frame (decisions.md §5) — `agent_state` with the current
   * state (and the running turn's id), then the `tool_confirm_request` still waiting for an answer
   * when `seen` did not include it.
   */
  announceSession(sessionId: string, seen: readonly SessionFrame[]): Promise<void>;
  /**
   * Answers a client frame on the session's stream — `pong` to a ping, or an `error` reply to a frame
   * that was refused (the connection stays open) — numbered in the session log like every frame.
   */
  answerClient(sessionId: string, answer: ClientAnswer): Promise<void>;
  readonly events: EventLog;
  readonly control: ControlBus;
}

/** What the hub writes on a session's stream in answer to a client frame. */
export type ClientAnswer = { type: 'pong' } | { type: 'error'; code: ErrorCode; message: string };

/**
 * How a channel that serves the hub's users on a WebSocket checks an upgrade (ChannelContext):
 * the same credentials as REST, and the subprotocol echo browsers need.
 */
export interface SocketAuth {
  authenticate(request: IncomingMessage, options: { queryToken: boolean; role?: Role }): Promise<SocketAuthResult>;
  /** The subprotocol to echo for an upgrade (`bearer` on the subprotocol path), or false. */
  selectProtocol(protocols: Set<string>, request: IncomingMessage): string | false;
}
