import { ScriptedHttpServer, type ScriptedReply, type SseEvent } from './scripted-http-server';

/**
 * A fake Anthropic Messages API: `POST /v1/messages` answered with Anthropic's named SSE events
 * (message_start, content_block_start/delta/stop, message_delta, message_stop, ping).
 */
export class FakeAnthropicServer extends ScriptedHttpServer {
  constructor() {
    super('/v1/messages');
  }
}

function named(event: string, data: Record<string, unknown>): SseEvent {
  return { event, data: { type: event, ...data } };
}

export const anthropicEvent = {
  messageStart(inputTokens: number): SseEvent {
    return named('message_start', {
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: 'fake-claude',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
  },
  textStart(index: number): SseEvent {
    return named('content_block_start', { index, content_block: { type: 'text', text: '' } });
  },
  textDelta(index: number, text: string): SseEvent {
    return named('content_block_delta', { index, delta: { type: 'text_delta', text } });
  },
  toolStart(index: number, id: string, name: string): SseEvent {
    return named('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } });
  },
  inputJson(index: number, partialJson: string): SseEvent {
    return named('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partialJson } });
  },
  blockStop(index: number): SseEvent {
    return named('content_block_stop', { index });
  },
  messageDelta(stopReason: 'end_turn' | 'tool_use' | 'max_tokens', outputTokens: number): SseEvent {
    return named('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } });
  },
  messageStop(): SseEvent {
    return named('message_stop', {});
  },
  ping(): SseEvent {
    return named('ping', {});
  },
};

/** A complete streamed text answer. */
export function anthropicTextReply(pieces: string[], usage = { input: 20, output: pieces.length }): ScriptedReply {
  return {
    kind: 'stream',
    events: [
      anthropicEvent.messageStart(usage.input),
      anthropicEvent.textStart(0),
      anthropicEvent.ping(),
      ...pieces.map((piece) => anthropicEvent.textDelta(0, piece)),
      anthropicEvent.blockStop(0),
      anthropicEvent.messageDelta('end_turn', usage.output),
      anthropicEvent.messageStop(),
    ],
  };
}
