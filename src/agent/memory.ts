import type { ChatMessage, LlmProvider } from './provider';
import { countTokens } from './tokens';

export const MEMORY_MODES = ['conversation', 'code', 'reasoning'] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];

export const MEMORY_DEFAULTS = {
  /** Compaction starts when the context would use more than this share of the memory budget. */
  compactAbove: 0.8,
  /** The newest turns always stay verbatim. */
  keepRecentTurns: 2,
  /** Longest rolling summary, as a share of the memory budget. */
  summaryShare: 0.25,
  /** Longest line an extractive summary keeps per message. */
  extractLineLimit: 160,
} as const;

/** One stored message of the conversation, with what memory needs to know about it. */
export interface MemoryEntry {
  ordinal: number;
  turnId: string | null;
  message: ChatMessage;
  /** Its tokens (stored with the message, so a conversation is never tokenised twice). */
  tokens: number;
}

export interface Compaction {
  summary: string;
  /** Messages up to this ordinal are now in the summary. */
  through: number;
  /** True when an LLM summarisation pass ran (not an extractive one). */
  summarized: boolean;
  tokensUsed: number;
}

const SUMMARY_PROMPT: Record<MemoryMode, string> = {
  conversation: 'Summarise the conversation below for your own memory: who wants what, facts given, decisions made, open questions. Be brief.',
  code: 'Summarise the conversation below for your own memory, keeping file names, function names, code snippets that matter, errors and decisions. Be brief.',
  reasoning: 'Summarise the conversation below for your own memory, keeping the conclusions reached and the reasons for them. Be brief.',
};

/** The system message with the rolling summary folded in. */
export function systemWithSummary(systemPrompt: string, summary: string | null): ChatMessage {
  return { role: 'system', content: summary ? `${systemPrompt}\n\nSummary of the earlier conversation:\n${summary}` : systemPrompt };
}

/** Tokens of one message as the model sees it: its text, and the calls of an assistant round. */
export function messageTokens(message: ChatMessage): number {
  return countTokens(message.content) + (message.role === 'assistant' && message.toolCalls ? countTokens(JSON.stringify(message.toolCalls)) : 0);
}

export function tokensOf(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, message) => sum + messageTokens(message), 0);
}

/** System prompts repeat turn after turn (the workflow's, the default): their counts are kept. */
const systemCounts = new Map<string, number>();
const SYSTEM_COUNTS_KEPT = 256;

export function systemTokens(system: ChatMessage): number {
  let tokens = systemCounts.get(system.content);
  if (tokens === undefined) {
    tokens = messageTokens(system);
    if (systemCounts.size >= SYSTEM_COUNTS_KEPT) systemCounts.delete(systemCounts.keys().next().value!);
    systemCounts.set(system.content, tokens);
  }
  return tokens;
}

function entryTokens(entries: readonly MemoryEntry[]): number {
  return entries.reduce((sum, entry) => sum + entry.tokens, 0);
}

/**
 * The messages that fit the budget for one model call: whole turns, newest kept, oldest dropped
 * (the summary holds what was folded earlier). Never splits a tool round from its results.
 */
export function fitToBudget(system: ChatMessage, entries: readonly MemoryEntry[], budget: number): ChatMessage[] {
  return fitEntries(system, entries, budget).messages;
}

/**
 * `fitToBudget`, with the tokens of what it kept (the system message included). One backward pass
 * over the entries, whole turns at a time (a turn is a run of entries with one turn id), no copies
 * but the result: a long conversation costs a loop, not a regrouping, every turn.
 */
export function fitEntries(system: ChatMessage, entries: readonly MemoryEntry[], budget: number): { messages: ChatMessage[]; tokens: number } {
  let used = systemTokens(system);
  let start = entries.length;
  while (start > 0) {
    // The turn that ends at start - 1 begins where the turn id changes (null ids stand alone).
    let turnStart = start - 1;
    let size = entries[turnStart]!.tokens;
    const turnId = entries[turnStart]!.turnId;
    while (turnId !== null && turnStart > 0 && entries[turnStart - 1]!.turnId === turnId) {
      turnStart -= 1;
      size += entries[turnStart]!.tokens;
    }
    if (start < entries.length && used + size > budget) break; // the newest turn always stays
    used += size;
    start = turnStart;
  }
  const messages: ChatMessage[] = [system];
  for (let index = start; index < entries.length; index += 1) messages.push(entries[index]!.message);
  return { messages, tokens: used };
}

/**
 * Folds the oldest turns into the rolling summary when the context outgrows the budget. Real models
 * write the summary (an LLM pass); the builtin one extracts lines (no LLM: `summarized` is false).
 * Returns null when nothing needed folding.
 */
