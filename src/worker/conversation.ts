import { parseCommand } from '../agent/commands';
import { madeOncePer } from '../core/made-once';
import { messageTokens, type MemoryEntry } from '../agent/memory';
import type { ChatMessage, ToolCall } from '../agent/provider';
import type { ToolOutcome } from '../agent/tool-executor';
import type { MessageRecord, NewMessage } from '../db/turn-store';
import { toProviderCall, type StoredToolCall } from '../sessions/stored-tool-calls';

/** In-chat commands (`/info`, …) and their answers are not conversation: the model never sees them. */
export function isCommand(row: Pick<MessageRecord, 'role' | 'content' | 'metadata'>): boolean {
  return row.metadata?.command === true || (row.role === 'user' && parseCommand(row.content) !== null);
}

/** Each row's entry (null: not conversation), made once per row object: a worker's cached rows are reused turn after turn. */
const entryOf = madeOncePer((row: MessageRecord): MemoryEntry | null => (row.role === 'system' || isCommand(row) ? null : toEntry(row)));

/** The conversation the model sees, oldest first: commands and system notes left out, token counts as stored. */
export function conversationEntries(rows: readonly MessageRecord[]): MemoryEntry[] {
  const entries: MemoryEntry[] = [];
  for (const row of rows) {
    const entry = entryOf(row);
    if (entry) entries.push(entry);
  }
  return entries;
}

function toEntry(row: MessageRecord): MemoryEntry {
  const message = toChatMessage(row);
  return { ordinal: row.ordinal, turnId: row.turn_id ?? row.reply_to ?? null, message, tokens: row.token_count ?? messageTokens(message) };
}

export function toChatMessage(row: Pick<MessageRecord, 'role' | 'content' | 'tool_calls' | 'metadata'>): ChatMessage {
  if (row.role === 'tool') {
    const metadata = row.metadata as { tool_call_id?: string; name?: string };
    return { role: 'tool', toolCallId: metadata.tool_call_id ?? '', name: metadata.name ?? '', content: row.content };
  }
  if (row.role === 'assistant') {
    const calls = (row.tool_calls ?? []).map(toProviderCall);
    return calls.length > 0 ? { role: 'assistant', content: row.content, toolCalls: calls } : { role: 'assistant', content: row.content };
  }
  return { role: 'user', content: row.content };
}

/** One stored call of a round: the call, and its outcome once it ran (none yet: the round started, its calls did not end). */
function storedCall(call: ToolCall, outcome: ToolOutcome | undefined): StoredToolCall {
  return {
    tool_call_id: call.id,
    tool_name: call.name,
    input: outcome?.input ?? parsedArguments(call.arguments),
    output: outcome?.content ?? null,
    duration_ms: outcome?.durationMs ?? null,
    error: outcome?.error ?? null,
    arguments: call.arguments,
  };
}

