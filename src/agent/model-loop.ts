import type { AgentEvent } from '../core/events';
import { chunkBatches, type ChatMessage, type LlmProvider, type ToolCall } from './provider';
import { messageTokens } from './memory';
import { countTokens } from './tokens';
import type { ToolBox } from './tool-box';
import { executeToolCalls, type ToolOutcome, type ToolTurnPorts, type ToolTurnState } from './tool-executor';
import { cancelledBy } from './turn-stopped';

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
  /**
   * Tool rounds this turn ran, over all its model loops (a think turn's research and its answer):
   * `maxRounds` bounds them. A redelivered turn starts from the rounds it stored before.
   */
  rounds: number;
}

export interface LoopPorts extends ToolTurnPorts {
  /** Emits events in order as one send: a streamed read's tokens (one promise per read, not per token). */
  emitAll(events: readonly AgentEvent[]): Promise<void>;
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
  /** The most tool rounds the turn may run (`max_steps`): a hard bound, shared by every loop of the turn (TurnState.rounds). */
  maxRounds: number;
  /** Tokens of `messages`, when the caller knows them (stored counts): used when the provider reports no usage. */
  inputTokens?: number;
  /** The round to finish first (its calls, with their stored ids); `messages` do not hold it yet. */
  resume?: ResumedRound | null;
}

export function newTurnState(): TurnState {
  return { forbidden: false, calls: 0, toolCallSeen: false, writing: false, usage: { inputTokens: 0, outputTokens: 0 }, rounds: 0 };
}

/**
 * Calls the model until it answers without tool calls: each round's tool calls are executed and
 * their results fed back. Once the turn has run `maxRounds` tool rounds the model is asked once more
 * without tools, so a turn always ends; calls it makes anyway never run (each gets a tool error
 * saying why, stored and reported) and the turn ends there. Returns the text of every round.
 */
export async function runModelLoop(request: LoopRequest, ports: LoopPorts, state: TurnState): Promise<string> {
  const messages = [...request.messages];
  let inputTokens = request.inputTokens;
  let text = '';
  const runRound = async (round: { id: string; content: string; calls: ToolCall[] }, tools: ToolBox) => {
    const outcomes = await executeToolCalls(round.calls, tools, ports, state);
    if (ports.signal.aborted) {
      // Cancelled: the round ends with each call's outcome, so the history says why a call did not
      // run. At a shutdown it stays open: the redelivered turn runs its calls.
      if (cancelledBy(ports.signal)) await ports.finishToolRound(round.id, round.calls, outcomes);
      ports.signal.throwIfAborted();
    }
    await ports.finishToolRound(round.id, round.calls, outcomes);
    const added: ChatMessage[] = [
      { role: 'assistant', content: round.content, toolCalls: round.calls },
      ...outcomes.map((outcome): ChatMessage => ({ role: 'tool', toolCallId: outcome.call.id, name: outcome.call.name, content: outcome.content })),
    ];
    messages.push(...added);
    if (inputTokens !== undefined) inputTokens += added.reduce((sum, message) => sum + messageTokens(message), 0);
  };
  if (request.resume) {
    // The model asked for these calls before the crash (its text was streamed then): they run now.
    state.toolCallSeen = true;
    state.rounds += 1;
    text += request.resume.content;
    await runRound(request.resume, request.tools ?? NO_TOOLS);
    if (ports.steered?.aborted) return text;
  }
  for (;;) {
    const offered = request.tools !== null && state.rounds < request.maxRounds ? request.tools : null;
    const { text: roundText, calls } = await callModel(request.provider, messages, offered, request.stream, ports, state, inputTokens);
    text += roundText;
    // Steered after the model spoke: its tool calls are not run.
    if (calls.length === 0 || ports.steered?.aborted) return text;
    state.toolCallSeen = true;
    // Stored before the calls run: a crash from here on resumes with these calls, not new ones.
    const id = await ports.startToolRound(roundText, calls);
    if (offered) state.rounds += 1;
    await runRound({ id, content: roundText, calls }, offered ?? (request.tools ? overTheLimit(request.maxRounds) : NO_TOOLS));
    if (!offered || ports.steered?.aborted) return text;
  }
}

/** No tools this turn (a resumed round's calls are refused as unknown). */
const NO_TOOLS: ToolBox = {
  specs: () => [],
  get: () => undefined,
  validate: () => ({ ok: false, error: 'no tools are loaded' }),
};

/** The tools of a model call past the turn's tool-round limit: none; a call the model makes anyway is refused. */
function overTheLimit(maxRounds: number): ToolBox {
  return { ...NO_TOOLS, refusal: (name) => `Over the tool-round limit (${maxRounds}) of this turn: "${name}" was not run.` };
}

/** One model call: streams (or collects) its text, returns its tool calls, adds its usage. */
export async function callModel(
  provider: LlmProvider,
  messages: ChatMessage[],
  tools: ToolBox | null,
  stream: boolean,
  ports: Pick<LoopPorts, 'emitAll' | 'signal'>,
  state: TurnState,
  knownInputTokens?: number,
): Promise<{ text: string; calls: ToolCall[] }> {
  // The answer's pieces, joined once at the end: `text +=` per token made a chain of one string
  // object per token that lives as long as the answer (a long stream's largest survivor of young-generation GCs).
  const pieces: string[] = [];
  const calls: ToolCall[] = [];
  let usage: Usage | null = null;
  const specs = tools?.specs() ?? [];
  // By read: the events of a read are sent together (in order: the log numbers them as they are
  // sent) and awaited once, so a fast stream costs one send and one await per read, not per token.
  for await (const batch of chunkBatches(provider, { messages, tools: specs.length > 0 ? specs : undefined, signal: ports.signal })) {
    ports.signal.throwIfAborted();
    const events: AgentEvent[] = [];
    for (const chunk of batch) {
      if (chunk.type === 'usage') usage = { inputTokens: chunk.inputTokens, outputTokens: chunk.outputTokens };
      else if (chunk.type === 'tool_call') calls.push(chunk.call);
      else {
        pieces.push(chunk.text);
        if (!stream) continue;
        if (!state.writing) {
          state.writing = true;
          events.push({ type: 'agent_state', payload: { state: 'writing' } });
        }
        events.push({ type: 'token', payload: { text: chunk.text, final: state.toolCallSeen } });
      }
    }
    if (events.length > 0) await ports.emitAll(events);
  }
  ports.signal.throwIfAborted();
  const text = pieces.join('');
  // A provider that reports no usage is counted here with the same tokenizer.
  state.usage.inputTokens += usage?.inputTokens ?? knownInputTokens ?? messages.reduce((sum, message) => sum + countTokens(message.content), 0);
  state.usage.outputTokens += usage?.outputTokens ?? countTokens(text) + calls.reduce((sum, call) => sum + countTokens(call.arguments), 0);
  return { text, calls };
}
