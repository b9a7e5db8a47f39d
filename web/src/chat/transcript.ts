import { WORKING_STATES, type AgentState, type DonePayload, type SessionFrame } from '../../../src/protocol/frames';
import { saysNoTurnRuns, TurnOutcomeTracker } from '../../../src/protocol/turn-outcome';
import type { Message } from '../api/types';
import { adoptStoredReply, echoOfStoredText, historyAssistant } from './transcript-history';
import { describeError } from './transcript-labels';
import { movedOn, NO_QUESTIONS, onConfirmClosed, onConfirmRequest, type ConfirmState } from './confirm-state';
import { nextWaiting, type WaitingTurn } from './waiting-turn';

export { describeError, STATE_LABELS } from './transcript-labels';

export interface ToolCallView {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** `called`: from history that does not record the outcome (hubs before tool_calls carried it). */
  status: 'running' | 'ok' | 'error' | 'called';
  durationMs: number | null;
  error: string | null;
}

export type AssistantPart = { kind: 'text'; text: string } | { kind: 'tool'; call: ToolCallView };

export interface UserItem {
  kind: 'user';
  /** The stored message id (the turn id); a `local-…` id until the hub answered. */
  id: string;
  text: string;
  pending: boolean;
  /** From the history: the turn that answers it (its own id, or the collecting turn it was merged into). */
  turnId?: string;
  /** Stored, but its turn has not started: it waits behind the running turn (chat channels' mid-turn `queue`/`collect`). */
  queued?: boolean;
}

export interface AssistantItem {
  kind: 'assistant';
  /** The stored message id once known (history or `done`), else a key for the turn. */
  id: string;
  turnId: string | null;
  parts: AssistantPart[];
  streaming: boolean;
  done: DonePayload | null;
  error: { code: string; message: string } | null;
  /** From history (where `done` is not kept): the workflow that answered and why, as stored with the reply. */
  routing?: { workflow: string | null; reason: string } | null;
  /** From the history: the turn (user message id) this reply answers. */
  replyTo?: string | null;
  /** Built from the history, then followed live (transcript-history.ts): the stored text replayed tokens have not yet repeated. */
  stored?: { pending: string };
}

export interface NoticeItem {
  kind: 'notice';
  id: string;
  tone: 'error' | 'info';
  text: string;
}

export type TranscriptItem = UserItem | AssistantItem | NoticeItem;

/** `confirm`, `asked`, `approvalWaiting`: the questions (confirm-state.ts). */
export interface Transcript extends ConfirmState {
  items: TranscriptItem[];
  agentState: AgentState;
  /** A turn is running: between `thinking` and `done` / `idle`. */
  running: boolean;
  memory: { mode: string; tokens_used: number; summarized: boolean } | null;
  /**
   * How far each turn not yet over has got, by turn id ('' for frames that name none): the
   * protocol's reducer (src/protocol/turn-outcome.ts), the one the hub and the CLI follow turns
   * with, decides when a turn ended. Each step keeps a copy, so the state stays immutable.
   */
  turns: Readonly<Record<string, TurnOutcomeTracker>>;
  /** A sent message whose turn no worker has started yet (waiting-turn.ts); null otherwise. */
  waiting: WaitingTurn | null;
}

export const emptyTranscript: Transcript = { items: [], agentState: 'idle', running: false, ...NO_QUESTIONS, memory: null, turns: {}, waiting: null };

export type TranscriptAction =
  | { type: 'history'; messages: Message[] }
  /** `replayed`: sent before this connection opened (the replay buffer), not live. */
  | { type: 'frame'; frame: SessionFrame; replayed?: boolean }
  | { type: 'user_sending'; localId: string; text: string }
  | { type: 'user_sent'; localId: string; message: Message }
  | { type: 'user_failed'; localId: string }
  | { type: 'notice'; tone: 'error' | 'info'; text: string }
  | { type: 'confirm_answered' };

/** The conversation as the chat page shows it: history, then the live turn built from frames. */
export function transcriptReducer(state: Transcript, action: TranscriptAction): Transcript {
  const waiting = nextWaiting(state, action);
  return waiting === state.waiting ? reduce(state, action) : { ...reduce(state, action), waiting };
}

