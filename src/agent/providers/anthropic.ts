import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, RawMessageStreamEvent, Tool as AnthropicTool } from '@anthropic-ai/sdk/resources/messages';
import { flattenReads, ProviderError, type ChatMessage, type LlmProvider, type ProviderChunk, type ProviderRequest, type ToolSpec } from '../provider';
import type { EventSourceMessage } from 'eventsource-parser';
import { createLeanFetch } from './lean-fetch';
import { sseBatches } from './sse-reader';
import { StreamGuard } from './stream-guard';
import { TextChunkTemplate } from './text-chunk-template';

export interface AnthropicProviderOptions {
  /** The Messages API root, e.g. https://api.anthropic.com (the SDK adds /v1/messages). */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Anthropic requires an output limit on every request. */
  maxOutputTokens: number;
  /** Longest silence before the answer starts and between two streamed events. */
  timeoutMs: number;
  maxRetries: number;
}

const VENDOR = 'Anthropic';

/**
 * Streaming Messages API over `@anthropic-ai/sdk`. System messages become `system`; assistant tool
 * calls become `tool_use` blocks and tool results `tool_result` blocks of a user message; streamed
 * `input_json_delta` fragments are assembled into complete calls.
 */
export class AnthropicProvider implements LlmProvider {
  readonly name = 'anthropic';
  readonly model: string;
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicProviderOptions) {
    this.model = options.model;
    // Every option explicit: the SDK would otherwise read ANTHROPIC_* variables and profiles on disk.
    this.client = new Anthropic({
      apiKey: options.apiKey,
      authToken: null,
      webhookKey: null,
      baseURL: options.baseUrl,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
      logLevel: 'off',
      openTelemetry: false,
      fetch: createLeanFetch(),
    });
  }

  stream(request: ProviderRequest): AsyncIterable<ProviderChunk> {
    return flattenReads(this.streamReads(request));
  }

  async *streamReads(request: ProviderRequest): AsyncIterable<ProviderChunk[]> {
    const guard = new StreamGuard(request.signal, this.options.timeoutMs);
    try {
      if (guard.callerAborted) return;
      const { system, messages } = toAnthropicMessages(request.messages);
      const tools = toAnthropicTools(request.tools);
      // The SDK sends the request (retries, timeouts, HTTP errors); the stream is read here, a read at a time.
      const response = await this.client.messages
        .create(
          {
            model: this.model,
            max_tokens: this.options.maxOutputTokens,
            messages,
            stream: true,
            ...(system ? { system } : {}),
            ...(tools.length > 0 ? { tools } : {}),
          },
          { signal: guard.signal },
        )
        .asResponse();
      const state = new EventState();
      const template = new TextChunkTemplate('text', textDeltaText);
      for await (const events of sseBatches(response, guard.signal)) {
        const out: ProviderChunk[] = [];
        // What the read held before a bad event still goes out, as the SDK's stream would have yielded it.
        let failure: Error | null = null;
        try {
          for (const event of events) {
            // A text delta like the last one parsed, but for its text: read without parsing it.
            const delta = event.event === 'content_block_delta';
            const text = delta ? template.read(event.data) : undefined;
            if (text !== undefined) {
              if (text) out.push({ type: 'text', text });
              continue;
            }
            const parsed = parseEvent(event, response.headers);
            if (!parsed) continue;
            out.push(...state.apply(parsed));
            if (delta) template.learn(event.data, parsed);
          }
        } catch (error) {
          failure = error instanceof Error ? error : new Error(String(error));
        }
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
      throw guard.toProviderError(error, VENDOR, Anthropic);
    } finally {
      guard.close();
    }
  }
}

/**
 * One event, as the SDK's stream reads it: `ping` and unnamed events carry nothing, `error` is the
 * server reporting a failure mid-answer (the SDK's APIError), data that is not JSON throws.
 */
function parseEvent(event: EventSourceMessage, headers: Headers): RawMessageStreamEvent | null {
  if (event.event === 'ping' || event.event === undefined) return null;
  if (event.event === 'error') {
    let body: unknown = event.data;
    try {
      body = JSON.parse(event.data);
    } catch {
      // The SDK keeps a body that is not JSON as text.
    }
    const type = (body as { error?: { type?: string } } | null)?.error?.type;
    throw new Anthropic.APIError(undefined, body as object, undefined, headers, type as never);
  }
  return event.data ? (JSON.parse(event.data) as RawMessageStreamEvent) : null;
}

