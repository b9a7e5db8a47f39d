import type { SessionFrame } from '../../../src/protocol/frames';
import type { Message } from '../api/types';
import type { AssistantItem, AssistantPart, ToolCallView, Transcript } from './transcript';

/** A stored assistant message as a finished bubble: its text, its tool calls, and why its workflow answered. */
export function historyAssistant(message: Message): AssistantItem {
  const parts: AssistantPart[] = message.tool_calls.map((call) => ({ kind: 'tool', call: historyToolCall(call) }));
  if (message.content) parts.unshift({ kind: 'text', text: message.content });
  const routing = message.routing_reason ? { workflow: message.workflow ?? null, reason: message.routing_reason } : null;
  return { kind: 'assistant', id: message.id, turnId: null, parts, streaming: false, done: null, error: null, routing, replyTo: message.reply_to ?? null };
}

/**
 * A stored tool call in the protocol's vocabulary (`tool_call_id`, `tool_name`, `input`, `error`,
 * `duration_ms`), or in the provider's (`id`, `name`, `arguments`) that older hubs stored.
 */
function historyToolCall(call: Message['tool_calls'][number]): ToolCallView {
  let input = call.input as Record<string, unknown> | undefined;
  if (!input && typeof call.arguments === 'string') {
    try {
      input = JSON.parse(call.arguments) as Record<string, unknown>;
    } catch {
      input = { arguments: call.arguments };
    }
  }
  const knowsOutcome = 'error' in call || 'duration_ms' in call;
  return {
    id: call.tool_call_id ?? call.id ?? '',
    name: call.tool_name ?? call.name ?? 'tool',
    input: input ?? {},
    status: !knowsOutcome ? 'called' : call.error ? 'error' : 'ok',
    durationMs: call.duration_ms ?? null,
    error: call.error ?? null,
  };
}

/** Frames that build a reply's content (the ones a stored reply may already hold). */
const CONTENT_FRAMES = new Set<SessionFrame['type']>(['token', 'tool_start', 'tool_end', 'error']);

/**
 * A turn's frames arriving for a reply the history already shows (a reload during a confirmation,
 * or soon after a turn ended: the replay buffer sends the turn again): the stored bubble becomes the
 * turn's live one, instead of a second bubble beside it. `stored` keeps the text replayed tokens
 * repeat (they are consumed, not appended); tool calls match by id; an ending (cancelled, failed) is shown on it.
 */
export function adoptStoredReply(state: Transcript, frame: SessionFrame): Transcript {
  if (!CONTENT_FRAMES.has(frame.type) || frame.type === 'pong') return state;
  const turnId = frame.payload.turn_id;
  if (!turnId || state.items.some((item) => item.kind === 'assistant' && item.turnId === turnId)) return state;
  // The stored reply of the turn: named by `reply_to`, else (older hubs) the bubble right after the question.
  let index = state.items.findIndex((item) => item.kind === 'assistant' && item.replyTo === turnId);
  if (index === -1) {
    const userIndex = state.items.findIndex((item) => item.kind === 'user' && item.id === turnId);
    index = userIndex === -1 ? -1 : userIndex + 1;
  }
  const stored = index === -1 ? undefined : state.items[index];
  if (stored?.kind !== 'assistant' || stored.turnId !== null || stored.done) return state;
  const items = [...state.items];
  const text = stored.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
  items[index] = { ...stored, turnId, streaming: true, stored: { pending: text } };
  return { ...state, items };
}

/**
 * A token for an adopted bubble (the replay repeats the turn from its start): consumed while it
 * repeats the stored text; the first new text ends the matching (it and every later token are
 * appended as usual). `consumed` false: show the token.
 */
export function echoOfStoredText(state: Transcript, text: string, turnId: string | null): { state: Transcript; consumed: boolean } {
  const index = state.items.findIndex((item) => item.kind === 'assistant' && item.stored && item.turnId === turnId);
  if (index === -1) return { state, consumed: false };
  const item = state.items[index] as AssistantItem;
  const pending = item.stored!.pending;
  const items = [...state.items];
  const repeats = pending.startsWith(text);
  items[index] = { ...item, stored: repeats && pending.length > text.length ? { pending: pending.slice(text.length) } : undefined };
  return { state: { ...state, items }, consumed: repeats };
}