function reduce(state: Transcript, action: TranscriptAction): Transcript {
  switch (action.type) {
    case 'history':
      return mergeHistory(state, action.messages);
    case 'frame':
      return applyFrame(state, action.frame, action.replayed ?? false);
    case 'user_sending':
      return { ...state, items: [...state.items, { kind: 'user', id: action.localId, text: action.text, pending: true }] };
    case 'user_sent':
      return {
        ...state,
        items: state.items.map((item) => (item.kind === 'user' && item.id === action.localId ? { ...item, id: action.message.id, pending: false } : item)),
      };
    case 'user_failed':
      return { ...state, items: state.items.filter((item) => !(item.kind === 'user' && item.id === action.localId)) };
    case 'notice':
      return { ...state, items: [...state.items, { kind: 'notice', id: `notice-${state.items.length}-${Date.now()}`, tone: action.tone, text: action.text }] };
    case 'confirm_answered':
      return onConfirmClosed(state);
  }
}

/**
 * History from REST, oldest first; each reply placed under the question(s) of its turn (a reply is
 * stored after the messages that queued while it ran). Live items not yet stored (a running turn) stay after it.
 */
function mergeHistory(state: Transcript, messages: Message[]): Transcript {
  const stored = new Set(messages.map((message) => message.id));
  const fromHistory = repliesUnderTheirTurns(historyItems(messages));
  const live = state.items.filter((item) => {
    if (item.kind === 'user') return !stored.has(item.id);
    if (item.kind === 'assistant') return !stored.has(item.id) && !(item.done && stored.has(item.done.message_id));
    return true;
  });
  return { ...state, items: [...fromHistory, ...live] };
}

function historyItems(messages: Message[]): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      const turnId = message.turn_id ?? message.id;
      items.push({ kind: 'user', id: message.id, text: message.content, pending: false, turnId, queued: message.status === 'waiting' });
    } else if (message.role === 'assistant') {
      // A turn stores one message per tool round plus the reply: shown as one bubble, as it streamed.
      const previous = items.at(-1);
      const item = historyAssistant(message);
      if (previous?.kind === 'assistant' && (previous.replyTo ?? null) === (item.replyTo ?? null))
        items[items.length - 1] = { ...item, parts: [...previous.parts, ...item.parts], routing: item.routing ?? previous.routing };
      else items.push(item);
    } else if (message.role === 'system') items.push({ kind: 'notice', id: message.id, tone: 'info', text: message.content });
  }
  return items;
}

/** Moves each reply right after the last question of its turn (when the page holds it). */
function repliesUnderTheirTurns(items: TranscriptItem[]): TranscriptItem[] {
  const placed = items.filter((item) => !(item.kind === 'assistant' && item.replyTo && lastOfTurn(items, item.replyTo) !== -1));
  for (const item of items) {
    if (item.kind !== 'assistant' || !item.replyTo || placed.includes(item)) continue;
    placed.splice(lastOfTurn(placed, item.replyTo) + 1, 0, item);
  }
  return placed;
}

/** The index of the newest user item a turn answers (its own message, or one merged into it); -1 when none. */
function lastOfTurn(items: TranscriptItem[], turnId: string): number {
  return items.findLastIndex((item) => item.kind === 'user' && (item.id === turnId || item.turnId === turnId));
}

/** A turn's frame says it started (or ended): the messages it answers no longer wait. */
function unqueue(items: TranscriptItem[], frame: SessionFrame): TranscriptItem[] {
  if (frame.type === 'pong' || !frame.payload.turn_id) return items;
  const turnId = frame.payload.turn_id;
  const answers = new Set(frame.type === 'agent_state' ? (frame.payload.answers ?? []) : []);
  const answered = (item: UserItem) => item.id === turnId || item.turnId === turnId || answers.has(item.id);
  if (!items.some((item) => item.kind === 'user' && item.queued && answered(item))) return items;
  // A message merged into the turn (`answers`) belongs to it from now on: its reply goes under it.
  return items.map((item) =>
    item.kind === 'user' && item.queued && answered(item) ? { ...item, queued: false, turnId: answers.has(item.id) ? turnId : item.turnId } : item,
  );
}

