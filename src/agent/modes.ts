import type { AgentState } from '../core/events';
import { callModel, runModelLoop, type LoopPorts, type ResumedRound, type TurnState } from './model-loop';
import type { ChatMessage, LlmProvider } from './provider';
import type { ToolBox } from './tool-box';

export interface ModeRequest {
  provider: LlmProvider;
  /** System prompt first, then the conversation ending with this turn's user message. */
  messages: ChatMessage[];
  tools: ToolBox | null;
  maxRounds: number;
  /** A tool round stored before a crash: the answer's loop finishes it first (the other steps start afresh). */
  resume?: ResumedRound | null;
}

/** Most sub-tasks a delegate turn runs in parallel. */
export const MAX_SUBTASKS = 4;

const ANALYZE = [
  'Before answering, analyse the last user message. Classify the task in one line, list what you need',
  'to know to answer it, and write a short plan. End with exactly one line "NEEDS_WEB: yes" if facts',
  'must be looked up on the web, else "NEEDS_WEB: no". Do not answer the question yet.',
].join(' ');
const RESEARCH = 'Look up on the web what the plan needs (use the web tools), then summarise the findings with their sources. Do not answer the question yet.';
const REASON =
  'Think it through step by step, using the analysis and research so far. Write your reasoning notes and conclusions; do not write the final answer yet.';
const PLAN_SUBTASKS = `Split the last user message into 2 to ${MAX_SUBTASKS} independent sub-tasks that can be worked on separately. Write one per line, each starting with "- ". No other text.`;

type SetState = (state: AgentState) => Promise<void>;

/**
 * `think`: analyse (classify, plan) → research with web tools when the analysis asks for it → reason
 * step by step → write the answer with those notes. Each step is its own model call.
 */
export async function runThink(request: ModeRequest, ports: LoopPorts, state: TurnState, setState: SetState): Promise<string> {
  await setState('analyzing');
  const analysis = (await callModel(request.provider, withInstruction(request.messages, ANALYZE), null, false, ports, state)).text;
  const notes = [`Analysis:\n${analysis}`];
  const webTools = request.tools && webOnly(request.tools);
  if (webTools && needsWeb(analysis, lastUserText(request.messages))) {
    await setState('researching');
    const research = await runModelLoop(
      {
        provider: request.provider,
        messages: withInstruction(request.messages, `${notes.join('\n\n')}\n\n${RESEARCH}`),
        tools: webTools,
        stream: false,
        maxRounds: request.maxRounds,
      },
      ports,
      state,
    );
    notes.push(`Research:\n${research}`);
  }
  await setState('deep_thinking');
  const reasoning = (await callModel(request.provider, withInstruction(request.messages, `${notes.join('\n\n')}\n\n${REASON}`), null, false, ports, state))
    .text;
  notes.push(`Reasoning:\n${reasoning}`);
  return writeAnswer(request, notes, ports, state);
}

/** `delegate`: split into sub-tasks, work them in parallel on the provider, merge into one answer. */
export async function runDelegate(request: ModeRequest, ports: LoopPorts, state: TurnState, setState: SetState): Promise<string> {
  await setState('delegating');
  const plan = (await callModel(request.provider, withInstruction(request.messages, PLAN_SUBTASKS), null, false, ports, state)).text;
  const parsed = plan
    .split('\n')
    .map((line) => /^\s*[-*•]\s+(.+)$/.exec(line)?.[1]?.trim())
    .filter((task): task is string => Boolean(task))
    .slice(0, MAX_SUBTASKS);
  // A model that does not split (the builtin one) gets the whole request as its only sub-task.
  const subtasks = parsed.length > 0 ? parsed : [lastUserText(request.messages)];
  const system = request.messages[0]?.role === 'system' ? [request.messages[0]] : [];
  const results = await Promise.all(
    subtasks.map(async (task) => (await callModel(request.provider, [...system, { role: 'user', content: task }], null, false, ports, state)).text),
  );
  const notes = [
    `The request was split into sub-tasks, worked on separately:\n${subtasks.map((task, index) => `Sub-task ${index + 1}: ${task}\nResult: ${results[index]}`).join('\n\n')}`,
  ];
  return writeAnswer(request, notes, ports, state, 'Merge the sub-task results into one coherent answer to the user.');
}

async function writeAnswer(
  request: ModeRequest,
  notes: string[],
  ports: LoopPorts,
  state: TurnState,
  extra = 'Now write the final answer to the user.',
): Promise<string> {
  const messages = withInstruction(request.messages, `${notes.join('\n\n')}\n\n${extra}`);
  return runModelLoop(
    { provider: request.provider, messages, tools: request.tools, stream: true, maxRounds: request.maxRounds, resume: request.resume },
    ports,
    state,
  );
}

/** The conversation with working notes added to the system prompt (they are not stored as messages). */
function withInstruction(messages: ChatMessage[], instruction: string): ChatMessage[] {
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${instruction}` }, ...rest];
  return [{ role: 'system', content: instruction }, ...messages];
}

function lastUserText(messages: ChatMessage[]): string {
  return [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
}

/** The model says so, or (a model that does not follow the format) the user plainly asks for fresh facts. */
function needsWeb(analysis: string, userText: string): boolean {
  const said = /NEEDS_WEB:\s*(yes|no)/i.exec(analysis)?.[1]?.toLowerCase();
  if (said) return said === 'yes';
  return /https?:\/\/|\b(search|look up|latest|news|today|current)\b/i.test(userText);
}

function webOnly(tools: ToolBox): ToolBox | null {
  const specs = tools.specs().filter((spec) => tools.get(spec.name)?.web);
  if (specs.length === 0) return null;
  return {
    specs: () => specs,
    get: (name) => (specs.some((spec) => spec.name === name) ? tools.get(name) : undefined),
    validate: (name, raw) => tools.validate(name, raw),
  };
}
