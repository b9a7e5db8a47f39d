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
  /**
   * Stores an assistant round's tool calls before they run, and returns its id: a turn redelivered
   * after a crash runs these calls from there (LoopRequest.resume) instead of asking the model again.
   */
  startToolRound(content: string, calls: ToolCall[]): Promise<string>;
  /** Stores each call's outcome and result, ending the round (the turn resumes after it). */
  finishToolRound(roundId: string, calls: ToolCall[], outcomes: ToolOutcome[]): Promise<void>;
}

/** A tool round the turn stored before a crash whose calls never ended: run them, then go on. */
export interface ResumedRound {
  id: string;
  content: string;
  calls: ToolCall[];
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
  /** The round to finish first (its calls, with their stored ids); `messages` do not hold it yet. */
  resume?: ResumedRound | null;
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
  const runRound = async (roundId: string, roundText: string, calls: ToolCall[]) => {
    const outcomes = await executeToolCalls(calls, request.tools ?? NO_TOOLS, ports, state);
    ports.signal.throwIfAborted();
    await ports.finishToolRound(roundId, calls, outcomes);
    const added: ChatMessage[] = [
      { role: 'assistant', content: roundText, toolCalls: calls },
      ...outcomes.map((outcome): ChatMessage => ({ role: 'tool', toolCallId: outcome.call.id, name: outcome.call.name, content: outcome.content })),
    ];
    messages.push(...added);
    if (inputTokens !== undefined) inputTokens += added.reduce((sum, message) => sum + messageTokens(message), 0);
  };
  let round = 0;
  if (request.resume) {
    // The model asked for these calls before the crash (its text was streamed then): they run now.
    state.toolCallSeen = true;
    text += request.resume.content;
    await runRound(request.resume.id, request.resume.content, request.resume.calls);
    round += 1;
    if (ports.steered?.aborted) return text;
  }
  for (; ; round += 1) {
    const offerTools = request.tools !== null && round < request.maxRounds;
    const { text: roundText, calls } = await callModel(request.provider, messages, offerTools ? request.tools : null, request.stream, ports, state, inputTokens);
    text += roundText;
    // Steered after the model spoke: its tool calls are not run.
    if (calls.length === 0 || ports.steered?.aborted) return text;
    state.toolCallSeen = true;
    // Stored before the calls run: a crash from here on resumes with these calls, not new ones.
    const roundId = await ports.startToolRound(roundText, calls);
    await runRound(roundId, roundText, calls);
    if (ports.steered?.aborted) return text;
  }
}

/** No tools this turn (a resumed round's calls are refused as unknown). */
const NO_TOOLS: ToolBox = {
  specs: () => [],
  get: () => undefined,
  validate: () => ({ ok: false, error: 'no tools are loaded' }),
};

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
