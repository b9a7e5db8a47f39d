import type { ToolCall } from '../agent/provider';

/**
 * One tool call as the history shows it (decisions.md §3): the names of the `tool_start`/`tool_end`
 * frames, plus `arguments`, the model's raw JSON (so the call can be given back to the model as it was).
 */
export interface StoredToolCall {
  tool_call_id: string;
  tool_name: string;
  input: Record<string, unknown>;
  output: string | null;
  duration_ms: number | null;
  error: string | null;
  arguments?: string;
}

/** A stored call in either vocabulary (the protocol's, or the provider's of rows stored before it) as the provider's. */
export function toProviderCall(item: unknown): ToolCall {
  const call = item as Partial<StoredToolCall> & Partial<ToolCall>;
  if (call.tool_call_id !== undefined)
    return { id: call.tool_call_id, name: call.tool_name ?? '', arguments: call.arguments ?? JSON.stringify(call.input ?? {}) };
  return { id: call.id ?? '', name: call.name ?? '', arguments: call.arguments ?? '{}' };
}

/** A stored call in the protocol's vocabulary, whichever way it was stored. */
export function toStoredToolCall(item: unknown): StoredToolCall {
  const call = item as Partial<StoredToolCall> & Partial<ToolCall>;
  if (call.tool_call_id !== undefined) {
    return {
      tool_call_id: call.tool_call_id,
      tool_name: call.tool_name ?? '',
      input: call.input ?? {},
      output: call.output ?? null,
      duration_ms: call.duration_ms ?? null,
      error: call.error ?? null,
    };
  }
  let input: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(call.arguments ?? '{}') as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed as Record<string, unknown>;
  } catch {
    // the model's arguments were not JSON: shown as no input
  }
  return { tool_call_id: call.id ?? '', tool_name: call.name ?? '', input, output: null, duration_ms: null, error: null };
}