export async function compact(
  input: {
    systemPrompt: string;
    summary: string | null;
    entries: readonly MemoryEntry[];
    budget: number;
    mode: MemoryMode;
    provider: LlmProvider;
    signal: AbortSignal;
  },
  limits = MEMORY_DEFAULTS,
): Promise<Compaction | null> {
  const system = systemWithSummary(input.systemPrompt, input.summary);
  const total = systemTokens(system) + entryTokens(input.entries);
  if (total <= input.budget * limits.compactAbove) return null;
  const turns = groupByTurn(input.entries);
  const foldable = turns.slice(0, Math.max(0, turns.length - limits.keepRecentTurns));
  if (foldable.length === 0) return null;
  // Fold the oldest turns until what stays fits comfortably.
  const target = input.budget * limits.compactAbove * 0.75;
  let remaining = total;
  const folded: MemoryEntry[] = [];
  for (const turn of foldable) {
    if (remaining <= target && folded.length > 0) break;
    folded.push(...turn);
    remaining -= entryTokens(turn);
  }
  const summaryLimit = Math.max(64, Math.floor(input.budget * limits.summaryShare));
  const useModel = input.provider.name !== 'builtin';
  const summary = useModel ? await summariseWithModel(input.provider, input.summary, folded, input.mode, input.signal).catch(() => null) : null;
  const next = trimToTokens(summary ?? extractiveSummary(input.summary, folded, input.mode, limits.extractLineLimit), summaryLimit);
  const kept = input.entries.filter((entry) => entry.ordinal > folded.at(-1)!.ordinal);
  return {
    summary: next,
    through: folded.at(-1)!.ordinal,
    summarized: summary !== null,
    tokensUsed: systemTokens(systemWithSummary(input.systemPrompt, next)) + entryTokens(kept),
  };
}

async function summariseWithModel(
  provider: LlmProvider,
  previous: string | null,
  folded: MemoryEntry[],
  mode: MemoryMode,
  signal: AbortSignal,
): Promise<string> {
  const transcript = folded.map((entry) => `${entry.message.role}: ${entry.message.content}`).join('\n');
  const prompt = `${SUMMARY_PROMPT[mode]}${previous ? `\n\nEarlier summary:\n${previous}` : ''}\n\nConversation:\n${transcript}`;
  let text = '';
  for await (const chunk of provider.stream({ messages: [{ role: 'user', content: prompt }], signal })) if (chunk.type === 'text') text += chunk.text;
  if (text.trim() === '') throw new Error('empty summary');
  return text.trim();
}

/** One line per folded message, chosen by the memory mode; appended to the previous summary. */
export function extractiveSummary(
  previous: string | null,
  folded: readonly MemoryEntry[],
  mode: MemoryMode,
  lineLimit: number = MEMORY_DEFAULTS.extractLineLimit,
): string {
  const lines = previous ? previous.split('\n') : [];
  for (const { message } of folded) {
    if (message.role === 'system' || message.content.trim() === '') continue;
    const who = message.role === 'tool' ? `tool ${message.name}` : message.role;
    lines.push(`- ${who}: ${pick(message.content, mode).slice(0, lineLimit)}`);
  }
  return lines.join('\n');
}

function pick(text: string, mode: MemoryMode): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = flat.split(/(?<=[.!?])\s+/);
  if (mode === 'code') {
    const code = /```[a-z]*\n?([^`]+)```/.exec(text)?.[1]?.trim().split('\n')[0];
    const prose = text
      .replace(/```[^`]*```/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    const names = prose.match(/[\w./-]+\.(ts|js|py|go|rs|java|json|ya?ml|md|sql)\b/g);
    return [prose.split(/(?<=[.!?:])\s+/)[0], names ? `files: ${[...new Set(names)].join(', ')}` : '', code ? `code: ${code}` : ''].filter(Boolean).join(' | ');
  }
  if (mode === 'reasoning') {
    return sentences.find((sentence) => /\b(therefore|so|because|thus|decided|conclusion|concluded|hence)\b/i.test(sentence)) ?? sentences[0] ?? '';
  }
  return sentences[0] ?? '';
}

function trimToTokens(text: string, limit: number): string {
  if (countTokens(text) <= limit) return text;
  const lines = text.split('\n');
  while (lines.length > 1 && countTokens(lines.join('\n')) > limit) lines.shift(); // the oldest lines go first
  return lines.join('\n');
}

function groupByTurn(entries: readonly MemoryEntry[]): MemoryEntry[][] {
  const turns: MemoryEntry[][] = [];
  for (const entry of entries) {
    const last = turns.at(-1);
    if (last && entry.turnId !== null && last[0]!.turnId === entry.turnId) last.push(entry);
    else turns.push([entry]);
  }
  return turns;
}
