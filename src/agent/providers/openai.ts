import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import {
  flattenReads,
  ProviderError,
  type ChatMessage,
  type LlmProvider,
  type ProviderChunk,
  type ProviderRequest,
  type ToolCall,
  type ToolSpec,
} from '../provider';
import type { EventSourceMessage } from 'eventsource-parser';
import { madeOncePer } from '../../core/made-once';
import { createLeanFetch } from './lean-fetch';
import { sseBatches } from './sse-reader';
import { StreamGuard } from './stream-guard';
import { TextChunkTemplate } from './text-chunk-template';

export interface OpenAiProviderOptions {
  /** Any OpenAI-compatible chat-completions API, e.g. https://api.openai.com/v1 or http://localhost:11434/v1. */
  baseUrl: string;
  /** Local servers (Ollama, llama.cpp …) ignore it; see createProvider for the placeholder. */
  apiKey: string;
  model: string;
  /** Longest silence before the answer starts and between two streamed chunks. */
  timeoutMs: number;
  /** Retries of the SDK on connection errors, 408/409/429 and 5xx; kept small so nothing waits long. */
  maxRetries: number;
}

const VENDOR = 'OpenAI-compatible';

/**
 * Chat completions over the official `openai` SDK, streamed with usage. Tool-call fragments arrive
 * keyed by `index` and are assembled here; each call is emitted once, complete, with its raw
 * arguments (invalid JSON included: the runner reports it back to the model as a tool error).
 */
export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai';
  readonly model: string;
  private readonly client: OpenAI;
  private readonly timeoutMs: number;

  constructor(options: OpenAiProviderOptions) {
    this.model = options.model;
    this.timeoutMs = options.timeoutMs;
    // Every option explicit: the SDK would otherwise read OPENAI_* variables from the environment.
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseUrl,
      organization: null,
      project: null,
      webhookSecret: null,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
      logLevel: 'off',
      fetch: createLeanFetch(),
    });
  }

  stream(request: ProviderRequest): AsyncIterable<ProviderChunk> {
    return flattenReads(this.streamReads(request));
  }

  async *streamReads(request: ProviderRequest): AsyncIterable<ProviderChunk[]> {
    const guard = new StreamGuard(request.signal, this.timeoutMs);
    try {
      if (guard.callerAborted) return;
      // The SDK sends the request (retries, timeouts, HTTP errors); the stream is read here, a read at a time.
      // `chat.completions.create` posts here too; the body goes as text (the SDK sends text with a
      // content type as it is) so that it is serialised the way requestBody does.
      const response = await this.client
        .post('/chat/completions', {
          body: requestBody(this.model, request.messages, request.tools),
          headers: { 'content-type': 'application/json' },
          stream: true,
          signal: guard.signal,
        })
        .asResponse();
      const state = new ChunkState(response.headers);
      for await (const events of sseBatches(response, guard.signal)) {
        const { out, failure } = state.apply(events);
        // Time spent by the consumer is not the server's silence.
        guard.pause();
        if (out.length > 0) yield out;
        if (failure) throw failure;
        guard.touch();
      }
      if (guard.callerAborted) return;
      guard.throwIfExpired(VENDOR);
      yield state.finish();
    } catch (error) {
      if (guard.callerAborted) return;
      throw guard.toProviderError(error, VENDOR, OpenAI);
    } finally {
      guard.close();
    }
  }
}

/** Follows one streamed answer: tool-call fragments, the usage chunk, `[DONE]`. */
class ChunkState {
  private readonly calls = new ToolCallAssembler();
  private readonly template = new TextChunkTemplate('content', plainText);
  private usage: ProviderChunk | null = null;
  private received = 0;
  private done = false;

  constructor(private readonly headers: Headers) {}

  /** The chunks of one read's events; what came before a bad event still goes out, as the SDK's stream would have yielded it. */
  apply(events: readonly EventSourceMessage[]): { out: ProviderChunk[]; failure: Error | null } {
    const out: ProviderChunk[] = [];
    try {
      for (const event of events) {
        if (this.done) continue;
        if (event.data.startsWith('[DONE]')) {
          this.done = true;
          continue;
        }
        // A text chunk like the last one parsed, but for its text: read without parsing it.
        const unnamed = event.event === undefined;
        const text = unnamed ? this.template.read(event.data) : undefined;
        if (text !== undefined) {
          this.received += 1;
          if (text) out.push({ type: 'text', text });
          continue;
        }
        const chunk = parseChunk(event, this.headers);
        if (!chunk) continue;
        this.add(chunk, out);
        if (unnamed) this.template.learn(event.data, chunk);
      }
    } catch (error) {
      return { out, failure: error instanceof Error ? error : new Error(String(error)) };
    }
    return { out, failure: null };
  }

