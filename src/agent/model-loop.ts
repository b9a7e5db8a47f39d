import type { ChatMessage, LlmProvider, ToolCall } from './provider';
import { messageTokens } from './memory';
import { countTokens } from './tokens';
import type { ToolBox } from './tool-box';
import { executeToolCalls, type ToolOutcome, type ToolTurnPorts, type ToolTurnState } from './tool-executor';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** State shared by every model call of one turn. */
export interface TurnState extends ToolTurnState {
  /** `token.final` is true once the turn has seen a tool call (spec). */
  toolCallSeen: boolean;
  /** `agent_state writing` was sent. */
  writing: boolean;
  usage: Usage;
}

export interface LoopPorts extends ToolTurnPorts {
  /**
   * Aborted when a newer message steers the turn: the loop ends at its next boundary (after the
   * model call or tool round under way), and what was said so far is the answer.
   */
  readonly steered?: AbortSignal;
  /** Stores an assistant round that called tools, and each tool result (the turn can resume from them). */
  recordToolRound(content: string, calls: ToolCall[], outcomes: ToolOutcome[]): Promise<void>;
}

export interface LoopRequest {
  provider: LlmProvider;
  messages: ChatMessage[];
  tools: ToolBox | null;
  /** Stream `token` events (the writing phase) or only collect the text (analysis, research). */
  stream: boolean;
  maxRounds: number;
  /** Tokens of `messages`, when the caller knows them (stored counts): used when the provider reports no usage. */
  inputTokens?: number;
}

export function newTurnState(): TurnState {
  return { forbidden: false, calls: 0, toolCallSeen: false, writing: false, usage: { inputTokens: 0, outputTokens: 0 } };
}

/**
 * Calls the model until it answers without tool calls: each round's tool calls are executed and
 * their results fed back. Past `maxRounds` the model is asked once more without tools, so a turn
 * always ends. Returns the text of every round.
 */
export async function runModelLoop(request: LoopRequest, ports: LoopPorts, state: TurnState): Promise<string> {
  const messages = [...request.messages];
  let inputTokens = request.inputTokens;
  let text = '';
  for (let round = 0; ; round += 1) {
    const offerTools = request.tools !== null && round < request.maxRounds;
    const { text: roundText, calls } = await callModel(request.provider, messages, offerTools ? request.tools : null, request.stream, ports, state, inputTokens);
    text += roundText;
    // Steered after the model spoke: its tool calls are not run.
    if (calls.length === 0 || ports.steered?.aborted) return text;
    state.toolCallSeen = true;
    const outcomes = await executeToolCalls(calls, request.tools!, ports, state);
    ports.signal.throwIfAborted();
    await ports.recordToolRound(roundText, calls, outcomes);
    if (ports.steered?.aborted) return text;
    const added: ChatMessage[] = [
      { role: 'assistant', content: roundText, toolCalls: calls },
      ...outcomes.map((outcome): ChatMessage => ({ role: 'tool', toolCallId: outcome.call.id, name: outcome.call.name, content: outcome.content })),
    ];
    messages.push(...added);
    if (inputTokens !== undefined) inputTokens += added.reduce((sum, message) => sum + messageTokens(message), 0);
  }
}

/** One model call: streams (or collects) its text, returns its tool calls, adds its usage. */
export async function callModel(
  provider: LlmProvider,
  messages: ChatMessage[],
  tools: ToolBox | null,
  stream: boolean,
  ports: Pick<LoopPorts, 'emit' | 'signal'>,
  state: TurnState,
  knownInputTokens?: number,
): Promise<{ text: string; calls: ToolCall[] }> {
  let text = '';
  const calls: ToolCall[] = [];
  let usage: Usage | null = null;
  const specs = tools?.specs() ?? [];
  for await (const chunk of provider.stream({ messages, tools: specs.length > 0 ? specs : undefined, signal: ports.signal })) {
    ports.signal.throwIfAborted();
    if (chunk.type === 'usage') usage = { inputTokens: chunk.inputTokens, outputTokens: chunk.outputTokens };
    else if (chunk.type === 'tool_call') calls.push(chunk.call);
    else {
      text += chunk.text;
      if (!stream) continue;
      if (!state.writing) {
        state.writing = true;
        await ports.emit({ type: 'agent_state', payload: { state: 'writing' } });
      }
      await ports.emit({ type: 'token', payload: { text: chunk.text, final: state.toolCallSeen } });
    }
  }
  ports.signal.throwIfAborted();
  // A provider that reports no usage is counted here with the same tokenizer.
  state.usage.inputTokens += usage?.inputTokens ?? knownInputTokens ?? messages.reduce((sum, message) => sum + countTokens(message.content), 0);
  state.usage.outputTokens += usage?.outputTokens ?? countTokens(text) + calls.reduce((sum, call) => sum + countTokens(call.arguments), 0);
  return { text, calls };
}
