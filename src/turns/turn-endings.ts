import { CANCELLED_CALL_ERROR } from '../agent/tool-executor';
import type { ErrorCode } from '../core/errors';
import type { AgentEvent, DonePayload } from '../core/events';
import type { MessageRecord } from '../db/turn-store';

/** A tool call whose `tool_start` went out and whose `tool_end` did not, when its turn ends. */
export interface OpenToolCall {
  toolCallId: string;
  toolName: string;
  /** Since its `tool_start`. */
  durationMs: number;
}

/** The codes a failed turn ends with: provider failures by name, a refused budget, anything else generic. */
export type FailureCode = Extract<ErrorCode, 'PROVIDER_UNREACHABLE' | 'PROVIDER_ERROR' | 'INTERNAL_ERROR' | 'BUDGET_EXCEEDED'>;

/**
 * How a turn ends. src/turns is the one writer of the frames each ending is made of (endingFrames);
 * TurnOutcomeTracker (src/core/follow-turn.ts) is their one reader, and test/turns/turn-endings.test.ts
 * runs every ending through both.
 */
export type TurnEnding =
  /** Answered: the reply is stored (`memory`: the rolling summary changed with it). */
  | { kind: 'done'; done: DonePayload; memory?: { mode: string; tokensUsed: number; summarized: boolean } }
  /** The client cancelled it (running or still queued). */
  | { kind: 'cancelled' }
  /** An unrecoverable error ended it (the model provider, a daily budget, anything else). */
  | { kind: 'failed'; code: FailureCode; message: string }
  /** The queue gave its job up: it kept failing, or the workers running it kept dying. */
  | { kind: 'given_up' }
  /** A waiting chat message deleted on its platform before its turn started: no turn, no answer. */
  | { kind: 'dropped' };

const CANCELLED_MESSAGE = 'The turn was cancelled.';
const DROPPED_MESSAGE = 'The message was deleted before its turn started.';
const INTERNAL_FAILURE = { code: 'INTERNAL_ERROR', message: 'The agent failed: an internal error occurred.' } as const;

/**
 * The frames that end a turn, in order (the spec's endings): `done` is `agent_state done`, then
 * `done` (a `memory_update` before them when memory changed); a cancel is `agent_state idle`, then
 * `error CANCELLED`, no `done`; a failure is `error`, `agent_state error`, `agent_state idle`. Tool
 * calls still open are closed first (`tool_end`, their error the cancel's or the failure's code), so
 * every `tool_start` of a turn has its `tool_end`.
 */
export function endingFrames(ending: TurnEnding, openCalls: readonly OpenToolCall[] = []): AgentEvent[] {
  switch (ending.kind) {
    case 'done':
      return [
        ...(ending.memory ? [memoryUpdate(ending.memory)] : []),
        { type: 'agent_state', payload: { state: 'done' } },
        { type: 'done', payload: ending.done },
      ];
    case 'cancelled':
      return [
        // The same `error` as the cancelled calls' stored outcomes (decisions.md §8).
        ...closeCalls(openCalls, CANCELLED_CALL_ERROR),
        { type: 'agent_state', payload: { state: 'idle' } },
        { type: 'error', payload: { code: 'CANCELLED', message: CANCELLED_MESSAGE } },
      ];
    case 'failed':
      return [...closeCalls(openCalls, ending.code), ...failureFrames(ending.code, ending.message)];
    case 'given_up':
      return failureFrames(INTERNAL_FAILURE.code, INTERNAL_FAILURE.message);
    case 'dropped':
      return [{ type: 'error', payload: { code: 'CANCELLED', message: DROPPED_MESSAGE, dropped: true } }];
    default:
      return unknownEnding(ending);
  }
}

/** The `done` payload of a stored reply; `facts` that the reply does not keep come from the turn that ran. */
export function donePayload(
  reply: MessageRecord,
  facts: { durationMs: number; toolCalls: number; workflow?: string | null; routingReason?: string },
): DonePayload {
  const metadata = reply.metadata ?? {};
  return {
    message_id: reply.id,
    total_tokens: reply.input_tokens + reply.output_tokens,
    input_tokens: reply.input_tokens,
    output_tokens: reply.output_tokens,
    duration_ms: facts.durationMs,
    tool_calls: facts.toolCalls,
    text: reply.content,
    workflow: facts.workflow !== undefined ? facts.workflow : ((metadata.workflow as string | null | undefined) ?? null),
    routing_reason: facts.routingReason ?? (metadata.routing_reason as string | undefined) ?? (metadata.command ? 'command' : 'session'),
  };
}

function failureFrames(code: ErrorCode, message: string): AgentEvent[] {
  return [
    { type: 'error', payload: { code, message } },
    { type: 'agent_state', payload: { state: 'error' } },
    { type: 'agent_state', payload: { state: 'idle' } },
  ];
}

function closeCalls(openCalls: readonly OpenToolCall[], error: string): AgentEvent[] {
  return openCalls.map((call) => ({
    type: 'tool_end',
    payload: { tool_name: call.toolName, tool_call_id: call.toolCallId, duration_ms: call.durationMs, error },
  }));
}

function memoryUpdate(memory: { mode: string; tokensUsed: number; summarized: boolean }): AgentEvent {
  return { type: 'memory_update', payload: { mode: memory.mode, tokens_used: memory.tokensUsed, summarized: memory.summarized } };
}

function unknownEnding(ending: never): never {
  throw new Error(`unknown turn ending ${JSON.stringify(ending)}`);
}