function applyFrame(state: Transcript, frame: SessionFrame, replayed: boolean): Transcript {
  const { turns, endedWithoutDone } = trackTurn(state.turns, frame);
  state = { ...state, items: unqueue(state.items, frame) };
  state = adoptStoredReply(state, frame);
  if (frame.type === 'token') {
    const echo = echoOfStoredText(state, frame.payload.text, frame.payload.turn_id ?? null);
    if (echo.consumed) return { ...echo.state, turns };
    state = echo.state;
  }
  if (state.approvalWaiting && movedOn(frame)) state = { ...state, approvalWaiting: null };
  // A turn that ended without `done` (cancelled, failed) stops streaming before its last frame
  // shows; `done` completes its reply below.
  return showFrame({ ...state, turns, items: endedWithoutDone ? endStreaming(state.items) : state.items }, frame, replayed);
}

/**
 * Feeds a frame to its turn's outcome tracker (a copy); a turn whose frames say it ended is
 * dropped, and all of them when the hub says no turn runs.
 */
function trackTurn(turns: Transcript['turns'], frame: SessionFrame): { turns: Transcript['turns']; endedWithoutDone: boolean } {
  if (frame.type === 'pong') return { turns, endedWithoutDone: false };
  const key = frame.payload.turn_id ?? '';
  const tracker = (turns[key] ?? new TurnOutcomeTracker()).copy();
  const outcome = tracker.next(frame);
  if (saysNoTurnRuns(frame)) return { turns: {}, endedWithoutDone: outcome !== null && outcome.kind !== 'done' };
  if (!outcome) return { turns: { ...turns, [key]: tracker }, endedWithoutDone: false };
  return { turns: Object.fromEntries(Object.entries(turns).filter(([turnKey]) => turnKey !== key)), endedWithoutDone: outcome.kind !== 'done' };
}

