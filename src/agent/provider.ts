/**
 * The one contract every model backend implements (builtin, OpenAI-compatible, Anthropic): a
 * stream of text deltas and complete tool calls, then usage; it honours an AbortSignal.
 */

/** A tool the model may call, described by a JSON schema (the registry's `parameters`). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A call the model made. `arguments` is the raw JSON text the model produced (it may be invalid). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A message of the conversation as a provider sees it. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/**
 * What a provider streams. Providers assemble streamed tool-call fragments themselves and emit each
 * call once, complete. `usage` comes last (or never: the runner then counts with gpt-tokenizer).
 */
export type ProviderChunk =
  { type: 'text'; text: string } | { type: 'tool_call'; call: ToolCall } | { type: 'usage'; inputTokens: number; outputTokens: number };

export interface ProviderRequest {
  messages: ChatMessage[];
  /** Tools the model may call this time; none or empty: answer in text only. */
  tools?: ToolSpec[];
  /** Aborted on cancel or shutdown: the provider stops at once (and its HTTP request is aborted). */
  signal: AbortSignal;
}

export interface LlmProvider {
  readonly name: string;
  readonly model: string;
  stream(request: ProviderRequest): AsyncIterable<ProviderChunk>;
  /**
   * Optional: the same chunks as `stream`, grouped by the read of the model's response that
   * completed them (a fast server packs many tokens into one read). A consumer that takes batches
   * does its per-chunk async work (iteration, awaiting its event sends) once per read.
   */
  streamReads?(request: ProviderRequest): AsyncIterable<ProviderChunk[]>;
}

/** A provider's chunks by read: `streamReads` when it has it, else each chunk on its own. */
export async function* chunkBatches(provider: LlmProvider, request: ProviderRequest): AsyncGenerator<ProviderChunk[]> {
  if (provider.streamReads) {
    yield* provider.streamReads(request);
    return;
  }
  for await (const chunk of provider.stream(request)) yield [chunk];
}

/** `stream` of a provider that implements `streamReads`: the batches' chunks one by one. */
export async function* flattenReads(batches: AsyncIterable<ProviderChunk[]>): AsyncGenerator<ProviderChunk> {
  for await (const batch of batches) yield* batch;
}

/**
 * A provider failure the turn reports to the client as an `error` frame: the server could not be
 * reached (connection refused, DNS, timeout: `unreachable`) or answered something unusable (HTTP error,
 * malformed stream: `failed`). `message` is safe to show (no keys, no upstream bodies).
 */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'unreachable' | 'failed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}
