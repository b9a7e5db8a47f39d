import Anthropic from '@anthropic-ai/sdk';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { flattenReads, ProviderError, type LlmProvider, type ProviderChunk, type ProviderRequest } from '../provider';
import type { EventSourceMessage } from 'eventsource-parser';
import { createLeanFetch } from './lean-fetch';
import { sseBatches } from './sse-reader';
import { anthropicRequestBody } from './anthropic-request';
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
      // The SDK sends the request (retries, timeouts, HTTP errors); the stream is read here, a read at a time.
      // `messages.create` posts here too; the body goes as text (the SDK sends text with a content
      // type as it is) so that it is serialised the way anthropicRequestBody does.
      const response = await this.client
        .post('/v1/messages', {
          body: anthropicRequestBody(this.model, this.options.maxOutputTokens, request.messages, request.tools),
          headers: { 'content-type': 'application/json' },
          stream: true,
          signal: guard.signal,
        })
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