/** What a frame changes in the conversation and the indicators. */
function showFrame(state: Transcript, frame: SessionFrame, replayed: boolean): Transcript {
  switch (frame.type) {
    case 'agent_state': {
      const agentState = frame.payload.state;
      const running = WORKING_STATES.has(agentState);
      if (agentState === 'idle') {
        // Nothing runs, so nothing waits for an answer. The hub's on-connect state naming no turn
        // says no turn runs at all: a reply still streaming ended out of sight (its text is in the history).
        return { ...state, agentState, running: false, confirm: null, items: saysNoTurnRuns(frame) ? endStreaming(state.items) : state.items };
      }
      return { ...state, agentState, running: running || (state.running && agentState !== 'done' && agentState !== 'error') };
    }
    case 'token':
      return withLiveTurn(state, frame.payload.turn_id ?? null, (item) => {
        const parts = [...item.parts];
        const last = parts.at(-1);
        if (last?.kind === 'text') parts[parts.length - 1] = { kind: 'text', text: last.text + frame.payload.text };
        else parts.push({ kind: 'text', text: frame.payload.text });
        return { ...item, parts };
      });
    case 'tool_start':
      return withLiveTurn(state, frame.payload.turn_id ?? null, (item) => {
        if (item.parts.some((part) => part.kind === 'tool' && part.call.id === frame.payload.tool_call_id)) return item;
        const call: ToolCallView = {
          id: frame.payload.tool_call_id,
          name: frame.payload.tool_name,
          input: frame.payload.input ?? {},
          status: 'running',
          durationMs: null,
          error: null,
        };
        return { ...item, parts: [...item.parts, { kind: 'tool', call }] };
      });
    case 'tool_end':
      return withLiveTurn(state, frame.payload.turn_id ?? null, (item) => {
        const payload = frame.payload;
        const known = item.parts.some((part) => part.kind === 'tool' && part.call.id === payload.tool_call_id);
        const ended: ToolCallView = {
          id: payload.tool_call_id,
          name: payload.tool_name,
          input: {},
          status: payload.error ? 'error' : 'ok',
          durationMs: payload.duration_ms,
          error: payload.error,
        };
        const parts: AssistantPart[] = known
          ? item.parts.map((part) =>
              part.kind === 'tool' && part.call.id === payload.tool_call_id
                ? { kind: 'tool', call: { ...part.call, status: ended.status, durationMs: ended.durationMs, error: ended.error } }
                : part,
            )
          : [...item.parts, { kind: 'tool', call: ended }];
        return { ...item, parts };
      });
    case 'tool_confirm_request':
      return onConfirmRequest(state, frame.payload);
    case 'memory_update':
      return { ...state, memory: { mode: frame.payload.mode, tokens_used: frame.payload.tokens_used, summarized: frame.payload.summarized } };
    case 'error': {
      // Not an ending: the turn waits in the queue, shown as waiting (waiting-turn.ts), never as a lasting error.
      if (frame.payload.code === 'WORKER_UNAVAILABLE') return state;
      const error = { code: frame.payload.code, message: frame.payload.message };
      const live = liveIndex(state.items, frame.payload.turn_id ?? null);
      // A replayed error of a turn that is already over (its reply is in the history) is old news.
      if (live === -1 && replayed) return state;
      if (live === -1) return { ...state, items: [...state.items, { kind: 'notice', id: `error-${frame.seq}`, tone: 'error', text: describeError(error) }] };
      const items = [...state.items];
      items[live] = { ...(items[live] as AssistantItem), error };
      return { ...state, items };
    }
    case 'done': {
      const done = frame.payload;
      // Replayed after a reload: the reply is already in the history; drop the rebuilt copy.
      if (state.items.some((item) => item.kind === 'assistant' && item.id === done.message_id && !item.streaming)) {
        return {
          ...state,
          agentState: 'idle',
          running: false,
          confirm: null,
          items: state.items.filter((item) => !(item.kind === 'assistant' && item.streaming)),
        };
      }
      const next = withLiveTurn(state, done.turn_id ?? null, (item) => {
        const hasText = item.parts.some((part) => part.kind === 'text' && part.text !== '');
        const parts: AssistantPart[] = hasText || !done.text ? item.parts : [...item.parts, { kind: 'text', text: done.text }];
        return { ...item, id: done.message_id, parts, streaming: false, done };
      });
      // The turn is over: the indicator goes back to Ready (the hub sends `idle` only on the next connect).
      return { ...next, agentState: 'idle', running: false, confirm: null };
    }
    case 'pong':
      return state;
  }
}

/** The assistant item of the running turn: the newest streaming one (same turn id when both know it). */
function liveIndex(items: TranscriptItem[], turnId: string | null): number {
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index]!;
    if (item.kind === 'assistant' && item.streaming && (turnId === null || item.turnId === null || item.turnId === turnId)) return index;
    if (item.kind === 'user' && turnId === null) break; // a newer user message starts a new turn
  }
  return -1;
}

function withLiveTurn(state: Transcript, turnId: string | null, change: (item: AssistantItem) => AssistantItem): Transcript {
  const index = liveIndex(state.items, turnId);
  const items = [...state.items];
  if (index === -1) {
    const fresh: AssistantItem = { kind: 'assistant', id: `turn-${turnId ?? items.length}`, turnId, parts: [], streaming: true, done: null, error: null };
    // With a turn id, the reply goes right after its user message(s) (a replay may arrive after later items).
    const userIndex = turnId ? lastOfTurn(items, turnId) : -1;
    if (userIndex !== -1) items.splice(userIndex + 1, 0, change(fresh));
    else items.push(change(fresh));
  } else {
    items[index] = change(items[index] as AssistantItem);
  }
  return { ...state, items };
}

function endStreaming(items: TranscriptItem[]): TranscriptItem[] {
  return items.map((item) =>
    item.kind === 'assistant' && item.streaming
      ? {
          ...item,
          streaming: false,
          parts: item.parts.map((part) =>
            part.kind === 'tool' && part.call.status === 'running'
              ? { kind: 'tool', call: { ...part.call, status: 'error', error: part.call.error ?? 'stopped' } }
              : part,
          ),
        }
      : item,
  );
}