  finish(): ProviderChunk[] {
    if (this.received === 0) throw new ProviderError('failed', `The ${VENDOR} model server sent an empty stream.`);
    const out = this.calls.flush();
    if (this.usage) out.push(this.usage);
    return out;
  }

  private add(chunk: ChatCompletionChunk, out: ProviderChunk[]): void {
    this.received += 1;
    for (const choice of chunk.choices ?? []) {
      const text = choice.delta?.content;
      if (text) out.push({ type: 'text', text });
      for (const fragment of choice.delta?.tool_calls ?? []) this.calls.add(fragment);
      // The calls are complete once the choice finishes; some servers never say so (then: at the end).
      if (choice.finish_reason) out.push(...this.calls.flush());
    }
    if (chunk.usage) this.usage = { type: 'usage', inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
  }
}

/** The text of a chunk that carries only text (no tool call, finish, usage or error), else undefined. */
function plainText(parsed: unknown): string | undefined {
  const chunk = parsed as (ChatCompletionChunk & { error?: unknown }) | null;
  if (!chunk || typeof chunk !== 'object' || chunk.error || chunk.usage || chunk.choices?.length !== 1) return undefined;
  const choice = chunk.choices[0]!;
  if (choice.finish_reason || choice.delta?.tool_calls) return undefined;
  return typeof choice.delta?.content === 'string' ? choice.delta.content : undefined;
}

/**
 * One `chat.completion.chunk`, as the SDK's stream reads it: an `error` object in the data is the
 * server reporting a failure mid-answer (the SDK's APIError); `thread.*` events (Assistants API) carry
 * no chat chunk. Data that is not JSON throws (a malformed stream).
 */
function parseChunk(event: EventSourceMessage, headers: Headers): ChatCompletionChunk | null {
  const data = JSON.parse(event.data) as (ChatCompletionChunk & { error?: object; message?: string }) | null;
  const thread = event.event?.startsWith('thread.') ?? false;
  if (thread && event.event === 'error') throw new OpenAI.APIError(undefined, data?.error, data?.message, undefined);
  if (!thread && data?.error) throw new OpenAI.APIError(undefined, data.error, undefined, headers);
  return thread ? null : data;
}

type ToolCallFragment = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number];

/** Collects streamed tool-call fragments by their `index` (parallel calls interleave). */
class ToolCallAssembler {
  private readonly pending = new Map<number, { id: string; name: string; arguments: string }>();
  private emitted = 0;

  add(fragment: ToolCallFragment): void {
    // Servers that send each call whole sometimes leave `index` out: then it is the next slot.
    const index = typeof fragment.index === 'number' ? fragment.index : this.emitted + this.pending.size;
    const call = this.pending.get(index) ?? { id: '', name: '', arguments: '' };
    if (fragment.id) call.id = fragment.id;
    // A name split over fragments is joined; one repeated on every fragment (some servers) is kept once.
    const name = fragment.function?.name;
    if (name && name !== call.name) call.name += name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
    this.pending.set(index, call);
  }

  flush(): ProviderChunk[] {
    const ordered = [...this.pending.entries()].sort((a, b) => a[0] - b[0]);
    this.pending.clear();
    const out: ProviderChunk[] = [];
    for (const [, call] of ordered) {
      if (!call.name) throw new ProviderError('failed', `The ${VENDOR} model server sent a tool call without a name.`);
      this.emitted += 1;
      const complete: ToolCall = { id: call.id || `call_${this.emitted}`, name: call.name, arguments: call.arguments };
      out.push({ type: 'tool_call', call: complete });
    }
    return out;
  }
}

/**
 * The chat-completions request as JSON text, `{model, messages, stream, stream_options[, tools]}`.
 * Each message's JSON is made once per message object and kept beside it: the worker hands a session's
 * conversation back turn after turn as the same objects (ConversationCache), so a turn serialises
 * only its new messages instead of the whole history (JSON.stringify of the body was ~4 % of the hub's
 * CPU under turn load, more with long sessions). Messages are never changed once made.
 */
export function requestBody(model: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[] | undefined): string {
  const parts = messages.map(messageJson);
  const toolParts = (tools ?? []).map(toolJson);
  const toolsField = toolParts.length > 0 ? `,"tools":[${toolParts.join(',')}]` : '';
  return `{"model":${JSON.stringify(model)},"messages":[${parts.join(',')}],"stream":true,"stream_options":{"include_usage":true}${toolsField}}`;
}

const messageJson = madeOncePer((message: ChatMessage) => JSON.stringify(toOpenAiMessage(message)));

const toolJson = madeOncePer((tool: ToolSpec) => {
  const param: ChatCompletionTool = { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
  return JSON.stringify(param);
});

function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // Servers differ on "" next to tool calls; null is what OpenAI itself sends back.
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}
