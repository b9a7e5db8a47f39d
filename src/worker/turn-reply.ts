import { randomUUID } from 'node:crypto';
import type { Compaction } from '../agent/memory';
import type { TurnState } from '../agent/model-loop';
import type { WorkflowRow } from '../db/models';
import type { MessageRecord, SessionRecord } from '../db/turn-store';
import type { RouteDecision } from '../routing/router';
import type { TurnRecord } from '../turns/turn-lifecycle';
import type { TurnPlan } from './conversation';
import { messagesAfter } from './conversation-cache';

/** What a turn produced, ready to be stored. */
export interface TurnResult {
  text: string;
  /** Tokens of `text`, counted once. */
  tokens: number;
  /** An in-chat command answered it (not the model). */
  command: boolean;
  routing: { decision: RouteDecision; workflow: WorkflowRow | null } | null;
  compaction: Compaction | null;
}

/** A turn that ran, as the stored reply needs it. */
export interface AnsweredTurn {
  session: SessionRecord;
  userMessage: MessageRecord;
  plan: TurnPlan;
  state: TurnState;
  result: TurnResult;
  /** A newer message steered it: it ended at a boundary, and what it said is its answer. */
  steered: boolean;
}

/**
 * How the turn's end is stored (one transaction): its reply, the session's totals, the messages it
 * answered (a `collect` turn answers several), the workflow it routed to and the rolling summary.
 */
export function replyRecord(turn: AnsweredTurn): TurnRecord {
  const { session, userMessage, plan, state, result } = turn;
  return {
    answeredThrough: plan.last.id,
    merged: plan.merged.map((row) => row.id),
    reply: {
      id: randomUUID(),
      session_id: session.id,
      role: 'assistant',
      content: result.text,
      tool_calls: [],
      input_tokens: state.usage.inputTokens,
      output_tokens: state.usage.outputTokens,
      token_count: result.tokens,
      workflow_id: result.routing?.decision.workflowId ?? session.active_workflow_id,
      mode: userMessage.mode,
      metadata: result.command
        ? { command: true }
        : {
            tool_calls: state.calls,
            workflow: result.routing?.workflow?.name ?? null,
            routing_reason: result.routing?.decision.reason ?? null,
            ...(turn.steered ? { steered: true } : {}),
          },
      reply_to: userMessage.id,
      turn_id: userMessage.id,
      sender: null,
    },
    usage: state.usage,
    activeWorkflowId: result.routing ? result.routing.decision.workflowId : undefined,
    memory: result.compaction ? { summary: result.compaction.summary, through: result.compaction.through } : undefined,
  };
}

/**
 * The conversation a worker keeps for the session's next turn (its reply included), or null when it
 * must read afresh: when this turn stored more than its reply (tool rounds, tool settings), when its
 * rows are not the stored order, or when messages arrived meanwhile (the next turn plans its rows anew).
 */
export function keptConversation(
  turn: AnsweredTurn,
  messages: readonly MessageRecord[],
  reply: MessageRecord,
  messagesWaited: boolean,
): MessageRecord[] | null {
  const { state, result, plan, session } = turn;
  if (state.calls > 0 || result.command || !plan.asStored || messagesWaited) return null;
  const through = result.compaction?.through ?? session.memory_through ?? 0;
  return [...messagesAfter(messages, through), reply];
}
