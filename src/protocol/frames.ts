/**
 * The frames of the session WebSocket, server→client (spec, Events; decisions.md §3, §5): one
 * vocabulary from the worker to every channel and client. The server, the CLI and the Web UI all
 * import these types; nothing else declares them.
 */
import type { ErrorCode } from './error-codes';

/** Agent states of the spec (States and transitions). */
export const AGENT_STATES = ['idle', 'thinking', 'analyzing', 'researching', 'deep_thinking', 'writing', 'delegating', 'done', 'error'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** The states during which a turn is running (between `thinking` and `done`/`error`/`idle`). */
export const WORKING_STATES: ReadonlySet<AgentState> = new Set<AgentState>(['thinking', 'analyzing', 'researching', 'deep_thinking', 'writing', 'delegating']);

export const TURN_MODES = ['normal', 'think', 'delegate'] as const;
export type TurnMode = (typeof TURN_MODES)[number];

/** The id of the turn an event belongs to (its user message id; decisions.md §3), beside the spec's fields. */
export interface TurnTag {
  turn_id?: string;
}

export interface DonePayload extends TurnTag {
  /** UUID of the stored AI message. */
  message_id: string;
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  /** Wall clock of the turn. */
  duration_ms: number;
  tool_calls: number;
  /** The full assembled response. */
  text: string;
  /** The workflow that answered (its name), or null for the config default (decisions.md §3). */
  workflow?: string | null;
  /** Why that workflow was picked: `metadata`, `contact`, `trigger`, `session` or `default`. */
  routing_reason?: string;
}

/**
 * An approval a policy asks for instead of the requester's confirmation (issue 30), as a
 * `tool_confirm_request` carries it. The `confirmation_id` is the approval's id
 * (`POST /api/v1/approvals/{id}`).
 */
export interface ApprovalProgress {
  /** Who may approve, for people: `role admin, @S0123ABCD (Slack user group)`. */
  approvers: string;
  /** Distinct approvers needed. */
  quorum: number;
  /** Approvers counted so far (the requester's own click never counts unless `self_approval`). */
  approvals: number;
  /** The counted approvers, by name. */
  approved_by: string[];
  /** True once the first timeout passed and `escalate_to` approvers are asked instead. */
  escalated: boolean;
  /** When the wait ends (then it is denied, or escalated once), ISO 8601. */
  expires_at: string;
  /** One line for a chat: `Waiting for approval by role admin (1 of 2)`. */
  text: string;
}

/**
 * The ONE vocabulary from the worker to every channel: exactly the spec's server→client message
 * types of a turn. The worker emits these; the event log numbers them; the WebSocket sends them as
 * they are; Slack and Telegram render them. No channel invents a second vocabulary. Every event of
 * a turn carries `turn_id`; replies to client frames (`TURN_IN_PROGRESS`, …) and the on-connect state do not.
 */
export type AgentEvent =
  | { type: 'token'; payload: TurnTag & { text: string; final: boolean } }
  | { type: 'tool_start'; payload: TurnTag & { tool_name: string; tool_call_id: string; input: Record<string, unknown> } }
  | { type: 'tool_end'; payload: TurnTag & { tool_name: string; tool_call_id: string; duration_ms: number; error: string | null } }
  | {
      type: 'tool_confirm_request';
      payload: TurnTag & {
        confirmation_id: string;
        tool: string;
        parameters: Record<string, unknown>;
        message: string;
        /** The workflow the turn runs (its name; null: the config default), for channels whose confirmation rules differ per workflow. */
        workflow?: string | null;
        /** Present when an approval policy governs the tool (issue 30): who may approve and how far it got; re-sent with the same id as clicks count. */
        approval?: ApprovalProgress;
      };
    }
  /** `answers`: on a turn's first state, the waiting messages it answers besides its own (mid-turn `collect`). */
  | { type: 'agent_state'; payload: TurnTag & { state: AgentState; answers?: string[] } }
  | { type: 'memory_update'; payload: TurnTag & { mode: string; tokens_used: number; summarized: boolean } }
  /** `dropped`: the `CANCELLED` of a waiting chat message deleted on its platform before its turn started. */
  | { type: 'error'; payload: TurnTag & { code: ErrorCode; message: string; dropped?: boolean } }
  | { type: 'done'; payload: DonePayload };

export type AgentEventType = AgentEvent['type'];

/** The answer to a client `ping`: not part of a turn, but numbered like every session frame. */
export interface PongEvent {
  type: 'pong';
  payload: Record<string, never>;
}

/** What the event log stores for a session: turn events and pongs. */
export type SessionFrameBody = AgentEvent | PongEvent;

/** The server→client envelope on the session WebSocket (spec, Events). `seq` is per session. */
export type SessionFrame = SessionFrameBody & { session_id: string; seq: number; ts: string };

/** A frame type's payload, by its `type` (e.g. `FramePayload<'tool_confirm_request'>`). */
export type FramePayload<T extends SessionFrameBody['type']> = Extract<SessionFrameBody, { type: T }>['payload'];

/**
 * Sent to a session socket that a newer connection took over, just before it closes with 1001
 * (decisions.md §8): not part of the session's numbered log (no `seq`), never replayed. A client
 * that receives it does not reconnect (it would take the session back).
 */
export interface SessionTakenOverNotice {
  type: 'session_taken_over';
  session_id: string;
  payload: Record<string, never>;
  ts: string;
}

/** Whether a text frame is the hub's `session_taken_over` notice. */
export function isTakenOverNotice(text: string): boolean {
  if (!text.includes('session_taken_over')) return false;
  try {
    return (JSON.parse(text) as { type?: unknown }).type === 'session_taken_over';
  } catch {
    return false;
  }
}
