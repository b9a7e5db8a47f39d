import type { ChatMessage, LlmProvider, ProviderChunk, ProviderRequest } from '../provider';
import { parsePassages, type Passage } from '../passages';
import { countTokens, tokenPieces } from '../tokens';
import { describeToolResults, plannedCall } from './builtin-tools';

/** Words too common to say anything about what the user talks about. */
const STOP_WORDS = new Set(
  'about above after again against also been before being below between both could does doing down during each from further have having here hers herself himself into itself just more most myself once only other ourselves over same should some such than that their theirs them themselves then there these they this those through under until very were what when where which while whom will with would your yours yourself yourselves please thanks thank hello'.split(
    ' ',
  ),
);

/** Longest quotation of the user's message kept in the answer. */
const QUOTE_LIMIT = 160;
/** Longest quotation of a knowledge passage kept in the answer. */
const PASSAGE_QUOTE_LIMIT = 400;
/** How many other passages an answer names besides the one it quotes. */
const OTHER_SOURCES_LIMIT = 3;

/**
 * The offline, deterministic provider (the default, so the hub runs with no model). It has no
 * language model and says so; its answer is composed from the conversation itself: what was asked,
 * its key terms, what came up earlier. Plain requests for what a built-in tool does ("write a file
 * notes.txt containing …", "what time is it in Tokyo", "calculate …", "search the handbook for …")
 * call that tool. Same conversation in, same answer out.
 */
export class BuiltinProvider implements LlmProvider {
  readonly name = 'builtin';
  readonly model = 'builtin';

  /** `tokenDelayMs` paces the stream (llm.builtin_token_delay_ms) so it can be watched. */
  constructor(private readonly tokenDelayMs = 0) {}

  async *stream(request: ProviderRequest): AsyncIterable<ProviderChunk> {
    // A plain request for what a built-in tool does is answered by calling it (see builtin-tools.ts).
    const planned = plannedCall(request.messages, request.tools);
    const answer = planned?.preamble ?? describeToolResults(request.messages) ?? composeAnswer(request.messages);
    for (const piece of tokenPieces(answer)) {
      if (request.signal.aborted) return;
      if (this.tokenDelayMs > 0) await delay(this.tokenDelayMs, request.signal);
      if (request.signal.aborted) return;
      yield { type: 'text', text: piece };
    }
    if (planned) yield { type: 'tool_call', call: planned.call };
    yield {
      type: 'usage',
      inputTokens: request.messages.reduce((sum, message) => sum + countTokens(message.content), 0),
      outputTokens: countTokens(answer),
    };
  }
}

export function composeAnswer(messages: readonly ChatMessage[]): string {
  const passages = messages.filter((message) => message.role === 'system').flatMap((message) => parsePassages(message.content));
  if (passages.length > 0)
    return answerFromPassages(
      passages,
      messages
        .filter((message) => message.role === 'user')
        .at(-1)
        ?.content.trim() ?? '',
    );
  const userMessages = messages.filter((message) => message.role === 'user');
  const current = userMessages.at(-1)?.content.trim() ?? '';
  const earlier = userMessages.slice(0, -1);
  const sentences: string[] = [];

  if (earlier.length === 0) {
    sentences.push("I'm Switchboard's built-in offline assistant: no language model is configured, so I can only work with what this conversation contains.");
  }
  const quoted = current.length > QUOTE_LIMIT ? `${current.slice(0, QUOTE_LIMIT)}…` : current;
  const words = current.split(/\s+/).filter(Boolean).length;
  sentences.push(`${current.endsWith('?') ? 'You asked' : 'You wrote'} (${words} word${words === 1 ? '' : 's'}): "${quoted}".`);

  const terms = keyTerms(current);
  if (terms.length > 0) sentences.push(`Its key terms are ${list(terms)}.`);

  const earlierTerms = keyTerms(earlier.map((message) => message.content).join(' ')).filter((term) => !terms.includes(term));
  const shared = keyTerms(earlier.map((message) => message.content).join(' ')).filter((term) => terms.includes(term));
  if (earlier.length > 0) {
    const position = `This is message ${userMessages.length} of yours in this conversation`;
    if (shared.length > 0) sentences.push(`${position}; you mentioned ${list(shared)} before as well.`);
    else if (earlierTerms.length > 0) sentences.push(`${position}; earlier you talked about ${list(earlierTerms.slice(0, 3))}.`);
    else sentences.push(`${position}.`);
  }
  sentences.push('For real answers, configure a model provider (SERVICE_LLM_PROVIDER=openai or anthropic).');
  return sentences.join(' ');
}

/**
 * With retrieved knowledge passages in the system prompt, the answer quotes the passage that shares
 * the most words with the question (ties: the better-ranked one) and names its source, then the
 * other sources. Deterministic like the rest of this provider.
 */
export function answerFromPassages(passages: readonly Passage[], question: string): string {
  const wanted = new Set(words(question).filter((word) => !STOP_WORDS.has(word)));
  const overlap = (passage: Passage) => new Set(words(`${passage.title} ${passage.text}`).filter((word) => wanted.has(word))).size;
  let best = passages[0];
  for (const passage of passages) if (overlap(passage) > overlap(best)) best = passage;
  const quote = best.text.length > PASSAGE_QUOTE_LIMIT ? `${best.text.slice(0, PASSAGE_QUOTE_LIMIT).replace(/\s+\S*$/, '')}…` : best.text;
  const sentences = [`From the knowledge base: "${quote}" (source: [${best.number}] ${best.title}).`];
  const others = passages.filter((passage) => passage !== best).slice(0, OTHER_SOURCES_LIMIT);
  if (others.length > 0) sentences.push(`See also ${others.map((passage) => `[${passage.number}] ${passage.title}`).join('; ')}.`);
  sentences.push("(I'm the built-in offline assistant: I quote the retrieved passages rather than compose an answer.)");
  return sentences.join(' ');
}

function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu)
      ?.filter((word) => word.length >= 3) ?? []
  );
}

function delay(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, milliseconds);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Up to five distinctive words, most frequent first, ties in order of appearance. */
function keyTerms(text: string): string[] {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []) {
    if (word.length < 4 || STOP_WORDS.has(word)) continue;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([word]) => word);
}

function list(items: readonly string[]): string {
  const quoted = items.map((item) => `"${item}"`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}
