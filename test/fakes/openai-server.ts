import { ScriptedHttpServer, type ScriptedReply, type SseEvent } from './scripted-http-server';

/**
 * A fake OpenAI-compatible chat-completions server: `POST /v1/chat/completions` answered with
 * `chat.completion.chunk` events over SSE, ending with `data: [DONE]`, as OpenAI, Ollama and vLLM do.
 */
export class FakeOpenAiServer extends ScriptedHttpServer {
  constructor() {
    super('/v1/chat/completions');
  }

  /** The base URL to give the SDK (`baseURL`). */
  override async start(): Promise<string> {
    return `${await super.start()}/v1`;
  }
}

type Delta = { content?: string; tool_calls?: ToolCallDelta[]; role?: 'assistant' };
interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/** Every chunk of one answer carries the answer's id, as OpenAI, vLLM, Ollama and llama.cpp send it. */
let answerCounter = 0;

function envelope(choices: unknown[], usage: unknown = null): SseEvent {
  return { data: { id: `chatcmpl-${answerCounter}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: 'fake-model', choices, usage } };
}

export const openAiChunk = {
  delta(delta: Delta, finishReason: string | null = null): SseEvent {
    return envelope([{ index: 0, delta, finish_reason: finishReason, logprobs: null }]);
  },
  text(text: string): SseEvent {
    return openAiChunk.delta({ content: text });
  },
  toolCall(fragment: ToolCallDelta): SseEvent {
    return openAiChunk.delta({ tool_calls: [fragment] });
  },
  finish(reason: 'stop' | 'tool_calls' | 'length'): SseEvent {
    return openAiChunk.delta({}, reason);
  },
  /** The last chunk `stream_options.include_usage` asks for: no choices, the usage. */
  usage(promptTokens: number, completionTokens: number): SseEvent {
    return envelope([], { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens });
  },
  done(): SseEvent {
    return { data: '[DONE]' };
  },
};

/** A complete streamed answer: the text in pieces, then finish, usage and [DONE]. */
export function openAiTextReply(pieces: string[], usage = { prompt: 12, completion: pieces.length }): ScriptedReply {
  answerCounter += 1;
  return {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      ...pieces.map(openAiChunk.text),
      openAiChunk.finish('stop'),
      openAiChunk.usage(usage.prompt, usage.completion),
      openAiChunk.done(),
    ],
  };
}
