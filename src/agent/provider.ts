/** A message of the conversation as a provider sees it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a provider streams: text deltas, then its usage figures. (Tool calls land with the full agent.) */
export type ProviderChunk = { type: 'text'; text: string } | { type: 'usage'; inputTokens: number; outputTokens: number };

export interface ProviderRequest {
  messages: ChatMessage[];
  /** Aborted on cancel or shutdown: the provider stops streaming at once. */
  signal: AbortSignal;
}

/** One contract for every model backend (builtin, OpenAI-compatible, Anthropic). */
export interface LlmProvider {
  readonly name: string;
  readonly model: string;
  stream(request: ProviderRequest): AsyncIterable<ProviderChunk>;
}
