import type { ChatMessage, LlmProvider, ProviderChunk, ProviderRequest } from '../../src/agent/provider';

/**
 * A model with no latency at all: it yields `tokens` as fast as the consumer takes them. Benchmarks
 * use it so the figures measure the hub, not a model (the builtin provider composes its answer from
 * the conversation, which costs time and gives answers of varying length).
 */
export class FixedAnswerProvider implements LlmProvider {
  readonly name = 'bench';
  readonly model = 'bench-fixed';

  /** `delayMs` between tokens (0: as fast as the consumer takes them). */
  constructor(
    private readonly tokens: readonly string[],
    private readonly delayMs = 0,
    /** Called as each answer starts (the takeover benchmark learns which worker runs the turn). */
    private readonly onStart: () => void = () => undefined,
  ) {}

  async *stream(request: ProviderRequest): AsyncIterable<ProviderChunk> {
    this.onStart();
    for (const text of this.tokens) {
      if (request.signal.aborted) return;
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      yield { type: 'text', text };
    }
    yield { type: 'usage', inputTokens: inputTokens(request.messages), outputTokens: this.tokens.length };
  }
}

/** `count` tokens of about `size` characters each (a word and a space, like real model output). */
export function wordTokens(count: number, size = 6): string[] {
  const word = 'token'.padEnd(size - 1, 's').slice(0, Math.max(1, size - 1));
  return Array.from({ length: count }, () => `${word} `);
}

/**
 * A rough count (4 characters a token), enough for the usage figures stored with the reply. A real
 * model server counts on its side; this one must not spend the hub's CPU doing it.
 */
function inputTokens(messages: readonly ChatMessage[]): number {
  return Math.ceil(messages.reduce((sum, message) => sum + message.content.length, 0) / 4);
}
