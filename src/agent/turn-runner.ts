import type { AgentEvent, TurnMode } from '../core/events';
import type { ChatMessage, LlmProvider } from './provider';
import { countTokens } from './tokens';

export interface TurnRequest {
  mode: TurnMode;
  /** The conversation so far, oldest first, ending with the user message of this turn. */
  messages: ChatMessage[];
  systemPrompt: string;
}

export interface TurnResult {
  text: string;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
}

export type Emit = (event: AgentEvent) => Promise<void>;

/**
 * Runs the model part of one turn and emits its events: `writing` before the first token, then one
 * `token` per streamed piece. The worker owns the rest of the state machine (thinking at start,
 * done/error at the end) and storing the result. Modes other than `normal` land with the full agent.
 */
export async function runTurn(request: TurnRequest, provider: LlmProvider, emit: Emit, signal: AbortSignal): Promise<TurnResult> {
  if (request.mode !== 'normal') throw new Error(`mode ${request.mode} is not implemented`);
  const messages: ChatMessage[] = [{ role: 'system', content: request.systemPrompt }, ...request.messages];
  let text = '';
  let usage: { inputTokens: number; outputTokens: number } | null = null;
  let writing = false;
  for await (const chunk of provider.stream({ messages, signal })) {
    signal.throwIfAborted();
    if (chunk.type === 'usage') {
      usage = { inputTokens: chunk.inputTokens, outputTokens: chunk.outputTokens };
      continue;
    }
    if (chunk.type === 'tool_call') throw new Error('tool calls are not handled by this runner yet');
    if (!writing) {
      writing = true;
      await emit({ type: 'agent_state', payload: { state: 'writing' } });
    }
    text += chunk.text;
    // `final` is meaningful only once tool calls happened; with none it stays false (spec).
    await emit({ type: 'token', payload: { text: chunk.text, final: false } });
  }
  signal.throwIfAborted();
  if (!writing) await emit({ type: 'agent_state', payload: { state: 'writing' } });
  return {
    text,
    // A provider that reports no usage is counted here, with the same tokenizer.
    inputTokens: usage?.inputTokens ?? messages.reduce((sum, message) => sum + countTokens('content' in message ? message.content : ''), 0),
    outputTokens: usage?.outputTokens ?? countTokens(text),
    toolCalls: 0,
  };
}