function parsedArguments(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const ROUND_COMMON = { input_tokens: 0, output_tokens: 0, workflow_id: null, mode: null, reply_to: null, sender: null };

/**
 * The assistant message of a tool round, stored before its calls run (outcomes empty until the
 * round ends), so a turn redelivered after a crash runs these very calls, with the same ids (a
 * side-effecting one that started is not run again), instead of asking the model anew: a model asked
 * again names its calls afresh, and a claim kept by call id would not recognise them.
 */
export function toolCallsMessage(base: Pick<NewMessage, 'session_id' | 'turn_id'>, content: string, calls: ToolCall[], id: string): NewMessage {
  return {
    ...base,
    ...ROUND_COMMON,
    id,
    role: 'assistant',
    content,
    tool_calls: calls.map((call) => storedCall(call, undefined)),
    metadata: {},
    token_count: messageTokens({ role: 'assistant', content, toolCalls: calls }),
  };
}

/** The end of a tool round: each call with its outcome (for the round's assistant message) and one `tool` message per result. */
export function toolResultMessages(
  base: Pick<NewMessage, 'session_id' | 'turn_id'>,
  calls: ToolCall[],
  outcomes: ToolOutcome[],
  newId: () => string,
): { calls: StoredToolCall[]; results: NewMessage[] } {
  const byCall = new Map(outcomes.map((outcome) => [outcome.call.id, outcome]));
  const results = outcomes.map((outcome): NewMessage => ({
    ...base,
    ...ROUND_COMMON,
    id: newId(),
    role: 'tool',
    content: outcome.content,
    tool_calls: [],
    metadata: { tool_call_id: outcome.call.id, name: outcome.call.name, error: outcome.error },
    token_count: messageTokens({ role: 'tool', toolCallId: outcome.call.id, name: outcome.call.name, content: outcome.content }),
  }));
  return { calls: calls.map((call) => storedCall(call, byCall.get(call.id))), results };
}

/** A tool round of this turn that was stored when its calls started and never ended: the worker died meanwhile. */
export interface PendingRound {
  row: MessageRecord;
  calls: ToolCall[];
}

/** The turn's last tool round, when its calls never ended (a round's results are stored at once, so none is there). */
export function pendingToolRound(rows: readonly MessageRecord[], turnId: string): PendingRound | null {
  for (let index = rows.length - 1; index >= 0; index -= 1) {
    const row = rows[index]!;
    if (row.id === turnId) return null; // back at the turn's own message
    if (row.turn_id !== turnId) continue;
    if (row.role === 'tool') return null; // the turn's last round ended
    if (row.role === 'assistant' && (row.tool_calls ?? []).length > 0) return { row, calls: (row.tool_calls ?? []).map(toProviderCall) };
  }
  return null;
}

/**
 * The turn's tool rounds whose results are stored: a redelivered turn ran them already (they count
 * against its limit). Looked for from the end back to the turn's own message, as pendingToolRound does.
 */
export function endedToolRounds(rows: readonly MessageRecord[], turnId: string, pending: PendingRound | null): number {
  let rounds = 0;
  for (let index = rows.length - 1; index >= 0; index -= 1) {
    const row = rows[index]!;
    if (row.id === turnId) break;
    if (row.turn_id === turnId && row.role === 'assistant' && (row.tool_calls ?? []).length > 0 && row !== pending?.row) rounds += 1;
  }
  return rounds;
}

/** What a turn answers and the rows its prompt is made of. */
export interface TurnPlan {
  /** The conversation, each turn's rows together (a reply right after the messages it answers). */
  rows: MessageRecord[];
  /** Waiting messages this turn answers besides its own (older ones always; newer ones under `collect`). */
  merged: MessageRecord[];
  /** The last message this turn answers (the session's `answered_through` moves to it). */
  last: MessageRecord;
  /** Ordinals of waiting messages left for later turns (never folded into the memory summary). */
  waitingOrdinals: number[];
  /** The rows are the stored messages as they were, in their order (nothing left out or regrouped). */
  asStored: boolean;
}

/**
 * Plans a turn when messages arrived while earlier turns ran (the mid-turn policy stored them).
 * Rows are in arrival order, so a reply can come after messages that arrived while it was written:
 * each turn's rows are grouped at the position of the last message it answers. Messages still
 * waiting (`ordinal > answeredThrough`) are answered by this turn when older than it (a recovered
 * backlog) or when `collect`; otherwise they are left out, for their own turns.
 */
export function planTurn(messages: readonly MessageRecord[], answeredThrough: number, current: MessageRecord, collect: boolean): TurnPlan {
  return plainTurn(messages, answeredThrough, current) ?? regroupedTurn(messages, answeredThrough, current, collect);
}

/**
 * The usual turn, planned in one pass without maps: nothing else waits, every user message is a turn
 * of its own, and every other row belongs to the user message just before it (or to no turn). Then
 * each row's position (regroupedTurn's `keyOf`) is that user message's ordinal, or the row's own, and
 * the rows are in order when those never decrease. Null when the turn is not such a one.
 */
function plainTurn(messages: readonly MessageRecord[], answeredThrough: number, current: MessageRecord): TurnPlan | null {
  let lastUser: MessageRecord | null = null;
  let previousKey = -Infinity;
  let currentSeen = false;
  for (const row of messages) {
    let key: number;
    if (row.role === 'user') {
      if (row.turn_id !== row.id || (row !== current && row.ordinal > answeredThrough)) return null;
      currentSeen ||= row === current;
      lastUser = row;
      key = row.ordinal;
    } else {
      const turn = row.turn_id ?? row.reply_to;
      if (!turn) key = row.ordinal;
      else if (lastUser && turn === lastUser.id) key = lastUser.ordinal;
      else return null;
    }
    if (key < previousKey) return null;
    previousKey = key;
  }
  if (!currentSeen) return null;
  return { rows: [...messages], merged: [], last: current, waitingOrdinals: [], asStored: true };
}

/** The plan of any turn: waiting messages merged or left, each turn's rows grouped at its position. */
export function regroupedTurn(messages: readonly MessageRecord[], answeredThrough: number, current: MessageRecord, collect: boolean): TurnPlan {
  const merged: MessageRecord[] = [];
  const left = new Set<string>();
  const waitingOrdinals: number[] = [];
  for (const row of messages) {
    if (row.role !== 'user' || row.ordinal <= answeredThrough || row === current) continue;
    if (row.ordinal < current.ordinal || collect) merged.push(row);
    else {
      left.add(row.id);
      waitingOrdinals.push(row.ordinal);
    }
  }
  const last = merged.reduce((latest, row) => (row.ordinal > latest.ordinal ? row : latest), current);
  // A turn's position: the last user message it answers.
  const position = new Map<string, number>();
  for (const row of messages) {
    if (row.role === 'user' && row.turn_id) position.set(row.turn_id, Math.max(position.get(row.turn_id) ?? 0, row.ordinal));
  }
  position.set(current.id, last.ordinal);
  const ours = new Set([current.id, ...merged.map((row) => row.id)]);
  const keyOf = (row: MessageRecord) => (ours.has(row.id) ? last.ordinal : (position.get(row.turn_id ?? row.reply_to ?? '') ?? row.ordinal));
  const kept = left.size > 0 ? messages.filter((row) => !left.has(row.id)) : [...messages];
  let ordered = true;
  for (let index = 1; index < kept.length && ordered; index += 1) ordered = keyOf(kept[index - 1]!) <= keyOf(kept[index]!);
  const rows = ordered
    ? kept
    : kept
        .map((row) => ({ row, key: keyOf(row) }))
        .sort((a, b) => a.key - b.key || a.row.ordinal - b.row.ordinal)
        .map(({ row }) => row);
  return { rows, merged, last, waitingOrdinals, asStored: ordered && left.size === 0 };
}