/** The text of a `text_delta` (a delta that carries only text), else undefined. */
function textDeltaText(parsed: unknown): string | undefined {
  const event = parsed as RawMessageStreamEvent | null;
  if (event?.type !== 'content_block_delta' || event.delta?.type !== 'text_delta') return undefined;
  return typeof event.delta.text === 'string' ? event.delta.text : undefined;
}

/** Follows one streamed message: open tool_use blocks by index, usage from start and delta events. */
class EventState {
  private readonly toolBlocks = new Map<number, { id: string; name: string; json: string; initial: unknown }>();
  private inputTokens = 0;
  private outputTokens = 0;
  private started = false;
  private stopped = false;

  apply(event: RawMessageStreamEvent): ProviderChunk[] {
    switch (event.type) {
      case 'message_start': {
        this.started = true;
        const usage = event.message.usage;
        // Cached prompt tokens are input too; reporting them keeps the context accounting honest.
        this.inputTokens = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
        this.outputTokens = usage.output_tokens ?? 0;
        return [];
      }
      case 'content_block_start': {
        this.requireStarted();
        const block = event.content_block;
        if (block.type === 'tool_use') this.toolBlocks.set(event.index, { id: block.id, name: block.name, json: '', initial: block.input });
        if (block.type === 'text' && block.text) return [{ type: 'text', text: block.text }];
        return [];
      }
      case 'content_block_delta': {
        this.requireStarted();
        const delta = event.delta;
        if (delta.type === 'text_delta') return delta.text ? [{ type: 'text', text: delta.text }] : [];
        if (delta.type === 'input_json_delta') {
          const block = this.toolBlocks.get(event.index);
          if (!block) throw new ProviderError('failed', `The ${VENDOR} model server sent tool input for a block it never opened.`);
          block.json += delta.partial_json;
        }
        return [];
      }
      case 'content_block_stop': {
        const block = this.toolBlocks.get(event.index);
        if (!block) return [];
        this.toolBlocks.delete(event.index);
        // A call without arguments streams no delta at all: its input is the start block's (usually {}).
        const argumentsText = block.json !== '' ? block.json : JSON.stringify(block.initial ?? {});
        return [{ type: 'tool_call', call: { id: block.id, name: block.name, arguments: argumentsText } }];
      }
      case 'message_delta':
        this.requireStarted();
        // output_tokens here is cumulative for the message.
        if (typeof event.usage?.output_tokens === 'number') this.outputTokens = event.usage.output_tokens;
        return [];
      case 'message_stop':
        this.stopped = true;
        return [];
      default:
        // Events added to the API later (and `ping`) carry nothing this contract needs.
        return [];
    }
  }

  finish(): ProviderChunk[] {
    if (!this.started) throw new ProviderError('failed', `The ${VENDOR} model server sent an empty stream.`);
    if (!this.stopped || this.toolBlocks.size > 0)
      throw new ProviderError('failed', `The ${VENDOR} model server's stream ended before the message was complete.`);
    return [{ type: 'usage', inputTokens: this.inputTokens, outputTokens: this.outputTokens }];
  }

  private requireStarted(): void {
    if (!this.started) throw new ProviderError('failed', `The ${VENDOR} model server sent a malformed stream (no message_start).`);
  }
}

export function toAnthropicTools(tools: readonly ToolSpec[] | undefined): AnthropicTool[] {
  return (tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.parameters } as AnthropicTool.InputSchema,
  }));
}

/**
 * The system prompt goes apart; tool results travel as `tool_result` blocks of a user message, and
 * consecutive user-side content is merged so every tool_use is answered in the very next message.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): { system: string; messages: MessageParam[] } {
  const system: string[] = [];
  const result: { role: 'user' | 'assistant'; content: ContentBlockParam[] }[] = [];
  const append = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = result.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else result.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        append('user', message.content ? [{ type: 'text', text: message.content }] : []);
        break;
      case 'assistant': {
        // The API refuses empty text blocks.
        const blocks: ContentBlockParam[] = message.content ? [{ type: 'text', text: message.content }] : [];
        for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) });
        append('assistant', blocks);
        break;
      }
      case 'tool':
        append('user', [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content }]);
        break;
    }
  }
  return { system: system.join('\n\n'), messages: result };
}

/**
 * `tool_use.input` must be an object. A call whose arguments were not valid JSON still has to be
 * sent back (its tool_result, an error, answers it), so its input becomes an empty object.
 */
function parseInput(argumentsText: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
