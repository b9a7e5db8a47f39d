import { compact, type Compaction, type MemoryEntry, type MemoryMode } from '../agent/memory';
import type { LlmProvider } from '../agent/provider';
import type { Config } from '../config';
import type { MessageRecord, SessionRecord } from '../db/turn-store';

/** The smallest prompt budget in tokens, whatever the context window and the working-memory share. */
const MIN_PROMPT_BUDGET_TOKENS = 256;

/** The tokens a turn's prompt may take: the context window less the working-memory budget. */
export function promptBudget(contextWindow: number, agent: Pick<Config['agent'], 'working_memory_tokens'>): number {
  return Math.max(MIN_PROMPT_BUDGET_TOKENS, contextWindow - agent.working_memory_tokens);
}

export interface CompactionInput {
  session: SessionRecord;
  entries: MemoryEntry[];
  userMessage: MessageRecord;
  answer: string;
  /** Tokens of `answer`. */
  tokens: number;
  /** Ordinals of messages still waiting for their own turns (never folded into the summary). */
  waitingOrdinals: readonly number[];
  signal: AbortSignal;
}

/**
 * Folds old turns into the rolling summary when the conversation (with this turn's answer) outgrows
 * the budget; null when it still fits.
 */
export async function compactMemory(
  deps: { agent: Config['agent']; contextWindow: number; provider: LlmProvider },
  input: CompactionInput,
): Promise<Compaction | null> {
  const reply: MemoryEntry = {
    ordinal: Number.MAX_SAFE_INTEGER, // stored after every message read; never folded (the newest turns stay)
    turnId: input.userMessage.id,
    message: { role: 'assistant', content: input.answer },
    tokens: input.tokens,
  };
  const compaction = await compact({
    systemPrompt: deps.agent.system_prompt,
    summary: input.session.memory_summary,
    entries: [...input.entries, reply],
    budget: promptBudget(deps.contextWindow, deps.agent),
    mode: input.session.memory_mode as MemoryMode,
    provider: deps.provider,
    signal: input.signal,
  });
  return compaction && foldedWhole(compaction, input.entries, input.waitingOrdinals);
}

/**
 * The summary may cover only a prefix of the session in arrival order: when turns' rows interleave
 * (messages arrived while a turn ran), `through` stops before the first row it did not fold, so no
 * row is lost from later prompts (a few may be both summarised and kept).
 */
function foldedWhole(compaction: Compaction, entries: readonly MemoryEntry[], waitingOrdinals: readonly number[]): Compaction {
  const index = entries.findIndex((entry) => entry.ordinal === compaction.through);
  let firstKept = Math.min(Number.MAX_SAFE_INTEGER, ...waitingOrdinals);
  for (let at = index + 1; at < entries.length; at += 1) firstKept = Math.min(firstKept, entries[at]!.ordinal);
  return firstKept > compaction.through ? compaction : { ...compaction, through: firstKept - 1 };
}
