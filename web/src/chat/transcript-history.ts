import type { Message } from '../api/types';
import type { AssistantItem, AssistantPart, ToolCallView } from './transcript';

/** A stored assistant message as a finished bubble: its text, its tool calls, and why its workflow answered. */
export function historyAssistant(message: Message): AssistantItem {
  const parts: AssistantPart[] = message.tool_calls.map((call) => ({ kind: 'tool', call: historyToolCall(call) }));
  if (message.content) parts.unshift({ kind: 'text', text: message.content });
  const routing = message.routing_reason ? { workflow: message.workflow ?? null, reason: message.routing_reason } : null;
  return { kind: 'assistant', id: message.id, turnId: null, parts, streaming: false, done: null, error: null, routing };
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
